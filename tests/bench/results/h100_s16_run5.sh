#!/usr/bin/env bash
# Session 16, run 5: each GEMV warp asking the L2 for its next quads as it loads one
# (RESET_NVFP4_GEMV_L2_AHEAD = 1 and 2, .ab/l2_ahead_{1,2}, tests/bench/build_gemv_variant_lib.sh)
# against the library as committed (0), in the decode step: Qwen3-8B shape, NVFP4, greedy,
# 1k at batch 1 and 8 (3 rounds) and 32k with an FP8 cache at batch 1 (2 rounds), alternated.
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
echo "commit $(cat COMMIT)"
for v in l2_ahead_1 l2_ahead_2; do mkdir -p /tmp/$v && xz -dc .ab/$v/libreset.so.0.xz > /tmp/$v/libreset.so.0; done
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/ck/qwen3-8b-nvfp4 > /dev/null 2>&1; echo "checkpoint at $SECONDS s"
ck=/tmp/ck/qwen3-8b-nvfp4
run() {  # LIB ROUND bench arguments
    local lib=$1 round=$2; shift 2
    local extra=; [[ $lib != plain ]] && extra=/tmp/$lib:
    env LD_LIBRARY_PATH=$extra$LD_LIBRARY_PATH build-bundle/bin/reset bench decode $ck --backend cuda --weights auto \
        --json "$@" 2>/dev/null | sed "s/^{/{\"lib\": \"$lib\", \"round\": $round, /"
}
for round in 1 2 3; do
    for lib in plain l2_ahead_1 l2_ahead_2; do
        run $lib $round --prompt-tokens 1024 --sequences 1,8 --tokens 64 --repeat 2
    done
done > "$OUT/l2_ahead_ab.jsonl"
echo "1k at $SECONDS s"
for round in 1 2; do
    for lib in plain l2_ahead_1 l2_ahead_2; do
        run $lib $round --prompt-tokens 32000 --sequences 1 --kv-cache fp8 --tokens 32 --repeat 1
    done
done >> "$OUT/l2_ahead_ab.jsonl"
python3 -c '
import json, sys, statistics as st
rows = {}
for l in open(sys.argv[1]):
    d = json.loads(l); rows.setdefault((d["prompt_tokens"], d["sequences"], d["lib"]), []).append(d["ms_per_step"])
for k in sorted(rows): print(k, rows[k], "median", st.median(rows[k]))
' "$OUT/l2_ahead_ab.jsonl"
echo "done at $SECONDS s"
