#!/usr/bin/env bash
# Session 24, run 4 (the bundle: COMMIT + the working tree): test_cuda_engine with
# test_second_turn (a 300-id turn prefilled per sequence after two samples diverged, against the
# CPU engine), every engine model, then the quick set under memcheck.
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version --format=csv
echo "commit $(cat COMMIT) + working tree"
[[ -d /tmp/engine-models/engine-llama3 ]] || python3 tests/gpu/make_engine_models.py /tmp/engine-models > /tmp/make_engine_models.log 2>&1
echo "engine models at $SECONDS s"
ENGINE_MODELS=/tmp/engine-models OUT=/tmp/engine timeout 420 tests/gpu/run_cuda_engine_on_device.sh > /tmp/engine.txt 2>&1; echo "engine rc $? at $SECONDS s"
{ echo "== engine"; cat /tmp/engine/test_cuda_engine.log; echo "== memcheck (quick)"; tail -n 8 /tmp/engine/memcheck_cuda_engine.log; } > "$OUT/tests_s24_run4.txt"
grep -E "checks|ERROR SUMMARY|FAIL|second turn" "$OUT/tests_s24_run4.txt"
echo "done at $SECONDS s"
