#!/usr/bin/env bash
# Session 49, run 2 (H200): the BF16 GEMV's tensor-core path as run 1 found it faster (a K slice
# takes neighbouring step pairs; one CTA per group of tiles) and the BF16 lm_head on it from 4
# rows, against 0a770c6's kernel and rule relinked (.ab/head).
#  1. gpu_test_bf16_gemv (new kernel), its quick set under memcheck and racecheck.
#  2. The engine test's quick set.
#  3. New against old, alternated: NVFP4 1k batch 1, 2, 4, 8 (3 rounds).
#  4. The lm_head's bound (RESET_LM_HEAD_TENSOR_CORES_FROM 2, 4), 1k batch 2 and 3 (3 rounds).
#  5. The step timeline at 1k batch 1 with 49 and 16 attention splits (session 48's ready
#     measurement; trace library with attention_splits_knob_s48.patch), 2 rounds.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset gpu_test_cuda_engine gpu_test_bf16_gemv"),
# .ab/head (build_gemv_variant_lib.sh head with 0a770c6's tree, KERNELS=bf16_gemv
# SOURCES=lib/cuda/device_session.cpp), .ab/trace, COMMIT.
source tests/bench/results/start_device_run.sh
ck=/tmp/ck/qwen3-8b-nvfp4
(python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 $ck > /tmp/ck.log 2>&1) &
writer=$!
mkdir -p /tmp/head && xz -dc .ab/head/libreset.so.0.xz > /tmp/head/libreset.so.0
echo "== 1. bf16 gemv test at $SECONDS s"
timeout 90 build-bundle/bin/gpu_test_bf16_gemv > "$OUT/bf16_gemv_test_s49_run2.txt" 2>&1
echo "bf16 gemv rc $?: $(tail -n 1 "$OUT/bf16_gemv_test_s49_run2.txt")"
grep -E "FAIL" "$OUT/bf16_gemv_test_s49_run2.txt" | head -5
grep -E "tensor cores" "$OUT/bf16_gemv_test_s49_run2.txt" | sed 's/^timing: //'
for tool in memcheck racecheck; do
    RESET_GPU_TEST_QUICK=1 timeout 120 compute-sanitizer --tool $tool build-bundle/bin/gpu_test_bf16_gemv \
        > "$OUT/bf16_gemv_${tool}_s49_run2.txt" 2>&1
    echo "$tool rc $?: $(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/bf16_gemv_${tool}_s49_run2.txt")"
done
echo "== 2. engine test (quick set) at $SECONDS s"
PASSES=main RESET_GPU_TEST_QUICK=1 OUT=/tmp/engine timeout 100 tests/gpu/run_cuda_engine_on_device.sh > /tmp/engine.txt 2>&1
echo "engine rc $? at $SECONDS s"
cp /tmp/engine/test_cuda_engine.log "$OUT/engine_s49_run2.txt"
grep -E "checks|FAIL" "$OUT/engine_s49_run2.txt" | head
wait $writer
echo "== 3. new against 0a770c6 at $SECONDS s"
OUT=/tmp/ab tests/bench/ab_decode_on_device.sh /tmp/head $ck 3 --weights auto \
    --prompt-tokens 1024 --sequences 1,2,4,8 --tokens 64 --repeat 2 > "$OUT/bf16_gemv_ab_s49_run2.jsonl"
python3 tests/bench/ab_summary.py "$OUT/bf16_gemv_ab_s49_run2.jsonl"
echo "== 4. the lm_head's bound at $SECONDS s"
OUT=/tmp/ab tests/bench/ab_env_decode_on_device.sh RESET_LM_HEAD_TENSOR_CORES_FROM "4 2" $ck 3 --weights auto \
    --prompt-tokens 1024 --sequences 2,3 --tokens 64 --repeat 2 > "$OUT/lm_head_from_ab_s49_run2.jsonl"
python3 tests/bench/ab_summary.py "$OUT/lm_head_from_ab_s49_run2.jsonl"
echo "== 5. attention splits timeline at $SECONDS s"
for round in 1 2; do
    for s in 49 16; do
        tests/bench/step_trace_on_device.sh $ck "b1_1k splits=$s round $round" "$OUT/step_trace_attention_splits_s49_run2.txt" \
            RESET_ATTENTION_SPLITS=$s -- --tokens 64 --repeat 1 --prompt-tokens 1024 --sequences 1
    done
done
grep -E "^==|^step|attention" "$OUT/step_trace_attention_splits_s49_run2.txt"
echo "done at $SECONDS s"
