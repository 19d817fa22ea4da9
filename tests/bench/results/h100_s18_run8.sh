#!/usr/bin/env bash
# Session 18, run 8: the pipelined GEMV loop requesting a quad's first activations before the next
# quad's weights (0119043, "new") against 3c48963's kernel (.ab/prev, "prev").  Tests: the GEMV test
# (full; the quick set under memcheck and racecheck).  The GEMV benchmark's Qwen3-8B shapes with the
# pipelined loop off and on (new kernel).  The step, alternated process by process: 1k batch 1
# greedy (4 rounds), 32k FP8 and 1k batch 8 (2 rounds).  Few files under $OUT (at most 8 return).
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
echo "commit $(cat COMMIT)"
mkdir -p /tmp/prev && xz -dc .ab/prev/libreset.so.0.xz > /tmp/prev/libreset.so.0
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/ck/qwen3-8b-nvfp4 > /dev/null 2>&1 &
ck_job=$!
tests=$OUT/tests_s18_run8.txt
timeout 200 build-bundle/bin/gpu_test_nvfp4_gemv 20261128 > /tmp/gemv.txt 2>&1; echo "gemv test rc=$? at $SECONDS s"
cat /tmp/gemv.txt >> "$tests"
for tool in memcheck racecheck; do
  RESET_GPU_TEST_QUICK=1 timeout 150 compute-sanitizer --tool $tool --error-exitcode 3 build-bundle/bin/gpu_test_nvfp4_gemv 10 > /tmp/$tool.txt 2>&1; echo "$tool rc=$? at $SECONDS s"
  { echo "== $tool"; tail -n 3 /tmp/$tool.txt; } >> "$tests"
done
grep -E "checks|ERROR SUMMARY|RACECHECK SUMMARY|FAIL" "$tests" | head -20
for pipe in 0 1 0 1; do
    echo "== RESET_NVFP4_GEMV_PIPELINE=$pipe" >> "$OUT/gemv_bench_s18_run8.txt"
    env RESET_NVFP4_GEMV_PIPELINE=$pipe build-bundle/bin/nvfp4_gemv_bench --nvfp4-only --only Qwen3-8B \
        --commit "$(cat COMMIT)" >> "$OUT/gemv_bench_s18_run8.txt" 2>&1
done
grep -E "==|(o|down) +M=(1|8)  W4A16" "$OUT/gemv_bench_s18_run8.txt"
wait $ck_job; echo "checkpoint at $SECONDS s"
ck=/tmp/ck/qwen3-8b-nvfp4
run() {  # LIB ROUND bench arguments
    local lib=$1 round=$2; shift 2
    local extra=; [[ $lib == prev ]] && extra=/tmp/prev:
    env LD_LIBRARY_PATH=$extra$LD_LIBRARY_PATH build-bundle/bin/reset bench decode $ck --backend cuda --weights auto \
        --json "$@" 2>/dev/null | sed "s/^{/{\"lib\": \"$lib\", \"round\": $round, /"
}
for round in 1 2 3 4; do
    for lib in prev new; do
        run $lib $round --prompt-tokens 1024 --sequences 1 --tokens 64 --repeat 2
        if ((round < 3)); then
            run $lib $round --prompt-tokens 32000 --sequences 1 --kv-cache fp8 --tokens 32 --repeat 1
            run $lib $round --prompt-tokens 1024 --sequences 8 --tokens 64 --repeat 2
        fi
    done
done > "$OUT/x_first_ab_s18_run8.jsonl"
python3 - "$OUT"/x_first_ab_s18_run8.jsonl <<'PY'
import json, sys, statistics as st
rows = {}
for l in open(sys.argv[1]):
    d = json.loads(l)
    rows.setdefault((d["prompt_tokens"], d["sequences"], d.get("kv_cache", ""), d["policy"], d["lib"]), []).append(d["ms_per_step"])
for k in sorted(rows): print(k, " ".join(f"{v:.4f}" for v in rows[k]), "median %.4f" % st.median(rows[k]))
PY
echo "done at $SECONDS s"
