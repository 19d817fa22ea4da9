#!/usr/bin/env bash
# Session 46, run 7 (H200): the tensor-core BF16 GEMV as committed: the BF16 mode's linears from 2
# tokens on the tensor cores, the lm_head on the FP32 path at every row count (run 6).
#  1. gpu_test_bf16_gemv whole (both paths from 2 tokens; timing of both), memcheck (quick).
#  2. The engine test's quick set.
#  3. The decode step against 01a29bd's library, alternated, 2 rounds: NVFP4 (BF16 lm_head) at 1k batch
#     1 and 8; the BF16 mode at 1k batch 8 (the session's device time was nearly spent).
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset gpu_test_bf16_gemv gpu_test_cuda_engine"), .ab, COMMIT.
source tests/bench/results/start_device_run.sh
mkdir -p /tmp/old && xz -dc .ab/old/libreset.so.0.xz > /tmp/old/libreset.so.0
ck=/tmp/ck
(for f in nvfp4 bf16; do python3 tests/bench/make_random_checkpoint.py qwen3-8b $f $ck/qwen3-8b-$f; done > /tmp/ck.log 2>&1) &
writer=$!
timeout 150 build-bundle/bin/gpu_test_bf16_gemv > "$OUT/bf16_gemv_test_s46_run7.txt" 2>&1
echo "test rc $? at $SECONDS s: $(tail -1 "$OUT/bf16_gemv_test_s46_run7.txt")"
grep -E "FAIL|timing" "$OUT/bf16_gemv_test_s46_run7.txt" | head -40
RESET_GPU_TEST_QUICK=1 timeout 100 compute-sanitizer --tool memcheck --error-exitcode 3 build-bundle/bin/gpu_test_bf16_gemv \
    > /tmp/bf16_memcheck.txt 2>&1
echo "memcheck rc $?: $(grep -E 'SUMMARY' /tmp/bf16_memcheck.txt)"
echo "== engine test (quick set) at $SECONDS s"
PASSES=main RESET_GPU_TEST_QUICK=1 OUT=/tmp/engine timeout 120 tests/gpu/run_cuda_engine_on_device.sh > /tmp/engine.txt 2>&1
echo "engine rc $? at $SECONDS s"
cp /tmp/engine/test_cuda_engine.log "$OUT/engine_s46_run7.txt"
grep -E "checks|FAIL" "$OUT/engine_s46_run7.txt" | head
wait $writer
echo "== decode A/B at $SECONDS s"
OUT=/tmp/ab tests/bench/ab_decode_on_device.sh /tmp/old $ck/qwen3-8b-nvfp4 2 --weights auto --prompt-tokens 1024 \
    --sequences 1,8 --tokens 64 --repeat 2 > "$OUT/bf16_gemv_ab_s46_run7.jsonl"
OUT=/tmp/ab tests/bench/ab_decode_on_device.sh /tmp/old $ck/qwen3-8b-bf16 2 --weights bf16 --prompt-tokens 1024 \
    --sequences 8 --tokens 64 --repeat 2 >> "$OUT/bf16_gemv_ab_s46_run7.jsonl"
# (The log shows the inline summary this call replaced after the runs: the same medians.)
python3 tests/bench/ab_summary.py "$OUT/bf16_gemv_ab_s46_run7.jsonl"
echo "done at $SECONDS s"
