#!/usr/bin/env bash
# Session 38, run 6 (H100): the CUDA backend's load repacks the NVFP4 layers on a thread of its own
# while it uploads the layers before (lib/cuda/device_model.cpp, LayerRepacker); before, every
# layer was repacked, then all were uploaded.
#  1. A/B, alternating old, new, 3 rounds: tests/bench/model_load_bench.py on a random
#     Qwen3-8B-shape NVFP4 checkpoint (the median of 3 loads after a warm-up, page cache); the
#     same logits' SHA-256.  lib-old/ is 5c02a6d (the library as session 37 left it).
#  2. RESET_LOAD_TRACE=1 on both libraries.
#  3. The engine test: test_repack_error (new: a negative block scale in the first and in the last
#     layer of the ModelOpt fixture fails the load with RESET_ERR_FORMAT, then the intact one loads
#     and decodes) and test_model, on every engine model, with the new library's objects.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset gpu_test_cuda_engine", plus
# build-bundle/lib-old/libreset.so.0), COMMIT.
source tests/bench/results/start_device_run.sh
python3 tests/gpu/make_engine_models.py /tmp/engine-models > /tmp/make_engine_models.log 2>&1 &
models=$!
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/qwen3-8b-nvfp4 > /tmp/checkpoint.log 2>&1
echo "checkpoint rc $? at $SECONDS s"
wait $models; echo "engine models rc $? at $SECONDS s"
for round in 1 2 3; do
    for variant in lib-old lib; do
        PYTHONPATH=bindings/python:tests/bench RESET_LIBRARY=$PWD/build-bundle/$variant/libreset.so.0 timeout 100 \
            python3 tests/bench/model_load_bench.py /tmp/qwen3-8b-nvfp4 --repeats 3 --label "$variant round $round" \
            --out "$OUT/h100_model_load_s38_run6.jsonl"
        echo "bench $variant round $round rc $? at $SECONDS s"
    done
done
cat "$OUT/h100_model_load_s38_run6.jsonl"
for variant in lib-old lib; do
    echo "== trace, $variant"
    RESET_LOAD_TRACE=1 PYTHONPATH=bindings/python:tests/bench RESET_LIBRARY=$PWD/build-bundle/$variant/libreset.so.0 \
        timeout 100 python3 tests/bench/model_load_bench.py /tmp/qwen3-8b-nvfp4 --repeats 2 --label "traced $variant" \
        --out /dev/null 2>&1 | grep -v '^{' | tail -12
done > "$OUT/h100_load_trace_s38_run6.txt" 2>&1
cat "$OUT/h100_load_trace_s38_run6.txt"
echo "== engine test at $SECONDS s"
RESET_GPU_TEST_ONLY=test_repack_error,test_model ENGINE_MODELS=/tmp/engine-models OUT=/tmp/engine SANITIZE=0 \
    timeout 330 tests/gpu/run_cuda_engine_on_device.sh > /tmp/engine.txt 2>&1
echo "engine rc $? at $SECONDS s"
cp /tmp/engine/test_cuda_engine.log "$OUT/engine_s38_run6.txt"
grep -E "test_repack_error|checks|FAIL" "$OUT/engine_s38_run6.txt" | head -20
echo "done at $SECONDS s"
