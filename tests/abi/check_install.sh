#!/usr/bin/env bash
# The library as a user links it: install into a temporary prefix, then check
# the SONAME, that only reset_* symbols are exported, and that a program
# builds against the installed header through pkg-config and through CMake's
# find_package(reset).
set -euo pipefail
build_dir=$1
source_dir=$2
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT

cmake --install "$build_dir" --prefix "$prefix" >/dev/null
library=$(ls "$prefix"/lib*/libreset.so.*.*.* | head -1)
libdir=$(dirname "$library")

soname=$(objdump -p "$library" | awk '/SONAME/ {print $2}')
[ "$soname" = "libreset.so.0" ] || { echo "FAIL: SONAME is '$soname', expected libreset.so.0"; exit 1; }

foreign=$(nm -D --defined-only "$library" | awk '{print $3}' | grep -v '^reset_' || true)
[ -z "$foreign" ] || { echo "FAIL: symbols other than reset_* are exported:"; echo "$foreign" | head; exit 1; }
count=$(nm -D --defined-only "$library" | grep -c ' reset_')
echo "exports: $count reset_* symbols, nothing else"

export PKG_CONFIG_PATH="$libdir/pkgconfig"
cc -std=c99 -Wall -Wextra -Werror -o "$prefix/decode" "$source_dir/samples/decode.c" $(pkg-config --cflags --libs reset)
LD_LIBRARY_PATH="$libdir" "$prefix/decode" "$source_dir/tests/fixtures/models/qwen3-tied" >/dev/null \
  || [ ! -d "$source_dir/tests/fixtures/models/qwen3-tied" ]
# samples/minimal.c needs nothing but the installed header and library.
cc -std=c99 -Wall -Wextra -Werror -o "$prefix/minimal" "$source_dir/samples/minimal.c" $(pkg-config --cflags --libs reset)
echo "pkg-config: C99 programs (samples/decode.c, samples/minimal.c) build and run against the installed header and library"

mkdir -p "$prefix/consumer"
cat > "$prefix/consumer/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.16)
project(consumer C)
find_package(reset REQUIRED)
add_executable(consumer main.c)
target_link_libraries(consumer PRIVATE reset::reset)
CMAKE
printf '#include <reset.h>\n#include <stdio.h>\nint main(void) { printf("%%s\\n", reset_version_string()); return reset_version() == RESET_VERSION_NUMBER ? 0 : 1; }\n' \
  > "$prefix/consumer/main.c"
cmake -S "$prefix/consumer" -B "$prefix/consumer/build" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$prefix/consumer/build" >/dev/null
LD_LIBRARY_PATH="$libdir" "$prefix/consumer/build/consumer"
echo "find_package(reset): a CMake project builds and runs against the installed package"
