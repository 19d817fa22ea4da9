#!/usr/bin/env bash
# Session 14, run 1: nvfp4_gemv_pair with claimed units (an ordinary launch): the GEMV test in full
# (with the held-SM launch), memcheck on the quick set, the MLP benchmark on Qwen3-8B and
# R1-Distill-Qwen-7B, then the decode step with the pair never (RESET_GEMV_PAIR=0) and at every
# row count (=1), batch 1, 2, 4 and 8, 2 rounds alternated.  The tree was the "claimed" form of
# gemv_pair_claim_variants_s14.patch (both products' units claimed).
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version --format=csv
timeout 200 build-bundle/bin/gpu_test_nvfp4_gemv 20261128 > "$OUT/test_gemv.log" 2>&1; echo "test rc=$? at $SECONDS s"
grep -E "FAIL|skipped|checks" "$OUT/test_gemv.log" | head -20
RESET_GPU_TEST_QUICK=1 timeout 150 compute-sanitizer --tool memcheck --error-exitcode 3 build-bundle/bin/gpu_test_nvfp4_gemv 8 > "$OUT/memcheck_gemv.log" 2>&1; echo "memcheck rc=$? at $SECONDS s"
tail -n 2 "$OUT/memcheck_gemv.log"
for m in "Qwen3-8B mlp" "R1-Distill-Qwen-7B mlp"; do
  timeout 100 build-bundle/bin/nvfp4_gemv_bench --nvfp4-only --only "$m" --commit "$(cat COMMIT)" > "$OUT/bench_mlp_$(echo $m | cut -d' ' -f1).txt" 2>&1; echo "bench rc=$? at $SECONDS s"
done
grep -hE "device|stream|mlp" "$OUT"/bench_mlp_*.txt
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/ck/qwen3-8b-nvfp4 > /tmp/ck.log 2>&1; echo "checkpoint at $SECONDS s"
for r in 1 2; do
  for v in 0 1; do
    RESET_GEMV_PAIR=$v timeout 90 build-bundle/bin/reset bench decode /tmp/ck/qwen3-8b-nvfp4 --backend cuda --weights auto \
      --prompt-tokens 1024 --sequences 1,2,4,8 --tokens 64 --repeat 2 --json 2>>"$OUT/err.log" | sed "s/^{/{\"pair\": $v, \"round\": $r, /"
  done
  echo "round $r at $SECONDS s" >&2
done > "$OUT/pair_ab.jsonl"
python3 - "$OUT/pair_ab.jsonl" <<'PY'
import json, sys, statistics
by = {}
for l in open(sys.argv[1]):
    d = json.loads(l); by.setdefault((d.get("sequences"), d["pair"]), []).append(d["ms_per_step"])
for k, v in sorted(by.items(), key=str):
    print(f"batch {str(k[0]):4s} pair from {'never' if k[1] == 0 else str(k[1]):5s} {' '.join(f'{x:.4f}' for x in v)}  median {statistics.median(v):.4f}")
PY
echo "done at $SECONDS s"
