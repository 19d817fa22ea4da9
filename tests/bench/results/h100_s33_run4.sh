#!/usr/bin/env bash
# Session 33, run 4 (H100): the sampler kernel's logit-bias group alone (RESET_GPU_TEST_ONLY=logit_bias,
# quick) under compute-sanitizer racecheck, which the whole quick set outlasts (runs 2 and 3), and memcheck.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="gpu_test_sampling"), COMMIT.
source tests/bench/results/start_device_run.sh
export RESET_GPU_TEST_QUICK=1 RESET_GPU_TEST_ONLY=logit_bias
timeout 400 compute-sanitizer --tool racecheck --error-exitcode 3 build-bundle/bin/gpu_test_sampling 41 \
    > "$OUT/test_sampling_logit_bias_racecheck_s33_run4.txt" 2>&1
echo "racecheck rc=$? at $SECONDS s"; tail -n 4 "$OUT/test_sampling_logit_bias_racecheck_s33_run4.txt"
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 3 build-bundle/bin/gpu_test_sampling 42 \
    > "$OUT/test_sampling_logit_bias_memcheck_s33_run4.txt" 2>&1
echo "memcheck rc=$? at $SECONDS s"; tail -n 3 "$OUT/test_sampling_logit_bias_memcheck_s33_run4.txt"
echo "done at $SECONDS s"
