#!/usr/bin/env bash
# Builds the Java binding: SWIG generates the JNI layer from reset.i (nothing generated is
# committed), gcc compiles it into libreset_jni.so against libreset, javac compiles the
# generated and hand-written classes into libreset.jar.
# Usage: build.sh INCLUDE_DIR LIB_DIR OUT_DIR
#   INCLUDE_DIR holds reset.h, LIB_DIR libreset.so; JAVA_HOME is found from javac when unset.
set -euo pipefail
include=$(cd "$1" && pwd) lib=$(cd "$2" && pwd) out=$3
here=$(cd "$(dirname "$0")" && pwd)
: "${JAVA_HOME:=$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")}"
mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -rf "$out/generated" "$out/classes"
mkdir -p "$out/generated/dev/libreset" "$out/classes"
swig -java -package dev.libreset -outdir "$out/generated/dev/libreset" -o "$out/generated/reset_wrap.c" \
     -I"$include" "$here/reset.i"
# SWIG's wrappers pun pointers through jlong: strict aliasing must be off for them.
${CC:-cc} -std=c11 -O2 -fPIC -shared -fno-strict-aliasing -Wall -Wno-unused-parameter \
     -I"$JAVA_HOME/include" -I"$JAVA_HOME/include/linux" -I"$include" \
     "$out/generated/reset_wrap.c" -L"$lib" -lreset -o "$out/libreset_jni.so"
"$JAVA_HOME/bin/javac" --release 17 -Xlint:all -Werror -d "$out/classes" \
     "$out"/generated/dev/libreset/*.java "$here"/src/main/java/dev/libreset/*.java
"$JAVA_HOME/bin/jar" --create --file "$out/libreset.jar" -C "$out/classes" .
