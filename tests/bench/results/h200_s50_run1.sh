#!/usr/bin/env bash
# Session 50, run 1: session 49's run 11 (written then, not run: no device time left), run as written.
# Prepare: git apply tests/bench/results/bf16_gemv_two_pairs_s49.patch, build, bundle; .ab/prev is
# the committed kernel relinked (build_gemv_variant_lib.sh prev with a checkout of HEAD).
# Session 49, run 11 (H200): run 10 found the four-step instance's runs of four neighbouring steps
# agreeing 7-14x less with the CPU reference's sums (engine test, one case past its bound).  Now
# the four-step instance keeps two of a slice's pairs in flight and multiplies them in the two-step
# instance's order: the same bits.  Against the committed kernel relinked (.ab/prev).
#  1. gpu_test_bf16_gemv, its quick set under memcheck and racecheck.
#  2. The engine test's quick set (its BF16 lines should equal run 10's RESET_BF16_GEMV_FOUR_STEPS=0).
#  3. BF16 mode, 1k batch 2, 4 and 8, against .ab/prev, alternated, 2 rounds.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset gpu_test_cuda_engine gpu_test_bf16_gemv attention_decode_bench"),
# .ab/prev (build_gemv_variant_lib.sh prev with 2774e64's tree, KERNELS=bf16_gemv), COMMIT.
source tests/bench/results/start_device_run.sh
ck=/tmp/ck/qwen3-8b-bf16
(python3 tests/bench/make_random_checkpoint.py qwen3-8b bf16 $ck > /tmp/ck.log 2>&1) &
writer=$!
mkdir -p /tmp/prev && xz -dc .ab/prev/libreset.so.0.xz > /tmp/prev/libreset.so.0
echo "== 1. bf16 gemv test at $SECONDS s"
timeout 90 build-bundle/bin/gpu_test_bf16_gemv > "$OUT/bf16_gemv_test_s50_run1.txt" 2>&1
echo "rc $?: $(tail -n 1 "$OUT/bf16_gemv_test_s50_run1.txt")"
grep -E "FAIL" "$OUT/bf16_gemv_test_s50_run1.txt" | head -5
grep -E "tensor cores" "$OUT/bf16_gemv_test_s50_run1.txt" | grep -E "tokens 8" | sed 's/^timing: //'
for tool in memcheck racecheck; do
    RESET_GPU_TEST_QUICK=1 timeout 150 compute-sanitizer --tool $tool build-bundle/bin/gpu_test_bf16_gemv \
        > "$OUT/bf16_gemv_${tool}_s50_run1.txt" 2>&1
    echo "$tool rc $?: $(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/bf16_gemv_${tool}_s50_run1.txt") $(tail -n 1 "$OUT/bf16_gemv_${tool}_s50_run1.txt")"
done
echo "== 2. engine test (quick set) at $SECONDS s"
PASSES=main RESET_GPU_TEST_QUICK=1 OUT=/tmp/engine timeout 100 tests/gpu/run_cuda_engine_on_device.sh > /tmp/engine.txt 2>&1
echo "engine rc $? at $SECONDS s"
cp /tmp/engine/test_cuda_engine.log "$OUT/engine_s50_run1.txt"
grep -E "checks|FAIL" "$OUT/engine_s50_run1.txt" | head
grep -E "bf16 +policy [12] x" "$OUT/engine_s50_run1.txt"
wait $writer
echo "== 3. BF16 mode against 2774e64 (HEAD) at $SECONDS s"
OUT=/tmp/ab tests/bench/ab_decode_on_device.sh /tmp/prev $ck 2 --weights auto \
    --prompt-tokens 1024 --sequences 2,4,8 --tokens 32 --repeat 1 > "$OUT/bf16_four_steps_ab_s50_run1.jsonl"
python3 tests/bench/ab_summary.py "$OUT/bf16_four_steps_ab_s50_run1.jsonl"
echo "done at $SECONDS s"
