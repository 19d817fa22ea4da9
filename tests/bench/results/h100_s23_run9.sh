#!/usr/bin/env bash
# Session 23, run 9 (the bundle: COMMIT + the working tree): test_cuda_engine after the review's
# refactor (one prefill_and_decode helper for the greedy, sampling and NVFP4-lm_head comparisons;
# the checks unchanged), every engine model, then the quick set under memcheck.
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
echo "commit $(cat COMMIT)"
python3 tests/gpu/make_engine_models.py /tmp/engine-models > /tmp/make_engine_models.log 2>&1
echo "engine models at $SECONDS s"
ENGINE_MODELS=/tmp/engine-models OUT=/tmp/engine timeout 300 tests/gpu/run_cuda_engine_on_device.sh > /tmp/engine.txt 2>&1; echo "engine rc $? at $SECONDS s"
{ echo "== engine"; cat /tmp/engine/test_cuda_engine.log; echo "== memcheck (quick)"; tail -n 5 /tmp/engine/memcheck_cuda_engine.log; } > "$OUT/tests_s23_run9.txt"
grep -E "checks|ERROR SUMMARY|FAIL" "$OUT/tests_s23_run9.txt"
echo "done at $SECONDS s"
