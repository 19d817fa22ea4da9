#!/usr/bin/env bash
# Session 18, run 5: the pipelined local GEMV loop (2a4d47d: two quads in flight per warp, for
# launches of at most two CTAs per SM: o and down at the Qwen3-8B shape).  Tests: the GEMV test
# (full; the quick set under memcheck and racecheck), the engine test with memcheck.  The GEMV
# benchmark's Qwen3-8B and R1-Distill-Qwen-7B shapes with RESET_NVFP4_GEMV_PIPELINE=0 and without,
# alternated twice.  The step, alternated process by process, "on" and "off" (=0): 1k batch 1 greedy
# (4 rounds), 1k batch 8 and 32k FP8 (3 rounds).  Qwen3-8B shape, NVFP4 W4A16.
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
echo "commit $(cat COMMIT)"
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/ck/qwen3-8b-nvfp4 > /dev/null 2>&1 &
ck_job=$!
timeout 200 build-bundle/bin/gpu_test_nvfp4_gemv 20261126 > "$OUT/test_nvfp4_gemv_s18_run5.txt" 2>&1; echo "gemv test rc=$? at $SECONDS s"
grep -E "checks|FAIL" "$OUT/test_nvfp4_gemv_s18_run5.txt" | head -20
for tool in memcheck racecheck; do
  RESET_GPU_TEST_QUICK=1 timeout 150 compute-sanitizer --tool $tool --error-exitcode 3 build-bundle/bin/gpu_test_nvfp4_gemv 8 > "$OUT/${tool}_nvfp4_gemv_s18_run5.txt" 2>&1; echo "$tool rc=$? at $SECONDS s"
  tail -n 3 "$OUT/${tool}_nvfp4_gemv_s18_run5.txt"
done
wait $ck_job; echo "checkpoint at $SECONDS s"
for round in 1 2; do
    for pipe in 0 1; do
        for only in Qwen3-8B R1-Distill-Qwen-7B; do
            env RESET_NVFP4_GEMV_PIPELINE=$pipe build-bundle/bin/nvfp4_gemv_bench --nvfp4-only --only "$only" \
                --commit "$(cat COMMIT)" --json "/tmp/gemv_${only}_p${pipe}_r$round.json" > "$OUT/gemv_bench_${only}_pipeline${pipe}_r${round}_s18_run5.txt" 2>&1
        done
    done
done
echo "gemv bench at $SECONDS s"
for f in "$OUT"/gemv_bench_*_s18_run5.txt; do echo "== $f"; grep -E "M=1  W4A16|M=8  W4A16" "$f"; done
OUT=/tmp/engine timeout 280 tests/gpu/run_cuda_engine_on_device.sh > /tmp/engine.txt 2>&1; echo "engine rc $? at $SECONDS s"
cp /tmp/engine/test_cuda_engine.log "$OUT/cuda_engine_s18_run5.txt"; tail -n 3 /tmp/engine/memcheck_cuda_engine.log >> "$OUT/cuda_engine_s18_run5.txt"
grep -E "checks|ERROR SUMMARY|FAIL" "$OUT/cuda_engine_s18_run5.txt" | head
ck=/tmp/ck/qwen3-8b-nvfp4
run() {  # PIPELINE ROUND bench arguments
    local pipe=$1 round=$2; shift 2
    env RESET_NVFP4_GEMV_PIPELINE=$pipe build-bundle/bin/reset bench decode $ck \
        --backend cuda --weights auto --json "$@" 2>/dev/null | sed "s/^{/{\"lib\": \"pipeline$pipe\", \"round\": $round, /"
}
for round in 1 2 3 4; do
    for pipe in 0 1; do
        run $pipe $round --prompt-tokens 1024 --sequences 1 --tokens 64 --repeat 2
        if ((round < 4)); then
            run $pipe $round --prompt-tokens 1024 --sequences 8 --tokens 64 --repeat 2
            run $pipe $round --prompt-tokens 32000 --sequences 1 --kv-cache fp8 --tokens 32 --repeat 1
        fi
    done
done > "$OUT/pipeline_ab_s18_run5.jsonl"
python3 - "$OUT"/pipeline_ab_s18_run5.jsonl <<'PY'
import json, sys, statistics as st
rows = {}
for l in open(sys.argv[1]):
    d = json.loads(l)
    rows.setdefault((d["prompt_tokens"], d["sequences"], d.get("kv_cache", ""), d["policy"], d["lib"]), []).append(d["ms_per_step"])
for k in sorted(rows): print(k, " ".join(f"{v:.4f}" for v in rows[k]), "median %.4f" % st.median(rows[k]))
PY
echo "done at $SECONDS s"
