#!/usr/bin/env bash
# Session 18, run 3: where the split norms lose (run 2: +1.5% with qkv's norm split, +5.6% with
# gate_up's).  The per-warp timeline of steps 40, 50 and 60 (.ab/trace: df51e55 built by
# tests/bench/build_step_trace.sh) at 1k, batch 1, greedy, with RESET_SPLIT_NORM=0, 1, 2 and 3.
# The tree: b80492d with tests/bench/results/split_norm_s18.patch applied (not in the library).
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
echo "commit $(cat COMMIT)"
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/ck/qwen3-8b-nvfp4 > /dev/null 2>&1
ck=/tmp/ck/qwen3-8b-nvfp4
mkdir -p /tmp/trace /tmp/traces && xz -dc .ab/trace/libreset.so.0.xz > /tmp/trace/libreset.so.0
for split in 0 1 2 3; do
    env RESET_SPLIT_NORM=$split LD_LIBRARY_PATH=/tmp/trace:$LD_LIBRARY_PATH RESET_STEP_TRACE_FILE=/tmp/traces/split$split.txt \
        RESET_STEP_TRACE_STEPS=40,50,60 build-bundle/bin/reset bench decode $ck --backend cuda --weights auto --json \
        --prompt-tokens 1024 --sequences 1 --tokens 64 --repeat 1 2>/dev/null
    echo "== RESET_SPLIT_NORM=$split" >> "$OUT/split_norm_trace_reports_s18_run3.txt"
    python3 tests/bench/step_trace_report.py /tmp/traces/split$split.txt >> "$OUT/split_norm_trace_reports_s18_run3.txt" 2>&1
done
cat "$OUT/split_norm_trace_reports_s18_run3.txt"
echo "done at $SECONDS s"
