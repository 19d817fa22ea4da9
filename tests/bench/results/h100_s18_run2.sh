#!/usr/bin/env bash
# Session 18, run 2: the split norms on df51e55, where each half is a GEMV instance of its own (the
# instances without one compile as before).  Tests: the GEMV test (full; the quick set under memcheck
# and racecheck), the engine test with memcheck (default: both norms split).  Then the step,
# alternated process by process: "head" (b80492d's nvfp4_gemv.cu and device_session.cpp, .ab/head)
# and this tree with RESET_SPLIT_NORM=0 (none), 1 (qkv's norm), 2 (gate_up's), 3 (both): 1k batch 1
# greedy (3 rounds), 32k FP8 (2 rounds), 1k batch 8 head and 0 only (the pair splits nothing).
# The tree: b80492d with tests/bench/results/split_norm_s18.patch applied (not in the library).
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
echo "commit $(cat COMMIT)"
mkdir -p /tmp/head && xz -dc .ab/head/libreset.so.0.xz > /tmp/head/libreset.so.0
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/ck/qwen3-8b-nvfp4 > /dev/null 2>&1 &
ck_job=$!
timeout 200 build-bundle/bin/gpu_test_nvfp4_gemv 20261126 > "$OUT/test_nvfp4_gemv_s18_run2.txt" 2>&1; echo "gemv test rc=$? at $SECONDS s"
grep -E "checks|FAIL" "$OUT/test_nvfp4_gemv_s18_run2.txt" | head -20
for tool in memcheck racecheck; do
  RESET_GPU_TEST_QUICK=1 timeout 150 compute-sanitizer --tool $tool --error-exitcode 3 build-bundle/bin/gpu_test_nvfp4_gemv 8 > "$OUT/${tool}_nvfp4_gemv_s18_run2.txt" 2>&1; echo "$tool rc=$? at $SECONDS s"
  tail -n 3 "$OUT/${tool}_nvfp4_gemv_s18_run2.txt"
done
OUT=/tmp/engine timeout 280 tests/gpu/run_cuda_engine_on_device.sh > /tmp/engine.txt 2>&1; echo "engine rc $? at $SECONDS s"
cp /tmp/engine/test_cuda_engine.log "$OUT/cuda_engine_s18_run2.txt"; tail -n 3 /tmp/engine/memcheck_cuda_engine.log >> "$OUT/cuda_engine_s18_run2.txt"
grep -E "checks|ERROR SUMMARY|FAIL" "$OUT/cuda_engine_s18_run2.txt" | head
wait $ck_job; echo "checkpoint at $SECONDS s"
ck=/tmp/ck/qwen3-8b-nvfp4
run() {  # VARIANT ROUND bench arguments
    local lib=$1 round=$2; shift 2
    local extra= split=$lib
    [[ $lib == head ]] && extra=/tmp/head: && split=0
    env RESET_SPLIT_NORM=$split LD_LIBRARY_PATH=$extra$LD_LIBRARY_PATH build-bundle/bin/reset bench decode $ck \
        --backend cuda --weights auto --json "$@" 2>/dev/null | sed "s/^{/{\"lib\": \"$lib\", \"round\": $round, /"
}
for round in 1 2 3; do
    for lib in head 0 1 2 3; do
        run $lib $round --prompt-tokens 1024 --sequences 1 --tokens 64 --repeat 2
        if ((round < 3)); then
            run $lib $round --prompt-tokens 32000 --sequences 1 --kv-cache fp8 --tokens 32 --repeat 1
            [[ $lib == head || $lib == 0 ]] && run $lib $round --prompt-tokens 1024 --sequences 8 --tokens 64 --repeat 2
        fi
    done
done > "$OUT/split_norm_ab_s18_run2.jsonl"
python3 - "$OUT"/split_norm_ab_s18_run2.jsonl <<'PY'
import json, sys, statistics as st
rows = {}
for l in open(sys.argv[1]):
    d = json.loads(l)
    rows.setdefault((d["prompt_tokens"], d["sequences"], d.get("kv_cache", ""), d["policy"], d["lib"]), []).append(d["ms_per_step"])
for k in sorted(rows): print(k, " ".join(f"{v:.4f}" for v in rows[k]), "median %.4f" % st.median(rows[k]))
PY
echo "done at $SECONDS s"
