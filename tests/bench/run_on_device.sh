#!/usr/bin/env bash
# run_on_device.sh — build the NVFP4 GEMV kernels, their GPU test and the
# benchmark from the kernel sources alone (the GPU machine lacks the host
# library's dev packages), then run what is asked:
#   test   GPU test, then compute-sanitizer memcheck and racecheck on it
#   bench  kernel benchmark (+ PyTorch int4 tinygemm baseline) -> JSON + markdown
#   all    both
# Outputs go to $OUT (default ./build-device/out).  Usage, from the repository root:
#   tests/bench/run_on_device.sh all
# Environment: ARCH (default 90a), COMMIT (recorded in the results),
# BENCH_ARGS (extra arguments for the benchmark program).
set -euo pipefail
what=${1:-all}
arch=${ARCH:-90a}
out=${OUT:-$PWD/build-device/out}
build=$PWD/build-device
mkdir -p "$build" "$out"

nvcc_flags=(-std=c++17 -O3 -Iinclude -Ilib -I. --expt-relaxed-constexpr --Werror all-warnings
            -Xcompiler=-Wall,-Wextra,-fopenmp -lineinfo "-gencode=arch=compute_${arch},code=sm_${arch}")
kernels=(kernels/nvfp4_gemv.cu kernels/nvfp4_quantize_activations.cu kernels/nvfp4_gemv_layout.cpp)

echo "== device"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu,power.draw \
    --format=csv | tee "$out/device.txt"
# The device's copy of the tree may carry no git metadata: COMMIT names the
# source state (e.g. COMMIT=$(git rev-parse HEAD) from the calling machine).
git_commit=${COMMIT:-$(git rev-parse --verify -q HEAD 2>/dev/null || echo unknown)}
echo "commit $git_commit" | tee -a "$out/device.txt"

echo "== build (sm_$arch)"
pids=()
if [[ $what == test || $what == all ]]; then
    nvcc "${nvcc_flags[@]}" tests/gpu/test_nvfp4_gemv.cu "${kernels[@]}" lib/engine/nvfp4_linear.cpp \
        -o "$build/test_nvfp4_gemv" -lgomp &
    pids+=($!)
fi
if [[ $what == bench || $what == all ]]; then
    nvcc "${nvcc_flags[@]}" tests/bench/nvfp4_gemv_bench.cu "${kernels[@]}" -o "$build/nvfp4_gemv_bench" \
        -lcublas -lcublasLt -lgomp &
    pids+=($!)
fi
for p in "${pids[@]}"; do wait "$p"; done

if [[ $what == test || $what == all ]]; then
    echo "== GPU test"
    "$build/test_nvfp4_gemv" 2>&1 | tee "$out/test.log"
    echo "== compute-sanitizer memcheck"
    RESET_GPU_TEST_QUICK=1 compute-sanitizer --tool memcheck --error-exitcode 3 "$build/test_nvfp4_gemv" 2>&1 \
        | tail -n 5 | tee "$out/memcheck.log"
    echo "== compute-sanitizer racecheck"
    RESET_GPU_TEST_QUICK=1 compute-sanitizer --tool racecheck --error-exitcode 3 "$build/test_nvfp4_gemv" 2>&1 \
        | tail -n 5 | tee "$out/racecheck.log"
fi

if [[ $what == bench || $what == all ]]; then
    echo "== benchmark"
    # shellcheck disable=SC2086
    "$build/nvfp4_gemv_bench" --json "$out/bench.json" --commit "$git_commit" ${BENCH_ARGS:-} 2>&1 \
        | tee "$out/bench.log"
    echo "== PyTorch int4 tinygemm"
    PYTHONUNBUFFERED=1 python3 tests/bench/tinygemm_bench.py --json "$out/tinygemm.json" 2>&1 | tee "$out/tinygemm.log"
    python3 tests/bench/report.py "$out/bench.json" "$out/tinygemm.json" --markdown "$out/results.md"
    tail -n 60 "$out/results.md"
fi
