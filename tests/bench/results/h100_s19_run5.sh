#!/usr/bin/env bash
# Session 19, run 5, the final tree (896978a, the bundle; its sampler kernel's SASS is 81852c2's):
# the sampler test, full, and its quick set under memcheck, after rules/top_p.h took over the
# test's own copies of the rules.
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version --format=csv
echo "commit $(cat COMMIT)"
tests=$OUT/tests_s19_run5.txt
timeout 200 build-bundle/bin/gpu_test_sampling 20261129 > "$tests" 2>&1; echo "sampling test rc=$? at $SECONDS s"
RESET_GPU_TEST_QUICK=1 timeout 100 compute-sanitizer --tool memcheck --error-exitcode 3 build-bundle/bin/gpu_test_sampling 14 > /tmp/memcheck.txt 2>&1; echo "memcheck rc=$? at $SECONDS s"
{ echo "== memcheck (quick, seed 14)"; grep -E "FAIL|test_sampling:|ERROR SUMMARY" /tmp/memcheck.txt; } >> "$tests"
grep -E "FAIL|test_sampling:|cut bins|ERROR SUMMARY" "$tests"
echo "done at $SECONDS s"
