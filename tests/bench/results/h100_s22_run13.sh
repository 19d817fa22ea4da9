#!/usr/bin/env bash
# Session 22, run 13 (the bundle: COMMIT + the working tree): the persistent layer-chain prototype
# without a CTA barrier per tile group, and with kChunks (each quad waits only for the tiles that
# wrote its activations); memcheck on 2 layers, then checks and timings against the library's
# chained launches.
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
echo "commit $(cat COMMIT)"
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 3 build-bundle/bin/persistent_chain_bench --layers 2 --reps 2 > /tmp/memcheck.txt 2>&1
echo "memcheck rc=$? at $SECONDS s"
grep -E "FAIL|ERROR SUMMARY|ALL OK" /tmp/memcheck.txt | head; cp /tmp/memcheck.txt "$OUT/persistent_chain_memcheck_s22_run13.txt"
timeout 200 build-bundle/bin/persistent_chain_bench --json "$OUT/persistent_chain_s22_run13.json" > "$OUT/persistent_chain_s22_run13.txt" 2>&1
echo "bench rc=$? at $SECONDS s"
grep -v "^PASS" "$OUT/persistent_chain_s22_run13.txt"; grep -c "^PASS" "$OUT/persistent_chain_s22_run13.txt"
echo "done at $SECONDS s"
