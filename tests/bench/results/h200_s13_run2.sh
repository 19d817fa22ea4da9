#!/usr/bin/env bash
# Session 13, run 2: the pair launched with PDL only (RESET_GEMV_PAIR=1, occupancy-checked
# co-residency) against the cooperative launch (=2) and two launches (=0).
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
for v in 1 2; do
  RESET_GEMV_PAIR=$v timeout 100 build-bundle/bin/nvfp4_gemv_bench --nvfp4-only --only "Qwen3-8B mlp" > "$OUT/bench_$v.txt" 2>&1; echo "bench $v rc=$? at $SECONDS s"
  grep -E "mlp" "$OUT/bench_$v.txt"
done
RESET_GEMV_PAIR=1 timeout 100 build-bundle/bin/gpu_test_nvfp4_gemv 99 > "$OUT/test_gemv.log" 2>&1; echo "test rc=$?"; tail -n 1 "$OUT/test_gemv.log"
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/ck/qwen3-8b-nvfp4 > /tmp/ck.log 2>&1; echo "checkpoint at $SECONDS s"
timeout 200 tests/bench/ab_env_decode_on_device.sh RESET_GEMV_PAIR "0 1 2" /tmp/ck/qwen3-8b-nvfp4 3 --weights auto \
  --prompt-tokens 1024 --sequences 1 --tokens 64 --repeat 2 > "$OUT/pair_ab.jsonl"
echo "ab at $SECONDS s"
python3 - "$OUT/pair_ab.jsonl" <<'PY'
import json, sys, statistics
by = {}
for l in open(sys.argv[1]):
    d = json.loads(l); by.setdefault((d.get("sequences"), d["env"]), []).append(d["ms_per_step"])
for k, v in sorted(by.items(), key=str):
    print(f"{str(k[0]):4s} {k[1]:18s} {' '.join(f'{x:.4f}' for x in v)}  median {statistics.median(v):.4f}")
PY
