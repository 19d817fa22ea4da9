#!/usr/bin/env bash
# Session 22, run 9 (the bundle: COMMIT + the working tree): the persistent layer-chain prototype
# with each warp's next activations loaded a quad ahead (run 8: the consumer warps stall on their
# L1TEX loads), its checks and timings against the library's chained launches; then Nsight Compute,
# with every section's details, on one launch of 8 warps, groups of 3, without and with it.
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
echo "commit $(cat COMMIT)"
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 3 build-bundle/bin/persistent_chain_bench --layers 2 --reps 2 > /tmp/memcheck.txt 2>&1
echo "memcheck rc=$? at $SECONDS s"
grep -E "FAIL|ERROR SUMMARY|ALL OK" /tmp/memcheck.txt | head; cp /tmp/memcheck.txt "$OUT/persistent_chain_memcheck_s22_run9.txt"
timeout 200 build-bundle/bin/persistent_chain_bench --json "$OUT/persistent_chain_s22_run9.json" > "$OUT/persistent_chain_s22_run9.txt" 2>&1
echo "bench rc=$? at $SECONDS s"
cat "$OUT/persistent_chain_s22_run9.txt"
for v in 8,3,0,1,0 8,3,0,1,1; do
  timeout 150 ncu --clock-control none --profile-from-start off --import-source yes --print-details all \
    --section SpeedOfLight --section SchedulerStats --section WarpStateStats --section SourceCounters \
    build-bundle/bin/persistent_chain_bench --profile $v > "/tmp/ncu_$v.txt" 2>&1
  echo "ncu $v rc=$? at $SECONDS s"
  { echo "== --profile $v (consumer warps, group tiles, mode, M, activations ahead)"; cat "/tmp/ncu_$v.txt"; } >> "$OUT/persistent_chain_ncu_s22_run9.txt"
done
grep -E "^== |Duration|DRAM Throughput|Issued Warp|Warp Cycles Per Issued|Stall [A-Z]" "$OUT/persistent_chain_ncu_s22_run9.txt" | head -80
echo "done at $SECONDS s"
