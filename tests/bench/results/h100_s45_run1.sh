#!/usr/bin/env bash
# Session 45, run 1 (H100): the GPU checks session 44's last commits (dcf9128, d2cf603: per-step
# graph choice, one NewTokenInputs) never had on the device.
#  1. gpu_test_qk_norm_rope_kv_append whole, then under compute-sanitizer memcheck and racecheck
#     (the kept fused kernel had neither).
#  2. In parallel (correctness only, no timing here): tests/gpu/run_cuda_engine_on_device.sh with
#     SANITIZE=0: the whole engine test on every engine model, fixture and the embedded model, then
#     test_model again with RESET_NEW_TOKEN_IN_ATTENTION=2.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset gpu_test_qk_norm_rope_kv_append gpu_test_cuda_engine"), COMMIT.
source tests/bench/results/start_device_run.sh
ENGINE_MODELS=/tmp/engine-models OUT=/tmp/engine SANITIZE=0 timeout 520 \
    tests/gpu/run_cuda_engine_on_device.sh > /tmp/engine.txt 2>&1 &
engine=$!
echo "== 1. qk test"
timeout 100 build-bundle/bin/gpu_test_qk_norm_rope_kv_append > "$OUT/qk_s45_run1.txt" 2>&1
echo "rc $? at $SECONDS s: $(tail -1 "$OUT/qk_s45_run1.txt")"
grep FAIL "$OUT/qk_s45_run1.txt" | head -5
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 3 build-bundle/bin/gpu_test_qk_norm_rope_kv_append \
    > "$OUT/qk_memcheck_s45_run1.txt" 2>&1
echo "memcheck rc $? at $SECONDS s: $(grep 'ERROR SUMMARY' "$OUT/qk_memcheck_s45_run1.txt")"
RESET_GPU_TEST_ONLY=new_token timeout 200 compute-sanitizer --tool racecheck --error-exitcode 3 \
    build-bundle/bin/gpu_test_qk_norm_rope_kv_append > "$OUT/qk_racecheck_s45_run1.txt" 2>&1
echo "racecheck rc $? at $SECONDS s: $(grep 'RACECHECK SUMMARY' "$OUT/qk_racecheck_s45_run1.txt")"
echo "== 2. engine script"
wait $engine
echo "engine rc $? at $SECONDS s"
cp /tmp/engine/test_cuda_engine.log "$OUT/engine_s45_run1.txt"
cp /tmp/engine/test_cuda_engine_new_token.log "$OUT/engine_new_token_s45_run1.txt"
grep -E "truncated after|checks|FAIL|failed" "$OUT/engine_s45_run1.txt" | head -20
grep -E "checks|FAIL|failed|replay" "$OUT/engine_new_token_s45_run1.txt" | head -20
echo "done at $SECONDS s"
