#!/usr/bin/env bash
# Session 36, run 3 (H100): the model's weights uploaded through the page-locked staging of run 2
# (lib/cuda/staged_copy.h: 16 MB halves, a layer at a time, up to 8 host threads) instead of one
# pageable cudaMemcpy per buffer.
#  1. A/B, alternating old, new, old, new: tests/bench/model_load_bench.py on a random Qwen3-8B-shape
#     NVFP4 checkpoint (the median of 3 loads after a warm-up load, from the page cache; then the
#     SHA-256 of a 64-token prompt's logits, which must be the same for both libraries).  lib-old/ is
#     d705f84 (run 2's library: staged K/V, pageable weights).
#  2. The engine test's model-level tests on every engine model with the new library: test_model,
#     test_nvfp4_lm_head (the lm_head prepared and uploaded last), test_second_turn,
#     test_sequence_file.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="gpu_test_cuda_engine", plus
# build-bundle/lib-old/libreset.so.0), COMMIT.
source tests/bench/results/start_device_run.sh
echo "== 1. A/B: model load, pageable (old) against staged (new)"
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/qwen3-8b-nvfp4 > /tmp/checkpoint.log 2>&1
echo "checkpoint rc $? at $SECONDS s"
for round in 1 2; do
    for variant in lib-old lib; do
        PYTHONPATH=bindings/python:tests/bench RESET_LIBRARY=$PWD/build-bundle/$variant/libreset.so.0 timeout 120 \
            python3 tests/bench/model_load_bench.py /tmp/qwen3-8b-nvfp4 --repeats 3 --label "$variant round $round" \
            --out "$OUT/h100_model_load_s36_run3.jsonl"
        echo "bench $variant round $round rc $? at $SECONDS s"
    done
done
cat "$OUT/h100_model_load_s36_run3.jsonl"
echo "== 2. engine tests on every engine model"
python3 tests/gpu/make_engine_models.py /tmp/engine-models > /tmp/make_engine_models.log 2>&1
echo "models at $SECONDS s"
RESET_GPU_TEST_ONLY=test_model,test_nvfp4_lm_head,test_second_turn,test_sequence_file \
    ENGINE_MODELS=/tmp/engine-models OUT=/tmp/engine SANITIZE=0 timeout 330 tests/gpu/run_cuda_engine_on_device.sh \
    > /tmp/engine.txt 2>&1
echo "engine rc $? at $SECONDS s"
cp /tmp/engine/test_cuda_engine.log "$OUT/engine_models_s36_run3.txt"
grep -E "sequence file|checks|FAIL|failed" "$OUT/engine_models_s36_run3.txt" | head -30
echo "done at $SECONDS s"
