#!/usr/bin/env bash
# Session 23, run 4 (the bundle: COMMIT): the full decode grid of issue 6 (GRID=main: Qwen3-8B shape,
# batch 1/4/8, context 1k/8k, KV BF16/FP8, W4A16, W4A4, the NVFP4 lm_head at batch 1 and 8, graph
# against eager, greedy against ReSET (+ top-k 20/top-p 0.95), BF16 mode, 32k), on the current tree:
# the committed full grid (h100_decode_grid.*) dates from session 3.
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
echo "commit $(cat COMMIT)"
mkdir -p /tmp/checkpoints
for fmt in nvfp4 bf16; do python3 tests/bench/make_random_checkpoint.py qwen3-8b $fmt /tmp/checkpoints/qwen3-8b-$fmt > /tmp/checkpoints.log 2>&1; done
echo "checkpoints at $SECONDS s"
OUT=/tmp/grid GRID=main CHECKPOINTS=/tmp/checkpoints timeout 480 tests/bench/run_decode_grid_on_device.sh > /tmp/grid.out 2>&1; echo "grid rc=$? at $SECONDS s"
cp /tmp/grid/decode_grid.jsonl "$OUT/decode_grid_s23_run4.jsonl"; cp /tmp/grid/decode_grid_env.json "$OUT/decode_grid_env_s23_run4.json"; cp /tmp/grid/decode_grid.log "$OUT/decode_grid_s23_run4.log"
python3 tests/bench/decode_grid_report.py "$OUT/decode_grid_s23_run4.jsonl" "$OUT/decode_grid_env_s23_run4.json" qwen3-8b > "$OUT/decode_grid_s23_run4.md"
cat "$OUT/decode_grid_s23_run4.md"
echo "done at $SECONDS s"
