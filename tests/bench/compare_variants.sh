#!/usr/bin/env bash
# compare_variants.sh — build the benchmark once per compile-time variant of
# the GEMV kernel and run them one after the other on the same shapes (the
# A/B runs of docs/gemv.md).  Usage, from the repository root:
#   tests/bench/compare_variants.sh "Qwen3-8B" "-DRESET_NVFP4_GEMV_X_AHEAD=1" "-DRESET_NVFP4_GEMV_X_AHEAD=4"
# The first argument is the --only shape filter; each further argument is one
# variant's extra nvcc flags, optionally opening with src=FILE to build FILE in
# place of kernels/nvfp4_gemv.cu (an earlier version of the kernel, e.g. from
# `git show COMMIT:kernels/nvfp4_gemv.cu`).  Environment: ARCH (default 90a).
set -euo pipefail
arch=${ARCH:-90a}
out=${OUT:-$PWD/build-device/out}
build=$PWD/build-device
mkdir -p "$build" "$out"
only=$1
shift
i=0
pids=()
for flags in "$@"; do
    source_file=kernels/nvfp4_gemv.cu
    if [[ $flags == src=* ]]; then
        source_file=${flags%% *}
        source_file=${source_file#src=}
        [[ $flags == *" "* ]] && flags=${flags#* } || flags=
    fi
    # shellcheck disable=SC2086
    nvcc -std=c++17 -O3 -Iinclude -Ilib -I. --expt-relaxed-constexpr --Werror all-warnings \
        -Xcompiler=-Wall,-Wextra,-fopenmp -lineinfo "-gencode=arch=compute_${arch},code=sm_${arch}" $flags \
        tests/bench/nvfp4_gemv_bench.cu "$source_file" kernels/nvfp4_quantize_activations.cu \
        kernels/nvfp4_gemv_layout.cpp -o "$build/bench_variant$i" -lcublas -lcublasLt -lgomp &
    pids+=($!)
    i=$((i + 1))
done
for p in "${pids[@]}"; do wait "$p"; done
i=0
for flags in "$@"; do
    echo "== variant $i: ${flags:-(default)}"
    "$build/bench_variant$i" --only "$only" --nvfp4-only 2>&1 | tee "$out/variant$i.log" | grep -v "^device"
    i=$((i + 1))
done
