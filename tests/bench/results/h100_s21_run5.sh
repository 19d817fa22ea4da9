#!/usr/bin/env bash
# Session 21, run 5, the final tree (the bundle, COMMIT): the sampler test (full, its timing
# included) and its quick set under memcheck, after the team's list offsets became one helper
# (team_list_offsets, kernels/sampling.cu) for gather_bin_members and small top-k.
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version --format=csv
echo "commit $(cat COMMIT)"
tests=$OUT/tests_s21_run5.txt
timeout 150 build-bundle/bin/gpu_test_sampling 20261127 > "$tests" 2>&1; echo "sampling test rc=$? at $SECONDS s"
RESET_GPU_TEST_QUICK=1 timeout 80 compute-sanitizer --tool memcheck --error-exitcode 3 build-bundle/bin/gpu_test_sampling 15 > /tmp/memcheck.txt 2>&1; echo "memcheck rc=$? at $SECONDS s"
{ echo "== memcheck (quick, seed 15)"; grep -E "FAIL|test_sampling:|ERROR SUMMARY" /tmp/memcheck.txt; } >> "$tests"
grep -E "FAIL|test_sampling:|ERROR SUMMARY|timing: (greedy|ReSET \+ top-p|ReSET \+ top-k)" "$tests"
echo "done at $SECONDS s"
