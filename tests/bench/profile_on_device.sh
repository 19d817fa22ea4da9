#!/usr/bin/env bash
# profile_on_device.sh — Nsight Compute profile of the NVFP4 GEMV on chosen
# shapes and token counts (docs/gemv.md records what it showed).  Builds the
# benchmark like run_on_device.sh, then profiles one W4A16 launch (the 6th,
# past warm-up, on rotated weights) per case with the full section set and
# without touching the GPU clocks.  Usage, from the repository root:
#   tests/bench/profile_on_device.sh "Qwen3-8B o" "Qwen3-8B gate_up"
# Environment: ARCH (default 90a), MS (token counts, default "1 8").
set -euo pipefail
arch=${ARCH:-90a}
out=${OUT:-$PWD/build-device/out}
build=$PWD/build-device
mkdir -p "$build" "$out"
nvcc -std=c++17 -O3 -Iinclude -Ilib -I. --expt-relaxed-constexpr --Werror all-warnings \
    -Xcompiler=-Wall,-Wextra,-fopenmp -lineinfo "-gencode=arch=compute_${arch},code=sm_${arch}" \
    --resource-usage tests/bench/nvfp4_gemv_bench.cu kernels/nvfp4_gemv.cu kernels/nvfp4_quantize_activations.cu \
    kernels/nvfp4_gemv_layout.cpp -o "$build/nvfp4_gemv_bench" -lcublas -lcublasLt -lgomp 2>&1 | grep -A1 gemv_kernel || true
for shape in "$@"; do
    for m in ${MS:-1 8}; do
        tag=$(echo "$shape" | tr -c 'A-Za-z0-9\n' '_')_m$m
        ncu --set full --clock-control none -k regex:nvfp4_gemv_kernel --launch-skip 5 --launch-count 1 \
            -o "$build/$tag" -f "$build/nvfp4_gemv_bench" --only "$shape" --m "$m" --nvfp4-only >/dev/null 2>&1
        ncu -i "$build/$tag.ncu-rep" --page details --print-details all >"$out/$tag.txt" 2>&1 || true
        echo "== $shape M=$m"
        grep -E "^\s+(Duration|DRAM Throughput|Memory Throughput|Registers Per Thread|Achieved Occupancy|Theoretical Occupancy|Eligible Warps Per Scheduler|Issued Warp Per Scheduler|Executed Ipc Active|L1/TEX Hit Rate|L2 Hit Rate|Grid Size|Block Size|Waves Per SM|Warp Cycles Per Issued Instruction|Executed Instructions) " \
            "$out/$tag.txt" | head -20 || true
    done
done
