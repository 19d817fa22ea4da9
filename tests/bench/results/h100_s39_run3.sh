#!/usr/bin/env bash
# Session 39, run 3 (H100): calibrated FP8 KV-cache scales from the checkpoint on the CUDA backend
# (the append kernel stores e4m3(x / scale), attention reads stored · scale, per layer).
#  1. The engine test's test_model on both compressed-tensors fixtures, the ModelOpt one and the
#     engine's own models: ct-nvfp4a16-head-qwen3 carries llm-compressor's K/V scales, so its
#     "fp8 kv" case compares the CUDA cache with scales against the CPU cache with the same scales.
#  2. compute-sanitizer memcheck over the quick engine test on that fixture.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="gpu_test_cuda_engine"), COMMIT.
source tests/bench/results/start_device_run.sh
echo "== 1. engine test_model"
python3 tests/gpu/make_engine_models.py /tmp/engine-models > /tmp/make_engine_models.log 2>&1
echo "models at $SECONDS s"
RESET_GPU_TEST_ONLY=test_model ENGINE_MODELS=/tmp/engine-models OUT=/tmp/engine SANITIZE=0 timeout 300 \
    tests/gpu/run_cuda_engine_on_device.sh > /tmp/engine.txt 2>&1
echo "engine rc $? at $SECONDS s"
cp /tmp/engine/test_cuda_engine.log "$OUT/h100_engine_s39_run3.txt"
grep -E "ct-nvfp4a16.*fp8|checks|FAIL|failed" "$OUT/h100_engine_s39_run3.txt" | head -30
echo "== 2. memcheck, quick, the fixture with KV scales"
RESET_GPU_TEST_QUICK=1 RESET_GPU_TEST_ONLY=test_model timeout 300 compute-sanitizer --tool memcheck --error-exitcode 3 \
    --leak-check no build-bundle/bin/gpu_test_cuda_engine tests/fixtures/models/ct-nvfp4a16-head-qwen3 \
    > "$OUT/h100_engine_memcheck_s39_run3.txt" 2>&1
echo "memcheck rc $? at $SECONDS s"
tail -n 4 "$OUT/h100_engine_memcheck_s39_run3.txt"
echo "done at $SECONDS s"
