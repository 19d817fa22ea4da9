#!/usr/bin/env bash
# Carried with: device run, carry .ab12 (this script; the extra builds named below, made here with
# scripts/make_device_bundle.sh's build of the named commit) and build-bundle.tar.xz (and COMMIT).
# Session 12, run 3 (this tree: HEAD + the grown top-p gather): the engine test and the kernel quick
# tests, then the step per policy, HEAD's library against this tree's, 4 rounds.
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
M=/tmp/ckpt/qwen3-8b-nvfp4
SECONDS=0
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 $M > /tmp/ckpt.log 2>&1 &
ck=$!
for t in nvfp4_gemv attention_decode bf16_gemv rms_norm_prepare qk_norm_rope_kv_append; do
  RESET_GPU_TEST_QUICK=1 timeout 90 build-bundle/bin/gpu_test_$t > "/tmp/q_$t.txt" 2>&1; echo "$t rc $?: $(tail -1 /tmp/q_$t.txt)"
done | tee "$OUT/quick_tests.txt"
echo "quick done at $SECONDS s"
wait $ck
for pol in greedy "reset t_low=0.6 tau0=1.2 top_p=1" "reset t_low=0.6 tau0=1.2"; do
  tests/bench/ab_decode_on_device.sh .ab12/oldlib $M 4 --prompt-tokens 1024 --tokens 64 --repeat 2 --policy "$pol"
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
SANITIZE=0 timeout 250 tests/gpu/run_cuda_engine_on_device.sh > /dev/null 2>&1; echo "engine rc $? at $SECONDS s"
tail -3 "$OUT/test_cuda_engine.log"
