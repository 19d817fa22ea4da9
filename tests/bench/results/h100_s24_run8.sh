#!/usr/bin/env bash
# Session 24, run 8 (the bundle: COMMIT, the final tree after the review): test_cuda_engine on every engine model
# and the quick set under memcheck, after the review commit (breaking_on_failure, the step text cleared at the step start,
# EnginePair in the test).
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version --format=csv
echo "commit $(cat COMMIT)"
python3 tests/gpu/make_engine_models.py /tmp/engine-models > /tmp/make_engine_models.log 2>&1
ENGINE_MODELS=/tmp/engine-models OUT=/tmp/engine timeout 500 tests/gpu/run_cuda_engine_on_device.sh > /tmp/engine.txt 2>&1; echo "engine rc $? at $SECONDS s"
{ echo "== engine"; cat /tmp/engine/test_cuda_engine.log; echo "== memcheck (quick)"; tail -n 8 /tmp/engine/memcheck_cuda_engine.log; } > "$OUT/tests_s24_run8.txt"
grep -E "checks|ERROR SUMMARY|FAIL|refused" "$OUT/tests_s24_run8.txt"
echo "done at $SECONDS s"
