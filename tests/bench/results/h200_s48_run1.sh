#!/usr/bin/env bash
# Session 48, run 1 (H200): first GPU run of session 47's review commit (730e6a2: the BF16 GEMV's
# occupancy cache, act16_'s allocation rule, enqueue_linear's Fp16Copy), and the copy mode's
# late comparison (copy_mode_late_compare_s47.patch: the row maximum loaded before the products,
# compared after them, the rare second pass on the plain FP32 loop) as a relinked library.
#  1. gpu_test_nvfp4_gemv (HEAD, then the patched kernels), gpu_test_bf16_gemv.
#  2. The engine test's quick set (HEAD).
#  3. HEAD ("new") against the patched library ("old" in the A/B's naming), alternated: 1k batch 1
#     and 8 (3 rounds), 32k FP8 batch 1 (2 rounds).
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset gpu_test_cuda_engine gpu_test_nvfp4_gemv
# gpu_test_bf16_gemv"), .ab/late (tests/bench/build_gemv_variant_lib.sh late, PROGRAMS=gpu_test_nvfp4_gemv), COMMIT.
source tests/bench/results/start_device_run.sh
ck=/tmp/ck/qwen3-8b-nvfp4
(python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 $ck > /tmp/ck.log 2>&1) &
writer=$!
mkdir -p /tmp/late && for f in .ab/late/*.xz; do xz -dc "$f" > /tmp/late/$(basename "$f" .xz); done
chmod +x /tmp/late/gpu_test_nvfp4_gemv
echo "== 1. kernel tests at $SECONDS s"
timeout 60 build-bundle/bin/gpu_test_nvfp4_gemv > "$OUT/gemv_test_s48_run1.txt" 2>&1
echo "gemv (HEAD) rc $?: $(tail -n 1 "$OUT/gemv_test_s48_run1.txt")"
grep -E "FAIL" "$OUT/gemv_test_s48_run1.txt" | head -5
timeout 60 /tmp/late/gpu_test_nvfp4_gemv > "$OUT/gemv_test_late_s48_run1.txt" 2>&1
echo "gemv (late compare) rc $?: $(tail -n 1 "$OUT/gemv_test_late_s48_run1.txt")"
grep -E "FAIL" "$OUT/gemv_test_late_s48_run1.txt" | head -5
timeout 60 build-bundle/bin/gpu_test_bf16_gemv > "$OUT/bf16_gemv_test_s48_run1.txt" 2>&1
echo "bf16 gemv rc $?: $(tail -n 1 "$OUT/bf16_gemv_test_s48_run1.txt")"
grep -E "FAIL" "$OUT/bf16_gemv_test_s48_run1.txt" | head -5
echo "== 2. engine test (quick set) at $SECONDS s"
PASSES=main RESET_GPU_TEST_QUICK=1 OUT=/tmp/engine timeout 100 tests/gpu/run_cuda_engine_on_device.sh > /tmp/engine.txt 2>&1
echo "engine rc $? at $SECONDS s"
cp /tmp/engine/test_cuda_engine.log "$OUT/engine_s48_run1.txt"
grep -E "checks|FAIL" "$OUT/engine_s48_run1.txt" | head
wait $writer
echo "== 3. A/B (new = HEAD, old = late compare) at $SECONDS s"
OUT=/tmp/ab tests/bench/ab_decode_on_device.sh /tmp/late $ck 3 --weights auto \
    --prompt-tokens 1024 --sequences 1,8 --tokens 64 --repeat 2 > "$OUT/late_compare_ab_s48_run1.jsonl"
OUT=/tmp/ab tests/bench/ab_decode_on_device.sh /tmp/late $ck 2 --weights auto \
    --prompt-tokens 32000 --kv-cache fp8 --sequences 1 --tokens 32 --repeat 1 >> "$OUT/late_compare_ab_s48_run1.jsonl"
python3 tests/bench/ab_summary.py "$OUT/late_compare_ab_s48_run1.jsonl"
echo "done at $SECONDS s"
