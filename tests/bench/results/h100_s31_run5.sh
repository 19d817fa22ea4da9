#!/usr/bin/env bash
# Session 31, run 5 (H100): where the top_logprobs kernel's ~14 us go: the kernel test's timing alone
# (RESET_TOP_LOGPROBS_TIMING_ONLY=1), with the kernel stopped after each phase (TopLogprobsArgs::
# stop_after_phase) and with every row inactive (the launch alone).
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="gpu_test_top_logprobs"), COMMIT.
source tests/bench/results/start_device_run.sh
RESET_TOP_LOGPROBS_TIMING_ONLY=1 timeout 120 build-bundle/bin/gpu_test_top_logprobs 20261131 \
    > "$OUT/top_logprobs_phases_s31_run5.txt" 2>&1
echo "rc $? at $SECONDS s"
cat "$OUT/top_logprobs_phases_s31_run5.txt"
