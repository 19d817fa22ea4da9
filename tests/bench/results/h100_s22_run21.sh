#!/usr/bin/env bash
# Session 22, run 21 (the bundle: COMMIT + the working tree): the persistent layer-chain prototype
# with instances for tile groups of at most 2 tiles (12 and 16 consumer warps, fewer registers):
# does their compute-only ceiling rise above run 19-20's ~110% of the streaming rate?  Checks and
# timings against the library's chained launches; memcheck on 2 layers first.
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
echo "commit $(cat COMMIT)"
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 3 build-bundle/bin/persistent_chain_bench --layers 2 --reps 2 > /tmp/memcheck.txt 2>&1
echo "memcheck rc=$? at $SECONDS s"
grep -E "FAIL|ERROR SUMMARY|ALL OK" /tmp/memcheck.txt | head; cp /tmp/memcheck.txt "$OUT/persistent_chain_memcheck_s22_run21.txt"
timeout 150 build-bundle/bin/persistent_chain_bench --json "$OUT/persistent_chain_s22_run21.json" > "$OUT/persistent_chain_s22_run21.txt" 2>&1
echo "bench rc=$? at $SECONDS s"
grep -E "^(library|persistent|SKIP|FAIL|ALL)" "$OUT/persistent_chain_s22_run21.txt"; grep -c "^PASS" "$OUT/persistent_chain_s22_run21.txt"
echo "done at $SECONDS s"
