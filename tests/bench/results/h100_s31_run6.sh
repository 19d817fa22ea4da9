#!/usr/bin/env bash
# Session 31, run 6 (H100): the session's final state (ABI 0.4, top_logprobs on a branch of the step
# graph, the fuzz target's new checks need no GPU).
#  1. The engine test's full set (every model and format, with test_top_logprobs).
#  2. (beside 1) The CLI test on CUDA (--top-logprobs in generate and bench among the rest).
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset gpu_test_cuda_engine"), COMMIT.
source tests/bench/results/start_device_run.sh
R=build-bundle/bin/reset
(
    timeout 300 python3 tests/cli/test_commands.py "$PWD/$R" "$PWD" > "$OUT/cli_s31_run6.txt" 2>&1
    echo "cli rc $? at $SECONDS s" >> "$OUT/cli_s31_run6.txt"
) &
side=$!
echo "== 1. engine test"
python3 tests/gpu/make_engine_models.py /tmp/engine-models > /tmp/make_engine_models.log 2>&1
echo "models at $SECONDS s"
ENGINE_MODELS=/tmp/engine-models OUT=/tmp/engine SANITIZE=0 timeout 500 tests/gpu/run_cuda_engine_on_device.sh \
    > /tmp/engine.txt 2>&1
echo "engine rc $? at $SECONDS s"
cp /tmp/engine/test_cuda_engine.log "$OUT/engine_s31_run6.txt"
grep -E "cancelled prefill|top_logprobs|checks|FAIL" "$OUT/engine_s31_run6.txt" | head -30
wait $side
echo "== 2. CLI test on CUDA"
tail -n 1 "$OUT/cli_s31_run6.txt"; grep -v '^ok' "$OUT/cli_s31_run6.txt" | head -20; grep -c '^ok' "$OUT/cli_s31_run6.txt"
echo "done at $SECONDS s"
