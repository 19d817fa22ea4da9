#!/usr/bin/env bash
# build_gemv_variant_lib.sh NAME SRCDIR [BUILD_DIR] — a libreset.so.0 whose GEMV kernels come from
# SRCDIR/kernels/nvfp4_gemv.cu (its headers from SRCDIR first, the rest from this tree), for A/B
# runs on the GPU machine without a second full build: the other objects of BUILD_DIR (default
# build-sm90, configured as scripts/make_device_bundle.sh says) are relinked with it.  KERNELS
# names other kernel sources to take from SRCDIR instead (default "nvfp4_gemv"; e.g.
# KERNELS=attention_decode); SOURCES names C++ sources of lib/ to take from SRCDIR too (paths from
# the root, e.g. SOURCES=lib/cuda/device_session.cpp).  Writes .ab/NAME/libreset.so.0.xz; on the GPU machine unpack it and
# put its directory first on LD_LIBRARY_PATH (tests/bench/results/h100_s14_run2.sh).
set -euo pipefail
name=$1
src=$(cd "$2" && pwd)
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root/${3:-build-sm90}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
flags=$(sed -n 's/^CUDA_FLAGS = //p' CMakeFiles/reset_objects.dir/flags.make)
defines=$(sed -n 's/^CUDA_DEFINES = //p' CMakeFiles/reset_objects.dir/flags.make)
link=$(sed "s#-o libreset.so[.0-9]*#-o $work/libreset.so.0#" CMakeFiles/reset.dir/link.txt)
for kernel in ${KERNELS:-nvfp4_gemv}; do
    # shellcheck disable=SC2086  # the flags are words
    nvcc $defines -I"$src" --options-file CMakeFiles/reset_objects.dir/includes_CUDA.rsp $flags \
        -c "$src/kernels/$kernel.cu" -o "$work/$kernel.o"
    link=${link//CMakeFiles\/reset_objects.dir\/kernels\/$kernel.cu.o/$work\/$kernel.o}
done
cxx_flags=$(sed -n 's/^CXX_FLAGS = //p' CMakeFiles/reset_objects.dir/flags.make)
cxx_defines=$(sed -n 's/^CXX_DEFINES = //p' CMakeFiles/reset_objects.dir/flags.make)
cxx_includes=$(sed -n 's/^CXX_INCLUDES = //p' CMakeFiles/reset_objects.dir/flags.make)
for source in ${SOURCES:-}; do
    object=$work/$(basename "$source").o
    # shellcheck disable=SC2086  # the flags are words
    c++ $cxx_defines -I"$src" -I"$src/lib" $cxx_includes $cxx_flags -c "$src/$source" -o "$object"
    link=${link//CMakeFiles\/reset_objects.dir\/$source.o/$object}
done
eval "$link"
mkdir -p "$root/.ab/$name"
xz -c "$work/libreset.so.0" > "$root/.ab/$name/libreset.so.0.xz"
echo "$root/.ab/$name/libreset.so.0.xz"
