#!/usr/bin/env bash
# Session 43, run 1 (H100): reset_file_access (0.12) and the CUDA backend dropping the files' mapping.
#  1. The whole CUDA engine test on every engine model, the golden fixtures and the embedded model
#     (tests/gpu/run_cuda_engine_on_device.sh, no sanitizer), its new test_file_access among them:
#     a model loaded from a copy of the checkpoint, mapped and read, no longer maps the copy's files
#     after the load, and with them truncated to nothing decodes bit for bit as the intact one.
#  2. The file-access test alone under compute-sanitizer memcheck on one engine model.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="gpu_test_cuda_engine reset"), COMMIT.
source tests/bench/results/start_device_run.sh
echo "== 1. engine test"
ENGINE_MODELS=/tmp/engine-models OUT=/tmp/engine SANITIZE=0 timeout 420 \
    tests/gpu/run_cuda_engine_on_device.sh > /tmp/engine.txt 2>&1
echo "engine rc $? at $SECONDS s"
cp /tmp/engine/test_cuda_engine.log "$OUT/h100_engine_s43_run1.txt"
grep -E "truncated after|checks|FAIL|failed" "$OUT/h100_engine_s43_run1.txt" | head -30
echo "== 2. test_file_access under memcheck"
RESET_GPU_TEST_ONLY=test_file_access timeout 150 compute-sanitizer --tool memcheck --error-exitcode 3 --leak-check no \
    build-bundle/bin/gpu_test_cuda_engine /tmp/engine-models/engine-qwen3 > "$OUT/h100_file_access_memcheck_s43_run1.txt" 2>&1
echo "memcheck rc $? at $SECONDS s"
tail -4 "$OUT/h100_file_access_memcheck_s43_run1.txt"
echo "done at $SECONDS s"
