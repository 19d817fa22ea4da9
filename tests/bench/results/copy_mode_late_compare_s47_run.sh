#!/usr/bin/env bash
# Not run (session 47 had no device time left): for copy_mode_late_compare_s47.patch applied to 195b81d. run 9's copies gained 3.0% at
# 1k batch 1 but nothing at batch 8 where the experiment (run 8) had 3.2%.  Here the row maximum is
# only loaded before the products and compared after them, and the rare second pass takes the plain
# FP32 loop (the pipelined instance 120 -> 104 registers).  gpu_test_nvfp4_gemv, then
# RESET_PRODUCER_FP16 1 / 0 alternated at 1k batch 1 and 8, 2 rounds.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset gpu_test_nvfp4_gemv"), COMMIT.
source tests/bench/results/start_device_run.sh
ck=/tmp/ck/qwen3-8b-nvfp4
(python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 $ck > /tmp/ck.log 2>&1) &
writer=$!
timeout 40 build-bundle/bin/gpu_test_nvfp4_gemv > "$OUT/gemv_test_s47_run10.txt" 2>&1
echo "gemv rc $?: $(tail -n 1 "$OUT/gemv_test_s47_run10.txt")"
grep -E "FAIL" "$OUT/gemv_test_s47_run10.txt" | head -5
wait $writer
echo "== A/B at $SECONDS s"
OUT=/tmp/ab tests/bench/ab_env_decode_on_device.sh RESET_PRODUCER_FP16 "1 0" $ck 2 --weights auto \
    --prompt-tokens 1024 --sequences 1,8 --tokens 64 --repeat 2 > "$OUT/producer_fp16_ab_s47_run10.jsonl"
python3 tests/bench/ab_summary.py "$OUT/producer_fp16_ab_s47_run10.jsonl"
echo "done at $SECONDS s"
