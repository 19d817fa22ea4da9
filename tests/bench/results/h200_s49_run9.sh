#!/usr/bin/env bash
# Session 49, run 9 (H200): run 8's "deepo" rule written into the tree (bf16_gemv_four_step_runs_s49.patch
# on 7059c46, with the header and test parts of bf16_gemv_two_pairs_s49.patch: the BF16 GEMV's
# tensor-core path keeps runs of four steps in flight where the two-step plan's grid fits one wave
# at two CTAs per SM; RESET_BF16_GEMV_FOUR_STEPS=0 for A/B runs), against 7059c46's kernel
# relinked (.ab/prev).  Not committed: the engine test failed one case (run 10).
#  1. gpu_test_bf16_gemv (both instances now required), its quick set under memcheck and racecheck.
#  2. The engine test's quick set.
#  3. BF16 mode, 1k batch 2, 4 and 8, against .ab/prev, alternated, 2 rounds.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset gpu_test_cuda_engine gpu_test_bf16_gemv"),
# .ab/prev (build_gemv_variant_lib.sh prev with 7059c46's tree, KERNELS=bf16_gemv), COMMIT.
source tests/bench/results/start_device_run.sh
ck=/tmp/ck/qwen3-8b-bf16
(python3 tests/bench/make_random_checkpoint.py qwen3-8b bf16 $ck > /tmp/ck.log 2>&1) &
writer=$!
mkdir -p /tmp/prev && xz -dc .ab/prev/libreset.so.0.xz > /tmp/prev/libreset.so.0
echo "== 1. bf16 gemv test at $SECONDS s"
timeout 90 build-bundle/bin/gpu_test_bf16_gemv > "$OUT/bf16_gemv_test_s49_run9.txt" 2>&1
echo "rc $?: $(tail -n 1 "$OUT/bf16_gemv_test_s49_run9.txt")"
grep -E "FAIL" "$OUT/bf16_gemv_test_s49_run9.txt" | head -5
grep -E "tensor cores" "$OUT/bf16_gemv_test_s49_run9.txt" | grep -E "tokens 8" | sed 's/^timing: //'
for tool in memcheck racecheck; do
    RESET_GPU_TEST_QUICK=1 timeout 150 compute-sanitizer --tool $tool build-bundle/bin/gpu_test_bf16_gemv \
        > "$OUT/bf16_gemv_${tool}_s49_run9.txt" 2>&1
    echo "$tool rc $?: $(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/bf16_gemv_${tool}_s49_run9.txt") $(tail -n 1 "$OUT/bf16_gemv_${tool}_s49_run9.txt")"
done
echo "== 2. engine test (quick set) at $SECONDS s"
PASSES=main RESET_GPU_TEST_QUICK=1 OUT=/tmp/engine timeout 100 tests/gpu/run_cuda_engine_on_device.sh > /tmp/engine.txt 2>&1
echo "engine rc $? at $SECONDS s"
cp /tmp/engine/test_cuda_engine.log "$OUT/engine_s49_run9.txt"
grep -E "checks|FAIL" "$OUT/engine_s49_run9.txt" | head
wait $writer
echo "== 3. BF16 mode against 7059c46 at $SECONDS s"
OUT=/tmp/ab tests/bench/ab_decode_on_device.sh /tmp/prev $ck 2 --weights auto \
    --prompt-tokens 1024 --sequences 2,4,8 --tokens 32 --repeat 1 > "$OUT/bf16_four_steps_ab_s49_run9.jsonl"
python3 tests/bench/ab_summary.py "$OUT/bf16_four_steps_ab_s49_run9.jsonl"
echo "done at $SECONDS s"
