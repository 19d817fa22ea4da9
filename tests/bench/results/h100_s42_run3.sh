#!/usr/bin/env bash
# Session 42, run 3 (H100): YaRN rope scaling.
#  1. The qwen3-yarn golden fixture, made by transformers on this machine's CPU
#     (tests/fixtures/make_fixtures.py --only qwen3-yarn: the model, its FP32 references, and the
#     rotary embedding's inv_freq and attention_scaling), packed into $OUT to be committed.
#  2. The q/k norm + RoPE kernel's test with YaRN's attention factor (every head_dim, BF16 and FP8,
#     positions to 131,071), full, and its quick set under compute-sanitizer memcheck.
#  3. The CUDA engine against the CPU reference on qwen3-yarn (test_cuda_engine: BF16, W4A16, W4A4,
#     FP8 cache, sampling, prefill, truncation, ...).
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset gpu_test_qk_norm_rope_kv_append gpu_test_cuda_engine"),
# COMMIT.
source tests/bench/results/start_device_run.sh
python3 -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__)"
echo "== 1. fixture"
python3 tests/fixtures/make_fixtures.py --out tests/fixtures/models --only qwen3-yarn > "$OUT/make_fixtures_yarn_s42_run3.log" 2>&1
echo "make_fixtures rc $? at $SECONDS s"
grep -E "yarn|WARNING|greedy_bf16|done" "$OUT/make_fixtures_yarn_s42_run3.log" | head -20
tar czf "$OUT/qwen3-yarn.tar.gz" tests/fixtures/models/qwen3-yarn tests/fixtures/models/manifest.json
echo "== 2. qk_norm_rope_kv_append test"
timeout 240 build-bundle/bin/gpu_test_qk_norm_rope_kv_append > "$OUT/qk_test_s42_run3.txt" 2>&1
echo "full rc $? at $SECONDS s: $(tail -1 "$OUT/qk_test_s42_run3.txt")"
RESET_GPU_TEST_QUICK=1 timeout 200 compute-sanitizer --tool memcheck --error-exitcode 3 \
    build-bundle/bin/gpu_test_qk_norm_rope_kv_append > "$OUT/qk_test_memcheck_s42_run3.txt" 2>&1
echo "memcheck rc $? at $SECONDS s: $(grep 'ERROR SUMMARY' "$OUT/qk_test_memcheck_s42_run3.txt" | tail -1)"
echo "== 3. engine test on qwen3-yarn"
timeout 300 build-bundle/bin/gpu_test_cuda_engine tests/fixtures/models/qwen3-yarn > "$OUT/engine_yarn_s42_run3.txt" 2>&1
echo "engine rc $? at $SECONDS s"
grep -E "qwen3-yarn|FAIL|checks|failures" "$OUT/engine_yarn_s42_run3.txt" | tail -25
echo "done at $SECONDS s"
