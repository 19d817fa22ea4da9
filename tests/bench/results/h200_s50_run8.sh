#!/usr/bin/env bash
# Session 50, run 8 (H200): the review commit (the A/B knobs of bf16_gemv, nvfp4_gemv and
# top_logprobs read through util/environment.h, the rule device_session.cpp had): at the defaults
# nothing changes, checked by the GEMV tests, the top-logprobs test and the engine test's quick set.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset gpu_test_cuda_engine gpu_test_bf16_gemv
# gpu_test_nvfp4_gemv gpu_test_top_logprobs"), COMMIT.
source tests/bench/results/start_device_run.sh
(PASSES=main RESET_GPU_TEST_QUICK=1 OUT=/tmp/engine timeout 150 tests/gpu/run_cuda_engine_on_device.sh > /tmp/engine.txt 2>&1
 echo "engine rc $?" > /tmp/engine.rc) &
engine=$!
for t in bf16_gemv top_logprobs; do
    timeout 120 build-bundle/bin/gpu_test_$t > "$OUT/${t}_s50_run8.txt" 2>&1
    echo "$t rc $?: $(tail -n 1 "$OUT/${t}_s50_run8.txt")"
done
grep -E "^plan" "$OUT/bf16_gemv_s50_run8.txt"
RESET_GPU_TEST_QUICK=1 timeout 150 build-bundle/bin/gpu_test_nvfp4_gemv > "$OUT/nvfp4_gemv_quick_s50_run8.txt" 2>&1
echo "nvfp4_gemv (quick) rc $?: $(tail -n 1 "$OUT/nvfp4_gemv_quick_s50_run8.txt")"
wait $engine
cat /tmp/engine.rc
cp /tmp/engine/test_cuda_engine.log "$OUT/engine_s50_run8.txt"
grep -E "checks|FAIL" "$OUT/engine_s50_run8.txt" | head -5
echo "done at $SECONDS s"
