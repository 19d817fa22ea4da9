#!/usr/bin/env bash
# Session 22, run 22 (the bundle: COMMIT): the persistent layer-chain prototype after the review
# (host code only: gpu_test_util.h's CUDA_OK and event timing, one library_gemv helper): its
# checks and timings, to see that it behaves as in run 21.
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
echo "commit $(cat COMMIT)"
timeout 150 build-bundle/bin/persistent_chain_bench --json "$OUT/persistent_chain_s22_run22.json" > "$OUT/persistent_chain_s22_run22.txt" 2>&1
echo "bench rc=$? at $SECONDS s"
grep -E "^(library|persistent|SKIP|FAIL|ALL)" "$OUT/persistent_chain_s22_run22.txt"; grep -c "^PASS" "$OUT/persistent_chain_s22_run22.txt"
echo "done at $SECONDS s"
