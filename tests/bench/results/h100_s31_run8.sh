#!/usr/bin/env bash
# Session 31, run 8 (H100): the review's mend.  The CUDA sampler's logit keys now come from the rule
# both it and top_logprobs use (rules/logit_order.h, the same bits as before), and reset_step's 0.4
# fields are reordered (the pointer first, so none lies in 0.3's tail padding).
#  1. The sampler test's quick set; 2. the top_logprobs kernel test; 3. the engine test's quick set.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="gpu_test_sampling gpu_test_cuda_engine gpu_test_top_logprobs"),
# COMMIT.
source tests/bench/results/start_device_run.sh
echo "== 1. sampler test, quick set"
RESET_GPU_TEST_QUICK=1 timeout 150 build-bundle/bin/gpu_test_sampling 20261132 > "$OUT/sampling_quick_s31_run8.txt" 2>&1
echo "sampling rc $? at $SECONDS s"
grep -E "FAIL|test_sampling:" "$OUT/sampling_quick_s31_run8.txt" | head -10
echo "== 2. top_logprobs kernel test"
timeout 120 build-bundle/bin/gpu_test_top_logprobs 20261132 > "$OUT/top_logprobs_s31_run8.txt" 2>&1
echo "top_logprobs rc $? at $SECONDS s"
grep -E "FAIL|checks" "$OUT/top_logprobs_s31_run8.txt" | head -10
echo "== 3. engine test, quick set"
python3 tests/gpu/make_engine_models.py /tmp/engine-models > /tmp/make_engine_models.log 2>&1
RESET_GPU_TEST_QUICK=1 ENGINE_MODELS=/tmp/engine-models OUT=/tmp/engine SANITIZE=0 timeout 200 \
    tests/gpu/run_cuda_engine_on_device.sh > /tmp/engine.txt 2>&1
echo "engine rc $? at $SECONDS s"
cp /tmp/engine/test_cuda_engine.log "$OUT/engine_quick_s31_run8.txt"
grep -E "top_logprobs|checks|FAIL" "$OUT/engine_quick_s31_run8.txt" | head -10
echo "done at $SECONDS s"
