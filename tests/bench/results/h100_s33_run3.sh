#!/usr/bin/env bash
# Session 33, run 3 (H100): the session's final library (cutting back and the logit bias).
#  1. The engine test's full set (every model and format, with test_truncate and test_logit_bias; run 2's
#     quick set stopped at test_logit_bias's own bug: the raised tokens overlapped the banned ones on a
#     64-token vocabulary).
#  2. (beside 1) The sampler's kernel test, quick set, under compute-sanitizer racecheck (run 2's 150 s
#     were too few).
#  3. (beside 1) The CLI test on CUDA (generate --logit-bias, chat /retry).
#  4. The session fuzz target on CUDA (committed corpus with the seeds truncate and logit_bias, grown).
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset gpu_test_cuda_engine gpu_test_sampling fuzz_replay_session"), COMMIT.
source tests/bench/results/start_device_run.sh
R=build-bundle/bin/reset
(
    RESET_GPU_TEST_QUICK=1 timeout 420 compute-sanitizer --tool racecheck --error-exitcode 3 \
        build-bundle/bin/gpu_test_sampling 33 > "$OUT/test_sampling_racecheck_s33_run3.txt" 2>&1
    echo "racecheck rc=$? at $SECONDS s" >> "$OUT/test_sampling_racecheck_s33_run3.txt"
) &
race=$!
(
    timeout 300 python3 tests/cli/test_commands.py "$PWD/$R" "$PWD" > "$OUT/cli_s33_run3.txt" 2>&1
    echo "cli rc $? at $SECONDS s" >> "$OUT/cli_s33_run3.txt"
) &
cli=$!
echo "== 1. engine test, full set"
python3 tests/gpu/make_engine_models.py /tmp/engine-models > /tmp/make_engine_models.log 2>&1
echo "models at $SECONDS s"
ENGINE_MODELS=/tmp/engine-models OUT=/tmp/engine SANITIZE=0 timeout 430 tests/gpu/run_cuda_engine_on_device.sh \
    > /tmp/engine.txt 2>&1
echo "engine rc $? at $SECONDS s"
cp /tmp/engine/test_cuda_engine.log "$OUT/engine_s33_run3.txt"
grep -E "cut-back|logit bias|checks|FAIL|failed" "$OUT/engine_s33_run3.txt" | head -30
wait $cli
echo "== 3. CLI test on CUDA"
tail -n 1 "$OUT/cli_s33_run3.txt"; grep -v '^ok' "$OUT/cli_s33_run3.txt" | head -20; grep -c '^ok' "$OUT/cli_s33_run3.txt"
echo "== 4. fuzz_session replayed on CUDA"
mkdir -p /tmp/grown && tar xJf tests/fuzz/grown/session.tar.xz -C /tmp/grown
FUZZ_TARGET=session timeout 60 tests/fuzz/replay_on_device.sh tests/fuzz/corpus/session /tmp/grown/session
echo "replay rc $? at $SECONDS s"; tail -n 2 "$OUT/fuzz_replay_cuda_session.log"
wait $race
echo "== 2. racecheck"
tail -n 3 "$OUT/test_sampling_racecheck_s33_run3.txt"
echo "done at $SECONDS s"
