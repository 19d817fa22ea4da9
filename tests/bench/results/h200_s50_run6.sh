#!/usr/bin/env bash
# Session 50, run 6 (H200): the record at d64413f (runs 1-5 kept: the BF16 GEMV's two pairs in
# flight, the FP8 attention's queries' high part in registers, the 1-token K split with a slice
# ramp; the GEMV test's plan assertions):
#  1. tests/bench/run_all_on_device.sh without the GEMV benchmark (GEMV=0): the engine test's quick
#     set beside the bundle's kernel tests (attention quick set, memcheck, racecheck), the
#     attention benchmark, then the short decode grid.
#  2. gpu_test_bf16_gemv (with its 1-token plan checks) and its quick set under memcheck.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset gpu_test_cuda_engine gpu_test_bf16_gemv
# gpu_test_attention_decode attention_decode_bench"), COMMIT.
source tests/bench/results/start_device_run.sh
GEMV=0 COMMIT=$(cat COMMIT) timeout 400 tests/bench/run_all_on_device.sh
echo "== 2. bf16 gemv test at $SECONDS s"
timeout 120 build-bundle/bin/gpu_test_bf16_gemv > "$OUT/bf16_gemv_test_s50_run6.txt" 2>&1
echo "rc $?: $(tail -n 1 "$OUT/bf16_gemv_test_s50_run6.txt")"
grep -E "FAIL|^plan|^note" "$OUT/bf16_gemv_test_s50_run6.txt" | head -8
RESET_GPU_TEST_QUICK=1 timeout 150 compute-sanitizer --tool memcheck build-bundle/bin/gpu_test_bf16_gemv > /tmp/memcheck.txt 2>&1
echo "memcheck rc $?: $(grep -E "ERROR SUMMARY" /tmp/memcheck.txt) $(tail -n 1 /tmp/memcheck.txt)"
echo "done at $SECONDS s"
