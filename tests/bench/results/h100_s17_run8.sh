#!/usr/bin/env bash
# Session 17, run 8, the committed tree (COMMIT, the bundle): the short decode grid
# (tests/bench/run_decode_grid_on_device.sh GRID=short: the goals' rows) with its streaming
# bandwidth, then the per-warp timeline of steps 40, 50 and 60 (.ab/trace: this tree built by
# tests/bench/build_step_trace.sh) at 1k, batch 1, greedy and ReSET + top-p 0.95.
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
echo "commit $(cat COMMIT)"
OUT=/tmp/grid GRID=short timeout 400 tests/bench/run_decode_grid_on_device.sh > /tmp/grid.out 2>&1; echo "grid rc=$? at $SECONDS s"
cp /tmp/grid/decode_grid.jsonl /tmp/grid/decode_grid_env.json "$OUT/"
python3 tests/bench/decode_grid_report.py "$OUT/decode_grid.jsonl" "$OUT/decode_grid_env.json" qwen3-8b | tail -12
mkdir -p /tmp/trace /tmp/traces && xz -dc .ab/trace/libreset.so.0.xz > /tmp/trace/libreset.so.0
ck=/tmp/checkpoints/qwen3-8b-nvfp4
for pol in greedy "reset t_low=0.6 tau0=1.2"; do
    name=b1_1k_${pol%% *}
    env LD_LIBRARY_PATH=/tmp/trace:$LD_LIBRARY_PATH RESET_STEP_TRACE_FILE=/tmp/traces/$name.txt \
        RESET_STEP_TRACE_STEPS=40,50,60 build-bundle/bin/reset bench decode $ck --backend cuda \
        --weights auto --json --tokens 64 --repeat 1 --prompt-tokens 1024 --sequences 1 --policy "$pol" 2>/dev/null
    echo "== $name" >> "$OUT/step_trace_reports_s17_run8.txt"
    python3 tests/bench/step_trace_report.py /tmp/traces/$name.txt >> "$OUT/step_trace_reports_s17_run8.txt" 2>&1
done
cat "$OUT/step_trace_reports_s17_run8.txt"
echo "done at $SECONDS s"
