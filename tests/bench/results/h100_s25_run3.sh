#!/usr/bin/env bash
# Session 25, run 3 (H100, the final tree): the engine test against the CPU
# reference on every model (tests/gpu/run_cuda_engine_on_device.sh: the random
# HF models, the fixtures, the embedded model; then memcheck over the quick
# set), after this session's loader, tokenizer and threads changes; then the
# committed model-loading fuzz corpus on the CUDA backend.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="fuzz_replay_model_load gpu_test_cuda_engine"), COMMIT.
exec > >(tee "$OUT/run.log") 2>&1
set -u
echo "commit $(cat COMMIT)"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
tar xJf build-bundle.tar.xz
start=$(date +%s)
ENGINE_MODELS=/tmp/engine-models OUT=$OUT tests/gpu/run_cuda_engine_on_device.sh
echo "engine test status $? in $(( $(date +%s) - start )) s"
source build-bundle/env.sh
RESET_FUZZ_BACKEND=cuda build-bundle/bin/fuzz_replay_model_load tests/fuzz/corpus/model_load 2>&1 | tail -n 1
