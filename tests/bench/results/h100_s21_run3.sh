#!/usr/bin/env bash
# Session 21, run 3, the final tree (the bundle, COMMIT): the range-copy test (full; the quick set
# under memcheck) for the zero-filled ranges, the sampler test (full) for its second-draw count
# through draw_truncated, the engine test with memcheck (the step's row maxima zero-filled by
# copy_ranges), then the goals' short decode grid (Qwen3-8B shape, random checkpoints).
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
echo "commit $(cat COMMIT)"
mkdir -p /tmp/checkpoints
(for fmt in nvfp4 bf16; do python3 tests/bench/make_random_checkpoint.py qwen3-8b $fmt /tmp/checkpoints/qwen3-8b-$fmt; done) > /tmp/checkpoints.log 2>&1 &
ck_job=$!
python3 tests/gpu/make_engine_models.py /tmp/engine-models > /tmp/make_engine_models.log 2>&1 &
models_job=$!
tests=$OUT/tests_s21_run3.txt
timeout 100 build-bundle/bin/gpu_test_range_copy 20261126 > /tmp/range.txt 2>&1; echo "range copy test rc=$? at $SECONDS s"
RESET_GPU_TEST_QUICK=1 timeout 100 compute-sanitizer --tool memcheck --error-exitcode 3 build-bundle/bin/gpu_test_range_copy 21 > /tmp/range_memcheck.txt 2>&1; echo "range copy memcheck rc=$? at $SECONDS s"
{ echo "== range copy"; cat /tmp/range.txt; echo "== range copy memcheck (quick)"; tail -n 3 /tmp/range_memcheck.txt; } >> "$tests"
timeout 200 build-bundle/bin/gpu_test_sampling 20261126 > /tmp/sampling.txt 2>&1; echo "sampling test rc=$? at $SECONDS s"
{ echo "== sampling"; cat /tmp/sampling.txt; } >> "$tests"
wait $models_job; echo "engine models at $SECONDS s"
ENGINE_MODELS=/tmp/engine-models OUT=/tmp/engine timeout 220 tests/gpu/run_cuda_engine_on_device.sh > /tmp/engine.txt 2>&1; echo "engine rc $? at $SECONDS s"
{ echo "== engine"; cat /tmp/engine/test_cuda_engine.log; tail -n 3 /tmp/engine/memcheck_cuda_engine.log; } >> "$tests"
grep -E "checks|ERROR SUMMARY|FAIL|second draws|timing" "$tests" | head -30
wait $ck_job; echo "checkpoints at $SECONDS s"
OUT=/tmp/grid GRID=short CHECKPOINTS=/tmp/checkpoints timeout 200 tests/bench/run_decode_grid_on_device.sh > /tmp/grid.out 2>&1; echo "grid rc=$? at $SECONDS s"
cp /tmp/grid/decode_grid.jsonl "$OUT/decode_grid_s21_run3.jsonl"; cp /tmp/grid/decode_grid_env.json "$OUT/decode_grid_env_s21_run3.json"
python3 tests/bench/decode_grid_report.py "$OUT/decode_grid_s21_run3.jsonl" "$OUT/decode_grid_env_s21_run3.json" qwen3-8b > "$OUT/decode_grid_short_s21_run3.md"
tail -n 14 "$OUT/decode_grid_short_s21_run3.md"
echo "done at $SECONDS s"
