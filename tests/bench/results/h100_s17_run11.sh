#!/usr/bin/env bash
# Session 17, run 11, the final tree (COMMIT, the bundle): the short decode grid
# (tests/bench/run_decode_grid_on_device.sh GRID=short: the goals' rows) with its streaming
# bandwidth.
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
echo "done at $SECONDS s"
