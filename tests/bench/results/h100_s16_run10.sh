#!/usr/bin/env bash
# Session 16, run 10: the GEMV's plan in the decode step.  The rule picks the local plan for the
# 256-tile o and down GEMVs (one CTA of 8 warps per tile: 256 of the 396 slots), which the step
# timeline put furthest from their bytes' time; RESET_NVFP4_GEMV_PLAN=streamed forces the plan that
# fills one wave for every GEMV, =local the other.  Qwen3-8B shape, NVFP4, greedy, 1k at batch 1
# and 8, 3 rounds alternated (tests/bench/ab_env_decode_on_device.sh).
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
echo "commit $(cat COMMIT)"
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/ck/qwen3-8b-nvfp4 > /dev/null 2>&1; echo "checkpoint at $SECONDS s"
OUT=/tmp/ab timeout 500 tests/bench/ab_env_decode_on_device.sh RESET_NVFP4_GEMV_PLAN "auto streamed local" /tmp/ck/qwen3-8b-nvfp4 3 \
    --weights auto --prompt-tokens 1024 --sequences 1,8 --tokens 64 --repeat 2 > "$OUT/gemv_plan_ab.jsonl"
python3 -c '
import json, sys, statistics as st
rows = {}
for l in open(sys.argv[1]):
    d = json.loads(l); rows.setdefault((d["sequences"], d["env"]), []).append(d["ms_per_step"])
for k in sorted(rows): print(k, rows[k], "median", st.median(rows[k]))
' "$OUT/gemv_plan_ab.jsonl"
echo "done at $SECONDS s"
