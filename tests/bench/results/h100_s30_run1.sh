#!/usr/bin/env bash
# Session 30, run 1 (H100): reset_step.logprob (0.3) on the device.
#  1. The sampler test: every compared token's device logprob against the CPU sampler's, and every
#     8th against log_softmax in double written out in the test (log_softmax_at), in every layout
#     (graph, mask, global row, team 1, penalties); the timing rows.
#  2. The engine test against the CPU reference on every engine model, the fixtures and the
#     embedded model: the CUDA session's logprobs against the CPU session's (decode_both), and
#     test_penalties' against standalone policies fed the session's own logits.
#  3. (beside 1) The CLI test on CUDA: logprobs in generate --jsonl, chat /stats, eval's mean_logprob.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset gpu_test_sampling gpu_test_cuda_engine"), COMMIT.
source tests/bench/results/start_device_run.sh
R=build-bundle/bin/reset
(
    timeout 300 python3 tests/cli/test_commands.py "$PWD/$R" "$PWD" > "$OUT/cli_s30_run1.txt" 2>&1
    echo "cli rc $? at $SECONDS s" >> "$OUT/cli_s30_run1.txt"
) &
side=$!
echo "== 1. sampler test"
timeout 220 build-bundle/bin/gpu_test_sampling 20261126 > "$OUT/sampling_s30_run1.txt" 2>&1
echo "sampling rc $? at $SECONDS s"
grep -E "logprob|FAIL|test_sampling:|timing: (greedy|ReSET \+ top-p 0.95)" "$OUT/sampling_s30_run1.txt" | head -60
echo "== 2. engine test"
python3 tests/gpu/make_engine_models.py /tmp/engine-models > /tmp/make_engine_models.log 2>&1
echo "models at $SECONDS s"
ENGINE_MODELS=/tmp/engine-models OUT=/tmp/engine SANITIZE=0 timeout 340 tests/gpu/run_cuda_engine_on_device.sh \
    > /tmp/engine.txt 2>&1
echo "engine rc $? at $SECONDS s"
cp /tmp/engine/test_cuda_engine.log "$OUT/engine_s30_run1.txt"
grep -E "logprob|penalties|checks|FAIL" "$OUT/engine_s30_run1.txt" | head -40
wait $side
echo "== 3. CLI test on CUDA"
tail -n 1 "$OUT/cli_s30_run1.txt"; grep -v '^ok' "$OUT/cli_s30_run1.txt" | head -20; grep -c '^ok' "$OUT/cli_s30_run1.txt"
echo "done at $SECONDS s"
