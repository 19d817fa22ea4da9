#!/usr/bin/env bash
# Session 30, run 2 (H100), after run 1's two test fixes (5acf7df):
#  1. The sampler test again (run 1's seed drew a +inf logit in its FLT_MAX rows and stopped there).
#  2. The engine test's quick set (RESET_GPU_TEST_QUICK=1: run 1 ran past its 340 s limit on its last
#     model, and its cancelled prefill timed a first, slower prefill).
#  3. What reset_step.logprob costs a decode step.  The Qwen3-8B shape
# (random NVFP4 weights, BF16 lm_head), 1k context, batch 1 and 8, greedy and ReSET + top-p 0.95,
# in three rounds alternating this commit's library and `reset` ("new", the bundle) with the
# previous commit's (5f6d335, "old": libreset 0.2.0 and its own `reset`, built here with
# -DRESET_CUDA_ARCHITECTURES=90a and carried as old-lib.tar.xz).  `reset bench decode --json`:
# median wall time of reset_decode_step over 64 steps, 3 repeats.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset gpu_test_sampling gpu_test_cuda_engine"), old-lib.tar.xz,
# COMMIT.
source tests/bench/results/start_device_run.sh
tar xJf old-lib.tar.xz
echo "== 1. sampler test"
timeout 220 build-bundle/bin/gpu_test_sampling 20261126 > "$OUT/sampling_s30_run2.txt" 2>&1
echo "sampling rc $? at $SECONDS s"
grep -E "logprob|FAIL|test_sampling:|timing: (greedy|ReSET \+ top-p 0.95)" "$OUT/sampling_s30_run2.txt" | head -40
echo "== 2. engine test, quick set"
python3 tests/gpu/make_engine_models.py /tmp/engine-models > /tmp/make_engine_models.log 2>&1
RESET_GPU_TEST_QUICK=1 ENGINE_MODELS=/tmp/engine-models OUT=/tmp/engine SANITIZE=0 timeout 200 \
    tests/gpu/run_cuda_engine_on_device.sh > /tmp/engine.txt 2>&1
echo "engine rc $? at $SECONDS s"
cp /tmp/engine/test_cuda_engine.log "$OUT/engine_quick_s30_run2.txt"
grep -E "cancelled prefill|checks|FAIL" "$OUT/engine_quick_s30_run2.txt" | head -20
echo "== 3. logprob cost"
mkdir -p /tmp/checkpoints
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/checkpoints/qwen3-8b-nvfp4 > /tmp/checkpoint.log 2>&1
echo "checkpoint rc $? at $SECONDS s"
nv=/tmp/checkpoints/qwen3-8b-nvfp4
for round in 1 2 3; do
    for policy in greedy "reset t_low=0.6 tau0=1.2"; do
        for lib in new old; do
            echo "-- round $round: $lib: $policy"
            if [[ $lib == new ]]; then run=(build-bundle/bin/reset); else run=(env LD_LIBRARY_PATH=$PWD/old:$LD_LIBRARY_PATH old/reset); fi
            timeout 120 "${run[@]}" bench decode $nv --backend cuda --prompt-tokens 1024 --sequences 1,8 --tokens 64 \
                --repeat 3 --policy "$policy" --json 2>>"$OUT/logprob_cost_s30_run2.log" \
                | sed "s/^{/{\"lib\": \"$lib\", \"round\": $round, /" | tee -a "$OUT/logprob_cost_s30_run2.jsonl"
        done
    done
done
echo "done at $SECONDS s"
