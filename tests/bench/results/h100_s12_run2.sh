#!/usr/bin/env bash
# Carried with: device run, carry .ab12 (this script; the extra builds named below, made here with
# scripts/make_device_bundle.sh's build of the named commit) and build-bundle.tar.xz (and COMMIT).
# Session 12, run 2 (.ab12/oldlib: 0f7c598's libreset.so.0 and gpu_test_sampling_old; .ab12/model_logits.f32:
# four rows from tests/bench/dump_model_logits.py): top-p's gather capacity 2,048 -> 4,096 (kernels/sampling.cu): the full sampler
# test, the sampler alone on the model's logits (HEAD's test binary against this tree's), and the
# decode step per policy with HEAD's library against this tree's.
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv
M=/tmp/ckpt/qwen3-8b-nvfp4
SECONDS=0
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 $M > /tmp/ckpt.log 2>&1 &
ck=$!
timeout 300 build-bundle/bin/gpu_test_sampling 20261125 > "$OUT/test_sampling.txt" 2>&1; echo "sampling rc $? at $SECONDS s"
grep -E "plan at|cut bins|FAIL" "$OUT/test_sampling.txt" | head -20; tail -2 "$OUT/test_sampling.txt"
wait $ck
export RESET_GPU_TEST_LOGITS=$PWD/.ab12/model_logits.f32
for r in 1 2; do
  for v in old new; do
    b=build-bundle/bin/gpu_test_sampling; [[ $v == old ]] && b=.ab12/oldlib/gpu_test_sampling_old
    RESET_GPU_TEST_TIMING_ONLY=1 $b 20261125 2>&1 | grep timing: | sed "s/^/$v $r /"
  done
done > "$OUT/sampling_ab.txt"
grep -E "file|flat75" "$OUT/sampling_ab.txt" | grep -E "top-p 0.95 \(reset|bench|FIXED 0.6 \+ top-p" | cut -c1-150
unset RESET_GPU_TEST_LOGITS
echo "standalone done at $SECONDS s"
for pol in greedy "reset t_low=0.6 tau0=1.2 top_p=1" "reset t_low=0.6 tau0=1.2"; do
  tests/bench/ab_decode_on_device.sh .ab12/oldlib $M 3 --prompt-tokens 1024 --tokens 64 --repeat 2 --policy "$pol"
done > "$OUT/step_ab.jsonl"
echo "step done at $SECONDS s"
python3 - "$OUT/step_ab.jsonl" <<'PY'
import json, sys, statistics
by = {}
for l in open(sys.argv[1]):
    d = json.loads(l); by.setdefault((d["lib"], d["policy"]), []).append(d["ms_per_step"])
for lib in ("old", "new"):
    g = statistics.median(by[(lib, "greedy")])
    for (l, p), v in by.items():
        if l != lib: continue
        m = statistics.median(v)
        print(f"{lib} {p:36s} {' '.join(f'{x:.4f}' for x in v)}  median {m:.4f}  {100 * (m / g - 1):+.2f}% over greedy")
PY
