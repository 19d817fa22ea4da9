#!/usr/bin/env bash
# Session 30, run 5 (H100): the review's mend (rules/penalty.h decodes a counts-row entry itself, for the
# kernel, the CPU sampler and the test) under the sampler test's quick set: every penalty layout with
# prompts and repetition penalties, tokens, logprobs and final counts against the CPU samplers.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="gpu_test_sampling"), COMMIT.
source tests/bench/results/start_device_run.sh
RESET_GPU_TEST_QUICK=1 timeout 200 build-bundle/bin/gpu_test_sampling 20261128 > "$OUT/sampling_quick_s30_run5.txt" 2>&1
echo "sampling rc $? at $SECONDS s"
grep -E "penalt|FAIL|test_sampling:" "$OUT/sampling_quick_s30_run5.txt" | head -20
