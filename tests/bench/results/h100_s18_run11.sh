#!/usr/bin/env bash
# Session 18, run 11: qkv and gate_up (384 CTAs: three per SM) with half the K slices, so that they
# fit two CTAs per SM and run the pipelined loop.  .ab/hv is this tree with
# tests/bench/results/gemv_halved_slices_s18.patch: RESET_NVFP4_GEMV_HALVE=1 halves where the warps
# then have at most 4 quads (qkv: 192 CTAs, 4 quads a warp), 2 wherever the result fits (gate_up
# too: 192 CTAs, 16 quads a warp).  Against the library as it is ("head").  1k, batch 1, greedy,
# 3 rounds, and 32k FP8, 2 rounds, alternated process by process.  Qwen3-8B shape, NVFP4 W4A16.
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
echo "commit $(cat COMMIT)"
mkdir -p /tmp/hv && xz -dc .ab/hv/libreset.so.0.xz > /tmp/hv/libreset.so.0
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/ck/qwen3-8b-nvfp4 > /dev/null 2>&1
ck=/tmp/ck/qwen3-8b-nvfp4
run() {  # VARIANT ROUND bench arguments
    local lib=$1 round=$2; shift 2
    local extra= halve=0
    [[ $lib == qkv ]] && extra=/tmp/hv: && halve=1
    [[ $lib == both ]] && extra=/tmp/hv: && halve=2
    env RESET_NVFP4_GEMV_HALVE=$halve LD_LIBRARY_PATH=$extra$LD_LIBRARY_PATH build-bundle/bin/reset bench decode $ck \
        --backend cuda --weights auto --json "$@" 2>/dev/null | sed "s/^{/{\"lib\": \"$lib\", \"round\": $round, /"
}
for round in 1 2 3; do
    for lib in head qkv both; do
        run $lib $round --prompt-tokens 1024 --sequences 1 --tokens 64 --repeat 2
        ((round < 3)) && run $lib $round --prompt-tokens 32000 --sequences 1 --kv-cache fp8 --tokens 32 --repeat 1
    done
done > "$OUT/halved_slices_ab_s18_run11.jsonl"
python3 - "$OUT"/halved_slices_ab_s18_run11.jsonl <<'PY'
import json, sys, statistics as st
rows = {}
for l in open(sys.argv[1]):
    d = json.loads(l)
    rows.setdefault((d["prompt_tokens"], d["sequences"], d.get("kv_cache", ""), d["policy"], d["lib"]), []).append(d["ms_per_step"])
for k in sorted(rows): print(k, " ".join(f"{v:.4f}" for v in rows[k]), "median %.4f" % st.median(rows[k]))
PY
echo "done at $SECONDS s"
