#!/usr/bin/env bash
# Session 36, run 2 (H100): a sequence's K/V through page-locked staging (lib/cuda/staged_copy.h: two
# 4 MB halves, up to 8 host threads copying, the device copying the other half; the load's layers in
# one pipeline), after run 1 measured the pageable copies at ~7.5 GB/s.
#  1. gpu_test_staged_copy (random segments through halves of 1 B .. 4 MB, 1/3/8 threads).
#  2. test_sequence_file and test_copy_sequence on every engine model.
#  3. A/B on the Qwen3-8B shape, alternating old, new, old, new: sequence_file_bench.py with the
#     library before this change (lib-old/: commit 502bc82, run 1's) and after, BF16 and FP8 caches,
#     1k and 8k tokens, medians of 5 after a warm-up.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset gpu_test_cuda_engine gpu_test_staged_copy", plus
# build-bundle/lib-old/libreset.so.0), COMMIT.
source tests/bench/results/start_device_run.sh
echo "== 1. gpu_test_staged_copy"
timeout 120 build-bundle/bin/gpu_test_staged_copy | tee "$OUT/staged_copy_s36_run2.txt" | tail -3
echo "staged copy rc ${PIPESTATUS[0]} at $SECONDS s"
echo "== 2. test_sequence_file, test_copy_sequence on every engine model"
python3 tests/gpu/make_engine_models.py /tmp/engine-models > /tmp/make_engine_models.log 2>&1
RESET_GPU_TEST_ONLY=test_sequence_file,test_copy_sequence ENGINE_MODELS=/tmp/engine-models OUT=/tmp/engine \
    SANITIZE=0 timeout 200 tests/gpu/run_cuda_engine_on_device.sh > /tmp/engine.txt 2>&1
echo "engine rc $? at $SECONDS s"
cp /tmp/engine/test_cuda_engine.log "$OUT/engine_sequence_file_s36_run2.txt"
grep -E "sequence file|copy|checks|FAIL|failed" "$OUT/engine_sequence_file_s36_run2.txt" | head -30
echo "== 3. A/B: pageable copies (old) against staged (new)"
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/qwen3-8b-nvfp4 > /tmp/checkpoint.log 2>&1
echo "checkpoint rc $? at $SECONDS s"
for round in 1 2; do
    for variant in lib-old lib; do
        PYTHONPATH=bindings/python RESET_LIBRARY=$PWD/build-bundle/$variant/libreset.so.0 timeout 120 \
            python3 tests/bench/sequence_file_bench.py /tmp/qwen3-8b-nvfp4 --contexts 1024,8192 --kv bf16,fp8 \
            --repeats 5 --out "$OUT/h100_sequence_file_s36_run2_${variant}_round$round.jsonl"
        echo "bench $variant round $round rc $? at $SECONDS s"
        python3 -c '
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    print(sys.argv[2], r["kv_cache"], r["tokens"], "load", r["load_ms"], "load_memory", r["load_memory_ms"],
          "save_memory", r["save_memory_ms"], "save", r["save_ms"], "same", r["same_logits_bits"], r["memory_is_file"])
' "$OUT/h100_sequence_file_s36_run2_${variant}_round$round.jsonl" "$variant"
    done
done
echo "done at $SECONDS s"
