#!/usr/bin/env bash
# Session 34, run 2 (H100): what reset_copy_sequence costs against prefilling the same tokens, on a
# random Qwen3-8B-shape NVFP4 checkpoint (tests/bench/make_random_checkpoint.py), BF16 and FP8 KV cache,
# contexts 1k, 4k, 8k (tests/bench/copy_sequence_bench.py, medians of 9 after a warm-up).
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset gpu_test_cuda_engine fuzz_replay_session"), COMMIT.
source tests/bench/results/start_device_run.sh
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/qwen3-8b-nvfp4 > /tmp/checkpoint.log 2>&1
echo "checkpoint rc $? at $SECONDS s"
PYTHONPATH=bindings/python RESET_LIBRARY=$PWD/build-bundle/lib/libreset.so.0 timeout 400 \
    python3 tests/bench/copy_sequence_bench.py /tmp/qwen3-8b-nvfp4 --contexts 1024,4096,8192 --kv bf16,fp8 \
    --repeats 9 --out "$OUT/h100_copy_sequence_s34_run2.jsonl"
echo "bench rc $? at $SECONDS s"
cat "$OUT/h100_copy_sequence_s34_run2.jsonl"
echo "done at $SECONDS s"
