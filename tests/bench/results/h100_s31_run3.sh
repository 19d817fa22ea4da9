#!/usr/bin/env bash
# Session 31, run 3 (H100): why the top_logprobs kernel takes ~15 us alone (run 2: 17.2 us at batch 1,
# +31 us per Qwen3-8B 1k step) for a 600 KB row that sits in L2.
#  1. Nsight Compute, full set, on the kernel test's timed launches alone (vocab 151,936, count 20,
#     batch 1 then 8; RESET_TOP_LOGPROBS_TIMING_ONLY=1), one launch of each.
#  2. The durations of the sampler and top_logprobs kernels inside a decode step (graph nodes,
#     warm caches, clocks as they are): `reset bench decode` on the Qwen3-8B shape, 4 steps, batch 1.
#  3. The kernel test, full set (run 2's one failure was its own all -inf row of vocabulary 1).
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset gpu_test_top_logprobs"), COMMIT.
source tests/bench/results/start_device_run.sh
echo "== 1. ncu, the kernel alone"
RESET_TOP_LOGPROBS_TIMING_ONLY=1 timeout 200 ncu --set full --kernel-name regex:top_logprobs --launch-skip 3 \
    --launch-count 1 build-bundle/bin/gpu_test_top_logprobs 20261129 > "$OUT/top_logprobs_ncu_b1_s31_run3.txt" 2>&1
echo "ncu b1 rc $? at $SECONDS s"
RESET_TOP_LOGPROBS_TIMING_ONLY=1 timeout 200 ncu --set full --kernel-name regex:top_logprobs --launch-skip 205 \
    --launch-count 1 build-bundle/bin/gpu_test_top_logprobs 20261129 > "$OUT/top_logprobs_ncu_b8_s31_run3.txt" 2>&1
echo "ncu b8 rc $? at $SECONDS s"
grep -E "Duration|Elapsed Cycles|Registers|Achieved Occupancy|Block Limit|Stall|Warp Cycles Per|Issued Ipc|Memory Throughput|L2 Hit" \
    "$OUT/top_logprobs_ncu_b1_s31_run3.txt" | head -40
echo "== 2. in the step"
mkdir -p /tmp/checkpoints
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/checkpoints/qwen3-8b-nvfp4 > /tmp/checkpoint.log 2>&1
timeout 300 ncu --clock-control none --cache-control none --kernel-name regex:"sampling|top_logprobs|embedding" \
    --metrics gpu__time_duration.sum --csv --page raw --print-units base \
    build-bundle/bin/reset bench decode /tmp/checkpoints/qwen3-8b-nvfp4 --backend cuda --prompt-tokens 1024 \
    --sequences 1 --tokens 4 --repeat 1 --policy greedy --top-logprobs 20 --json \
    > "$OUT/top_logprobs_in_step_ncu_s31_run3.csv" 2> "$OUT/top_logprobs_in_step_ncu_s31_run3.log"
echo "ncu step rc $? at $SECONDS s"
grep -E '^"' "$OUT/top_logprobs_in_step_ncu_s31_run3.csv" | cut -d, -f1-12,13- | tail -14
echo "== 3. kernel test"
timeout 120 build-bundle/bin/gpu_test_top_logprobs 20261129 > "$OUT/top_logprobs_s31_run3.txt" 2>&1
echo "top_logprobs rc $? at $SECONDS s"
grep -E "FAIL|top_logprobs" "$OUT/top_logprobs_s31_run3.txt" | head -10
echo "done at $SECONDS s"
