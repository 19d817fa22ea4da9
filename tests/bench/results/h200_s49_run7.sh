#!/usr/bin/env bash
# Session 49, run 7 (H200): the BF16 GEMV's tensor-core path with four 32-column steps in flight
# a warp (launch bounds for two CTAs per SM, ~123 registers) where its grid fits one wave of
# those (bf16_gemv_four_steps_s49.patch: qkv, o and down at the Qwen3-8B shape; gate_up and the
# lm_head keep two).  The small shapes stream 1.7-2.5 TB/s at 2-8 tokens (run 2): two steps of
# 1 KiB a warp in flight bound them.
#  1. The variant's gpu_test_bf16_gemv (checks and timings).
#  2. BF16 mode (a random Qwen3-8B BF16 checkpoint), 1k batch 2 and 8: this commit against the
#     variant, alternated, 2 rounds.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset gpu_test_bf16_gemv"), .ab/deepmma
# (build_gemv_variant_lib.sh deepmma with the patch, KERNELS=bf16_gemv PROGRAMS=gpu_test_bf16_gemv), COMMIT.
source tests/bench/results/start_device_run.sh
ck=/tmp/ck/qwen3-8b-bf16
(python3 tests/bench/make_random_checkpoint.py qwen3-8b bf16 $ck > /tmp/ck.log 2>&1) &
writer=$!
mkdir -p /tmp/deepmma && for f in .ab/deepmma/*.xz; do xz -dc "$f" > /tmp/deepmma/$(basename "$f" .xz); done
chmod +x /tmp/deepmma/gpu_test_bf16_gemv
echo "== 1. variant bf16 gemv test at $SECONDS s"
timeout 90 /tmp/deepmma/gpu_test_bf16_gemv > "$OUT/bf16_gemv_four_steps_test_s49_run7.txt" 2>&1
echo "rc $?: $(tail -n 1 "$OUT/bf16_gemv_four_steps_test_s49_run7.txt")"
grep -E "FAIL" "$OUT/bf16_gemv_four_steps_test_s49_run7.txt" | head -5
grep -E "tensor cores" "$OUT/bf16_gemv_four_steps_test_s49_run7.txt" | sed 's/^timing: //'
wait $writer
echo "== 2. BF16 mode at $SECONDS s"
OUT=/tmp/ab tests/bench/ab_decode_on_device.sh /tmp/deepmma $ck 2 --weights auto \
    --prompt-tokens 1024 --sequences 2,8 --tokens 32 --repeat 1 > "$OUT/bf16_four_steps_ab_s49_run7.jsonl"
python3 tests/bench/ab_summary.py "$OUT/bf16_four_steps_ab_s49_run7.jsonl"
echo "done at $SECONDS s"
