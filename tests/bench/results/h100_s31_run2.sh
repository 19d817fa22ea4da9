#!/usr/bin/env bash
# Session 31, run 2 (H100): the top_logprobs kernel rewritten for latency (run 1: 14.8 us alone at
# batch 1, +26-32 us per Qwen3-8B step): each warp sorts its thread maxima with shuffles and the
# threshold comes from binary searches of the warps' lists (run 1 ranked 256 values with a
# latency-bound loop), the loads are unrolled, and the merge reads every CTA list's entries at once.
#  1. The kernel test, full set with its timing; then its quick set under compute-sanitizer memcheck
#     and racecheck (shared-memory hazards of the new warp lists and candidate appends).
#  2. The engine test's quick set (top_logprobs against the logits the device drew from, graph and eager).
#  3. The option's cost again, as run 1 (3 rounds, new lib only: --top-logprobs 0,20).
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset gpu_test_cuda_engine gpu_test_top_logprobs"), COMMIT.
source tests/bench/results/start_device_run.sh
echo "== 1. top_logprobs kernel test"
timeout 120 build-bundle/bin/gpu_test_top_logprobs 20261128 > "$OUT/top_logprobs_s31_run2.txt" 2>&1
echo "top_logprobs rc $? at $SECONDS s"
grep -E "FAIL|top_logprobs" "$OUT/top_logprobs_s31_run2.txt" | head -30
for tool in memcheck racecheck; do
    RESET_GPU_TEST_QUICK=1 timeout 150 compute-sanitizer --tool $tool --error-exitcode 3 \
        build-bundle/bin/gpu_test_top_logprobs 20261128 > "$OUT/top_logprobs_${tool}_s31_run2.txt" 2>&1
    echo "$tool rc $? at $SECONDS s"
    tail -3 "$OUT/top_logprobs_${tool}_s31_run2.txt"
done
echo "== 2. engine test, quick set"
python3 tests/gpu/make_engine_models.py /tmp/engine-models > /tmp/make_engine_models.log 2>&1
RESET_GPU_TEST_QUICK=1 ENGINE_MODELS=/tmp/engine-models OUT=/tmp/engine SANITIZE=0 timeout 200 \
    tests/gpu/run_cuda_engine_on_device.sh > /tmp/engine.txt 2>&1
echo "engine rc $? at $SECONDS s"
cp /tmp/engine/test_cuda_engine.log "$OUT/engine_quick_s31_run2.txt"
grep -E "top_logprobs|checks|FAIL" "$OUT/engine_quick_s31_run2.txt" | head -20
echo "== 3. top_logprobs cost"
mkdir -p /tmp/checkpoints
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/checkpoints/qwen3-8b-nvfp4 > /tmp/checkpoint.log 2>&1
echo "checkpoint rc $? at $SECONDS s"
nv=/tmp/checkpoints/qwen3-8b-nvfp4
for round in 1 2 3; do
    for policy in greedy "reset t_low=0.6 tau0=1.2"; do
        echo "-- round $round: $policy"
        timeout 120 build-bundle/bin/reset bench decode $nv --backend cuda --prompt-tokens 1024 --sequences 1,8 \
            --tokens 64 --repeat 3 --policy "$policy" --top-logprobs 0,20 --json \
            2>>"$OUT/top_logprobs_cost_s31_run2.log" \
            | sed "s/^{/{\"lib\": \"new\", \"round\": $round, /" | tee -a "$OUT/top_logprobs_cost_s31_run2.jsonl"
    done
done
echo "done at $SECONDS s"
