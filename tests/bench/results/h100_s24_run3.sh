#!/usr/bin/env bash
# Session 24, run 3: can the two new engine tests fail?  gpu_test_cuda_engine_prev is this
# session's test_cuda_engine.cpp built against the library before the session (22919ab, a git
# worktree); test_reset_window and test_cancelled_prefill should fail there (the rings grown by a
# step, not by reset_set_policy; a cancelled prefill replacing the device's logits), on the
# random Qwen3 engine model and the embedded model.
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version --format=csv
python3 tests/gpu/make_engine_models.py /tmp/engine-models > /tmp/make_engine_models.log 2>&1
timeout 300 build-bundle/bin/gpu_test_cuda_engine_prev /tmp/engine-models/engine-qwen3 models/reset-arith-4m > "$OUT/prev_library_new_tests_s24_run3.txt" 2>&1
echo "rc $? at $SECONDS s"
grep -E "window|cancel|checks" "$OUT/prev_library_new_tests_s24_run3.txt"
