#!/usr/bin/env bash
# Session 13, run 5: the committed nvfp4_gemv_pair (cooperative launch, the barrier's words on
# separate lines): the GEMV test in full, memcheck and racecheck on the quick set, and the MLP pair
# benchmark on every model shape.
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version --format=csv
timeout 200 build-bundle/bin/gpu_test_nvfp4_gemv 20261126 > "$OUT/test_gemv.log" 2>&1; echo "test rc=$? at $SECONDS s"
tail -n 2 "$OUT/test_gemv.log"
for tool in memcheck racecheck; do
  RESET_GPU_TEST_QUICK=1 timeout 200 compute-sanitizer --tool $tool --error-exitcode 3 build-bundle/bin/gpu_test_nvfp4_gemv 8 > "$OUT/${tool}_gemv.log" 2>&1; echo "$tool rc=$? at $SECONDS s"
  tail -n 2 "$OUT/${tool}_gemv.log"
done
timeout 150 build-bundle/bin/nvfp4_gemv_bench --nvfp4-only --only mlp --commit "$(cat COMMIT)" --json "$OUT/bench_mlp.json" > "$OUT/bench_mlp.txt" 2>&1; echo "bench rc=$? at $SECONDS s"
grep -E "device|mlp" "$OUT/bench_mlp.txt"
