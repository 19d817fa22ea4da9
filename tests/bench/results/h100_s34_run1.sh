#!/usr/bin/env bash
# Session 34, run 1 (H100): reset_copy_sequence and chat's stop/bias options on the CUDA backend.
#  1. The engine test's full set (every model and format, with the new test_copy_sequence: both engines
#     copy a sequence onto another after they diverged, then decode on; the device rows right after).
#  2. (beside 1) The CLI test on CUDA (chat --stop / --logit-bias among it).
#  3. The session fuzz target on CUDA, under compute-sanitizer memcheck (committed corpus with the seed
#     copy_sequence, and the grown corpus).
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset gpu_test_cuda_engine fuzz_replay_session"), COMMIT.
source tests/bench/results/start_device_run.sh
R=build-bundle/bin/reset
(
    timeout 300 python3 tests/cli/test_commands.py "$PWD/$R" "$PWD" > "$OUT/cli_s34_run1.txt" 2>&1
    echo "cli rc $? at $SECONDS s" >> "$OUT/cli_s34_run1.txt"
) &
cli=$!
echo "== 1. engine test, full set"
python3 tests/gpu/make_engine_models.py /tmp/engine-models > /tmp/make_engine_models.log 2>&1
echo "models at $SECONDS s"
ENGINE_MODELS=/tmp/engine-models OUT=/tmp/engine SANITIZE=0 timeout 430 tests/gpu/run_cuda_engine_on_device.sh \
    > /tmp/engine.txt 2>&1
echo "engine rc $? at $SECONDS s"
cp /tmp/engine/test_cuda_engine.log "$OUT/engine_s34_run1.txt"
grep -E "copy|cut-back|logit bias|checks|FAIL|failed" "$OUT/engine_s34_run1.txt" | head -30
wait $cli
echo "== 2. CLI test on CUDA"
tail -n 1 "$OUT/cli_s34_run1.txt"; grep -v '^ok' "$OUT/cli_s34_run1.txt" | head -20; grep -c '^ok' "$OUT/cli_s34_run1.txt"
grep -E 'chat --(stop|logit)' "$OUT/cli_s34_run1.txt"
echo "== 3. fuzz_session replayed on CUDA"
mkdir -p /tmp/grown && tar xJf tests/fuzz/grown/session.tar.xz -C /tmp/grown
FUZZ_TARGET=session timeout 100 tests/fuzz/replay_on_device.sh tests/fuzz/corpus/session /tmp/grown/session
echo "replay rc $? at $SECONDS s"; tail -n 3 "$OUT/fuzz_replay_cuda_session.log"
echo "done at $SECONDS s"
