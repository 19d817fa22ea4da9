#!/usr/bin/env bash
# Session 22, run 18 (the bundle: COMMIT + the working tree): the persistent layer-chain prototype
# with --delays 10000,2000,2000 again, now with the same copy on both sides (run 17's persistent
# delay phase read its slice one token at a time, the library's kernel copied nothing), and the
# consumers' ceiling without the DRAM (kComputeOnly) for 8, 12 and 16 warps; then the plain chain.
# memcheck on 2 layers with the delays first.
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
echo "commit $(cat COMMIT)"
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 3 build-bundle/bin/persistent_chain_bench --layers 2 --reps 2 --delays 10000,2000,2000 > /tmp/memcheck.txt 2>&1
echo "memcheck rc=$? at $SECONDS s"
grep -E "FAIL|ERROR SUMMARY|ALL OK" /tmp/memcheck.txt | head; cp /tmp/memcheck.txt "$OUT/persistent_chain_memcheck_s22_run18.txt"
timeout 150 build-bundle/bin/persistent_chain_bench --delays 10000,2000,2000 --json "$OUT/persistent_chain_delays_s22_run18.json" > "$OUT/persistent_chain_delays_s22_run18.txt" 2>&1
echo "bench with delays rc=$? at $SECONDS s"
grep -v "^PASS" "$OUT/persistent_chain_delays_s22_run18.txt"; grep -c "^PASS" "$OUT/persistent_chain_delays_s22_run18.txt"
timeout 100 build-bundle/bin/persistent_chain_bench --json "$OUT/persistent_chain_s22_run18.json" > "$OUT/persistent_chain_s22_run18.txt" 2>&1
echo "bench rc=$? at $SECONDS s"
grep -E "^(library|persistent)" "$OUT/persistent_chain_s22_run18.txt"; grep -c "^PASS" "$OUT/persistent_chain_s22_run18.txt"
echo "done at $SECONDS s"
