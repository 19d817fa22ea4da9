#!/usr/bin/env bash
# step_trace_on_device.sh — one decode step's per-launch timeline on the GPU
# machine, from the repository root with build-bundle/ and the trace library
# (.ab/trace/libreset.so.0.xz, tests/bench/build_step_trace.sh) carried:
#   tests/bench/step_trace_on_device.sh MODEL_DIR NAME REPORT [VAR=VALUE...] -- [reset bench decode arguments...]
# runs `reset bench decode MODEL_DIR --backend cuda --weights auto` on the
# trace library with the assignments in its environment, and appends "== NAME"
# and tests/bench/step_trace_report.py's table to REPORT (the raw records stay
# in /tmp/traces/NAME.txt).
set -uo pipefail
model=$1 name=$2 report=$3
shift 3
settings=()
while [[ $# -gt 0 && $1 != -- ]]; do settings+=("$1"); shift; done
[[ $# -gt 0 ]] && shift
mkdir -p /tmp/tr /tmp/traces
[[ -f /tmp/tr/libreset.so.0 ]] || xz -dc .ab/trace/libreset.so.0.xz > /tmp/tr/libreset.so.0
env LD_LIBRARY_PATH="/tmp/tr:${LD_LIBRARY_PATH:-}" RESET_STEP_TRACE_FILE="/tmp/traces/$name.txt" "${settings[@]}" \
    build-bundle/bin/reset bench decode "$model" --backend cuda --weights auto --json "$@" > /dev/null 2>&1
echo "== $name" >> "$report"
python3 tests/bench/step_trace_report.py "/tmp/traces/$name.txt" >> "$report" 2>&1
