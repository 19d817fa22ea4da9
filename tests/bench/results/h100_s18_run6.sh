#!/usr/bin/env bash
# Session 18, run 6: the pipelined GEMV loop with an instance for three CTAs per SM too (qkv and
# gate_up at the Qwen3-8B shape).  Tests: the GEMV test (full, the shapes with the automatic
# choice, the 3-CTA instance forced and none; the quick set under memcheck and racecheck), the
# engine test with memcheck (automatic choice).  The step, alternated process by process, with
# RESET_NVFP4_GEMV_PIPELINE=0 (none), 2 (launches of at most two CTAs per SM: run 5's rule) and 3
# (every local-plan launch): 1k batch 1 greedy (3 rounds), 1k batch 8 and 32k FP8 (2 rounds).
# Few files under $OUT: the device tool returns at most 8.
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
echo "commit $(cat COMMIT)"
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/ck/qwen3-8b-nvfp4 > /dev/null 2>&1 &
ck_job=$!
tests=$OUT/tests_s18_run6.txt
timeout 200 build-bundle/bin/gpu_test_nvfp4_gemv 20261126 > /tmp/gemv.txt 2>&1; echo "gemv test rc=$? at $SECONDS s"
cat /tmp/gemv.txt >> "$tests"
for tool in memcheck racecheck; do
  RESET_GPU_TEST_QUICK=1 timeout 150 compute-sanitizer --tool $tool --error-exitcode 3 build-bundle/bin/gpu_test_nvfp4_gemv 8 > /tmp/$tool.txt 2>&1; echo "$tool rc=$? at $SECONDS s"
  { echo "== $tool"; tail -n 3 /tmp/$tool.txt; } >> "$tests"
done
OUT=/tmp/engine timeout 280 tests/gpu/run_cuda_engine_on_device.sh > /tmp/engine.txt 2>&1; echo "engine rc $? at $SECONDS s"
{ echo "== engine"; cat /tmp/engine/test_cuda_engine.log; tail -n 3 /tmp/engine/memcheck_cuda_engine.log; } >> "$tests"
grep -E "checks|ERROR SUMMARY|RACECHECK SUMMARY|FAIL" "$tests" | head -20
wait $ck_job; echo "checkpoint at $SECONDS s"
ck=/tmp/ck/qwen3-8b-nvfp4
run() {  # PIPELINE ROUND bench arguments
    local pipe=$1 round=$2; shift 2
    env RESET_NVFP4_GEMV_PIPELINE=$pipe build-bundle/bin/reset bench decode $ck \
        --backend cuda --weights auto --json "$@" 2>/dev/null | sed "s/^{/{\"lib\": \"pipeline$pipe\", \"round\": $round, /"
}
for round in 1 2 3; do
    for pipe in 0 2 3; do
        run $pipe $round --prompt-tokens 1024 --sequences 1 --tokens 64 --repeat 2
        if ((round < 3)); then
            run $pipe $round --prompt-tokens 1024 --sequences 8 --tokens 64 --repeat 2
            run $pipe $round --prompt-tokens 32000 --sequences 1 --kv-cache fp8 --tokens 32 --repeat 1
        fi
    done
done > "$OUT/pipeline_ab_s18_run6.jsonl"
python3 - "$OUT"/pipeline_ab_s18_run6.jsonl <<'PY'
import json, sys, statistics as st
rows = {}
for l in open(sys.argv[1]):
    d = json.loads(l)
    rows.setdefault((d["prompt_tokens"], d["sequences"], d.get("kv_cache", ""), d["policy"], d["lib"]), []).append(d["ms_per_step"])
for k in sorted(rows): print(k, " ".join(f"{v:.4f}" for v in rows[k]), "median %.4f" % st.median(rows[k]))
PY
echo "done at $SECONDS s"
