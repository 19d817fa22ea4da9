#!/usr/bin/env bash
# Session 22, run 1 (the bundle, COMMIT + the working tree's prototype): the persistent layer-chain
# prototype (tests/bench/persistent_chain_bench.cu) first on 2 layers under memcheck, then its
# checks and timings on the 36-layer Qwen3-8B GEMV chain, against the library's chained launches.
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
echo "commit $(cat COMMIT)"
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 3 build-bundle/bin/persistent_chain_bench --layers 2 --reps 2 > /tmp/memcheck.txt 2>&1
echo "memcheck rc=$? at $SECONDS s"
grep -E "check|ERROR SUMMARY|ALL OK|FAIL" /tmp/memcheck.txt | head -20; tail -n 5 /tmp/memcheck.txt
cp /tmp/memcheck.txt "$OUT/persistent_chain_memcheck_s22_run1.txt"
timeout 200 build-bundle/bin/persistent_chain_bench --json "$OUT/persistent_chain_s22_run1.json" > "$OUT/persistent_chain_s22_run1.txt" 2>&1
echo "bench rc=$? at $SECONDS s"
cat "$OUT/persistent_chain_s22_run1.txt"
echo "done at $SECONDS s"
