#!/usr/bin/env bash
# Session 47, run 4 (H200): the record after the o and down GEMVs read prepared FP16 at every row
# count (kDefaultFloatInputMaxRows = 0; runs 2-3).
#  1. tests/bench/run_all_on_device.sh without the GEMV benchmark (GEMV=0: its kernel is session
#     46's): the engine test's quick set beside the kernel tests in the bundle (the others are
#     reported as not in the bundle), then the short decode grid.
#  2. Batch 1: the default against the direct FP32 read at 1 row (RESET_O_FLOAT_INPUT_ROWS=1
#     RESET_DOWN_FLOAT_INPUT_ROWS=1, the rule of run 3), 1k (3 rounds) and 8k (2 rounds).
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset gpu_test_cuda_engine gpu_test_nvfp4_gemv
# attention_decode_bench"), COMMIT.
source tests/bench/results/start_device_run.sh
GEMV=0 COMMIT=$(cat COMMIT) timeout 420 tests/bench/run_all_on_device.sh
echo "== batch 1 A/B at $SECONDS s"
ck=/tmp/checkpoints/qwen3-8b-nvfp4  # the decode grid's
[[ -f $ck/model.safetensors ]] || python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 $ck > /tmp/ck.log 2>&1
direct=RESET_O_FLOAT_INPUT_ROWS=1,RESET_DOWN_FLOAT_INPUT_ROWS=1
OUT=/tmp/ab tests/bench/ab_env_decode_on_device.sh - "RESET_O_FLOAT_INPUT_ROWS=0 $direct" $ck 3 --weights auto \
    --prompt-tokens 1024 --sequences 1 --tokens 64 --repeat 2 > "$OUT/batch1_ab_s47_run4.jsonl"
OUT=/tmp/ab tests/bench/ab_env_decode_on_device.sh - "RESET_O_FLOAT_INPUT_ROWS=0 $direct" $ck 2 --weights auto \
    --prompt-tokens 8192 --sequences 1 --tokens 64 --repeat 2 >> "$OUT/batch1_ab_s47_run4.jsonl"
python3 tests/bench/ab_summary.py "$OUT/batch1_ab_s47_run4.jsonl"
echo "done at $SECONDS s"
