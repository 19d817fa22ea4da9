#!/usr/bin/env bash
# Session 19, run 3, the final library (81852c2, the bundle): the sampler test's quick set under
# memcheck with seed 12 (run 2's one failure there, its message cut off: which check), the quick set
# under racecheck, the full test with another seed, then the short decode grid
# (tests/bench/run_decode_grid_on_device.sh GRID=short: the goals' rows).  Few files under $OUT.
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
echo "commit $(cat COMMIT)"
tests=$OUT/tests_s19_run3.txt
RESET_GPU_TEST_QUICK=1 timeout 150 compute-sanitizer --tool memcheck --error-exitcode 3 build-bundle/bin/gpu_test_sampling 12 > /tmp/memcheck.txt 2>&1; echo "memcheck rc=$? at $SECONDS s"
{ echo "== memcheck (quick, seed 12)"; grep -E "FAIL|cut bins|test_sampling:|ERROR SUMMARY" /tmp/memcheck.txt; } >> "$tests"
RESET_GPU_TEST_QUICK=1 timeout 200 compute-sanitizer --tool racecheck --error-exitcode 3 build-bundle/bin/gpu_test_sampling 13 > /tmp/racecheck.txt 2>&1; echo "racecheck rc=$? at $SECONDS s"
{ echo "== racecheck (quick, seed 13)"; grep -E "FAIL|test_sampling:|RACECHECK SUMMARY|hazard" /tmp/racecheck.txt | head -20; tail -n 3 /tmp/racecheck.txt; } >> "$tests"
timeout 200 build-bundle/bin/gpu_test_sampling 20261128 > /tmp/sampling.txt 2>&1; echo "sampling test rc=$? at $SECONDS s"
{ echo "== full, seed 20261128"; cat /tmp/sampling.txt; } >> "$tests"
grep -E "FAIL|test_sampling:|cut bins|ERROR SUMMARY|RACECHECK SUMMARY|==" "$tests" | head -30
OUT=/tmp/grid GRID=short timeout 300 tests/bench/run_decode_grid_on_device.sh > /tmp/grid.out 2>&1; echo "grid rc=$? at $SECONDS s"
cp /tmp/grid/decode_grid.jsonl "$OUT/decode_grid_s19_run3.jsonl"; cp /tmp/grid/decode_grid_env.json "$OUT/decode_grid_env_s19_run3.json"
python3 tests/bench/decode_grid_report.py "$OUT/decode_grid_s19_run3.jsonl" "$OUT/decode_grid_env_s19_run3.json" qwen3-8b > "$OUT/decode_grid_short_s19_run3.md"
tail -n 14 "$OUT/decode_grid_short_s19_run3.md"
echo "done at $SECONDS s"
