#!/usr/bin/env bash
# Session 35, run 2 (H100): after run 1's two FP8 failures (test_sequence_file had each engine load the
# other's file into the same sequence, so the two sequence 2s started a cache rounding apart; now each
# loaded file meets, in the other engine, a copy of the same state: both hold the same K/V bytes).
#  1. test_sequence_file alone (RESET_GPU_TEST_ONLY) on every engine model.
#  2. What saving and loading cost against a prefill, on a random Qwen3-8B-shape NVFP4 checkpoint
#     (tests/bench/make_random_checkpoint.py), BF16 and FP8 caches, 1k/4k/8k tokens, medians of 5 after a
#     warm-up, and the file checked by the safetensors package (tests/bench/sequence_file_bench.py).
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset gpu_test_cuda_engine fuzz_replay_session
# fuzz_replay_sequence_file"), COMMIT.
source tests/bench/results/start_device_run.sh
echo "== 1. test_sequence_file on every engine model"
python3 tests/gpu/make_engine_models.py /tmp/engine-models > /tmp/make_engine_models.log 2>&1
echo "models at $SECONDS s"
RESET_GPU_TEST_ONLY=test_sequence_file ENGINE_MODELS=/tmp/engine-models OUT=/tmp/engine SANITIZE=0 timeout 200 \
    tests/gpu/run_cuda_engine_on_device.sh > /tmp/engine.txt 2>&1
echo "engine rc $? at $SECONDS s"
cp /tmp/engine/test_cuda_engine.log "$OUT/engine_sequence_file_s35_run2.txt"
grep -E "sequence file|checks|FAIL|failed" "$OUT/engine_sequence_file_s35_run2.txt" | head -30
echo "== 2. save / load / prefill on the Qwen3-8B shape"
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/qwen3-8b-nvfp4 > /tmp/checkpoint.log 2>&1
echo "checkpoint rc $? at $SECONDS s"
df -h /tmp | tail -1
PYTHONPATH=bindings/python RESET_LIBRARY=$PWD/build-bundle/lib/libreset.so.0 timeout 330 \
    python3 tests/bench/sequence_file_bench.py /tmp/qwen3-8b-nvfp4 --contexts 1024,4096,8192 --kv bf16,fp8 \
    --repeats 5 --out "$OUT/h100_sequence_file_s35_run2.jsonl"
echo "bench rc $? at $SECONDS s"
cat "$OUT/h100_sequence_file_s35_run2.jsonl"
echo "done at $SECONDS s"
