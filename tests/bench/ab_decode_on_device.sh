#!/usr/bin/env bash
# ab_decode_on_device.sh — one `reset bench decode` case with two builds of
# libreset.so, alternated round by round in one run on the GPU machine: the
# bundle's library ("new", scripts/make_device_bundle.sh) and the
# libreset.so.0 in OLD_DIR ("old": e.g. a build of the previous commit, or of
# this tree with one kernel swapped, carried as a tarball).  The `reset`
# program is the bundle's; the C ABI between them must not have changed.
#   tests/bench/ab_decode_on_device.sh OLD_DIR MODEL_DIR ROUNDS [reset bench decode arguments...]
# JSON lines with "lib" and "round" added go to stdout; errors to $OUT/ab_decode.log.
# tests/bench/ab_summary.py FILE prints each case's medians and their changes.
set -uo pipefail
out=${OUT:-$PWD/build-device/out}
mkdir -p "$out"
source build-bundle/env.sh
old_dir=$(cd "$1" && pwd)
model=$2
rounds=$3
shift 3
for ((round = 1; round <= rounds; ++round)); do
    for lib in new old; do
        path=$LD_LIBRARY_PATH
        [[ $lib == old ]] && path=$old_dir:$LD_LIBRARY_PATH
        LD_LIBRARY_PATH=$path build-bundle/bin/reset bench decode "$model" --backend cuda --json "$@" \
            2>>"$out/ab_decode.log" | sed "s/^{/{\"lib\": \"$lib\", \"round\": $round, /"
    done
done
