#!/usr/bin/env bash
# make_device_bundle.sh — gather a CUDA build's executables and the shared
# libraries they load into build-bundle/, so the GPU machine (whose image
# lacks the host library's -dev packages: pcre2, sentencepiece, icu, libedit)
# can run the library-level GPU tests and the `reset` command built here.
#   [BUNDLE_PROGRAMS="..."] scripts/make_device_bundle.sh [BUILD_DIR]   (default build-sm90, a CUDA build for sm_90a:
#   cmake -S . -B build-sm90 -DCMAKE_BUILD_TYPE=Release -DRESET_CUDA=ON -DRESET_CUDA_ARCHITECTURES=90a)
# On the GPU machine: tar xJf build-bundle.tar.xz; source build-bundle/env.sh; build-bundle/bin/<program>
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-sm90}
out=build-bundle
rm -rf "$out"
mkdir -p "$out/bin" "$out/lib"
programs=("$build"/tests/gpu_test_* "$build/samples/reset" "$build/tests/decode_bench"
          "$build/tests/attention_decode_bench" "$build/tests/nvfp4_gemv_bench"
          "$build/tests/persistent_chain_bench" "$build/tests/fuzz_replay_model_load"
          "$build/tests/fuzz_replay_session" "$build/tests/fuzz_replay_sequence_file")
# (every GPU test, the decode, attention, GEMV and chain benchmarks, the model-loading, session and
# sequence-file fuzz replays)
# BUNDLE_PROGRAMS="gpu_test_cuda_engine reset ..." keeps only those (the device tool carries at most
# 64 MiB with the working tree, and every GPU test links the library's objects: ~10 MB each).
for p in "${programs[@]}"; do
    [[ -x $p ]] || continue
    [[ -z ${BUNDLE_PROGRAMS:-} || " $BUNDLE_PROGRAMS " == *" $(basename "$p") "* ]] && cp "$p" "$out/bin/"
done
cp -L "$build/libreset.so.0" "$out/lib/"
# Every non-glibc library the programs load (glibc, libstdc++ and libgcc are on the GPU machine).
for p in "$out"/bin/* "$out/lib/libreset.so.0"; do
    ldd "$p" | awk '/=> \// {print $3}'
done | sort -u | grep -Ev '/(libc|libm|libdl|libpthread|librt|ld-linux|libstdc\+\+|libgcc_s)[.-]' |
    grep -v "$PWD" | grep -v '/libcublas' | while read -r lib; do cp -L "$lib" "$out/lib/"; done
# cuBLAS (570 MB with cuBLASLt) is not carried: the GPU machine has CUDA 13's in its Python
# packages (nvidia-cublas) and toolkit.  build-bundle/env.sh puts the bundle and that copy on
# the library path: source it there before running a program.
cat > "$out/env.sh" <<'SH'
bundle=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cublas=$(python3 -c 'import nvidia.cublas, os; print(os.path.join(list(nvidia.cublas.__path__)[0], "lib"))' 2>/dev/null)
export LD_LIBRARY_PATH=$bundle/lib${cublas:+:$cublas}:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
SH
# The device tool carries at most 64 MiB with the working tree: ship it compressed
# (ICU's data library alone is 30 MB); on the GPU machine: tar xJf build-bundle.tar.xz
tar -cJf build-bundle.tar.xz "$out"
du -sh "$out" build-bundle.tar.xz
