#!/usr/bin/env bash
# Session 28, run 3 (H100): the whole grown session fuzz corpus (tests/fuzz/grown/session.tar.xz,
# 538 inputs) on the CUDA backend under compute-sanitizer memcheck (run 2 ran only the 6 seeds
# under it), then the seeds under racecheck.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="fuzz_replay_session"), COMMIT.
source tests/bench/results/start_device_run.sh
mkdir -p /tmp/grown && tar xJf tests/fuzz/grown/session.tar.xz -C /tmp/grown
export RESET_FUZZ_BACKEND=cuda
timeout 420 compute-sanitizer --tool memcheck --error-exitcode 3 --leak-check no \
    build-bundle/bin/fuzz_replay_session /tmp/grown/session > "$OUT/memcheck_grown_session.txt" 2>&1
echo "memcheck rc $? at $SECONDS s"; grep -c '^input ' "$OUT/memcheck_grown_session.txt"; tail -n 2 "$OUT/memcheck_grown_session.txt"
timeout 120 compute-sanitizer --tool racecheck --error-exitcode 3 \
    build-bundle/bin/fuzz_replay_session tests/fuzz/corpus/session > "$OUT/racecheck_session_seeds.txt" 2>&1
echo "racecheck rc $? at $SECONDS s"; tail -n 2 "$OUT/racecheck_session_seeds.txt"
