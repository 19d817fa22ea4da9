#!/usr/bin/env bash
# build_step_trace.sh — a libreset.so.0 with the decode step's per-warp timeline
# compiled in (-DRESET_STEP_TRACE, kernels/step_trace.h), built in build-trace/
# (sm_90a; ARCH overrides) and written to .ab/trace/libreset.so.0.xz for the GPU
# machine: unpack it there, put its directory first on LD_LIBRARY_PATH, and run
#   RESET_STEP_TRACE_FILE=t.txt build-bundle/bin/reset bench decode MODEL --backend cuda ...
# then tests/bench/step_trace_report.py t.txt (tests/bench/results/h100_s16_run2.sh),
# or tests/bench/step_trace_on_device.sh, which does both.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
cmake -S . -B build-trace -DCMAKE_BUILD_TYPE=Release -DRESET_CUDA=ON -DRESET_CUDA_ARCHITECTURES="${ARCH:-90a}" \
    -DCMAKE_CUDA_FLAGS=-DRESET_STEP_TRACE -DCMAKE_CXX_FLAGS=-DRESET_STEP_TRACE > /dev/null
cmake --build build-trace -j"$(nproc)" --target reset > /dev/null
mkdir -p .ab/trace
xz -c build-trace/libreset.so.0 > .ab/trace/libreset.so.0.xz
echo "$root/.ab/trace/libreset.so.0.xz"
