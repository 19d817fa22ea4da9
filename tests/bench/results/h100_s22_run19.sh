#!/usr/bin/env bash
# Session 22, run 19 (the bundle: COMMIT + the working tree): the persistent layer-chain prototype
# with the phase table in shared memory, read by reference (fewer registers: 12 consumer warps
# without spills), against it in registers, with and without --delays 10000,2000,2000, and the
# consumers' ceiling (kComputeOnly) for 8, 12 and 16 warps. memcheck on 2 layers with the delays.
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
echo "commit $(cat COMMIT)"
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 3 build-bundle/bin/persistent_chain_bench --layers 2 --reps 2 --delays 10000,2000,2000 > /tmp/memcheck.txt 2>&1
echo "memcheck rc=$? at $SECONDS s"
grep -E "FAIL|ERROR SUMMARY|ALL OK" /tmp/memcheck.txt | head; cp /tmp/memcheck.txt "$OUT/persistent_chain_memcheck_s22_run19.txt"
timeout 150 build-bundle/bin/persistent_chain_bench --delays 10000,2000,2000 --json "$OUT/persistent_chain_delays_s22_run19.json" > "$OUT/persistent_chain_delays_s22_run19.txt" 2>&1
echo "bench with delays rc=$? at $SECONDS s"
grep -v "^PASS" "$OUT/persistent_chain_delays_s22_run19.txt"; grep -c "^PASS" "$OUT/persistent_chain_delays_s22_run19.txt"
timeout 100 build-bundle/bin/persistent_chain_bench --json "$OUT/persistent_chain_s22_run19.json" > "$OUT/persistent_chain_s22_run19.txt" 2>&1
echo "bench rc=$? at $SECONDS s"
grep -E "^(library|persistent)" "$OUT/persistent_chain_s22_run19.txt"; grep -c "^PASS" "$OUT/persistent_chain_s22_run19.txt"
echo "done at $SECONDS s"
