#!/usr/bin/env bash
# Session 46, run 6 (H200): is run 4-5's slower NVFP4 step at 2-8 rows the tensor-core BF16 lm_head's?
# One library (this tree: tensor-core path from 2 tokens, slices interleaved as in run 4), the path
# switched by RESET_BF16_GEMV_TENSOR_CORES_FROM (2: from 2 tokens, the default; 9: never, the FP32 path
# as in 01a29bd), alternated round by round (tests/bench/ab_env_decode_on_device.sh), 3 rounds: NVFP4 at
# 1k batch 1, 2, 4, 8 and the BF16 mode at 1k batch 8; then 01a29bd's library against this one's
# default at NVFP4 batch 8 (tests/bench/ab_decode_on_device.sh, 2 rounds).  First gpu_test_bf16_gemv
# of this tree.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset gpu_test_bf16_gemv"), .ab (01a29bd's libreset.so.0), COMMIT.
source tests/bench/results/start_device_run.sh
mkdir -p /tmp/old && xz -dc .ab/old/libreset.so.0.xz > /tmp/old/libreset.so.0
ck=/tmp/ck
(for f in nvfp4 bf16; do python3 tests/bench/make_random_checkpoint.py qwen3-8b $f $ck/qwen3-8b-$f; done > /tmp/ck.log 2>&1) &
writer=$!
timeout 100 build-bundle/bin/gpu_test_bf16_gemv > "$OUT/bf16_gemv_test_s46_run6.txt" 2>&1
echo "test rc $?: $(tail -1 "$OUT/bf16_gemv_test_s46_run6.txt")"
grep timing "$OUT/bf16_gemv_test_s46_run6.txt"
wait $writer
echo "== env A/B at $SECONDS s"
OUT=/tmp/ab tests/bench/ab_env_decode_on_device.sh RESET_BF16_GEMV_TENSOR_CORES_FROM "2 9" $ck/qwen3-8b-nvfp4 3 \
    --weights auto --prompt-tokens 1024 --sequences 1,2,4,8 --tokens 64 --repeat 2 > "$OUT/bf16_gemv_env_ab_s46_run6.jsonl"
OUT=/tmp/ab tests/bench/ab_env_decode_on_device.sh RESET_BF16_GEMV_TENSOR_CORES_FROM "2 9" $ck/qwen3-8b-bf16 3 \
    --weights bf16 --prompt-tokens 1024 --sequences 8 --tokens 64 --repeat 2 >> "$OUT/bf16_gemv_env_ab_s46_run6.jsonl"
echo "== library A/B at $SECONDS s"
OUT=/tmp/ab tests/bench/ab_decode_on_device.sh /tmp/old $ck/qwen3-8b-nvfp4 2 --weights auto --prompt-tokens 1024 \
    --sequences 8 --tokens 64 --repeat 2 | sed 's/"lib": "\([a-z]*\)"/"env": "lib=\1"/' >> "$OUT/bf16_gemv_env_ab_s46_run6.jsonl"
# (The log shows the inline summary this call replaced after the runs: the same medians.)
python3 tests/bench/ab_summary.py "$OUT/bf16_gemv_env_ab_s46_run6.jsonl"
echo "done at $SECONDS s"
