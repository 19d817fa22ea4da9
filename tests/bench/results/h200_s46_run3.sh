#!/usr/bin/env bash
# Session 46, run 3 (H200): the BF16 GEMV's tensor-core path for 2..8 tokens (x split exactly into
# three BF16 parts, kernels/bf16_gemv.cu), against 01a29bd's library (FP32 FMAs at every token count).
#  1. gpu_test_bf16_gemv whole (every shape, 1..8 tokens, against FP64; token-count invariance;
#     timing at 1, 2 and 8 tokens on random x), then compute-sanitizer memcheck and racecheck (quick).
#  2. The engine test's quick set (BF16 mode and the BF16 lm_head against the CPU reference).
#  3. The decode step, the two libraries alternated (tests/bench/ab_decode_on_device.sh, 3 rounds):
#     the BF16 mode at 1k, batch 1 and 8; NVFP4 with the BF16 lm_head at 1k, batch 1, 2, 4, 8.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset gpu_test_bf16_gemv gpu_test_cuda_engine"),
# .ab (01a29bd's libreset.so.0 as .ab/old/libreset.so.0.xz), COMMIT.
source tests/bench/results/start_device_run.sh
mkdir -p /tmp/old && xz -dc .ab/old/libreset.so.0.xz > /tmp/old/libreset.so.0
ck=/tmp/ck
(for f in nvfp4 bf16; do python3 tests/bench/make_random_checkpoint.py qwen3-8b $f $ck/qwen3-8b-$f; done > /tmp/ck.log 2>&1) &
writer=$!
echo "== 1. BF16 GEMV test"
timeout 200 build-bundle/bin/gpu_test_bf16_gemv > "$OUT/bf16_gemv_test_s46_run3.txt" 2>&1
echo "rc $? at $SECONDS s"
grep -E "FAIL|timing|worst|checks" "$OUT/bf16_gemv_test_s46_run3.txt" | head -40
for tool in memcheck racecheck; do
    RESET_GPU_TEST_QUICK=1 timeout 120 compute-sanitizer --tool $tool --error-exitcode 3 build-bundle/bin/gpu_test_bf16_gemv \
        > /tmp/bf16_$tool.txt 2>&1
    echo "$tool rc $?: $(grep -E 'SUMMARY' /tmp/bf16_$tool.txt)"
done
echo "== 2. engine test (quick set) at $SECONDS s"
PASSES=main RESET_GPU_TEST_QUICK=1 OUT=/tmp/engine timeout 200 tests/gpu/run_cuda_engine_on_device.sh > /tmp/engine.txt 2>&1
echo "engine rc $? at $SECONDS s"
cp /tmp/engine/test_cuda_engine.log "$OUT/engine_s46_run3.txt"
grep -E "checks|FAIL" "$OUT/engine_s46_run3.txt" | head
grep -E "bf16 " "$OUT/engine_s46_run3.txt" | head -12
echo "== 3. decode A/B at $SECONDS s"
wait $writer
tail -2 /tmp/ck.log
OUT=/tmp/ab tests/bench/ab_decode_on_device.sh /tmp/old $ck/qwen3-8b-bf16 3 --weights bf16 --prompt-tokens 1024 \
    --sequences 1,8 --tokens 64 --repeat 2 > "$OUT/bf16_gemv_mma_ab_s46_run3.jsonl"
echo "bf16 A/B at $SECONDS s"
OUT=/tmp/ab tests/bench/ab_decode_on_device.sh /tmp/old $ck/qwen3-8b-nvfp4 3 --weights auto --prompt-tokens 1024 \
    --sequences 1,2,4,8 --tokens 64 --repeat 2 >> "$OUT/bf16_gemv_mma_ab_s46_run3.jsonl"
tail -3 /tmp/ab/ab_decode.log
# (The log shows the inline summary this call replaced after the runs: the same medians.)
python3 tests/bench/ab_summary.py "$OUT/bf16_gemv_mma_ab_s46_run3.jsonl"
echo "done at $SECONDS s"
