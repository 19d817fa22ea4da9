#!/usr/bin/env bash
# build_attention_trace.sh — build the decode-attention benchmark in trace mode
# (-DRESET_ATTENTION_TRACE: kernels/attention_decode.cu records a per-CTA
# timeline, tests/bench/attention_decode_bench.cu prints one "trace": true
# JSON line after each case) from the sources alone, on any machine with nvcc
# (no GPU needed; the bench needs nothing but the kernel file, header-only
# helpers and the CUDA runtime, so no prebuilt objects or host packages).
# Usage, from the repository root:
#   tests/bench/build_attention_trace.sh OUTPUT_BINARY
# then e.g.  OUTPUT_BINARY 36 25 all   (one timing line and one trace line per case).
# Environment: ARCH (default 90a), EXTRA_FLAGS (more nvcc flags), TRACE=0 for the plain
# benchmark (no timeline; what the CMake build's attention_decode_bench runs), e.g. to time
# another revision's kernel file: run this script from that revision's checkout.
set -euo pipefail
if [[ $# -ne 1 ]]; then
    echo "usage: $0 OUTPUT_BINARY" >&2
    exit 2
fi
out=$1
arch=${ARCH:-90a}
mkdir -p "$(dirname "$out")"
trace=-DRESET_ATTENTION_TRACE
if [[ ${TRACE:-1} == 0 ]]; then trace=; fi
# shellcheck disable=SC2086
nvcc -std=c++17 -O3 -DNDEBUG -DRESET_WITH_CUDA=1 $trace -Iinclude -Ilib -I. -Itests/gpu \
    --expt-relaxed-constexpr --Werror all-warnings -Xcompiler=-Wall,-Wextra -lineinfo \
    "-gencode=arch=compute_${arch},code=sm_${arch}" ${EXTRA_FLAGS:-} \
    tests/bench/attention_decode_bench.cu kernels/attention_decode.cu -o "$out"
echo "built $out (sm_$arch${trace:+, RESET_ATTENTION_TRACE})"
