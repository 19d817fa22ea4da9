#!/usr/bin/env bash
# Session 17, run 9, the final tree (COMMIT, the bundle): copy_ranges now refuses overlapping ranges
# (host-side check).  The range-copy test (full, then quick under memcheck) and the engine test
# (its decode steps pass the check) with memcheck over its quick run.
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
echo "commit $(cat COMMIT)"
build-bundle/bin/gpu_test_range_copy > "$OUT/test_range_copy_s17_final.txt" 2>&1; echo "range copy rc $?"
RESET_GPU_TEST_QUICK=1 compute-sanitizer --tool memcheck --error-exitcode 3 build-bundle/bin/gpu_test_range_copy \
    >> "$OUT/test_range_copy_s17_final.txt" 2>&1; echo "range copy memcheck rc $?"
grep -E "checks|ERROR SUMMARY|timing" "$OUT/test_range_copy_s17_final.txt"
OUT=/tmp/engine timeout 300 tests/gpu/run_cuda_engine_on_device.sh > /tmp/engine.txt 2>&1; echo "engine rc $? at $SECONDS s"
cp /tmp/engine/test_cuda_engine.log "$OUT/cuda_engine_s17_final.txt"; tail -3 /tmp/engine/memcheck_cuda_engine.log >> "$OUT/cuda_engine_s17_final.txt"
grep -E "checks|ERROR SUMMARY|FAIL" "$OUT/cuda_engine_s17_final.txt" | head
echo "done at $SECONDS s"
