#!/usr/bin/env bash
# Session 32, run 3 (H100): the headline figures on the session's final library.  `reset bench
# decode` now decodes with ignore_eos (an end-of-generation id is one more token) instead of
# prefilling a single sequence's id back, and the step's host side gained the stop conditions'
# bookkeeping; the short grid checks that neither moved a figure (session 27 run 1 is the last).
#  1. (beside 2) The CLI test on CUDA (--ignore-eos among the rest).
#  2. The short decode grid (Qwen3-8B shape, batch 1 / 8 at 1k, BF16 mode, NVFP4 lm_head, W4A4,
#     32k FP8, ReSET), random checkpoints made here.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset"), COMMIT.
source tests/bench/results/start_device_run.sh
R=build-bundle/bin/reset
mkdir -p /tmp/checkpoints
(for fmt in nvfp4 bf16; do python3 tests/bench/make_random_checkpoint.py qwen3-8b $fmt /tmp/checkpoints/qwen3-8b-$fmt; done) \
    > /tmp/checkpoints.log 2>&1 &
ck_job=$!
echo "== 1. CLI test on CUDA"
timeout 240 python3 tests/cli/test_commands.py "$PWD/$R" "$PWD" > "$OUT/cli_s32_run3.txt" 2>&1
echo "cli rc $? at $SECONDS s"; tail -n 1 "$OUT/cli_s32_run3.txt"; grep -v '^ok' "$OUT/cli_s32_run3.txt" | head -20
grep -c '^ok' "$OUT/cli_s32_run3.txt"
echo "== 2. short decode grid"
wait $ck_job; echo "checkpoints at $SECONDS s"
OUT=/tmp/grid GRID=short CHECKPOINTS=/tmp/checkpoints timeout 300 tests/bench/run_decode_grid_on_device.sh > /tmp/grid.out 2>&1
echo "grid rc=$? at $SECONDS s"
cp /tmp/grid/decode_grid.jsonl "$OUT/decode_grid_s32_run3.jsonl"; cp /tmp/grid/decode_grid_env.json "$OUT/decode_grid_env_s32_run3.json"
cp /tmp/grid/decode_grid.log "$OUT/decode_grid_s32_run3.log"
python3 tests/bench/decode_grid_report.py "$OUT/decode_grid_s32_run3.jsonl" "$OUT/decode_grid_env_s32_run3.json" qwen3-8b \
    > "$OUT/decode_grid_short_s32_run3.md"
tail -n 14 "$OUT/decode_grid_short_s32_run3.md"
echo "done at $SECONDS s"
