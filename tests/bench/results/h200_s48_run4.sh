#!/usr/bin/env bash
# Session 48, run 4 (H200): the record at 980cf2d (the producers' FP16 copies with the cheaper
# check, runs 1-3), and the step timeline with the copies.
#  1. tests/bench/run_all_on_device.sh without the GEMV benchmark (GEMV=0: its kernel's main
#     loop is session 46's): the engine test's quick set beside the kernel tests in the bundle,
#     then the short decode grid.
#  2. The step timeline (trace library of the same commit) at 1k batch 1 and batch 8.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset gpu_test_cuda_engine gpu_test_nvfp4_gemv
# gpu_test_attention_decode attention_decode_bench"), .ab/trace (tests/bench/build_step_trace.sh), COMMIT.
source tests/bench/results/start_device_run.sh
GEMV=0 COMMIT=$(cat COMMIT) timeout 420 tests/bench/run_all_on_device.sh
echo "== step timeline at $SECONDS s"
ck=/tmp/checkpoints/qwen3-8b-nvfp4  # the decode grid's
for b in 1 8; do
    tests/bench/step_trace_on_device.sh $ck "b${b}_1k" "$OUT/step_trace_s48_run4.txt" -- \
        --tokens 64 --repeat 1 --prompt-tokens 1024 --sequences $b
done
grep -E "^==|total|step" "$OUT/step_trace_s48_run4.txt" | head -20
echo "done at $SECONDS s"
