#!/usr/bin/env bash
# Session 18, run 9: the lm_head's weights evict-first in the L2 (Bf16GemvArgs::weights_evict_first;
# this tree, "new") against 57d2849's bf16_gemv.cu and device_session.cpp (.ab/prev, "prev").  Test:
# gpu_test_bf16_gemv (the same bits with either policy).  The step, alternated process by process,
# Qwen3-8B shape at 1k, batch 1: NVFP4 greedy and ReSET + top-p 0.95 (4 rounds), the ReSET rule
# alone (2 rounds), BF16 weights greedy (2 rounds).  Few files under $OUT (at most 8 return).
# The tree: 57d2849 with tests/bench/results/lm_head_evict_first_s18.patch (bb4194c; not in the library).
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
echo "commit $(cat COMMIT)"
mkdir -p /tmp/prev && xz -dc .ab/prev/libreset.so.0.xz > /tmp/prev/libreset.so.0
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/ck/qwen3-8b-nvfp4 > /dev/null 2>&1
python3 tests/bench/make_random_checkpoint.py qwen3-8b bf16 /tmp/ck/qwen3-8b-bf16 > /dev/null 2>&1 &
ck_job=$!
RESET_GPU_TEST_QUICK=1 timeout 120 build-bundle/bin/gpu_test_bf16_gemv 20261126 > "$OUT/test_bf16_gemv_s18_run9.txt" 2>&1; echo "bf16 test rc=$? at $SECONDS s"
tail -n 3 "$OUT/test_bf16_gemv_s18_run9.txt"
ck=/tmp/ck/qwen3-8b-nvfp4
run() {  # LIB ROUND bench arguments
    local lib=$1 round=$2; shift 2
    local extra=; [[ $lib == prev ]] && extra=/tmp/prev:
    env LD_LIBRARY_PATH=$extra$LD_LIBRARY_PATH build-bundle/bin/reset bench decode "$@" --backend cuda --weights auto \
        --json 2>/dev/null | sed "s/^{/{\"lib\": \"$lib\", \"round\": $round, /"
}
for round in 1 2 3 4; do
    for lib in prev new; do
        run $lib $round $ck --prompt-tokens 1024 --sequences 1 --tokens 64 --repeat 2
        run $lib $round $ck --prompt-tokens 1024 --sequences 1 --tokens 64 --repeat 2 --policy "reset t_low=0.6 tau0=1.2"
        if ((round < 3)); then
            run $lib $round $ck --prompt-tokens 1024 --sequences 1 --tokens 64 --repeat 2 --policy "reset t_low=0.6 tau0=1.2 top_p=1"
        fi
    done
done > "$OUT/lm_head_evict_first_ab_s18_run9.jsonl"
wait $ck_job; echo "bf16 checkpoint at $SECONDS s"
for round in 1 2; do
    for lib in prev new; do
        run $lib $round /tmp/ck/qwen3-8b-bf16 --prompt-tokens 1024 --sequences 1 --tokens 32 --repeat 1
    done
done >> "$OUT/lm_head_evict_first_ab_s18_run9.jsonl"
python3 - "$OUT"/lm_head_evict_first_ab_s18_run9.jsonl <<'PY'
import json, sys, statistics as st
rows = {}
for l in open(sys.argv[1]):
    d = json.loads(l)
    rows.setdefault((d["weights"], d["prompt_tokens"], d["sequences"], d["policy"], d.get("top_p"), d["lib"]), []).append(d["ms_per_step"])
for k in sorted(rows, key=str): print(k, " ".join(f"{v:.4f}" for v in rows[k]), "median %.4f" % st.median(rows[k]))
PY
echo "done at $SECONDS s"
