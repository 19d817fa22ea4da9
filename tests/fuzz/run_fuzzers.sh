#!/usr/bin/env bash
# run_fuzzers.sh [SECONDS] [TARGET...] — build the libFuzzer programs (clang,
# AddressSanitizer + UndefinedBehaviorSanitizer, no CUDA) in build-fuzz/ and
# fuzz each target for SECONDS (default 300), one after another, starting from
# its committed corpus and the one earlier fuzzing grew (tests/fuzz/grown/).
# New inputs go to build-fuzz/corpus/<target>/,
# findings to build-fuzz/findings/<target>/ (crash-*, leak-*, timeout-*).
# A finding's input becomes a regression test when added, minimised
# (`build-fuzz/tests/fuzz_<target> -minimize_crash=1 -runs=10000 FILE`), to
# tests/fuzz/corpus/<target>/ after the fix.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-300}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(json tokenize tokenizer_load model_load policy session sequence_file)

command -v clang++ >/dev/null || { echo "run_fuzzers.sh: needs clang (apt-get install clang: libFuzzer)"; exit 2; }
cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
      -DRESET_CUDA=OFF -DRESET_FUZZ=ON -DRESET_BUILD_SAMPLES=OFF >/dev/null
cmake --build build-fuzz -j "$(nproc)" --target "${targets[@]/#/fuzz_}"

status=0
for target in "${targets[@]}"; do
    # Inputs up to the largest seed plus room to grow (model directories are ~60 KB).
    case $target in
        model_load) max_len=131072 ;;
        tokenizer_load) max_len=65536 ;;
        sequence_file) max_len=32768 ;;
        *) max_len=4096 ;;
    esac
    mkdir -p "build-fuzz/corpus/$target" "build-fuzz/findings/$target" build-fuzz/grown
    tar -xJf "tests/fuzz/grown/$target.tar.xz" -C build-fuzz/grown
    echo "== fuzz_$target: ${seconds}s"
    # allocator_may_return_null: a huge allocation a malformed file asks for must become
    # RESET_ERR_OUT_OF_MEMORY (std::bad_alloc), which the targets accept, not an ASan abort.
    ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
        "build-fuzz/tests/fuzz_$target" "build-fuzz/corpus/$target" "tests/fuzz/corpus/$target" \
        "build-fuzz/grown/$target" \
        -max_total_time="$seconds" -max_len=$max_len -timeout=20 -rss_limit_mb=6000 \
        -artifact_prefix="build-fuzz/findings/$target/" -print_final_stats=1 || status=1
done
exit $status
