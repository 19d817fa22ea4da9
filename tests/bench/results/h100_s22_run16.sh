#!/usr/bin/env bash
# Session 22, run 16 (the bundle: COMMIT + the working tree): the persistent layer-chain prototype
# with each phase's description loaded a phase early (an L2 round trip off every phase change),
# against loading it at the change, both kinds of wait; memcheck on 2 layers, then checks and
# timings against the library's chained launches.
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
echo "commit $(cat COMMIT)"
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 3 build-bundle/bin/persistent_chain_bench --layers 2 --reps 2 > /tmp/memcheck.txt 2>&1
echo "memcheck rc=$? at $SECONDS s"
grep -E "FAIL|ERROR SUMMARY|ALL OK" /tmp/memcheck.txt | head; cp /tmp/memcheck.txt "$OUT/persistent_chain_memcheck_s22_run16.txt"
timeout 150 build-bundle/bin/persistent_chain_bench --json "$OUT/persistent_chain_s22_run16.json" > "$OUT/persistent_chain_s22_run16.txt" 2>&1
echo "bench rc=$? at $SECONDS s"
grep -v "^PASS" "$OUT/persistent_chain_s22_run16.txt"; grep -c "^PASS" "$OUT/persistent_chain_s22_run16.txt"
echo "done at $SECONDS s"
