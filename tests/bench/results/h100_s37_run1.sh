#!/usr/bin/env bash
# Session 37, run 1 (H100): a ModelOpt export's NVFP4 codes and scales read in place from the
# mapped checkpoint (lib/model/weights.h, WeightBytes) instead of copied on one thread, and
# `reset chat --session` / `/session save|load` on the CUDA backend.
#  1. In the background: tests/cli/test_commands.py with the bundle's `reset` (AUTO picks CUDA
#     wherever the kernels serve the fixture: the session tests continue a conversation there).
#  2. A/B, alternating old, new, old, new: tests/bench/model_load_bench.py on a random Qwen3-8B-shape
#     NVFP4 checkpoint, the median of 3 loads after a warm-up (page cache), split by the progress
#     callback into reading the checkpoint and the device work; the SHA-256 of a 64-token prompt's
#     logits must be the same for both libraries.  lib-old/ is b39ef68 (session 36's library).
#  3. The same checkpoint on the CPU backend, one load each: time and the process's peak RSS.
#  4. The engine test's model-level tests on every engine model with the new library.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="gpu_test_cuda_engine reset", plus
# build-bundle/lib-old/libreset.so.0), COMMIT.
source tests/bench/results/start_device_run.sh
R=build-bundle/bin/reset
(
    timeout 300 python3 tests/cli/test_commands.py "$PWD/$R" "$PWD" > "$OUT/cli_s37_run1.txt" 2>&1
    echo "cli rc $? at $SECONDS s" >> "$OUT/cli_s37_run1.txt"
) &
cli=$!
echo "== 2. A/B: model load, copied codes (old) against codes in place (new)"
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/qwen3-8b-nvfp4 > /tmp/checkpoint.log 2>&1
echo "checkpoint rc $? at $SECONDS s"
for round in 1 2; do
    for variant in lib-old lib; do
        PYTHONPATH=bindings/python:tests/bench RESET_LIBRARY=$PWD/build-bundle/$variant/libreset.so.0 timeout 150 \
            python3 tests/bench/model_load_bench.py /tmp/qwen3-8b-nvfp4 --repeats 3 --label "$variant round $round" \
            --out "$OUT/h100_model_load_s37_run1.jsonl"
        echo "bench $variant round $round rc $? at $SECONDS s"
    done
done
echo "== 3. the CPU backend: load time and peak RSS"
for variant in lib-old lib; do
    PYTHONPATH=bindings/python:tests/bench RESET_LIBRARY=$PWD/build-bundle/$variant/libreset.so.0 timeout 150 \
        python3 tests/bench/model_load_bench.py /tmp/qwen3-8b-nvfp4 --repeats 1 --backend cpu --label "$variant cpu" \
        --out "$OUT/h100_model_load_cpu_s37_run1.jsonl"
    echo "cpu $variant rc $? at $SECONDS s"
done
cat "$OUT/h100_model_load_s37_run1.jsonl" "$OUT/h100_model_load_cpu_s37_run1.jsonl"
echo "== 4. engine tests on every engine model"
python3 tests/gpu/make_engine_models.py /tmp/engine-models > /tmp/make_engine_models.log 2>&1
echo "models at $SECONDS s"
RESET_GPU_TEST_ONLY=test_model,test_nvfp4_lm_head,test_second_turn,test_sequence_file \
    ENGINE_MODELS=/tmp/engine-models OUT=/tmp/engine SANITIZE=0 timeout 300 tests/gpu/run_cuda_engine_on_device.sh \
    > /tmp/engine.txt 2>&1
echo "engine rc $? at $SECONDS s"
cp /tmp/engine/test_cuda_engine.log "$OUT/engine_models_s37_run1.txt"
grep -E "checks|FAIL|failed" "$OUT/engine_models_s37_run1.txt" | head -30
wait $cli
tail -3 "$OUT/cli_s37_run1.txt"; grep -E "^FAIL" "$OUT/cli_s37_run1.txt" | head
echo "done at $SECONDS s"
