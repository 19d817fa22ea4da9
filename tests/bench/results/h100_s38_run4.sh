#!/usr/bin/env bash
# Session 38, run 4 (H100): run 3 again with application replay.  Run 3's kernel replay restores
# memory between passes, which left the L2 cold (17% load hit rate on a weight that the benchmark
# serves from the L2): here every pass reruns the benchmark and profiles its 61st GEMV launch,
# whose weight the 60 launches before left in the L2 (--cache-control none).  Qwen3-8B o and
# down, M = 1, warm; fewer sections (fewer passes).  One text file per case: the sections, the
# stall ratios, the SASS lines with the most stall samples.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="nvfp4_gemv_bench"), COMMIT.
source tests/bench/results/start_device_run.sh
B=$PWD/build-bundle/bin/nvfp4_gemv_bench
for shape in "Qwen3-8B o" "Qwen3-8B down"; do
    tag=h100_ncu_s38_run4_$(echo "$shape" | tr -c 'A-Za-z0-9\n' '_')warm_m1
    timeout 280 ncu --replay-mode application --cache-control none --clock-control none --import-source no \
        --section SpeedOfLight --section LaunchStats --section Occupancy --section SchedulerStats \
        --section WarpStateStats --section MemoryWorkloadAnalysis --section SourceCounters \
        -k regex:nvfp4_gemv_kernel --launch-skip 60 --launch-count 1 -o /tmp/$tag -f \
        $B --only "$shape" --m 1 --nvfp4-only --warm-l2 > /tmp/$tag.log 2>&1
    echo "== $shape: rc $? at $SECONDS s"; tail -2 /tmp/$tag.log
    {
        ncu -i /tmp/$tag.ncu-rep --page details --print-details all
        ncu -i /tmp/$tag.ncu-rep --page raw --csv --metrics regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio
        ncu -i /tmp/$tag.ncu-rep --page source --csv --print-source sass
    } > "$OUT/$tag.txt" 2>&1
    grep -E "^\s+(Duration|DRAM Throughput|L2 Hit Rate|L2 Hit Rate For Loads|Achieved Occupancy|Eligible Warps Per Scheduler|Issued Warp Per Scheduler|Warp Cycles Per Issued Instruction|Executed Instructions) " \
        "$OUT/$tag.txt" | head -12
    grep -E "^\s+Stall " "$OUT/$tag.txt" | head -10
done
echo "done at $SECONDS s"
