#!/usr/bin/env bash
# build_gemv_variant_lib.sh NAME SRCDIR [BUILD_DIR] — a libreset.so.0 whose GEMV kernels come from
# SRCDIR/kernels/nvfp4_gemv.cu (its headers from SRCDIR first, the rest from this tree), for A/B
# runs on the GPU machine without a second full build: the other objects of BUILD_DIR (default
# build-sm90, configured as scripts/make_device_bundle.sh says) are relinked with it.  KERNELS
# names kernel files to take from SRCDIR instead (e.g. KERNELS=attention_decode), SOURCES any
# library source by its path from the root (e.g. SOURCES=lib/cuda/device_session.cpp); with
# neither, kernels/nvfp4_gemv.cu.  Writes .ab/NAME/libreset.so.0.xz; on the GPU machine unpack it
# and put its directory first on LD_LIBRARY_PATH (tests/bench/results/h100_s14_run2.sh).
# PROGRAMS names test or benchmark executables of BUILD_DIR/tests (e.g. gpu_test_nvfp4_gemv), which
# link the library's objects rather than load it: each is relinked with the same objects into
# .ab/NAME/PROGRAM.xz, so that a variant's GPU tests run on its own kernels.
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
cxx_flags=$(sed -n 's/^CXX_FLAGS = //p' CMakeFiles/reset_objects.dir/flags.make)
cxx_defines=$(sed -n 's/^CXX_DEFINES = //p' CMakeFiles/reset_objects.dir/flags.make)
cxx_includes=$(sed -n 's/^CXX_INCLUDES = //p' CMakeFiles/reset_objects.dir/flags.make)
sources=${SOURCES:-}
objects=()  # pairs: a source's path from the root, its variant object
for kernel in ${KERNELS:-}; do sources+=" kernels/$kernel.cu"; done
[[ -n ${sources// /} ]] || sources=kernels/nvfp4_gemv.cu
for source in $sources; do
    object=$work/$(basename "$source").o
    # shellcheck disable=SC2086  # the flags are words
    case $source in
    *.cu) nvcc $defines -I"$src" --options-file CMakeFiles/reset_objects.dir/includes_CUDA.rsp $flags \
              -c "$src/$source" -o "$object" ;;
    *) c++ $cxx_defines -I"$src" -I"$src/lib" $cxx_includes $cxx_flags -c "$src/$source" -o "$object" ;;
    esac
    link=${link//CMakeFiles\/reset_objects.dir\/$source.o/$object}
    objects+=("$source" "$object")
done
eval "$link"
mkdir -p "$root/.ab/$name"
xz -c "$work/libreset.so.0" > "$root/.ab/$name/libreset.so.0.xz"
echo "$root/.ab/$name/libreset.so.0.xz"
for program in ${PROGRAMS:-}; do
    program_link=$(sed "s#-o $program\( \|$\)#-o $work/$program #" "tests/CMakeFiles/$program.dir/link.txt")
    for ((i = 0; i < ${#objects[@]}; i += 2)); do
        program_link=${program_link//..\/CMakeFiles\/reset_objects.dir\/${objects[i]}.o/${objects[i + 1]}}
    done
    (cd tests && eval "$program_link")
    xz -c "$work/$program" > "$root/.ab/$name/$program.xz"
    echo "$root/.ab/$name/$program.xz"
done
