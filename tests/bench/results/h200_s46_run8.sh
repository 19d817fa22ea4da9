#!/usr/bin/env bash
# Session 46, run 8 (H200): after the review's restructuring of kernels/bf16_gemv.cu (both paths' shared
# operands and K-split choice, the kernel instances as arrays; no change meant), the BF16 GEMV test whole
# and the engine test's quick set again.  Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset
# gpu_test_bf16_gemv gpu_test_cuda_engine"), COMMIT.
source tests/bench/results/start_device_run.sh
timeout 100 build-bundle/bin/gpu_test_bf16_gemv > "$OUT/bf16_gemv_test_s46_run8.txt" 2>&1
echo "test rc $? at $SECONDS s: $(tail -1 "$OUT/bf16_gemv_test_s46_run8.txt")"
grep -E "FAIL|timing: bf16_gemv (lm_head|gate_up)" "$OUT/bf16_gemv_test_s46_run8.txt" | head -20
PASSES=main RESET_GPU_TEST_QUICK=1 OUT=/tmp/engine timeout 110 tests/gpu/run_cuda_engine_on_device.sh > /tmp/engine.txt 2>&1
echo "engine rc $? at $SECONDS s"
grep -E "checks|FAIL" /tmp/engine/test_cuda_engine.log | head
