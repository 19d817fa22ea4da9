#!/usr/bin/env bash
# Session 34, run 5 (H100): after the review commit (the bias's row checks in the sampler; the engine
# test's tokens_of shared): the engine test's full set.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="gpu_test_cuda_engine"), COMMIT.
source tests/bench/results/start_device_run.sh
python3 tests/gpu/make_engine_models.py /tmp/engine-models > /tmp/make_engine_models.log 2>&1
echo "models at $SECONDS s"
ENGINE_MODELS=/tmp/engine-models OUT=/tmp/engine SANITIZE=0 timeout 500 tests/gpu/run_cuda_engine_on_device.sh \
    > /tmp/engine.txt 2>&1
echo "engine rc $? at $SECONDS s"
cp /tmp/engine/test_cuda_engine.log "$OUT/engine_s34_run5.txt"
grep -E "copy|cut-back|checks|FAIL|failed" "$OUT/engine_s34_run5.txt" | head -30
echo "done at $SECONDS s"
