#!/usr/bin/env bash
# Session 32, run 1 (H100): stop conditions (ABI 0.5, reset_set_stop).  They are decided on the
# host, but the context the device keeps after a stop or max_tokens is the CUDA engine's.
#  1. The engine test's full set (every model and format, with test_stop_conditions).
#  2. (beside 1) The CLI test on CUDA (generate --stop, --stop-id, --max-tokens' "length" among the rest).
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset gpu_test_cuda_engine"), COMMIT.
source tests/bench/results/start_device_run.sh
R=build-bundle/bin/reset
(
    timeout 300 python3 tests/cli/test_commands.py "$PWD/$R" "$PWD" > "$OUT/cli_s32_run1.txt" 2>&1
    echo "cli rc $? at $SECONDS s" >> "$OUT/cli_s32_run1.txt"
) &
side=$!
echo "== 1. engine test"
python3 tests/gpu/make_engine_models.py /tmp/engine-models > /tmp/make_engine_models.log 2>&1
echo "models at $SECONDS s"
ENGINE_MODELS=/tmp/engine-models OUT=/tmp/engine SANITIZE=0 timeout 500 tests/gpu/run_cuda_engine_on_device.sh \
    > /tmp/engine.txt 2>&1
echo "engine rc $? at $SECONDS s"
cp /tmp/engine/test_cuda_engine.log "$OUT/engine_s32_run1.txt"
grep -E "stop strings|checks|FAIL" "$OUT/engine_s32_run1.txt" | head -30
wait $side
echo "== 2. CLI test on CUDA"
tail -n 1 "$OUT/cli_s32_run1.txt"; grep -v '^ok' "$OUT/cli_s32_run1.txt" | head -20; grep -c '^ok' "$OUT/cli_s32_run1.txt"
echo "done at $SECONDS s"
