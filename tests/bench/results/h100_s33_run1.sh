#!/usr/bin/env bash
# Session 33, run 1 (H100): cutting sequences back (ABI 0.6, reset_truncate, reset_session_tokens).
# The host keeps the tokens and restarts the sampler; the device keeps the KV cache, which a cut
# sequence reuses for the positions it keeps and overwrites past them.
#  1. The session fuzz target on the CUDA backend: the committed corpus (with the new seed truncate)
#     and the grown one, then the committed corpus under compute-sanitizer memcheck.
#  2. The engine test's full set (every model and format, with test_truncate).
#  3. (beside 2) The CLI test on CUDA (chat keeping what the session holds of a turn's prompt).
#  4. (beside 2) `reset chat` on a random Qwen3-8B-shape NVFP4 checkpoint with the real Qwen3
#     tokenizer and chat template, three turns with and without reasoning: tokens kept and
#     prefilled per turn (/stats).
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset gpu_test_cuda_engine fuzz_replay_session"), COMMIT,
# build-tokenizer/qwen3 (copied from ../shared/data/tokenizers/qwen3).
source tests/bench/results/start_device_run.sh
R=build-bundle/bin/reset
echo "== 1. fuzz_session replayed on CUDA"
mkdir -p /tmp/grown && tar xJf tests/fuzz/grown/session.tar.xz -C /tmp/grown
FUZZ_TARGET=session timeout 200 tests/fuzz/replay_on_device.sh tests/fuzz/corpus/session /tmp/grown/session
echo "replay rc $? at $SECONDS s"
tail -n 2 "$OUT/fuzz_replay_cuda_session.log"
(
    timeout 300 python3 tests/cli/test_commands.py "$PWD/$R" "$PWD" > "$OUT/cli_s33_run1.txt" 2>&1
    echo "cli rc $? at $SECONDS s" >> "$OUT/cli_s33_run1.txt"
    python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/qwen3-8b-nvfp4 > /tmp/checkpoint.log 2>&1
    cp build-tokenizer/qwen3/* /tmp/qwen3-8b-nvfp4/
    echo "checkpoint at $SECONDS s" >> "$OUT/chat_s33_run1.txt"
    turns='Tell me a long story about a lighthouse.\n/stats\nNow a second one, about a ship.\n/stats\nAnd a third.\n/stats\n/context\n'
    for mode in --no-think --think; do
        flag=$mode; [[ $mode == --think ]] && flag=""
        echo "-- reset chat $mode (greedy, --max-tokens 400)" >> "$OUT/chat_s33_run1.txt"
        printf "$turns" | timeout 120 "$R" chat /tmp/qwen3-8b-nvfp4 $flag --max-tokens 400 --policy greedy 2>&1 \
            | grep -E "^(prefill|decode|context):|^\[" >> "$OUT/chat_s33_run1.txt"
    done
    echo "chat done at $SECONDS s" >> "$OUT/chat_s33_run1.txt"
) &
side=$!
echo "== 2. engine test, full set"
python3 tests/gpu/make_engine_models.py /tmp/engine-models > /tmp/make_engine_models.log 2>&1
echo "models at $SECONDS s"
ENGINE_MODELS=/tmp/engine-models OUT=/tmp/engine SANITIZE=0 timeout 430 tests/gpu/run_cuda_engine_on_device.sh \
    > /tmp/engine.txt 2>&1
echo "engine rc $? at $SECONDS s"
cp /tmp/engine/test_cuda_engine.log "$OUT/engine_s33_run1.txt"
grep -E "cut-back|checks|FAIL" "$OUT/engine_s33_run1.txt" | head -30
wait $side
echo "== 3. CLI test on CUDA"
tail -n 1 "$OUT/cli_s33_run1.txt"; grep -v '^ok' "$OUT/cli_s33_run1.txt" | head -20; grep -c '^ok' "$OUT/cli_s33_run1.txt"
echo "== 4. chat on the Qwen3-8B shape"
cat "$OUT/chat_s33_run1.txt"
echo "done at $SECONDS s"
