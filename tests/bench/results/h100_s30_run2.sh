#!/usr/bin/env bash
# Session 30, run 2 (H100): what reset_step.logprob costs a decode step.  The Qwen3-8B shape
# (random NVFP4 weights, BF16 lm_head), 1k context, batch 1 and 8, greedy and ReSET + top-p 0.95,
# in three rounds alternating this commit's library and `reset` ("new", the bundle) with the
# previous commit's (5f6d335, "old": libreset 0.2.0 and its own `reset`, built here with
# -DRESET_CUDA_ARCHITECTURES=90a and carried as old-lib.tar.xz).  `reset bench decode --json`:
# median wall time of reset_decode_step over 64 steps, 3 repeats.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset"), old-lib.tar.xz, COMMIT.
source tests/bench/results/start_device_run.sh
tar xJf old-lib.tar.xz
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
