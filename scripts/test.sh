#!/usr/bin/env bash
# Build and run every test: unit and golden tests (doctest), GPU tests (they
# skip without a device), Python binding tests, the fuzz targets' committed
# corpora, then the unit tests and the corpora again built with
# AddressSanitizer + UndefinedBehaviorSanitizer.  Exits non-zero if any test
# fails.
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
