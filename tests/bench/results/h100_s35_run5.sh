#!/usr/bin/env bash
# Session 35, run 5 (H100): after the review commit (copy and load sharing one replace_sequence, the
# writer writing from its plan): test_copy_sequence and test_sequence_file on every engine model.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset gpu_test_cuda_engine"), COMMIT.
source tests/bench/results/start_device_run.sh
python3 tests/gpu/make_engine_models.py /tmp/engine-models > /tmp/make_engine_models.log 2>&1
echo "models at $SECONDS s"
RESET_GPU_TEST_ONLY=test_copy_sequence,test_sequence_file ENGINE_MODELS=/tmp/engine-models OUT=/tmp/engine \
    SANITIZE=0 timeout 200 tests/gpu/run_cuda_engine_on_device.sh > /tmp/engine.txt 2>&1
echo "engine rc $? at $SECONDS s"
cp /tmp/engine/test_cuda_engine.log "$OUT/engine_copy_and_files_s35_run5.txt"
grep -E "sequence file|copy|checks|FAIL|failed" "$OUT/engine_copy_and_files_s35_run5.txt" | head -30
echo "done at $SECONDS s"
