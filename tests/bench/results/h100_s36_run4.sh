#!/usr/bin/env bash
# Session 36, run 4 (H100): gpu_test_staged_copy with the copier's no-staging path (half 0, the path
# taken when page-locked memory is refused) added to its cases, twice with fresh seeds.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="gpu_test_staged_copy"), COMMIT.
source tests/bench/results/start_device_run.sh
for i in 1 2; do
    timeout 120 build-bundle/bin/gpu_test_staged_copy | tee -a "$OUT/staged_copy_s36_run4.txt" | tail -2
    echo "staged copy rc ${PIPESTATUS[0]} at $SECONDS s"
done
echo "done at $SECONDS s"
