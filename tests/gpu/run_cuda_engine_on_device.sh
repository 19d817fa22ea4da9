#!/usr/bin/env bash
# run_cuda_engine_on_device.sh — on the GPU machine, from the repository root,
# with build-bundle/ carried over (scripts/make_device_bundle.sh): make the
# engine test's random-weight HF models with transformers, run the CUDA
# engine against the CPU reference (tests/gpu/test_cuda_engine.cpp), then
# compute-sanitizer memcheck over a quick run.  Outputs under $OUT.
# PASSES (default main,new_token,float_input,memcheck; SANITIZE=0 drops
# memcheck): which of the four to run.  On an H100 the main pass took ~390 s
# (sessions 43, 45) and new_token more than 150 s, so they do not all fit one
# 10-minute device call: PASSES=main in one, the others in the next (the quick
# set, RESET_GPU_TEST_QUICK=1, runs the main pass in ~45 s on an H200).
set -uo pipefail
out=${OUT:-$PWD/build-device/out}
mkdir -p "$out"
source build-bundle/env.sh  # the bundle's libraries and the machine's cuBLAS
models=${ENGINE_MODELS:-/tmp/engine-models}
status=0
passes=,${PASSES:-main,new_token,float_input,memcheck},
[[ ${SANITIZE:-1} == 0 ]] && passes=${passes//,memcheck,/,}
if [[ ! -d $models/engine-llama3 ]]; then
    python3 tests/gpu/make_engine_models.py "$models" > "$out/make_engine_models.log" 2>&1 || { cat "$out/make_engine_models.log"; exit 1; }
fi
# The engine's own HF models (head_dim 64/128), the golden fixtures whose head
# dimension the kernels serve (16, 32; qwen3-tied's 24 is not), and the embedded model.
dirs=("$models"/engine-* tests/fixtures/models/llama3-scaled tests/fixtures/models/qwen2-bias-sharded
      tests/fixtures/models/modelopt-qwen3 tests/fixtures/models/ct-nvfp4-qwen3
      tests/fixtures/models/ct-nvfp4a16-head-qwen3 tests/fixtures/chat-model
      models/reset-arith-4m "$@")
if [[ $passes == *,main,* ]]; then
    echo "== test_cuda_engine ${dirs[*]}"
    build-bundle/bin/gpu_test_cuda_engine "${dirs[@]}" > "$out/test_cuda_engine.log" 2>&1 || status=1
    tail -n 60 "$out/test_cuda_engine.log"
fi
# The default takes the new token inside attention only from 6-8 rows (new_token_in_attention_pays),
# in this test only test_model's 8-row ReSET case; test_model again with it in every step.
if [[ $passes == *,new_token,* ]]; then
    echo "== test_model, new token inside attention (RESET_NEW_TOKEN_IN_ATTENTION=2)"
    RESET_NEW_TOKEN_IN_ATTENTION=2 RESET_GPU_TEST_ONLY=test_model build-bundle/bin/gpu_test_cuda_engine "${dirs[@]}" \
        > "$out/test_cuda_engine_new_token.log" 2>&1 || status=1
    tail -n 3 "$out/test_cuda_engine_new_token.log"
fi
# Since session 47 the o and down GEMVs read prepared FP16 at every row count; their FP32 read and
# the gate_up -> down pair kernel (from 2 rows) stay behind A/B knobs: test_model again with them.
if [[ $passes == *,float_input,* ]]; then
    echo "== test_model, o and down reading FP32 with the pair kernel (RESET_{O,DOWN}_FLOAT_INPUT_ROWS=8)"
    RESET_O_FLOAT_INPUT_ROWS=8 RESET_DOWN_FLOAT_INPUT_ROWS=8 RESET_GPU_TEST_ONLY=test_model \
        build-bundle/bin/gpu_test_cuda_engine "${dirs[@]}" > "$out/test_cuda_engine_float_input.log" 2>&1 || status=1
    tail -n 3 "$out/test_cuda_engine_float_input.log"
fi
if [[ $passes == *,memcheck,* ]]; then
    echo "== compute-sanitizer memcheck (quick)"
    RESET_GPU_TEST_QUICK=1 compute-sanitizer --tool memcheck --error-exitcode 3 --leak-check no \
        build-bundle/bin/gpu_test_cuda_engine "$models/engine-qwen3" > "$out/memcheck_cuda_engine.log" 2>&1 || status=1
    tail -n 5 "$out/memcheck_cuda_engine.log"
fi
exit $status
