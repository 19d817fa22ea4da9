#!/usr/bin/env bash
# Session 29, run 2 (H100): penalties in the decode engine.
#  1. The engine test against the CPU reference on every engine model, the fixtures and the
#     embedded model; its new case (test_penalties): a CUDA session of 3 sequences with presence
#     1.5 and frequency 0.5 against standalone policies fed the session's own logits, through a
#     cancelled step, reset_state, penalties off and on, a sequence prefill and a session reset.
#  2. What penalties cost a decode step: the Qwen3-8B shape (random NVFP4 weights), 1k context,
#     batch 1 and 8, greedy / ReSET + top-p 0.95 / the same with presence 1.5 and frequency 0.5,
#     in two alternating rounds (`reset bench decode --json`, median wall time per step).
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset gpu_test_cuda_engine"), COMMIT.
source tests/bench/results/start_device_run.sh
R=build-bundle/bin/reset
mkdir -p /tmp/checkpoints
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/checkpoints/qwen3-8b-nvfp4 > /tmp/checkpoint.log 2>&1 &
ck_job=$!
echo "== 1. engine test"
python3 tests/gpu/make_engine_models.py /tmp/engine-models > /tmp/make_engine_models.log 2>&1
echo "models at $SECONDS s"
ENGINE_MODELS=/tmp/engine-models OUT=/tmp/engine SANITIZE=0 timeout 330 tests/gpu/run_cuda_engine_on_device.sh \
    > /tmp/engine.txt 2>&1
echo "engine rc $? at $SECONDS s"
cp /tmp/engine/test_cuda_engine.log "$OUT/engine_s29_run2.txt"
grep -E "penalties|checks|FAIL" "$OUT/engine_s29_run2.txt" | head -40
echo "== 2. penalties' cost in a decode step"
wait $ck_job; echo "checkpoint at $SECONDS s"; tail -n 2 /tmp/checkpoint.log
nv=/tmp/checkpoints/qwen3-8b-nvfp4
for round in 1 2; do
    for policy in greedy "reset t_low=0.6 tau0=1.2" "reset t_low=0.6 tau0=1.2 presence_penalty=1.5 frequency_penalty=0.5"; do
        echo "-- round $round: $policy"
        timeout 90 $R bench decode $nv --backend cuda --prompt-tokens 1024 --sequences 1,8 --tokens 64 --repeat 3 \
            --policy "$policy" --json 2>>"$OUT/penalty_cost_s29_run2.log" | tee -a "$OUT/penalty_cost_s29_run2.jsonl"
    done
done
echo "done at $SECONDS s"
