#!/usr/bin/env bash
# Session 32, run 2 (H100): the session's final library (stop conditions and reset_session_held_text).
#  1. The session fuzz target on the CUDA backend: the committed corpus (with the new seed
#     stop_conditions) and the grown one, then the committed corpus under compute-sanitizer memcheck.
#  2. The engine test's quick set (with test_stop_conditions).
#  3. (beside 2) The CLI test on CUDA.
#  4. What searching for stop strings costs this machine's host CPU (tests/bench/stop_search_bench.cpp).
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset gpu_test_cuda_engine fuzz_replay_session"), COMMIT.
source tests/bench/results/start_device_run.sh
R=build-bundle/bin/reset
echo "== 1. fuzz_session replayed on CUDA"
mkdir -p /tmp/grown && tar xJf tests/fuzz/grown/session.tar.xz -C /tmp/grown
FUZZ_TARGET=session timeout 200 tests/fuzz/replay_on_device.sh tests/fuzz/corpus/session /tmp/grown/session
echo "replay rc $? at $SECONDS s"
tail -n 2 "$OUT/fuzz_replay_cuda_session.log"
(
    timeout 300 python3 tests/cli/test_commands.py "$PWD/$R" "$PWD" > "$OUT/cli_s32_run2.txt" 2>&1
    echo "cli rc $? at $SECONDS s" >> "$OUT/cli_s32_run2.txt"
) &
side=$!
echo "== 2. engine test, quick set"
python3 tests/gpu/make_engine_models.py /tmp/engine-models > /tmp/make_engine_models.log 2>&1
RESET_GPU_TEST_QUICK=1 ENGINE_MODELS=/tmp/engine-models OUT=/tmp/engine SANITIZE=0 timeout 300 \
    tests/gpu/run_cuda_engine_on_device.sh > /tmp/engine.txt 2>&1
echo "engine rc $? at $SECONDS s"
cp /tmp/engine/test_cuda_engine.log "$OUT/engine_quick_s32_run2.txt"
grep -E "stop strings|checks|FAIL" "$OUT/engine_quick_s32_run2.txt" | head -20
wait $side
echo "== 3. CLI test on CUDA"
tail -n 1 "$OUT/cli_s32_run2.txt"; grep -v '^ok' "$OUT/cli_s32_run2.txt" | head -20; grep -c '^ok' "$OUT/cli_s32_run2.txt"
echo "== 4. stop-string search on the host CPU"
lscpu | grep -E "Model name" | head -1
g++ -O2 -std=c++17 -Ilib -Iinclude tests/bench/stop_search_bench.cpp lib/engine/stop_conditions.cpp \
    lib/text/utf8.cpp lib/api/errors.cpp -o /tmp/stop_search_bench && /tmp/stop_search_bench
echo "done at $SECONDS s"
