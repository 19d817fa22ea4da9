#!/usr/bin/env bash
# Session 31, run 4 (H100): the top_logprobs kernel moved off the step's critical path.  Run 3's profile:
# 14.3 us per launch inside a step (issue slots 2.9% busy: latency, one CTA per SM on 38 SMs), and runs 1-2
# measured +31 us per Qwen3-8B 1k step at batch 1 with it in line between the sampler and the
# embedding.  Now it runs on a branch of the graph (forked after the sampler, joined before the final
# norm), beside the layers.
#  1. The kernel test's quick set under compute-sanitizer memcheck and racecheck (run 2's ran on a test
#     row that was all -inf; the kernel is unchanged since).
#  2. The engine test's quick set (graph and eager steps with the branch).
#  3. The option's cost, as run 2 (3 rounds, --top-logprobs 0,20, batch 1 and 8, greedy and ReSET).
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset gpu_test_cuda_engine gpu_test_top_logprobs"), COMMIT.
source tests/bench/results/start_device_run.sh
echo "== 1. kernel test under compute-sanitizer"
for tool in memcheck racecheck; do
    RESET_GPU_TEST_QUICK=1 timeout 150 compute-sanitizer --tool $tool --error-exitcode 3 \
        build-bundle/bin/gpu_test_top_logprobs 20261130 > "$OUT/top_logprobs_${tool}_s31_run4.txt" 2>&1
    echo "$tool rc $? at $SECONDS s"
    tail -3 "$OUT/top_logprobs_${tool}_s31_run4.txt"
done
echo "== 2. engine test, quick set"
python3 tests/gpu/make_engine_models.py /tmp/engine-models > /tmp/make_engine_models.log 2>&1
RESET_GPU_TEST_QUICK=1 ENGINE_MODELS=/tmp/engine-models OUT=/tmp/engine SANITIZE=0 timeout 200 \
    tests/gpu/run_cuda_engine_on_device.sh > /tmp/engine.txt 2>&1
echo "engine rc $? at $SECONDS s"
cp /tmp/engine/test_cuda_engine.log "$OUT/engine_quick_s31_run4.txt"
grep -E "top_logprobs|checks|FAIL" "$OUT/engine_quick_s31_run4.txt" | head -20
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
            2>>"$OUT/top_logprobs_cost_s31_run4.log" \
            | sed "s/^{/{\"lib\": \"new\", \"round\": $round, /" | tee -a "$OUT/top_logprobs_cost_s31_run4.jsonl"
    done
done
echo "done at $SECONDS s"
