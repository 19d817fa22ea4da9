#!/usr/bin/env bash
# Session 23, run 8 (the bundle: COMMIT + the working tree): the persistent layer-chain prototype's
# producers stepping from one of their slots to the next (run 6: their loop visited every slot and
# skipped the other producers', 2.7 M iterations per launch), against run 2's figures (same variants);
# then Nsight Compute's instruction count on compute-only (8 warps, groups of 3).
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
echo "commit $(cat COMMIT)"
timeout 150 build-bundle/bin/persistent_chain_bench --json "$OUT/persistent_chain_s23_run8.json" > "$OUT/persistent_chain_s23_run8.txt" 2>&1
echo "bench rc=$? at $SECONDS s"
grep -E "^(library|persistent|SKIP|FAIL|ALL)" "$OUT/persistent_chain_s23_run8.txt"; grep -c "^PASS" "$OUT/persistent_chain_s23_run8.txt"
for v in 8,3,4,1,1,4,0; do
  timeout 150 ncu --clock-control none --profile-from-start off --print-details all \
    --section SpeedOfLight --section InstructionStats --section SchedulerStats --section WarpStateStats \
    --metrics sass__inst_executed_per_opcode --print-metric-instances details \
    build-bundle/bin/persistent_chain_bench --profile $v > "/tmp/ncu_$v.txt" 2>&1
  echo "ncu $v rc=$? at $SECONDS s"
  { echo "== --profile $v (consumer warps, group tiles, mode 4 = compute only, M, chains, producers, suspend hint ns)"; cat "/tmp/ncu_$v.txt"; } >> "$OUT/persistent_chain_ncu_s23_run8.txt"
done
grep -E "^== |Duration|Issued Warp Per|Issue Slots Busy|Executed Ipc|Warp Cycles Per Issued|Issued Instructions  |Stall (Long|Wait|Barrier|Branch|Math|Short|Not Sel|Dispatch|MIO|Sleep)|sass__inst_executed_per_opcode" "$OUT/persistent_chain_ncu_s23_run8.txt" | head -80
echo "done at $SECONDS s"
