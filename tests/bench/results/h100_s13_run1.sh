#!/usr/bin/env bash
# Session 13, run 1: nvfp4_gemv_pair (gate_up -> down in one launch with a grid barrier).
# The GEMV test (full, then memcheck on the quick set), the GEMV benchmark's Qwen3-8B shapes and MLP
# pair, and the decode step with RESET_GEMV_PAIR=0/1 alternated (3 rounds, 1k context, batch 1 and 8).
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
timeout 240 build-bundle/bin/gpu_test_nvfp4_gemv 20261125 > "$OUT/test_gemv.log" 2>&1; echo "test rc=$? at $SECONDS s"
tail -n 4 "$OUT/test_gemv.log"
grep -c FAIL "$OUT/test_gemv.log"
RESET_GPU_TEST_QUICK=1 timeout 150 compute-sanitizer --tool memcheck --error-exitcode 3 build-bundle/bin/gpu_test_nvfp4_gemv 7 > "$OUT/memcheck_gemv.log" 2>&1; echo "memcheck rc=$? at $SECONDS s"
tail -n 3 "$OUT/memcheck_gemv.log"
timeout 150 build-bundle/bin/nvfp4_gemv_bench --nvfp4-only --only Qwen3-8B --commit "$(cat COMMIT)" --json "$OUT/bench.json" > "$OUT/bench.txt" 2>&1; echo "bench rc=$? at $SECONDS s"
grep -E "device|mlp|M=1 " "$OUT/bench.txt"
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/ck/qwen3-8b-nvfp4 > /tmp/ck.log 2>&1; echo "checkpoint at $SECONDS s"
timeout 200 tests/bench/ab_env_decode_on_device.sh RESET_GEMV_PAIR "0 1" /tmp/ck/qwen3-8b-nvfp4 3 --weights auto \
  --prompt-tokens 1024 --sequences 1,8 --tokens 64 --repeat 2 > "$OUT/pair_ab.jsonl"
echo "ab at $SECONDS s"
python3 - "$OUT/pair_ab.jsonl" <<'PY'
import json, sys, statistics
by = {}
for l in open(sys.argv[1]):
    d = json.loads(l); by.setdefault((d.get("sequences"), d["env"]), []).append(d["ms_per_step"])
for k, v in sorted(by.items(), key=str):
    print(f"{str(k[0]):4s} {k[1]:18s} {' '.join(f'{x:.4f}' for x in v)}  median {statistics.median(v):.4f}")
PY
