#!/usr/bin/env bash
# Session 36, run 5 (H100), after the review commit (StagedCopier's halves a PinnedBuffer, one
# no-staging path; test helpers shared in the bindings; get_options reading max_context from the session):
#  1. gpu_test_staged_copy.
#  2. test_sequence_file and test_copy_sequence on every engine model.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="gpu_test_cuda_engine gpu_test_staged_copy"), COMMIT.
source tests/bench/results/start_device_run.sh
timeout 120 build-bundle/bin/gpu_test_staged_copy | tee "$OUT/staged_copy_s36_run5.txt" | tail -2
echo "staged copy rc ${PIPESTATUS[0]} at $SECONDS s"
python3 tests/gpu/make_engine_models.py /tmp/engine-models > /tmp/make_engine_models.log 2>&1
RESET_GPU_TEST_ONLY=test_sequence_file,test_copy_sequence ENGINE_MODELS=/tmp/engine-models OUT=/tmp/engine \
    SANITIZE=0 timeout 200 tests/gpu/run_cuda_engine_on_device.sh > /tmp/engine.txt 2>&1
echo "engine rc $? at $SECONDS s"
cp /tmp/engine/test_cuda_engine.log "$OUT/engine_sequence_file_s36_run5.txt"
grep -E "sequence file|copy|checks|FAIL|failed" "$OUT/engine_sequence_file_s36_run5.txt" | head -30
echo "done at $SECONDS s"
