#!/usr/bin/env bash
# Session 29, run 3 (H100): what penalties cost a decode step.  The Qwen3-8B shape (random NVFP4
# weights, BF16 lm_head), 1k context, batch 1 and 8: greedy / ReSET + top-p 0.95 / the same with
# presence 1.5 and frequency 0.5, in two alternating rounds (`reset bench decode --json`, median
# wall time of reset_decode_step over 64 steps, 3 repeats).
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset"), COMMIT.
source tests/bench/results/start_device_run.sh
R=build-bundle/bin/reset
mkdir -p /tmp/checkpoints
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/checkpoints/qwen3-8b-nvfp4 > /tmp/checkpoint.log 2>&1
echo "checkpoint rc $? at $SECONDS s"
nv=/tmp/checkpoints/qwen3-8b-nvfp4
for round in 1 2; do
    for policy in greedy "reset t_low=0.6 tau0=1.2" "reset t_low=0.6 tau0=1.2 presence_penalty=1.5 frequency_penalty=0.5"; do
        echo "-- round $round: $policy"
        timeout 120 $R bench decode $nv --backend cuda --prompt-tokens 1024 --sequences 1,8 --tokens 64 --repeat 3 \
            --policy "$policy" --json 2>>"$OUT/penalty_cost_s29_run3.log" | tee -a "$OUT/penalty_cost_s29_run3.jsonl"
    done
done
echo "done at $SECONDS s"
