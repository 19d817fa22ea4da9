#!/usr/bin/env bash
# Session 17, run 4 (measurement only): where a step's wall time goes outside the graph.  .ab/x2 is
# this tree's library with a temporary timer (tests/bench/results/step_times_s17.patch, not in the
# library): RESET_X_TIMES=1 prints, at exit, the medians over the steps of the host's work before the
# graph launch, the launch call, the wait in cudaStreamSynchronize, the host's work after it, and
# the graph's GPU time between two events around the launch.  Qwen3-8B shape, NVFP4, 1k, batch 1.
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
echo "commit $(cat COMMIT)"
mkdir -p /tmp/x2 && xz -dc .ab/x2/libreset.so.0.xz > /tmp/x2/libreset.so.0
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/ck/qwen3-8b-nvfp4 > /dev/null 2>&1; echo "checkpoint at $SECONDS s"
ck=/tmp/ck/qwen3-8b-nvfp4
for round in 1 2 3; do
    for pol in greedy "reset t_low=0.6 tau0=1.2"; do
        for seq in 1 8; do
            RESET_X_TIMES=1 LD_LIBRARY_PATH=/tmp/x2:$LD_LIBRARY_PATH build-bundle/bin/reset bench decode $ck --backend cuda \
                --weights auto --json --prompt-tokens 1024 --sequences $seq --tokens 64 --repeat 2 --policy "$pol" 2>&1
        done
    done
done > "$OUT/step_times_s17_run4.jsonl"
cat "$OUT/step_times_s17_run4.jsonl" | grep -o '"sequences": [0-9]*\|"policy": "[^"]*"\|"ms_per_step": [0-9.]*\|x_times_us.*'
echo "done at $SECONDS s"
