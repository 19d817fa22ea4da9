#!/usr/bin/env bash
# Session 31, run 1 (H100): top_logprobs (ABI 0.4).
#  1. The kernel test (tests/gpu/test_top_logprobs.cu), full set with its timing.
#  2. The sampler test's quick set (the sampler now also hands top_logprobs its max and log-sum-exp).
#  3. The engine test's quick set (test_top_logprobs: every entry against the logits the device drew from).
#  4. What the option costs a decode step, and that the default path did not move: the Qwen3-8B shape
#     (random NVFP4 weights, BF16 lm_head), 1k context, batch 1 and 8, greedy and ReSET + top-p 0.95, in three
#     rounds alternating this commit's `reset` with --top-logprobs 0,20 ("new") and the previous commit's
#     (f4ba45c, "old": libreset 0.3.0 and its own `reset`, carried as old-lib.tar.xz).  `reset bench decode
#     --json`: median wall time of reset_decode_step over 64 steps, 3 repeats.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset gpu_test_sampling gpu_test_cuda_engine
# gpu_test_top_logprobs"), old-lib.tar.xz, COMMIT.
source tests/bench/results/start_device_run.sh
tar xJf old-lib.tar.xz
echo "== 1. top_logprobs kernel test"
timeout 120 build-bundle/bin/gpu_test_top_logprobs 20261127 > "$OUT/top_logprobs_s31_run1.txt" 2>&1
echo "top_logprobs rc $? at $SECONDS s"
grep -E "FAIL|top_logprobs" "$OUT/top_logprobs_s31_run1.txt" | head -30
echo "== 2. sampler test, quick set"
RESET_GPU_TEST_QUICK=1 timeout 150 build-bundle/bin/gpu_test_sampling 20261127 > "$OUT/sampling_quick_s31_run1.txt" 2>&1
echo "sampling rc $? at $SECONDS s"
grep -E "FAIL|test_sampling:" "$OUT/sampling_quick_s31_run1.txt" | head -20
echo "== 3. engine test, quick set"
python3 tests/gpu/make_engine_models.py /tmp/engine-models > /tmp/make_engine_models.log 2>&1
RESET_GPU_TEST_QUICK=1 ENGINE_MODELS=/tmp/engine-models OUT=/tmp/engine SANITIZE=0 timeout 200 \
    tests/gpu/run_cuda_engine_on_device.sh > /tmp/engine.txt 2>&1
echo "engine rc $? at $SECONDS s"
cp /tmp/engine/test_cuda_engine.log "$OUT/engine_quick_s31_run1.txt"
grep -E "top_logprobs|checks|FAIL" "$OUT/engine_quick_s31_run1.txt" | head -20
echo "== 4. top_logprobs cost"
mkdir -p /tmp/checkpoints
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/checkpoints/qwen3-8b-nvfp4 > /tmp/checkpoint.log 2>&1
echo "checkpoint rc $? at $SECONDS s"
nv=/tmp/checkpoints/qwen3-8b-nvfp4
for round in 1 2 3; do
    for policy in greedy "reset t_low=0.6 tau0=1.2"; do
        for lib in new old; do
            echo "-- round $round: $lib: $policy"
            if [[ $lib == new ]]; then run=(build-bundle/bin/reset); top=(--top-logprobs 0,20)
            else run=(env LD_LIBRARY_PATH=$PWD/old:$LD_LIBRARY_PATH old/reset); top=(); fi
            timeout 120 "${run[@]}" bench decode $nv --backend cuda --prompt-tokens 1024 --sequences 1,8 --tokens 64 \
                --repeat 3 --policy "$policy" "${top[@]}" --json 2>>"$OUT/top_logprobs_cost_s31_run1.log" \
                | sed "s/^{/{\"lib\": \"$lib\", \"round\": $round, /" | tee -a "$OUT/top_logprobs_cost_s31_run1.jsonl"
        done
    done
done
echo "done at $SECONDS s"
