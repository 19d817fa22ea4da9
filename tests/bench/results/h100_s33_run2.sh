#!/usr/bin/env bash
# Session 33, run 2 (H100): the logit bias (reset_set_logit_bias, 0.6) in the device sampler, and what
# keeping the session's prefix saves a chat.
#  1. The sampler's kernel test (full: the new logit-bias cases beside every earlier one, and the
#     sampler's timing), then its quick set under compute-sanitizer memcheck and racecheck.
#  2. The engine test's quick set (test_truncate and test_logit_bias on one model).
#  3. The session fuzz target on CUDA (committed corpus with the seeds truncate and logit_bias, grown).
#  4. (beside 1-3) The CLI test on CUDA; a random Qwen3-8B-shape NVFP4 checkpoint.
#  5. `reset chat` four turns of 400 greedy tokens with --no-think on that checkpoint (Qwen3 tokenizer
#     and template), with session 32's CLI (b6d6a7f, built against 0.5's header, which re-prefills the
#     whole conversation when the prompt does not extend what the session holds) and this one, both on
#     this library: tokens prefilled per turn and the prefill's time.
#  6. `reset bench decode` at 1k, batch 1, greedy and ReSET (the sampler's load changed).
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset gpu_test_cuda_engine gpu_test_sampling fuzz_replay_session"),
# COMMIT, build-extra (qwen3 tokenizer from ../shared/data/tokenizers/qwen3, bin/reset_s32).
source tests/bench/results/start_device_run.sh
R=build-bundle/bin/reset
(
    timeout 300 python3 tests/cli/test_commands.py "$PWD/$R" "$PWD" > "$OUT/cli_s33_run2.txt" 2>&1
    echo "cli rc $? at $SECONDS s" >> "$OUT/cli_s33_run2.txt"
    python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/qwen3-8b-nvfp4 > /tmp/checkpoint.log 2>&1
    cp build-extra/qwen3/* /tmp/qwen3-8b-nvfp4/
    echo "checkpoint at $SECONDS s" > /tmp/checkpoint.done
) &
side=$!
echo "== 1. sampler kernel test"
timeout 200 build-bundle/bin/gpu_test_sampling 20261127 > "$OUT/test_sampling_s33_run2.txt" 2>&1
echo "sampling rc $? at $SECONDS s"
grep -E "logit bias|FAIL|timing: ReSET|checks" "$OUT/test_sampling_s33_run2.txt" | head -12
RESET_GPU_TEST_QUICK=1 timeout 100 compute-sanitizer --tool memcheck --error-exitcode 3 build-bundle/bin/gpu_test_sampling 31 \
    > /tmp/memcheck.txt 2>&1; echo "memcheck rc=$? at $SECONDS s"; tail -n 2 /tmp/memcheck.txt
RESET_GPU_TEST_QUICK=1 timeout 150 compute-sanitizer --tool racecheck --error-exitcode 3 build-bundle/bin/gpu_test_sampling 32 \
    > /tmp/racecheck.txt 2>&1; echo "racecheck rc=$? at $SECONDS s"; tail -n 2 /tmp/racecheck.txt
cp /tmp/memcheck.txt "$OUT/test_sampling_memcheck_s33_run2.txt"; cp /tmp/racecheck.txt "$OUT/test_sampling_racecheck_s33_run2.txt"
echo "== 2. engine test, quick set"
python3 tests/gpu/make_engine_models.py /tmp/engine-models > /tmp/make_engine_models.log 2>&1
RESET_GPU_TEST_QUICK=1 ENGINE_MODELS=/tmp/engine-models OUT=/tmp/engine SANITIZE=0 timeout 200 \
    tests/gpu/run_cuda_engine_on_device.sh > /tmp/engine.txt 2>&1
echo "engine rc $? at $SECONDS s"
cp /tmp/engine/test_cuda_engine.log "$OUT/engine_quick_s33_run2.txt"
grep -E "cut-back|logit bias|checks|FAIL" "$OUT/engine_quick_s33_run2.txt" | head -20
echo "== 3. fuzz_session replayed on CUDA"
mkdir -p /tmp/grown && tar xJf tests/fuzz/grown/session.tar.xz -C /tmp/grown
FUZZ_TARGET=session timeout 60 tests/fuzz/replay_on_device.sh tests/fuzz/corpus/session /tmp/grown/session
echo "replay rc $? at $SECONDS s"; tail -n 2 "$OUT/fuzz_replay_cuda_session.log"
wait $side
echo "== 4. CLI test on CUDA"
tail -n 1 "$OUT/cli_s33_run2.txt"; grep -v '^ok' "$OUT/cli_s33_run2.txt" | head -20; grep -c '^ok' "$OUT/cli_s33_run2.txt"
cat /tmp/checkpoint.done
echo "== 5. chat: session 32's CLI against this one, same library and checkpoint"
turns='Tell me a long story about a lighthouse.\n/stats\nNow a second one, about a ship.\n/stats\nAnd a third, about a storm.\n/stats\nOne more, about the keeper.\n/stats\n/context\n'
for cli in build-extra/bin/reset_s32 "$R"; do
    echo "-- $cli chat --no-think --max-tokens 400 --policy greedy"
    printf "$turns" | timeout 100 "$cli" chat /tmp/qwen3-8b-nvfp4 --no-think --max-tokens 400 --policy greedy 2>&1 \
        | grep -E "^(prefill|decode|context):"
done | tee "$OUT/chat_s33_run2.txt"
echo "== 6. decode step, 1k batch 1"
# As the short grid runs them (tests/bench/run_decode_grid_on_device.sh): 64 tokens, 2 repeats.
timeout 120 "$R" bench decode /tmp/qwen3-8b-nvfp4 --prompt-tokens 1024 --sequences 1 --tokens 64 --repeat 2 \
    --json --backend cuda | tee "$OUT/bench_s33_run2.jsonl"
timeout 120 "$R" bench decode /tmp/qwen3-8b-nvfp4 --prompt-tokens 1024 --sequences 1 --tokens 64 --repeat 2 \
    --policy "reset t_low=0.6 tau0=1.2" --json --backend cuda | tee -a "$OUT/bench_s33_run2.jsonl"
echo "done at $SECONDS s"
