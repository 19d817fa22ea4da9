#!/usr/bin/env bash
# Session 38, run 7 (H100): the final library of the session (the repack loop as before, every
# exception in it turned into the load's error; the CPU quantizer's loop without allocations):
# the engine test's test_repack_error and test_model on every engine model.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="gpu_test_cuda_engine"), COMMIT.
source tests/bench/results/start_device_run.sh
RESET_GPU_TEST_ONLY=test_repack_error,test_model OUT=/tmp/engine SANITIZE=0 \
    timeout 420 tests/gpu/run_cuda_engine_on_device.sh > /tmp/engine.txt 2>&1
echo "engine rc $? at $SECONDS s"
cp /tmp/engine/test_cuda_engine.log "$OUT/engine_s38_run7.txt"
grep -E "test_repack_error|checks|FAIL" "$OUT/engine_s38_run7.txt" | head -20
echo "done at $SECONDS s"
