#!/usr/bin/env bash
# Session 18, run 4: where ReSET + top-p's extra time in the decode step goes.  The sampler's
# phase marks (kernels/sampling.cu built with RESET_SAMPLING_TRACE) alone (gpu_test_sampling's
# timing cases, warm and with a cold L2) and inside decode steps 20-60 of `reset bench decode` at 1k,
# batch 1, greedy and ReSET + top-p 0.95 (.ab/strace: sampling_trace_s18.patch on 2378f75, which
# prints the marks of the steps in RESET_SAMPLING_TRACE_STEPS).
# The in-step half failed: the variant library was relinked against build-sm90 objects still built
# from the split-norm tree (mismatched Nvfp4GemvArgs), so only the standalone traces are valid.
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
echo "commit $(cat COMMIT)"
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/ck/qwen3-8b-nvfp4 > /dev/null 2>&1 &
ck_job=$!
mkdir -p /tmp/strace && xz -dc .ab/strace/libreset.so.0.xz > /tmp/strace/libreset.so.0
xz -dc .ab/strace/test_sampling_trace.xz > /tmp/test_sampling_trace && chmod +x /tmp/test_sampling_trace
RESET_GPU_TEST_TIMING_ONLY=1 /tmp/test_sampling_trace 7 > "$OUT/sampling_alone_trace_s18_run4.txt" 2>&1
RESET_GPU_TEST_TIMING_ONLY=1 RESET_GPU_TEST_COLD_L2=1 /tmp/test_sampling_trace 7 > "$OUT/sampling_alone_cold_trace_s18_run4.txt" 2>&1
grep -E "timing|trace" "$OUT"/sampling_alone_*trace_s18_run4.txt | grep -E "flat75 batch 1|greedy" | grep -v "peaked\|flat  " | head -40
wait $ck_job; echo "checkpoint at $SECONDS s"
ck=/tmp/ck/qwen3-8b-nvfp4
for policy in greedy "reset t_low=0.6 tau0=1.2"; do
    env LD_LIBRARY_PATH=/tmp/strace:$LD_LIBRARY_PATH RESET_SAMPLING_TRACE_STEPS=20,30,40,50,60,70,80,90 \
        build-bundle/bin/reset bench decode $ck --backend cuda --weights auto --json --prompt-tokens 1024 \
        --sequences 1 --tokens 64 --repeat 2 --policy "$policy" 2>&1 | sed "s/^/[$policy] /"
done > "$OUT/sampling_in_step_trace_s18_run4.txt"
cat "$OUT/sampling_in_step_trace_s18_run4.txt"
echo "done at $SECONDS s"
