#!/usr/bin/env bash
# Session 36, run 1 (H100): ABI 0.9 (a sequence's state in memory).
#  1. test_sequence_file (now also through memory: the file's bytes, loaded back exactly) and
#     test_copy_sequence on every engine model.
#  2. fuzz_sequence_file (loading from memory now) on CUDA, committed and grown corpora; fuzz_session's
#     committed corpus (its save-and-load operation half through memory).
#  3. What saving and loading cost through a file and through memory, against a prefill, on a random
#     Qwen3-8B-shape NVFP4 checkpoint (tests/bench/sequence_file_bench.py), BF16 and FP8 caches,
#     1k/4k/8k tokens, medians of 5 after a warm-up: the library as committed, then (A/B, same run) the
#     same library with MAP_POPULATE on its file mappings (lib-populate/, built from the commit with that
#     one flag added to MappedFile's mmap), to see whether faulting the mapping in costs the load.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset gpu_test_cuda_engine fuzz_replay_session
# fuzz_replay_sequence_file", plus build-bundle/lib-populate/libreset.so.0), COMMIT.
source tests/bench/results/start_device_run.sh
echo "== 1. test_sequence_file, test_copy_sequence on every engine model"
python3 tests/gpu/make_engine_models.py /tmp/engine-models > /tmp/make_engine_models.log 2>&1
echo "models at $SECONDS s"
RESET_GPU_TEST_ONLY=test_sequence_file,test_copy_sequence ENGINE_MODELS=/tmp/engine-models OUT=/tmp/engine \
    SANITIZE=0 timeout 200 tests/gpu/run_cuda_engine_on_device.sh > /tmp/engine.txt 2>&1
echo "engine rc $? at $SECONDS s"
cp /tmp/engine/test_cuda_engine.log "$OUT/engine_sequence_file_s36_run1.txt"
grep -E "sequence file|copy|checks|FAIL|failed" "$OUT/engine_sequence_file_s36_run1.txt" | head -30
echo "== 2. fuzz replays on CUDA"
mkdir -p /tmp/grown && tar xJf tests/fuzz/grown/sequence_file.tar.xz -C /tmp/grown
FUZZ_TARGET=sequence_file timeout 100 tests/fuzz/replay_on_device.sh tests/fuzz/corpus/sequence_file \
    /tmp/grown/sequence_file
echo "replay sequence_file rc $? at $SECONDS s"; tail -n 1 "$OUT/fuzz_replay_cuda_sequence_file.log"
FUZZ_TARGET=session timeout 60 tests/fuzz/replay_on_device.sh tests/fuzz/corpus/session
echo "replay session rc $? at $SECONDS s"; tail -n 1 "$OUT/fuzz_replay_cuda_session.log"
echo "== 3. save / load through a file and memory, against a prefill, on the Qwen3-8B shape"
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/qwen3-8b-nvfp4 > /tmp/checkpoint.log 2>&1
echo "checkpoint rc $? at $SECONDS s"
for variant in lib lib-populate; do
    PYTHONPATH=bindings/python RESET_LIBRARY=$PWD/build-bundle/$variant/libreset.so.0 timeout 200 \
        python3 tests/bench/sequence_file_bench.py /tmp/qwen3-8b-nvfp4 --contexts 1024,4096,8192 --kv bf16,fp8 \
        --repeats 5 --out "$OUT/h100_sequence_file_s36_run1_$variant.jsonl"
    echo "bench $variant rc $? at $SECONDS s"
    cat "$OUT/h100_sequence_file_s36_run1_$variant.jsonl"
done
echo "done at $SECONDS s"
