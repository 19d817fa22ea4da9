#!/usr/bin/env bash
# Session 13, run 6 (review commit): the GEMV test in full, the Qwen3-8B MLP pair benchmark, and the
# engine test with the pair forced (RESET_GEMV_PAIR=1).
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version --format=csv
timeout 200 build-bundle/bin/gpu_test_nvfp4_gemv 20261127 > "$OUT/test_gemv.log" 2>&1; echo "test rc=$? at $SECONDS s"
tail -n 1 "$OUT/test_gemv.log"
timeout 100 build-bundle/bin/nvfp4_gemv_bench --nvfp4-only --only "Qwen3-8B mlp" > "$OUT/bench_mlp.txt" 2>&1; echo "bench rc=$?"
grep mlp "$OUT/bench_mlp.txt"
RESET_GEMV_PAIR=1 SANITIZE=0 timeout 360 tests/gpu/run_cuda_engine_on_device.sh > "$OUT/engine.txt" 2>&1; echo "engine rc=$? at $SECONDS s"
tail -n 2 "$OUT/engine.txt"
