#!/usr/bin/env bash
# Session 27, run 2 (H100): what run 1 left unfinished.
#  1. compute-sanitizer memcheck over the engine test's quick set (run 1's 300 s limit
#     stopped it: the engine test now runs 734 checks before it);
#  2. the CLI test on the CUDA backend, with the checks that name the CPU backend or load
#     qwen3-tied (head_dim 24, not served by the CUDA kernels) pinned to --backend cpu.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset gpu_test_cuda_engine", built at run 1's commit), COMMIT.
exec > >(tee "$OUT/run.log") 2>&1
set -u
SECONDS=0
echo "commit $(cat COMMIT)"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
echo "== 1. memcheck (quick set)"
python3 tests/gpu/make_engine_models.py /tmp/engine-models > /tmp/make_engine_models.log 2>&1
RESET_GPU_TEST_QUICK=1 timeout 400 compute-sanitizer --tool memcheck --error-exitcode 3 --leak-check no \
    build-bundle/bin/gpu_test_cuda_engine /tmp/engine-models/engine-qwen3 > "$OUT/memcheck_s27_run2.txt" 2>&1
echo "memcheck rc $? at $SECONDS s"
grep -E "mid-generation|checks|ERROR SUMMARY" "$OUT/memcheck_s27_run2.txt"
echo "== 2. the CLI test on CUDA"
timeout 150 python3 tests/cli/test_commands.py "$PWD/build-bundle/bin/reset" "$PWD" > "$OUT/cli_s27_run2.txt" 2>&1
echo "cli rc $? at $SECONDS s"; grep -v '^ok' "$OUT/cli_s27_run2.txt" | head -20; grep -c '^ok' "$OUT/cli_s27_run2.txt"
