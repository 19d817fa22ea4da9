#!/usr/bin/env bash
# Session 22, run 20 (the bundle: COMMIT + the working tree): the persistent layer-chain prototype
# with --delays 10000,2000,2000 (run 19's stopped where the ring did not fit), then Nsight Compute
# on the consumers' ceiling (kComputeOnly, M = 1, groups of 3) with 8 and 16 consumer warps: which
# pipe or stall holds it at ~110% of the streaming rate, whatever the warp count?
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
echo "commit $(cat COMMIT)"
timeout 150 build-bundle/bin/persistent_chain_bench --delays 10000,2000,2000 --json "$OUT/persistent_chain_delays_s22_run20.json" > "$OUT/persistent_chain_delays_s22_run20.txt" 2>&1
echo "bench with delays rc=$? at $SECONDS s"
grep -E "^(library|persistent|SKIP|FAIL|ALL)" "$OUT/persistent_chain_delays_s22_run20.txt"; grep -c "^PASS" "$OUT/persistent_chain_delays_s22_run20.txt"
for v in 8,3,4,1,1,4 16,3,4,1,1,4; do
  timeout 150 ncu --clock-control none --profile-from-start off --print-details all \
    --section SpeedOfLight --section ComputeWorkloadAnalysis --section InstructionStats --section SchedulerStats --section WarpStateStats \
    build-bundle/bin/persistent_chain_bench --profile $v > "/tmp/ncu_$v.txt" 2>&1
  echo "ncu $v rc=$? at $SECONDS s"
  { echo "== --profile $v (consumer warps, group tiles, mode 4 = compute only, M, chains, producers)"; cat "/tmp/ncu_$v.txt"; } >> "$OUT/persistent_chain_ncu_s22_run20.txt"
done
grep -E "^== |Duration|Issued Warp Per|Issue Slots Busy|Executed Ipc|Warp Cycles Per Issued|Stall (Long|Wait|Barrier|Branch|Math|Short|Not Sel|Dispatch|MIO)|Pipe|pipe" "$OUT/persistent_chain_ncu_s22_run20.txt" | head -80
echo "done at $SECONDS s"
