#!/usr/bin/env bash
# Session 39, run 2 (H100): the second compressed-tensors fixture, ct-nvfp4a16-head-qwen3 (llm-compressor's
# NVFP4A16: no input scales, the lm_head NVFP4 in the file), on the CUDA backend.
#  1. The engine test's test_model on both compressed-tensors fixtures and the ModelOpt one (CUDA logits
#     and greedy tokens against the CPU reference; W4A4 of the NVFP4A16 fixture with dynamic scales).
#  2. compute-sanitizer memcheck over the quick engine test on the NVFP4A16 fixture (its lm_head is
#     the first NVFP4 head read from a checkpoint rather than quantized on load).
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="gpu_test_cuda_engine"), COMMIT.
source tests/bench/results/start_device_run.sh
echo "== 1. engine test_model"
RESET_GPU_TEST_ONLY=test_model timeout 240 build-bundle/bin/gpu_test_cuda_engine tests/fixtures/models/ct-nvfp4-qwen3 \
    tests/fixtures/models/ct-nvfp4a16-head-qwen3 tests/fixtures/models/modelopt-qwen3 > "$OUT/h100_engine_s39_run2.txt" 2>&1
echo "engine rc $? at $SECONDS s"
grep -E "ct-nvfp4|checks|FAIL|failed" "$OUT/h100_engine_s39_run2.txt" | head -40
echo "== 2. memcheck, quick, NVFP4A16 fixture"
RESET_GPU_TEST_QUICK=1 RESET_GPU_TEST_ONLY=test_model timeout 300 compute-sanitizer --tool memcheck --error-exitcode 3 \
    --leak-check no build-bundle/bin/gpu_test_cuda_engine tests/fixtures/models/ct-nvfp4a16-head-qwen3 \
    > "$OUT/h100_engine_memcheck_s39_run2.txt" 2>&1
echo "memcheck rc $? at $SECONDS s"
tail -n 4 "$OUT/h100_engine_memcheck_s39_run2.txt"
echo "done at $SECONDS s"
