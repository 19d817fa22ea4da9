#!/usr/bin/env bash
# Session 28, run 2 (H100): the new session fuzz target (tests/fuzz/fuzz_session.cpp) on the CUDA
# backend.  The committed corpus and the one two CPU campaigns grew (tests/fuzz/grown/session.tar.xz)
# replayed with RESET_FUZZ_BACKEND=cuda: every call's status, lengths, and a twin session given
# only the calls that succeeded, bit for bit, on the device; then the committed corpus under
# compute-sanitizer memcheck (tests/fuzz/replay_on_device.sh).
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="fuzz_replay_session"), COMMIT.
source tests/bench/results/start_device_run.sh
mkdir -p /tmp/grown && tar xJf tests/fuzz/grown/session.tar.xz -C /tmp/grown
FUZZ_TARGET=session timeout 500 tests/fuzz/replay_on_device.sh tests/fuzz/corpus/session /tmp/grown/session
echo "replay rc $? at $SECONDS s"
tail -n 2 "$OUT/fuzz_replay_cuda_session.log"
