#!/usr/bin/env bash
# Build and run every test: unit and golden tests (doctest), GPU tests (they
# skip without a device), Python binding tests, the fuzz targets' committed
# corpora, then the unit tests and the corpora again built with
# AddressSanitizer + UndefinedBehaviorSanitizer, and the unit tests' thread
# cases built with ThreadSanitizer.  Exits non-zero if any test fails.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j "$jobs"
(cd build && ctest --output-on-failure)

# The sanitizer build skips CUDA: CI machines have no GPU, and the CUDA code is
# exercised by the regular build and, on the device, by compute-sanitizer.
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DRESET_SANITIZE=ON -DRESET_CUDA=OFF -DRESET_BUILD_SAMPLES=OFF
cmake --build build-asan -j "$jobs" --target unit_tests fuzz_replays
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
     ctest --output-on-failure -R 'unit_tests|fuzz_')

# ThreadSanitizer: the header's thread promises (the unit tests' "threads" suite:
# tests/unit/test_threads.cpp).  Those tests load models with threads = 1: an OpenMP team's
# runtime (libgomp) is not instrumented, so TSan would report its barriers' ordering as races.
cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRESET_TSAN=ON -DRESET_CUDA=OFF -DRESET_BUILD_SAMPLES=OFF
cmake --build build-tsan -j "$jobs" --target unit_tests
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 build-tsan/tests/unit_tests -ts=threads

