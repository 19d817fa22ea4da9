#!/usr/bin/env bash
# Session 30, run 4 (H100, the bundle of run 3): the engine test's full set (run 1's ran past its
# limit on its last model) with logprobs, the warm-timed cancelled prefill and the repetition
# penalty; then the sampler test's quick set under compute-sanitizer memcheck (the kernel's new
# loads: the chosen token's logit, the counts' context flags).
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset gpu_test_sampling gpu_test_cuda_engine"), COMMIT.
source tests/bench/results/start_device_run.sh
echo "== 1. engine test"
python3 tests/gpu/make_engine_models.py /tmp/engine-models > /tmp/make_engine_models.log 2>&1
echo "models at $SECONDS s"
ENGINE_MODELS=/tmp/engine-models OUT=/tmp/engine SANITIZE=0 timeout 420 tests/gpu/run_cuda_engine_on_device.sh \
    > /tmp/engine.txt 2>&1
echo "engine rc $? at $SECONDS s"
cp /tmp/engine/test_cuda_engine.log "$OUT/engine_s30_run4.txt"
grep -E "cancelled prefill|penalties|checks|FAIL" "$OUT/engine_s30_run4.txt" | head -30
echo "== 2. sampler test, quick set, memcheck"
RESET_GPU_TEST_QUICK=1 timeout 140 compute-sanitizer --tool memcheck --error-exitcode 3 \
    build-bundle/bin/gpu_test_sampling 30 > "$OUT/sampling_memcheck_s30_run4.txt" 2>&1
echo "memcheck rc $? at $SECONDS s"
grep -E "ERROR SUMMARY|test_sampling:" "$OUT/sampling_memcheck_s30_run4.txt" | tail -4
echo "done at $SECONDS s"
