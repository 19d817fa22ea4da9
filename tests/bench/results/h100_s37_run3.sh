#!/usr/bin/env bash
# Session 37, run 3 (H100): the GEMV layout's repack with a table per A-fragment register and a
# group's rows taken in place (kernels/nvfp4_gemv_layout.cpp; run 2 traced it at 1.5-2.2 s of a
# 2.7 s Qwen3-8B load).
#  1. A/B, alternating old, new, old, new: tests/bench/model_load_bench.py on a random Qwen3-8B-shape
#     NVFP4 ModelOpt checkpoint; the logits' SHA-256 must be the same for both libraries (the same
#     bytes reach the device).  lib-old/ is b734f57 (run 2's library).
#  2. RESET_LOAD_TRACE=1 on the new library.
#  3. The engine test's test_model on every engine model (CPU against CUDA logits; the ModelOpt
#     fixture's q/k/v and gate/up repacked from their parts).
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="gpu_test_cuda_engine", plus
# build-bundle/lib-old/libreset.so.0), COMMIT.
source tests/bench/results/start_device_run.sh
echo "== 1. A/B: model load, nibble-by-nibble repack (old) against tables and parts (new)"
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/qwen3-8b-nvfp4 > /tmp/checkpoint.log 2>&1
echo "checkpoint rc $? at $SECONDS s"
for round in 1 2; do
    for variant in lib-old lib; do
        PYTHONPATH=bindings/python:tests/bench RESET_LIBRARY=$PWD/build-bundle/$variant/libreset.so.0 timeout 120 \
            python3 tests/bench/model_load_bench.py /tmp/qwen3-8b-nvfp4 --repeats 3 --label "$variant round $round" \
            --out "$OUT/h100_model_load_s37_run3.jsonl"
        echo "bench $variant round $round rc $? at $SECONDS s"
    done
done
cat "$OUT/h100_model_load_s37_run3.jsonl"
echo "== 2. load trace, new library"
RESET_LOAD_TRACE=1 PYTHONPATH=bindings/python:tests/bench RESET_LIBRARY=$PWD/build-bundle/lib/libreset.so.0 \
    timeout 120 python3 tests/bench/model_load_bench.py /tmp/qwen3-8b-nvfp4 --repeats 2 --label "traced" \
    --out /dev/null 2> "$OUT/h100_load_trace_s37_run3.txt"
cat "$OUT/h100_load_trace_s37_run3.txt"
echo "== 3. engine test_model on every engine model"
python3 tests/gpu/make_engine_models.py /tmp/engine-models > /tmp/make_engine_models.log 2>&1
echo "models at $SECONDS s"
RESET_GPU_TEST_ONLY=test_model ENGINE_MODELS=/tmp/engine-models OUT=/tmp/engine SANITIZE=0 timeout 240 \
    tests/gpu/run_cuda_engine_on_device.sh > /tmp/engine.txt 2>&1
echo "engine rc $? at $SECONDS s"
cp /tmp/engine/test_cuda_engine.log "$OUT/engine_model_s37_run3.txt"
grep -E "checks|FAIL|failed" "$OUT/engine_model_s37_run3.txt" | head -30
echo "done at $SECONDS s"
