#!/bin/sh
# Generates this package (native.go, native_wrap.c: git ignores both) from
# native.i and reset.h with SWIG.  go generate runs it; so does
# tests/bindings/go.sh.
# Usage: generate.sh [INCLUDE_DIR]   (the folder holding reset.h; default
#   $RESET_INCLUDE_DIR, else the include/ folder of this source tree)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
include=${1:-${RESET_INCLUDE_DIR:-$here/../../../../include}}
# Generated into a scratch folder and moved into place, so a build running
# beside this one never compiles a half-written file.
scratch=$(mktemp -d "$here/.generate.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
swig -go -cgo -intgosize 64 -module native -package native -I"$include" \
     -outdir "$scratch" -o "$scratch/native_wrap.c" "$here/native.i"
mv -f "$scratch/native_wrap.c" "$here/native_wrap.c"
mv -f "$scratch/native.go" "$here/native.go"
