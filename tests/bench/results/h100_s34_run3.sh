#!/usr/bin/env bash
# Session 34, run 3 (H100): the session's final library (reset_copy_sequence copying what allocates before
# the KV cache; the sampler checking the row it draws from before it decides).
#  1. The engine test's full set (test_copy_sequence among every earlier test).
#  2. (beside 1) The CLI test on CUDA.
#  3. The session fuzz target on CUDA over the committed corpus and the grown one merged this session,
#     then the committed corpus under compute-sanitizer memcheck.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset gpu_test_cuda_engine fuzz_replay_session"), COMMIT.
source tests/bench/results/start_device_run.sh
R=build-bundle/bin/reset
(
    timeout 300 python3 tests/cli/test_commands.py "$PWD/$R" "$PWD" > "$OUT/cli_s34_run3.txt" 2>&1
    echo "cli rc $? at $SECONDS s" >> "$OUT/cli_s34_run3.txt"
) &
cli=$!
echo "== 1. engine test, full set"
python3 tests/gpu/make_engine_models.py /tmp/engine-models > /tmp/make_engine_models.log 2>&1
echo "models at $SECONDS s"
ENGINE_MODELS=/tmp/engine-models OUT=/tmp/engine SANITIZE=0 timeout 430 tests/gpu/run_cuda_engine_on_device.sh \
    > /tmp/engine.txt 2>&1
echo "engine rc $? at $SECONDS s"
cp /tmp/engine/test_cuda_engine.log "$OUT/engine_s34_run3.txt"
grep -E "copy|cut-back|logit bias|checks|FAIL|failed" "$OUT/engine_s34_run3.txt" | head -30
wait $cli
echo "== 2. CLI test on CUDA"
tail -n 1 "$OUT/cli_s34_run3.txt"; grep -v '^ok' "$OUT/cli_s34_run3.txt" | head -20; grep -c '^ok' "$OUT/cli_s34_run3.txt"
echo "== 3. fuzz_session replayed on CUDA"
mkdir -p /tmp/grown && tar xJf tests/fuzz/grown/session.tar.xz -C /tmp/grown
FUZZ_TARGET=session timeout 120 tests/fuzz/replay_on_device.sh tests/fuzz/corpus/session /tmp/grown/session
echo "replay rc $? at $SECONDS s"; tail -n 3 "$OUT/fuzz_replay_cuda_session.log"
echo "done at $SECONDS s"
