#!/usr/bin/env bash
# build_gemv_variants.sh — build the NVFP4 GEMV benchmark once per variant of
# the kernel, on any machine with nvcc (no GPU needed), for an A/B run on the
# GPU machine (run_gemv_variants_on_device.sh).  Each variant is NAME=SPEC:
#   NAME=flags:-DRESET_NVFP4_GEMV_MIN_CTAS=4   this tree with extra nvcc flags
#   NAME=rev:3d72fff                            the kernel sources of a git revision
#                                               (kernels/, lib/, include/, tests/bench/)
# Usage, from the repository root:
#   tests/bench/build_gemv_variants.sh OUT_DIR v3=rev:3d72fff v5=flags: v5c4=flags:-DRESET_NVFP4_GEMV_MIN_CTAS=4
# Environment: ARCH (default 90a), JOBS (parallel builds, default 2).
set -euo pipefail
out=$1
shift
arch=${ARCH:-90a}
jobs=${JOBS:-2}
mkdir -p "$out"
out=$(cd "$out" && pwd)
root=$PWD
build_one() {
    local name=${1%%=*} spec=${1#*=} src=$root flags=
    case $spec in
    rev:*)
        src=$(mktemp -d)
        git -C "$root" archive "${spec#rev:}" kernels lib include tests/bench | tar -x -C "$src"
        ;;
    flags:*) flags=${spec#flags:} ;;
    *) echo "variant $1: SPEC must start with rev: or flags:" >&2; return 1 ;;
    esac
    # shellcheck disable=SC2086
    (cd "$src" && nvcc -std=c++17 -O3 -Iinclude -Ilib -I. --expt-relaxed-constexpr --Werror all-warnings \
        -Xcompiler=-Wall,-Wextra,-fopenmp -lineinfo "-gencode=arch=compute_${arch},code=sm_${arch}" $flags \
        tests/bench/nvfp4_gemv_bench.cu kernels/nvfp4_gemv.cu kernels/nvfp4_quantize_activations.cu \
        kernels/nvfp4_gemv_layout.cpp -o "$out/gemv_bench_$name" -lcublas -lcublasLt -lgomp)
    echo "built $out/gemv_bench_$name ($spec)"
}
export -f build_one
export root out arch
printf '%s\n' "$@" | xargs -P "$jobs" -I{} bash -c 'build_one "$@"' _ {}
