#!/usr/bin/env bash
# Session 35, run 4 (H100): the session's final library (the save flushing the directory; the CPU's FP8
# encoding keeping a zero's sign).
#  1. The engine test's full set (test_sequence_file with the header's FP8 bound and the re-save check).
#  2. (beside 1) The CLI test on CUDA.
#  3. fuzz_session (committed corpus) and fuzz_sequence_file (committed and grown corpora) on CUDA, then
#     the committed corpora under compute-sanitizer memcheck.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset gpu_test_cuda_engine fuzz_replay_session
# fuzz_replay_sequence_file"), COMMIT.
source tests/bench/results/start_device_run.sh
R=build-bundle/bin/reset
(
    timeout 300 python3 tests/cli/test_commands.py "$PWD/$R" "$PWD" > "$OUT/cli_s35_run4.txt" 2>&1
    echo "cli rc $? at $SECONDS s" >> "$OUT/cli_s35_run4.txt"
) &
cli=$!
echo "== 1. engine test, full set"
python3 tests/gpu/make_engine_models.py /tmp/engine-models > /tmp/make_engine_models.log 2>&1
echo "models at $SECONDS s"
ENGINE_MODELS=/tmp/engine-models OUT=/tmp/engine SANITIZE=0 timeout 430 tests/gpu/run_cuda_engine_on_device.sh \
    > /tmp/engine.txt 2>&1
echo "engine rc $? at $SECONDS s"
cp /tmp/engine/test_cuda_engine.log "$OUT/engine_s35_run4.txt"
grep -E "sequence file|copy|checks|FAIL|failed" "$OUT/engine_s35_run4.txt" | head -30
wait $cli
echo "== 2. CLI test on CUDA"
tail -n 1 "$OUT/cli_s35_run4.txt"; grep -v '^ok' "$OUT/cli_s35_run4.txt" | head -20; grep -c '^ok' "$OUT/cli_s35_run4.txt"
echo "== 3. fuzz replays on CUDA"
mkdir -p /tmp/grown && tar xJf tests/fuzz/grown/sequence_file.tar.xz -C /tmp/grown
FUZZ_TARGET=session timeout 60 tests/fuzz/replay_on_device.sh tests/fuzz/corpus/session
echo "replay session rc $? at $SECONDS s"; tail -n 1 "$OUT/fuzz_replay_cuda_session.log"
FUZZ_TARGET=sequence_file timeout 100 tests/fuzz/replay_on_device.sh tests/fuzz/corpus/sequence_file \
    /tmp/grown/sequence_file
echo "replay sequence_file rc $? at $SECONDS s"; tail -n 1 "$OUT/fuzz_replay_cuda_sequence_file.log"
echo "done at $SECONDS s"
