#!/usr/bin/env bash
# Session 47, run 8 (H200): an experiment (producer_fp16_s47.patch, not in the library): attention
# and gate_up also write their outputs rounded to FP16 (the preparation's value wherever a row's
# max |x| <= 32768, where its scale is 1), and the o and down GEMVs read those with no preparation
# launch.  No fallback for larger rows: it measures what a design with one (the GEMV choosing the
# FP32 read where a row does not fit) could gain.
#  1. The engine test's quick set with RESET_PRODUCER_FP16=1 (the same bits where rows fit).
#  2. RESET_PRODUCER_FP16 0 / 1 alternated: 1k batch 1 and 8 (3 rounds), 32k FP8 batch 1 (2 rounds).
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset gpu_test_cuda_engine"), COMMIT.
source tests/bench/results/start_device_run.sh
ck=/tmp/ck/qwen3-8b-nvfp4
(python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 $ck > /tmp/ck.log 2>&1) &
writer=$!
echo "== 1. engine test (quick set), RESET_PRODUCER_FP16=1, at $SECONDS s"
RESET_PRODUCER_FP16=1 PASSES=main RESET_GPU_TEST_QUICK=1 OUT=/tmp/engine timeout 150 \
    tests/gpu/run_cuda_engine_on_device.sh > /tmp/engine.txt 2>&1
echo "engine rc $? at $SECONDS s"
cp /tmp/engine/test_cuda_engine.log "$OUT/engine_s47_run8.txt"
grep -E "checks|FAIL" "$OUT/engine_s47_run8.txt" | head
wait $writer
echo "== 2. A/B at $SECONDS s"
OUT=/tmp/ab tests/bench/ab_env_decode_on_device.sh RESET_PRODUCER_FP16 "0 1" $ck 3 --weights auto \
    --prompt-tokens 1024 --sequences 1,8 --tokens 64 --repeat 2 > "$OUT/producer_fp16_ab_s47_run8.jsonl"
OUT=/tmp/ab tests/bench/ab_env_decode_on_device.sh RESET_PRODUCER_FP16 "0 1" $ck 2 --weights auto \
    --prompt-tokens 32000 --kv-cache fp8 --sequences 1 --tokens 32 --repeat 1 >> "$OUT/producer_fp16_ab_s47_run8.jsonl"
python3 tests/bench/ab_summary.py "$OUT/producer_fp16_ab_s47_run8.jsonl"
echo "done at $SECONDS s"
