#!/usr/bin/env bash
# Session 49, run 3 (H200): the record at 43e19d0 (the BF16 lm_head on the tensor cores from 4
# rows), and two questions about the BF16 GEMV:
#  1. tests/bench/run_all_on_device.sh without the GEMV benchmark (GEMV=0): the engine test's quick
#     set beside the kernel tests in the bundle, then the short decode grid.
#  2. The FP32 path (1 token: every BF16 linear at batch 1, the lm_head up to 3 rows) with four
#     chunks per row in flight instead of two ("deep", bf16_gemv_deep_fp32_s49.patch, relinked):
#     gpu_test_bf16_gemv, then NVFP4 1k batch 1 and BF16 mode batch 1 against this commit,
#     alternated, 3 / 2 rounds.
#  3. BF16 mode at batch 8 (every linear on the tensor-core path) against 0a770c6's kernel
#     relinked (.ab/head), 2 rounds.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset gpu_test_cuda_engine gpu_test_bf16_gemv"),
# .ab/deep (build_gemv_variant_lib.sh deep with the patch applied, KERNELS=bf16_gemv
# PROGRAMS=gpu_test_bf16_gemv), .ab/head (run 2's), COMMIT.
source tests/bench/results/start_device_run.sh
GEMV=0 COMMIT=$(cat COMMIT) timeout 400 tests/bench/run_all_on_device.sh
mkdir -p /tmp/deep /tmp/head
for f in .ab/deep/*.xz; do xz -dc "$f" > /tmp/deep/$(basename "$f" .xz); done
chmod +x /tmp/deep/gpu_test_bf16_gemv
xz -dc .ab/head/libreset.so.0.xz > /tmp/head/libreset.so.0
echo "== 2. deep FP32 path at $SECONDS s"
timeout 90 /tmp/deep/gpu_test_bf16_gemv > "$OUT/bf16_gemv_deep_test_s49_run3.txt" 2>&1
echo "deep bf16 gemv rc $?: $(tail -n 1 "$OUT/bf16_gemv_deep_test_s49_run3.txt")"
grep -E "FAIL" "$OUT/bf16_gemv_deep_test_s49_run3.txt" | head -3
grep -E "tokens 1:" "$OUT/bf16_gemv_deep_test_s49_run3.txt" | sed 's/^timing: //'
ck=/tmp/checkpoints
OUT=/tmp/ab tests/bench/ab_decode_on_device.sh /tmp/deep $ck/qwen3-8b-nvfp4 3 --weights auto \
    --prompt-tokens 1024 --sequences 1 --tokens 64 --repeat 2 > "$OUT/deep_fp32_ab_s49_run3.jsonl"
OUT=/tmp/ab tests/bench/ab_decode_on_device.sh /tmp/deep $ck/qwen3-8b-bf16 2 --weights auto \
    --prompt-tokens 1024 --sequences 1 --tokens 32 --repeat 1 >> "$OUT/deep_fp32_ab_s49_run3.jsonl"
python3 tests/bench/ab_summary.py "$OUT/deep_fp32_ab_s49_run3.jsonl"
echo "== 3. BF16 mode batch 8 against 0a770c6 at $SECONDS s"
OUT=/tmp/ab tests/bench/ab_decode_on_device.sh /tmp/head $ck/qwen3-8b-bf16 2 --weights auto \
    --prompt-tokens 1024 --sequences 8 --tokens 32 --repeat 1 > "$OUT/bf16_mode_ab_s49_run3.jsonl"
python3 tests/bench/ab_summary.py "$OUT/bf16_mode_ab_s49_run3.jsonl"
echo "done at $SECONDS s"
