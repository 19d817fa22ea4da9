#!/usr/bin/env bash
# ab_env_decode_on_device.sh — one `reset bench decode` case run with an
# environment variable at several values, alternated round by round in one
# run on the GPU machine (so that clock and thermal drift fall on every value
# alike), from the repository root with build-bundle/ carried
# (scripts/make_device_bundle.sh):
#   tests/bench/ab_env_decode_on_device.sh VAR "V1 V2 ..." MODEL_DIR ROUNDS [reset bench decode arguments...]
# e.g. VAR=RESET_NVFP4_GEMV_PLAN with "local streamed" (docs/gemv.md).
# VAR "-": each value is itself one or more comma-separated assignments, for
# settings that go together, e.g. "- 'A=1 A=0,B=0'" alternates A=1 with A=0 B=0.
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
        setting="$var=$value"
        [[ $var == - ]] && setting=${value//,/ }
        # shellcheck disable=SC2086  # the setting's assignments are separate words
        env $setting build-bundle/bin/reset bench decode "$model" --backend cuda --json "$@" \
            2>>"$out/ab_env_decode.log" | sed "s/^{/{\"env\": \"$setting\", \"round\": $round, /"
    done
done
