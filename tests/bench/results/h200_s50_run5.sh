#!/usr/bin/env bash
# Session 50, run 5 (H200): the BF16 GEMV's FP32 path (1 token; BF16 mode at batch 1) with a slice
# overhead in its K-split arithmetic (1024 columns; run 4: Qwen3-8B's gate_up at one slice 55 against
# 91 us at sixteen, BF16 mode batch 1 -21.7% with o and down at two slices and the rest at one).
#  1. gpu_test_bf16_gemv (its timing now has 1-token lines for Qwen3-32B, -14B and R1-7B shapes)
#     with the default, then the 1-token lines with RESET_BF16_GEMV_FP32_SLICE_OVERHEAD=0, 512, 2048;
#     its quick set under memcheck.
#  2. The engine test's quick set (BF16 mode against the CPU reference, bound 2e-3; FP8 KV 5e-3).
#  3. BF16 mode 1k batch 1, overhead 0 (the old plans) against 1024, alternated, 3 rounds.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset gpu_test_cuda_engine gpu_test_bf16_gemv"), COMMIT.
source tests/bench/results/start_device_run.sh
ck=/tmp/ck/qwen3-8b-bf16
(python3 tests/bench/make_random_checkpoint.py qwen3-8b bf16 $ck > /tmp/ck.log 2>&1) &
writer=$!
echo "== 1. GEMV test and 1-token timings"
timeout 120 build-bundle/bin/gpu_test_bf16_gemv > "$OUT/bf16_gemv_test_s50_run5.txt" 2>&1
echo "rc $?: $(tail -n 1 "$OUT/bf16_gemv_test_s50_run5.txt")"
grep -E "FAIL" "$OUT/bf16_gemv_test_s50_run5.txt" | head -5
for overhead in 0 512 2048; do
    RESET_BF16_GEMV_FP32_SLICE_OVERHEAD=$overhead timeout 120 build-bundle/bin/gpu_test_bf16_gemv > /tmp/t.txt 2>&1
    echo "overhead $overhead rc $?: $(tail -n 1 /tmp/t.txt)"
    grep -E "tokens 1:" /tmp/t.txt | sed 's/^timing: bf16_gemv //'
done > "$OUT/bf16_gemv_slice_overhead_s50_run5.txt"
{ echo "overhead 1024 (default)"; grep -E "tokens 1:" "$OUT/bf16_gemv_test_s50_run5.txt" | sed 's/^timing: bf16_gemv //'; } >> "$OUT/bf16_gemv_slice_overhead_s50_run5.txt"
cat "$OUT/bf16_gemv_slice_overhead_s50_run5.txt"
RESET_GPU_TEST_QUICK=1 timeout 150 compute-sanitizer --tool memcheck build-bundle/bin/gpu_test_bf16_gemv \
    > /tmp/memcheck.txt 2>&1
echo "memcheck rc $?: $(grep -E "ERROR SUMMARY" /tmp/memcheck.txt) $(tail -n 1 /tmp/memcheck.txt)"
echo "== 2. engine test at $SECONDS s"
PASSES=main RESET_GPU_TEST_QUICK=1 OUT=/tmp/engine timeout 100 tests/gpu/run_cuda_engine_on_device.sh > /tmp/engine.txt 2>&1
echo "engine rc $? at $SECONDS s"
cp /tmp/engine/test_cuda_engine.log "$OUT/engine_s50_run5.txt"
grep -E "checks|FAIL" "$OUT/engine_s50_run5.txt" | head -5
wait $writer
echo "== 3. BF16 mode batch 1 at $SECONDS s"
OUT=/tmp/ab tests/bench/ab_env_decode_on_device.sh RESET_BF16_GEMV_FP32_SLICE_OVERHEAD "0 1024" \
    $ck 3 --weights auto --prompt-tokens 1024 --sequences 1 --tokens 32 --repeat 1 > "$OUT/bf16_slice_overhead_ab_s50_run5.jsonl"
python3 tests/bench/ab_summary.py "$OUT/bf16_slice_overhead_ab_s50_run5.jsonl"
echo "done at $SECONDS s"
