#!/usr/bin/env bash
# Session 24, run 5 (the bundle: COMMIT): issue 5's GEMV benchmark of record on the current kernel
# (last run in session 18, before session 21 unrolled the pipelined loop once instead of twice):
# the GEMV test (full; the quick set under memcheck and racecheck), nvfp4_gemv_bench (every shape,
# M = 1, 2, 4, 8, both activation modes, cuBLAS BF16, cuBLASLt FP8 and a plain read as baselines,
# streaming bandwidth measured in the same run, weights rotated through > 4x the L2), PyTorch's
# int4 tinygemm, and the report with issue 5's goals.
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
echo "commit $(cat COMMIT)"
tests=$OUT/gemv_tests_s24_run5.txt
timeout 200 build-bundle/bin/gpu_test_nvfp4_gemv 20261126 > /tmp/gemv.txt 2>&1; echo "gemv test rc=$? at $SECONDS s"
cat /tmp/gemv.txt >> "$tests"
for tool in memcheck racecheck; do
  RESET_GPU_TEST_QUICK=1 timeout 150 compute-sanitizer --tool $tool --error-exitcode 3 build-bundle/bin/gpu_test_nvfp4_gemv 24 > /tmp/$tool.txt 2>&1; echo "$tool rc=$? at $SECONDS s"
  { echo "== $tool"; tail -n 3 /tmp/$tool.txt; } >> "$tests"
done
grep -E "checks|ERROR SUMMARY|RACECHECK SUMMARY|FAIL" "$tests" | head -20
timeout 150 build-bundle/bin/nvfp4_gemv_bench --json "$OUT/gemv_bench_s24_run5.json" --commit "$(cat COMMIT)" > /tmp/bench.log 2>&1; echo "bench rc $? at $SECONDS s"
PYTHONUNBUFFERED=1 timeout 60 python3 tests/bench/tinygemm_bench.py --json /tmp/tinygemm.json > /tmp/tinygemm.log 2>&1; echo "tinygemm rc $?"
cp /tmp/tinygemm.json "$OUT/tinygemm_s24_run5.json"
python3 tests/bench/report.py "$OUT/gemv_bench_s24_run5.json" "$OUT/tinygemm_s24_run5.json" --markdown "$OUT/gemv_results_s24_run5.md"
grep -iE "goal" -A8 "$OUT/gemv_results_s24_run5.md" | head -40
echo "done at $SECONDS s"
