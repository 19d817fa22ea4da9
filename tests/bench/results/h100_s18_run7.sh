#!/usr/bin/env bash
# Session 18, run 7, the final tree (COMMIT, the bundle; the pipelined GEMV loop where a launch's
# CTAs fit two per SM): the GEMV test (full; the quick set under memcheck and racecheck), the
# engine test with memcheck, the short decode grid (tests/bench/run_decode_grid_on_device.sh
# GRID=short: the goals' rows) and the GEMV benchmark of issue 5 (nvfp4_gemv_bench, tinygemm,
# report.py).  Few files under $OUT: the device tool returns at most 8.
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
echo "commit $(cat COMMIT)"
tests=$OUT/tests_s18_run7.txt
timeout 200 build-bundle/bin/gpu_test_nvfp4_gemv 20261127 > /tmp/gemv.txt 2>&1; echo "gemv test rc=$? at $SECONDS s"
cat /tmp/gemv.txt >> "$tests"
for tool in memcheck racecheck; do
  RESET_GPU_TEST_QUICK=1 timeout 150 compute-sanitizer --tool $tool --error-exitcode 3 build-bundle/bin/gpu_test_nvfp4_gemv 9 > /tmp/$tool.txt 2>&1; echo "$tool rc=$? at $SECONDS s"
  { echo "== $tool"; tail -n 3 /tmp/$tool.txt; } >> "$tests"
done
OUT=/tmp/engine timeout 280 tests/gpu/run_cuda_engine_on_device.sh > /tmp/engine.txt 2>&1; echo "engine rc $? at $SECONDS s"
{ echo "== engine"; cat /tmp/engine/test_cuda_engine.log; tail -n 3 /tmp/engine/memcheck_cuda_engine.log; } >> "$tests"
grep -E "checks|ERROR SUMMARY|RACECHECK SUMMARY|FAIL" "$tests" | head -20
OUT=/tmp/grid GRID=short timeout 300 tests/bench/run_decode_grid_on_device.sh > /tmp/grid.out 2>&1; echo "grid rc=$? at $SECONDS s"
cp /tmp/grid/decode_grid.jsonl "$OUT/decode_grid_s18_run7.jsonl"; cp /tmp/grid/decode_grid_env.json "$OUT/decode_grid_env_s18_run7.json"
python3 tests/bench/decode_grid_report.py "$OUT/decode_grid_s18_run7.jsonl" "$OUT/decode_grid_env_s18_run7.json" qwen3-8b | tail -12
timeout 150 build-bundle/bin/nvfp4_gemv_bench --json "$OUT/gemv_bench_s18_run7.json" --commit "$(cat COMMIT)" > /tmp/bench.log 2>&1; echo "bench rc $? at $SECONDS s"
PYTHONUNBUFFERED=1 timeout 60 python3 tests/bench/tinygemm_bench.py --json /tmp/tinygemm.json > /tmp/tinygemm.log 2>&1; echo "tinygemm rc $?"
cp /tmp/tinygemm.json "$OUT/tinygemm_s18_run7.json"
python3 tests/bench/report.py "$OUT/gemv_bench_s18_run7.json" "$OUT/tinygemm_s18_run7.json" --markdown "$OUT/gemv_results_s18_run7.md"
grep -iE "goal" -A8 "$OUT/gemv_results_s18_run7.md" | head -40
echo "done at $SECONDS s"
