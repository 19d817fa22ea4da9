#!/usr/bin/env bash
# Session 20, run 2: the NVFP4 GEMV's epilogue inputs (residual, bias, the prepared input's row
# scales) asked into the L1 by the epilogue warp right after the wait (prefetch_epilogue_inputs),
# on ("on", the bundle) against off (RESET_NVFP4_GEMV_EPILOGUE_PREFETCH=0, the same library).
# The GEMV test (full; quick set under memcheck and racecheck), the GEMV benchmark both ways, the
# engine test with memcheck, then the decode step alternated process by process, Qwen3-8B shape,
# random NVFP4 checkpoint, greedy: 1k batch 1 (4 rounds), 1k batch 8 (3), 32k FP8 (2).
# The bundle was built from d95b353 with tests/bench/results/gemv_epilogue_prefetch_s20.patch applied.
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
echo "commit $(cat COMMIT)"
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/ck/qwen3-8b-nvfp4 > /dev/null 2>&1 &
ck_job=$!
tests=$OUT/tests_s20_run2.txt
timeout 200 build-bundle/bin/gpu_test_nvfp4_gemv 20261126 > /tmp/gemv.txt 2>&1; echo "gemv test rc=$? at $SECONDS s"
cat /tmp/gemv.txt >> "$tests"
for tool in memcheck racecheck; do
  RESET_GPU_TEST_QUICK=1 timeout 150 compute-sanitizer --tool $tool --error-exitcode 3 build-bundle/bin/gpu_test_nvfp4_gemv 8 > /tmp/$tool.txt 2>&1; echo "$tool rc=$? at $SECONDS s"
  { echo "== $tool"; tail -n 3 /tmp/$tool.txt; } >> "$tests"
done
for v in off on; do
  flag=1; [[ $v == off ]] && flag=0
  RESET_NVFP4_GEMV_EPILOGUE_PREFETCH=$flag timeout 150 build-bundle/bin/nvfp4_gemv_bench --json /tmp/bench_$v.json > /tmp/bench_$v.txt 2>&1
  echo "bench $v rc $? at $SECONDS s"
done
python3 - /tmp/bench_off.json /tmp/bench_on.json > "$OUT/gemv_bench_epilogue_prefetch_s20_run2.txt" <<'PY'
import json, sys
def rows(path):
    return {(r["shape"], r["impl"], r["m"]): r["us"] for r in json.load(open(path))["results"]
            if r["impl"].startswith("nvfp4") and r["shape"].startswith(("Qwen3-8B", "MLP pair"))}
off, on = rows(sys.argv[1]), rows(sys.argv[2])
print("shape impl m off_us on_us")
for k in off:
    if k in on: print(*k, off[k], on[k], "%+.1f%%" % (100 * (on[k] / off[k] - 1)))
PY
cat "$OUT/gemv_bench_epilogue_prefetch_s20_run2.txt"
OUT=/tmp/engine timeout 280 tests/gpu/run_cuda_engine_on_device.sh > /tmp/engine.txt 2>&1; echo "engine rc $? at $SECONDS s"
{ echo "== engine"; cat /tmp/engine/test_cuda_engine.log; tail -n 3 /tmp/engine/memcheck_cuda_engine.log; } >> "$tests"
grep -E "checks|ERROR SUMMARY|RACECHECK SUMMARY|FAIL" "$tests" | head -20
wait $ck_job; echo "checkpoint at $SECONDS s"
ck=/tmp/ck/qwen3-8b-nvfp4
run() {  # VARIANT ROUND bench arguments
    local v=$1 round=$2; shift 2
    local flag=1; [[ $v == off ]] && flag=0
    env RESET_NVFP4_GEMV_EPILOGUE_PREFETCH=$flag build-bundle/bin/reset bench decode $ck \
        --backend cuda --weights auto --json "$@" 2>/dev/null | sed "s/^{/{\"variant\": \"$v\", \"round\": $round, /"
}
for round in 1 2 3 4; do
    for v in off on; do
        run $v $round --prompt-tokens 1024 --sequences 1 --tokens 64 --repeat 2
        if ((round < 4)); then run $v $round --prompt-tokens 1024 --sequences 8 --tokens 64 --repeat 2; fi
        if ((round < 3)); then run $v $round --prompt-tokens 32000 --sequences 1 --kv-cache fp8 --tokens 32 --repeat 1; fi
    done
done > "$OUT/epilogue_prefetch_ab_s20_run2.jsonl"
python3 - "$OUT"/epilogue_prefetch_ab_s20_run2.jsonl <<'PY'
import json, sys, statistics as st
rows = {}
for l in open(sys.argv[1]):
    d = json.loads(l)
    rows.setdefault((d["prompt_tokens"], d["sequences"], d.get("kv_cache", ""), d["policy"], d["variant"]), []).append(d["ms_per_step"])
for k in sorted(rows): print(k, " ".join(f"{v:.4f}" for v in rows[k]), "median %.4f" % st.median(rows[k]))
PY
echo "done at $SECONDS s"
