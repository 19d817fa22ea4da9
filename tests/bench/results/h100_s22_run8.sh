#!/usr/bin/env bash
# Session 22, run 8 (the bundle: COMMIT + the working tree): Nsight Compute on one launch of the
# persistent layer-chain prototype each (36 layers, M = 1): the chain with 8 consumer warps and
# groups of 3 (its best), the same without waits, and the chain with 12 warps; where do the
# consumer warps stall?
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
echo "commit $(cat COMMIT)"
for v in 8,3,0,1 8,4,1,1 12,3,0,1; do
  timeout 150 ncu --clock-control none --profile-from-start off --import-source yes \
    --section SpeedOfLight --section SchedulerStats --section WarpStateStats --section SourceCounters --section InstructionStats \
    build-bundle/bin/persistent_chain_bench --profile $v > "/tmp/ncu_$v.txt" 2>&1
  echo "ncu $v rc=$? at $SECONDS s"
  { echo "== --profile $v (consumer warps, group tiles, mode 0 chain / 1 no waits, M)"; cat "/tmp/ncu_$v.txt"; } >> "$OUT/persistent_chain_ncu_s22_run8.txt"
done
grep -E "^== |Duration|DRAM Throughput|Issued Warp|No Eligible|Stall|Warp Cycles Per Issued" "$OUT/persistent_chain_ncu_s22_run8.txt" | head -80
echo "done at $SECONDS s"
