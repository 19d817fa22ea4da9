#!/usr/bin/env bash
# Session 29, run 1 (H100): presence / frequency penalties on the CUDA backend.
#  1. The sampler test (tests/gpu/test_sampling.cu), whose new cases sample the same rows again
#     and again with penalties in every team layout, through a graph and a mask, and compare every
#     token and the device's token counts with the CPU sampler; its timing table has a penalized
#     policy.  Then the quick set under compute-sanitizer memcheck.
#  2. The session fuzz corpus (its new seed: penalties on, off and on, a cancelled step, a reset)
#     and the grown corpus, replayed on the CUDA backend against a twin session.
#  3. (beside 1-2) The CLI test on CUDA (its new checks: --frequency-penalty, the spec keys, chat
#     answers each counting their own tokens).
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset gpu_test_sampling fuzz_replay_session"), COMMIT.
source tests/bench/results/start_device_run.sh
R=build-bundle/bin/reset
(
    timeout 300 python3 tests/cli/test_commands.py "$PWD/$R" "$PWD" > "$OUT/cli_s29_run1.txt" 2>&1
    echo "cli rc $? at $SECONDS s" >> "$OUT/cli_s29_run1.txt"
) &
side=$!
echo "== 1. sampler test"
timeout 240 build-bundle/bin/gpu_test_sampling 20261129 > "$OUT/sampling_s29_run1.txt" 2>&1
echo "sampling rc $? at $SECONDS s"
grep -E "penalt|FAIL|test_sampling:|timing: (greedy|ReSET \+ top-p 0.95)" "$OUT/sampling_s29_run1.txt" | head -60
RESET_GPU_TEST_QUICK=1 timeout 150 compute-sanitizer --tool memcheck --error-exitcode 3 \
    build-bundle/bin/gpu_test_sampling 29 > "$OUT/sampling_memcheck_s29_run1.txt" 2>&1
echo "memcheck rc $? at $SECONDS s"
grep -E "penalt|ERROR SUMMARY|test_sampling:" "$OUT/sampling_memcheck_s29_run1.txt" | tail -12
echo "== 2. session fuzz corpus on CUDA"
mkdir -p /tmp/grown && tar xJf tests/fuzz/grown/session.tar.xz -C /tmp/grown
FUZZ_TARGET=session timeout 200 tests/fuzz/replay_on_device.sh tests/fuzz/corpus/session /tmp/grown/session
echo "replay rc $? at $SECONDS s"
tail -n 2 "$OUT/fuzz_replay_cuda_session.log"
wait $side
echo "== 3. CLI test on CUDA"
tail -n 1 "$OUT/cli_s29_run1.txt"; grep -v '^ok' "$OUT/cli_s29_run1.txt" | head -20; grep -c '^ok' "$OUT/cli_s29_run1.txt"
echo "done at $SECONDS s"
