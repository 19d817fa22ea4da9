#!/usr/bin/env bash
# Session 50, run 4 (H200): BF16 mode at batch 1.  Run 1's GEMV timings at 1 token (FP32 path) against
# 2 tokens (tensor cores): gate_up 90.0 against 60.7 us (2.24 against 3.32 TB/s), the other shapes
# within 2-3 us.  The FP32 plan splits gate_up's K 16 ways (choose_k_split's wave arithmetic: 188
# against 192 at one slice), each slice 256 columns.  Two experimental knobs (not committed):
#   RESET_BF16_GEMV_TENSOR_CORES_FROM=1  the tensor-core path from 1 token
#   RESET_BF16_GEMV_FP32_MAX_SLICES=N    the FP32 path's K split capped at N
#  1. gpu_test_bf16_gemv (its timing has a 1-token tensor-core row) under each setting: the 1-token lines.
#  2. The engine test's quick set with each candidate (its BF16 logits against the CPU's, bound 2e-3).
#  3. BF16 mode 1k batch 1, the settings alternated, 3 rounds.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset gpu_test_cuda_engine gpu_test_bf16_gemv"), COMMIT.
source tests/bench/results/start_device_run.sh
ck=/tmp/ck/qwen3-8b-bf16
(python3 tests/bench/make_random_checkpoint.py qwen3-8b bf16 $ck > /tmp/ck.log 2>&1) &
writer=$!
echo "== 1. GEMV timings at 1 token"
for setting in RESET_BF16_GEMV_TENSOR_CORES_FROM=2 RESET_BF16_GEMV_TENSOR_CORES_FROM=1 \
        RESET_BF16_GEMV_FP32_MAX_SLICES=1 RESET_BF16_GEMV_FP32_MAX_SLICES=2 RESET_BF16_GEMV_FP32_MAX_SLICES=4; do
    env $setting timeout 90 build-bundle/bin/gpu_test_bf16_gemv > "$OUT/bf16_gemv_${setting##*_}.txt" 2>&1
    echo "$setting rc $?: $(tail -n 1 "$OUT/bf16_gemv_${setting##*_}.txt")"
    grep -E "tokens 1:" "$OUT/bf16_gemv_${setting##*_}.txt" | sed 's/^timing: bf16_gemv //'
done > "$OUT/bf16_gemv_one_token_s50_run4.txt"
cat "$OUT/bf16_gemv_one_token_s50_run4.txt"
rm -f "$OUT"/bf16_gemv_*=*.txt
echo "== 2. engine test at $SECONDS s"
for setting in RESET_BF16_GEMV_TENSOR_CORES_FROM=1 RESET_BF16_GEMV_FP32_MAX_SLICES=1; do
    env $setting PASSES=main RESET_GPU_TEST_QUICK=1 OUT=/tmp/engine timeout 100 tests/gpu/run_cuda_engine_on_device.sh > /tmp/engine.txt 2>&1
    echo "$setting engine rc $? at $SECONDS s"
    cp /tmp/engine/test_cuda_engine.log "$OUT/engine_$(echo ${setting##*_} | tr = -)_s50_run4.txt"
    grep -E "checks|FAIL" "$OUT/engine_$(echo ${setting##*_} | tr = -)_s50_run4.txt" | head -5
    grep -E "bf16 +policy [12] x" "$OUT/engine_$(echo ${setting##*_} | tr = -)_s50_run4.txt" | head -4
done
wait $writer
echo "== 3. BF16 mode batch 1 at $SECONDS s"
OUT=/tmp/ab tests/bench/ab_env_decode_on_device.sh - "RESET_BF16_GEMV_TENSOR_CORES_FROM=2 RESET_BF16_GEMV_TENSOR_CORES_FROM=1 RESET_BF16_GEMV_FP32_MAX_SLICES=1 RESET_BF16_GEMV_FP32_MAX_SLICES=2" \
    $ck 3 --weights auto --prompt-tokens 1024 --sequences 1 --tokens 32 --repeat 1 > "$OUT/bf16_one_token_ab_s50_run4.jsonl"
python3 tests/bench/ab_summary.py "$OUT/bf16_one_token_ab_s50_run4.jsonl"
echo "done at $SECONDS s"
