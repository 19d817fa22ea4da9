#!/usr/bin/env bash
# The first try of this run (h100_s22_run10_first_try.log) stopped at once: the calibration asked for an instance that does not exist (a leftover bool argument: 0 chains).
# Session 22, run 10 (the bundle: COMMIT + the working tree): the persistent layer-chain prototype
# with its activations read by ld.global (run 9's SASS: generic LD), two accumulator chains per tile
# as a variant, and the ring's statistics (how often each side waited): checks and timings against
# the library's chained launches; Nsight Compute on 8 warps, groups of 3, one and two chains.
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
echo "commit $(cat COMMIT)"
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 3 build-bundle/bin/persistent_chain_bench --layers 2 --reps 2 > /tmp/memcheck.txt 2>&1
echo "memcheck rc=$? at $SECONDS s"
grep -E "FAIL|ERROR SUMMARY|ALL OK" /tmp/memcheck.txt | head; cp /tmp/memcheck.txt "$OUT/persistent_chain_memcheck_s22_run10.txt"
timeout 200 build-bundle/bin/persistent_chain_bench --json "$OUT/persistent_chain_s22_run10.json" > "$OUT/persistent_chain_s22_run10.txt" 2>&1
echo "bench rc=$? at $SECONDS s"
grep -v "^PASS" "$OUT/persistent_chain_s22_run10.txt"; grep -c "^PASS" "$OUT/persistent_chain_s22_run10.txt"
for v in 8,3,0,1,1 8,3,0,1,2; do
  timeout 150 ncu --clock-control none --profile-from-start off --print-details all \
    --section SpeedOfLight --section SchedulerStats --section WarpStateStats \
    build-bundle/bin/persistent_chain_bench --profile $v > "/tmp/ncu_$v.txt" 2>&1
  echo "ncu $v rc=$? at $SECONDS s"
  { echo "== --profile $v (consumer warps, group tiles, mode, M, accumulator chains)"; cat "/tmp/ncu_$v.txt"; } >> "$OUT/persistent_chain_ncu_s22_run10.txt"
done
grep -E "^== |Duration|DRAM Throughput|Issued Warp Per|Warp Cycles Per Issued|Stall (Long|Wait|Barrier|Branch|Math|Short)" "$OUT/persistent_chain_ncu_s22_run10.txt" | head -40
echo "done at $SECONDS s"
