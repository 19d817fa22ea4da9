#!/usr/bin/env bash
# Session 14, run 3: the pair as committed next (first-product units claimed, a CTA polling both
# counters in one round trip and claiming any unit left; second-product units = blockIdx.x).
# The GEMV test in full (with the held-SM launches), memcheck and racecheck on the quick set; the MLP
# benchmark against run 2's static2 library; the decode step: the pair never (RESET_GEMV_PAIR=0),
# this tree's pair at every row count (=1), static2's (=1), batch 1, 2, 4, 8, 2 rounds alternated;
# then the engine test with the pair at every row count, with memcheck.  (static2: see h100_s14_run2.sh.)
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
xz -dk .ab14/static2/libreset.so.0.xz
SECONDS=0
nvidia-smi --query-gpu=name,driver_version --format=csv
timeout 200 build-bundle/bin/gpu_test_nvfp4_gemv 20261129 > "$OUT/test_gemv.log" 2>&1; echo "test rc=$? at $SECONDS s"
grep -E "FAIL|skipped|checks" "$OUT/test_gemv.log" | head -20
for tool in memcheck racecheck; do
  RESET_GPU_TEST_QUICK=1 timeout 200 compute-sanitizer --tool $tool --error-exitcode 3 build-bundle/bin/gpu_test_nvfp4_gemv 9 > "$OUT/${tool}_gemv.log" 2>&1; echo "$tool rc=$? at $SECONDS s"
  tail -n 2 "$OUT/${tool}_gemv.log"
done
libpath() { [[ $1 == static2 ]] && echo "$PWD/.ab14/static2:$LD_LIBRARY_PATH" || echo "$LD_LIBRARY_PATH"; }
for v in tree static2; do
  LD_LIBRARY_PATH=$(libpath $v) timeout 100 build-bundle/bin/nvfp4_gemv_bench --nvfp4-only --only "Qwen3-8B mlp" > "$OUT/bench_$v.txt" 2>&1
  echo "$v:"; grep -E "mlp" "$OUT/bench_$v.txt"
done
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/ck/qwen3-8b-nvfp4 > /tmp/ck.log 2>&1; echo "checkpoint at $SECONDS s"
for r in 1 2; do
  for v in never tree static2; do
    pair=1; [[ $v == never ]] && pair=0
    LD_LIBRARY_PATH=$(libpath $v) RESET_GEMV_PAIR=$pair timeout 90 build-bundle/bin/reset bench decode /tmp/ck/qwen3-8b-nvfp4 --backend cuda --weights auto \
      --prompt-tokens 1024 --sequences 1,2,4,8 --tokens 64 --repeat 2 --json 2>>"$OUT/err.log" | sed "s/^{/{\"variant\": \"$v\", \"round\": $r, /"
  done
  echo "round $r at $SECONDS s" >&2
done > "$OUT/pair_ab.jsonl"
python3 - "$OUT/pair_ab.jsonl" <<'PY'
import json, sys, statistics
by = {}
for l in open(sys.argv[1]):
    d = json.loads(l); by.setdefault((d.get("sequences"), d["variant"]), []).append(d["ms_per_step"])
base = {k[0]: statistics.median(v) for k, v in by.items() if k[1] == "never"}
for k, v in sorted(by.items(), key=str):
    m = statistics.median(v)
    print(f"batch {str(k[0]):3s} {k[1]:8s} {' '.join(f'{x:.4f}' for x in v)}  median {m:.4f}  {100 * (m / base[k[0]] - 1):+.1f}%")
PY
RESET_GEMV_PAIR=1 timeout 330 tests/gpu/run_cuda_engine_on_device.sh > "$OUT/engine.txt" 2>&1; echo "engine rc=$? at $SECONDS s"
grep -E "checks|ERROR SUMMARY|FAIL" "$OUT/engine.txt" | head
echo "done at $SECONDS s"
