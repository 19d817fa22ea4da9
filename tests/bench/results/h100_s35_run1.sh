#!/usr/bin/env bash
# Session 35, run 1 (H100): sequence files (ABI 0.8, reset_save_sequence / reset_load_sequence).
#  1. The engine test's full set (test_sequence_file among every earlier test: a CUDA file loaded on CUDA,
#     each engine loading the other's file, BF16 and FP8 caches).
#  2. (beside 1) The CLI test on CUDA (generate --prompt-cache, --kv-cache).
#  3. The session fuzz target (its save-and-load operation) and the new sequence_file target on CUDA over
#     the committed corpora, then those corpora under compute-sanitizer memcheck.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset gpu_test_cuda_engine fuzz_replay_session
# fuzz_replay_sequence_file"), COMMIT.
source tests/bench/results/start_device_run.sh
R=build-bundle/bin/reset
(
    timeout 300 python3 tests/cli/test_commands.py "$PWD/$R" "$PWD" > "$OUT/cli_s35_run1.txt" 2>&1
    echo "cli rc $? at $SECONDS s" >> "$OUT/cli_s35_run1.txt"
) &
cli=$!
echo "== 1. engine test, full set"
python3 tests/gpu/make_engine_models.py /tmp/engine-models > /tmp/make_engine_models.log 2>&1
echo "models at $SECONDS s"
ENGINE_MODELS=/tmp/engine-models OUT=/tmp/engine SANITIZE=0 timeout 430 tests/gpu/run_cuda_engine_on_device.sh \
    > /tmp/engine.txt 2>&1
echo "engine rc $? at $SECONDS s"
cp /tmp/engine/test_cuda_engine.log "$OUT/engine_s35_run1.txt"
grep -E "sequence file|copy|checks|FAIL|failed" "$OUT/engine_s35_run1.txt" | head -30
wait $cli
echo "== 2. CLI test on CUDA"
tail -n 1 "$OUT/cli_s35_run1.txt"; grep -v '^ok' "$OUT/cli_s35_run1.txt" | head -20; grep -c '^ok' "$OUT/cli_s35_run1.txt"
echo "== 3. fuzz replays on CUDA"
for target in session sequence_file; do
    FUZZ_TARGET=$target timeout 100 tests/fuzz/replay_on_device.sh tests/fuzz/corpus/$target
    echo "replay $target rc $? at $SECONDS s"; tail -n 3 "$OUT/fuzz_replay_cuda_$target.log"
done
echo "done at $SECONDS s"
