#!/usr/bin/env bash
# Session 38, run 9 (H100), after the review commit (the checkpoint patching shared with the unit
# tests in tests/patched_checkpoint.h): the engine test's test_repack_error on the ModelOpt fixture.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="gpu_test_cuda_engine"), COMMIT.
source tests/bench/results/start_device_run.sh
RESET_GPU_TEST_ONLY=test_repack_error timeout 200 build-bundle/bin/gpu_test_cuda_engine \
    tests/fixtures/models/modelopt-qwen3 > "$OUT/engine_s38_run9.txt" 2>&1
echo "engine rc $? at $SECONDS s"
cat "$OUT/engine_s38_run9.txt" | tail -12
