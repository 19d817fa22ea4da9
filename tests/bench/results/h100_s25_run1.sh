#!/usr/bin/env bash
# Session 25, run 1 (H100): the model-loading fuzz corpus replayed with the CUDA
# backend (load, upload, session creation, prefill and three device steps on
# whatever loads): the committed corpus and the 1,938 inputs libFuzzer grew on
# the CPU this session (carried as fuzz-grown.tar.xz, merged with -merge=1;
# committed as tests/fuzz/results/grown_model_load_s25.tar.xz),
# then the committed corpus under compute-sanitizer memcheck; then the engine
# test's quick set on the fixtures and the embedded model (the loader changed).
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="fuzz_replay_model_load
# gpu_test_cuda_engine"), fuzz-grown.tar.xz, COMMIT.
exec > >(tee "$OUT/run.log") 2>&1
set -u
echo "commit $(cat COMMIT)"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
tar xJf build-bundle.tar.xz
mkdir -p /tmp/grown && tar xJf fuzz-grown.tar.xz -C /tmp/grown
source build-bundle/env.sh
start=$(date +%s)
OUT=$OUT tests/fuzz/replay_on_device.sh tests/fuzz/corpus/model_load /tmp/grown/merged_model_load
echo "replay status $? in $(( $(date +%s) - start )) s"
echo "== engine test, quick set"
RESET_GPU_TEST_QUICK=1 build-bundle/bin/gpu_test_cuda_engine tests/fixtures/models/llama3-scaled \
    tests/fixtures/models/modelopt-qwen3 tests/fixtures/chat-model models/reset-arith-4m > "$OUT/engine_quick.log" 2>&1
echo "engine quick status $?"
tail -n 8 "$OUT/engine_quick.log"
