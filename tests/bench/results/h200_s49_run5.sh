#!/usr/bin/env bash
# Session 49, run 5 (H200): where attention's time goes at 32k with the FP8 cache.  Alone it
# streams 62% of the read bandwidth (24.8 µs a layer for 67 MB), the BF16 cache 81.5% (37.9 µs
# for 134 MB): the FP8 cache's extra work per byte (E4M3 -> f16 conversions, two parts of q and
# p instead of three over twice the positions per byte) is the suspect.  Nsight Compute on one
# launch of each (attention_decode_bench, 36 layers, batch 1, 32k): the pipes' utilization, the
# issue rate, the warp stalls, DRAM throughput.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset attention_decode_bench"), COMMIT.
source tests/bench/results/start_device_run.sh
for c in fp8 bf16; do
    ncu --set full --clock-control none -k regex:split_kernel --launch-skip 40 --launch-count 1 \
        -o /tmp/att_$c -f build-bundle/bin/attention_decode_bench 36 3 $c:1:32768 > /tmp/ncu_$c.log 2>&1
    echo "ncu $c rc $?"
    ncu -i /tmp/att_$c.ncu-rep --page details --print-details all > "$OUT/attention_ncu_${c}_32k_s49_run5.txt" 2>&1
    ncu -i /tmp/att_$c.ncu-rep --page raw >> "$OUT/attention_ncu_${c}_32k_s49_run5.txt" 2>&1
    echo "== $c"
    grep -E "^\s+(Duration|DRAM Throughput|Memory Throughput|Compute \(SM\) Throughput|Registers Per Thread|Achieved Occupancy|Eligible Warps Per Scheduler|Issued Warp Per Scheduler|Executed Ipc Active|Issue Slots Busy|Warp Cycles Per Issued Instruction|Executed Instructions|Grid Size) " \
        "$OUT/attention_ncu_${c}_32k_s49_run5.txt" | head -16
    grep -E "sm__inst_executed_pipe_[a-z0-9_]+\.avg\.pct_of_peak_sustained_active|sm__pipe_[a-z0-9_]+_cycles_active\.avg\.pct_of_peak_sustained_active" \
        "$OUT/attention_ncu_${c}_32k_s49_run5.txt" | awk '$NF+0 > 3' | head -20
    grep -E "smsp__average_warp(s_issue_stalled|_latency_issue_stalled)_[a-z_]+_per_issue_active\.ratio" \
        "$OUT/attention_ncu_${c}_32k_s49_run5.txt" | awk '$NF+0 > 0.3' | head -14
done
echo "done at $SECONDS s"
