#!/usr/bin/env bash
# ab_env_decode_on_device.sh — one `reset bench decode` case run with an
# environment variable at several values, alternated round by round in one
# run on the GPU machine (so that clock and thermal drift fall on every value
# alike), from the repository root with build-bundle/ carried
# (scripts/make_device_bundle.sh):
#   tests/bench/ab_env_decode_on_device.sh VAR "V1 V2 ..." MODEL_DIR ROUNDS [reset bench decode arguments...]
# e.g. VAR=RESET_NVFP4_GEMV_PLAN with "local streamed" (docs/gemv.md).
# JSON lines with "env" (VAR=value) and "round" added go to stdout; errors to
# $OUT/ab_env_decode.log.
# tests/bench/ab_summary.py FILE prints each case's medians and their changes.
set -uo pipefail
out=${OUT:-$PWD/build-device/out}
mkdir -p "$out"
source build-bundle/env.sh
var=$1
read -r -a values <<<"$2"
model=$3
rounds=$4
shift 4
for ((round = 1; round <= rounds; ++round)); do
    for value in "${values[@]}"; do
        env "$var=$value" build-bundle/bin/reset bench decode "$model" --backend cuda --json "$@" \
            2>>"$out/ab_env_decode.log" | sed "s/^{/{\"env\": \"$var=$value\", \"round\": $round, /"
    done
done
