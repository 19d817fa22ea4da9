#!/usr/bin/env bash
# Session 33, run 5 (H100): the session fuzz target on the CUDA backend over the corpus this session's two
# campaigns grew (cut backs, logit biases), merged into tests/fuzz/grown/session.tar.xz, and the committed
# corpus under compute-sanitizer memcheck.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="fuzz_replay_session"), COMMIT.
source tests/bench/results/start_device_run.sh
mkdir -p /tmp/grown && tar xJf tests/fuzz/grown/session.tar.xz -C /tmp/grown
FUZZ_TARGET=session timeout 300 tests/fuzz/replay_on_device.sh tests/fuzz/corpus/session /tmp/grown/session
echo "replay rc $? at $SECONDS s"; tail -n 2 "$OUT/fuzz_replay_cuda_session.log"
echo "done at $SECONDS s"
