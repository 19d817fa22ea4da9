#!/usr/bin/env bash
# Session 37, run 2 (H100): where a model load's time goes, and the engine tests on the library
# whose ModelOpt codes are read in place (run 1 ran out of time before them: its CPU-backend
# loads prefilled 64 tokens of an 8B model on the CPU, minutes each).
#  1. RESET_LOAD_TRACE=1 (lib/util/load_trace.h) on three loads of a random Qwen3-8B-shape NVFP4
#     ModelOpt checkpoint (page cache warm after the first), through model_load_bench.py.
#  2. The engine test's model-level tests on every engine model (the ModelOpt fixture among them).
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="gpu_test_cuda_engine reset"), COMMIT.
source tests/bench/results/start_device_run.sh
echo "== 1. load trace"
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/qwen3-8b-nvfp4 > /tmp/checkpoint.log 2>&1
echo "checkpoint rc $? at $SECONDS s"
RESET_LOAD_TRACE=1 PYTHONPATH=bindings/python:tests/bench RESET_LIBRARY=$PWD/build-bundle/lib/libreset.so.0 \
    timeout 120 python3 tests/bench/model_load_bench.py /tmp/qwen3-8b-nvfp4 --repeats 2 --label "traced" \
    --out "$OUT/h100_model_load_trace_s37_run2.jsonl" 2> "$OUT/h100_load_trace_s37_run2.txt"
echo "trace rc $? at $SECONDS s"
cat "$OUT/h100_load_trace_s37_run2.txt" "$OUT/h100_model_load_trace_s37_run2.jsonl"
echo "== 2. engine tests on every engine model"
python3 tests/gpu/make_engine_models.py /tmp/engine-models > /tmp/make_engine_models.log 2>&1
echo "models at $SECONDS s"
RESET_GPU_TEST_ONLY=test_model,test_nvfp4_lm_head,test_second_turn,test_sequence_file \
    ENGINE_MODELS=/tmp/engine-models OUT=/tmp/engine SANITIZE=0 timeout 360 tests/gpu/run_cuda_engine_on_device.sh \
    > /tmp/engine.txt 2>&1
echo "engine rc $? at $SECONDS s"
cp /tmp/engine/test_cuda_engine.log "$OUT/engine_models_s37_run2.txt"
grep -E "checks|FAIL|failed" "$OUT/engine_models_s37_run2.txt" | head -30
echo "done at $SECONDS s"
