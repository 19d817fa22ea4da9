#!/usr/bin/env bash
# Session 20, run 4: the early residual (the bundle, "on") against d95b353's kernels/nvfp4_gemv.cu
# relinked into the same library (.ab/prev, "prev"): run 3 compared "on" with the switch off in the
# same library, whose loop the change had recompiled (its SASS differs from d95b353's), so this run
# measures against the code before the change.  The decode step alternated process by process,
# Qwen3-8B shape, random NVFP4 checkpoint, greedy: 1k batch 1 (4 rounds), 32k FP8 (2 rounds).
# The bundle was built from d95b353 with tests/bench/results/gemv_early_residual_s20.patch applied.
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
echo "commit $(cat COMMIT)"
mkdir -p /tmp/prev && xz -dc .ab/prev/libreset.so.0.xz > /tmp/prev/libreset.so.0
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/ck/qwen3-8b-nvfp4 > /dev/null 2>&1
echo "checkpoint at $SECONDS s"
ck=/tmp/ck/qwen3-8b-nvfp4
run() {  # VARIANT ROUND bench arguments
    local v=$1 round=$2; shift 2
    local extra=; [[ $v == prev ]] && extra=/tmp/prev:
    env LD_LIBRARY_PATH=$extra$LD_LIBRARY_PATH build-bundle/bin/reset bench decode $ck \
        --backend cuda --weights auto --json "$@" 2>/dev/null | sed "s/^{/{\"variant\": \"$v\", \"round\": $round, /"
}
ab=$OUT/early_residual_vs_prev_s20_run4.jsonl
for round in 1 2 3 4; do
    for v in prev on; do
        run $v $round --prompt-tokens 1024 --sequences 1 --tokens 64 --repeat 2
        if ((round < 3)); then run $v $round --prompt-tokens 32000 --sequences 1 --kv-cache fp8 --tokens 32 --repeat 1; fi
    done
done > "$ab"
python3 - "$ab" <<'PY'
import json, sys, statistics as st
rows = {}
for l in open(sys.argv[1]):
    d = json.loads(l)
    rows.setdefault((d["prompt_tokens"], d["sequences"], d.get("kv_cache", ""), d["policy"], d["variant"]), []).append(d["ms_per_step"])
for k in sorted(rows): print(k, " ".join(f"{v:.4f}" for v in rows[k]), "median %.4f" % st.median(rows[k]))
PY
echo "done at $SECONDS s"
