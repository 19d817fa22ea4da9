#!/usr/bin/env bash
# Session 47, run 9 (H200): the producers' FP16 copies as committed (run 8's experiment with its
# fallback): attention_decode's out16 and the GEMV's y16 write their outputs rounded to FP16, the o
# and down GEMVs read those (Nvfp4GemvArgs::x_fallback) and multiply again from the FP32 rows where
# a row does not fit FP16 unscaled; no preparation launches (RESET_PRODUCER_FP16=0 puts them back).
#  1. gpu_test_nvfp4_gemv (the copy against prepare + GEMV, with and without rows past FP16, every
#     plan; y16), then memcheck (quick); gpu_test_attention_decode quick set (out16).
#  2. The engine test's quick set (the default now takes the copies).
#  3. RESET_PRODUCER_FP16 1 / 0 alternated: 1k batch 1 and 8 (3 rounds), 32k FP8 batch 1 (2 rounds).
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset gpu_test_cuda_engine gpu_test_nvfp4_gemv
# gpu_test_attention_decode"), COMMIT.
source tests/bench/results/start_device_run.sh
ck=/tmp/ck/qwen3-8b-nvfp4
(python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 $ck > /tmp/ck.log 2>&1) &
writer=$!
echo "== 1. kernel tests at $SECONDS s"
timeout 60 build-bundle/bin/gpu_test_nvfp4_gemv > "$OUT/gemv_test_s47_run9.txt" 2>&1
echo "gemv rc $?: $(tail -n 1 "$OUT/gemv_test_s47_run9.txt")"
grep -E "FAIL" "$OUT/gemv_test_s47_run9.txt" | head -5
RESET_GPU_TEST_QUICK=1 timeout 60 compute-sanitizer --tool memcheck --error-exitcode 3 build-bundle/bin/gpu_test_nvfp4_gemv \
    > /tmp/memcheck.txt 2>&1
echo "memcheck rc $?: $(grep -E 'ERROR SUMMARY' /tmp/memcheck.txt)"
RESET_GPU_TEST_QUICK=1 timeout 60 build-bundle/bin/gpu_test_attention_decode > "$OUT/attention_test_s47_run9.txt" 2>&1
echo "attention rc $?: $(grep -E 'checks' "$OUT/attention_test_s47_run9.txt" | tail -n 1)"
grep -E "FAIL" "$OUT/attention_test_s47_run9.txt" | head -5
echo "== 2. engine test (quick set) at $SECONDS s"
PASSES=main RESET_GPU_TEST_QUICK=1 OUT=/tmp/engine timeout 100 tests/gpu/run_cuda_engine_on_device.sh > /tmp/engine.txt 2>&1
echo "engine rc $? at $SECONDS s"
cp /tmp/engine/test_cuda_engine.log "$OUT/engine_s47_run9.txt"
grep -E "checks|FAIL" "$OUT/engine_s47_run9.txt" | head
wait $writer
echo "== 3. A/B at $SECONDS s"
OUT=/tmp/ab tests/bench/ab_env_decode_on_device.sh RESET_PRODUCER_FP16 "1 0" $ck 3 --weights auto \
    --prompt-tokens 1024 --sequences 1,8 --tokens 64 --repeat 2 > "$OUT/producer_fp16_ab_s47_run9.jsonl"
OUT=/tmp/ab tests/bench/ab_env_decode_on_device.sh RESET_PRODUCER_FP16 "1 0" $ck 2 --weights auto \
    --prompt-tokens 32000 --kv-cache fp8 --sequences 1 --tokens 32 --repeat 1 >> "$OUT/producer_fp16_ab_s47_run9.jsonl"
python3 tests/bench/ab_summary.py "$OUT/producer_fp16_ab_s47_run9.jsonl"
echo "done at $SECONDS s"
