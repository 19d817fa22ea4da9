#!/usr/bin/env bash
# Session 24, run 7 (the bundle: COMMIT, the final tree): test_cuda_engine on every engine model
# and the quick set under memcheck, after the step's per-sequence results were folded into one
# helper (Session::start_result) following run 6.
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version --format=csv
echo "commit $(cat COMMIT)"
python3 tests/gpu/make_engine_models.py /tmp/engine-models > /tmp/make_engine_models.log 2>&1
ENGINE_MODELS=/tmp/engine-models OUT=/tmp/engine timeout 500 tests/gpu/run_cuda_engine_on_device.sh > /tmp/engine.txt 2>&1; echo "engine rc $? at $SECONDS s"
{ echo "== engine"; cat /tmp/engine/test_cuda_engine.log; echo "== memcheck (quick)"; tail -n 8 /tmp/engine/memcheck_cuda_engine.log; } > "$OUT/tests_s24_run7.txt"
grep -E "checks|ERROR SUMMARY|FAIL|refused" "$OUT/tests_s24_run7.txt"
echo "done at $SECONDS s"
