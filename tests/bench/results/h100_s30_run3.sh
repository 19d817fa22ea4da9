#!/usr/bin/env bash
# Session 30, run 3 (H100): the repetition penalty (0.3) on the device.
#  1. The sampler test: its penalty cases now give each sequence a prompt (its row's 6 best tokens and
#     26 random ones) flagged in the device's counts, and repetition penalties of 0.5-10 beside the
#     presence and frequency ones, in every layout; every token, logprob and the device's final
#     counts (prompt flags included) against the CPU samplers.  Its timing table's penalized row has
#     a repetition penalty of 1.1.
#  2. The engine test's quick set: test_penalties with a repetition penalty of 1.3 over the prompt,
#     against standalone policies told the prompt (reset_policy_add_context), through a cancelled
#     step, reset_state, penalties off and on, a sequence prefill and a session reset.
#  3. (beside 1) The CLI test on CUDA (--repetition-penalty, generation_config.json's value).
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset gpu_test_sampling gpu_test_cuda_engine"), COMMIT.
source tests/bench/results/start_device_run.sh
R=build-bundle/bin/reset
(
    timeout 300 python3 tests/cli/test_commands.py "$PWD/$R" "$PWD" > "$OUT/cli_s30_run3.txt" 2>&1
    echo "cli rc $? at $SECONDS s" >> "$OUT/cli_s30_run3.txt"
) &
side=$!
echo "== 1. sampler test"
timeout 220 build-bundle/bin/gpu_test_sampling 20261127 > "$OUT/sampling_s30_run3.txt" 2>&1
echo "sampling rc $? at $SECONDS s"
grep -E "penalt|FAIL|test_sampling:" "$OUT/sampling_s30_run3.txt" | head -40
echo "== 2. engine test, quick set"
python3 tests/gpu/make_engine_models.py /tmp/engine-models > /tmp/make_engine_models.log 2>&1
RESET_GPU_TEST_QUICK=1 ENGINE_MODELS=/tmp/engine-models OUT=/tmp/engine SANITIZE=0 timeout 220 \
    tests/gpu/run_cuda_engine_on_device.sh > /tmp/engine.txt 2>&1
echo "engine rc $? at $SECONDS s"
cp /tmp/engine/test_cuda_engine.log "$OUT/engine_quick_s30_run3.txt"
grep -E "penalties|checks|FAIL" "$OUT/engine_quick_s30_run3.txt" | head -20
wait $side
echo "== 3. CLI test on CUDA"
tail -n 1 "$OUT/cli_s30_run3.txt"; grep -v '^ok' "$OUT/cli_s30_run3.txt" | head -20; grep -c '^ok' "$OUT/cli_s30_run3.txt"
echo "done at $SECONDS s"
