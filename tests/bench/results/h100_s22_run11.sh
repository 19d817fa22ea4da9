#!/usr/bin/env bash
# Session 22, run 11 (the bundle: COMMIT + the working tree): the persistent layer-chain prototype
# with the ring statistics mended (test_wait first: try_wait may block) and timed: where do the
# producer and the consumers wait?  Checks and timings against the library's chained launches.
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
echo "commit $(cat COMMIT)"
timeout 200 build-bundle/bin/persistent_chain_bench --json "$OUT/persistent_chain_s22_run11.json" > "$OUT/persistent_chain_s22_run11.txt" 2>&1
echo "bench rc=$? at $SECONDS s"
grep -v "^PASS" "$OUT/persistent_chain_s22_run11.txt"; grep -c "^PASS" "$OUT/persistent_chain_s22_run11.txt"
echo "done at $SECONDS s"
