#!/usr/bin/env bash
# Session 29, run 4 (H100): the review's mend (the penalties' range and on/off test from
# rules/penalty.h in the kernel) under the sampler test's quick set.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="gpu_test_sampling"), COMMIT.
source tests/bench/results/start_device_run.sh
RESET_GPU_TEST_QUICK=1 timeout 120 build-bundle/bin/gpu_test_sampling 31 > "$OUT/sampling_quick_s29_run4.txt" 2>&1
echo "sampling rc $? at $SECONDS s"
grep -E "penalt|statuses|test_sampling:" "$OUT/sampling_quick_s29_run4.txt"
