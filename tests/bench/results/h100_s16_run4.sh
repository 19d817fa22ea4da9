#!/usr/bin/env bash
# Session 16, run 4: why the norm inside the GEMV measured slower untraced (run 3: +2.1%) while its
# traced steps were faster through the layers (-77 us) and lost 55 us to one late lm_head CTA.
# The batch-1 1k greedy step with RESET_NORM_IN_GEMV=0 and =1, alternated over 3 rounds, with the
# plain library and with the trace library (no step recorded: the hooks only), then traces of
# steps 40-42 with the norm in the GEMV and the plain library's step time for both settings over
# 256 tokens.
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
echo "commit $(cat COMMIT)"
mkdir -p /tmp/trace && xz -dc .ab/trace/libreset.so.0.xz > /tmp/trace/libreset.so.0
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/ck/qwen3-8b-nvfp4 > /dev/null 2>&1; echo "checkpoint at $SECONDS s"
ck=/tmp/ck/qwen3-8b-nvfp4
for round in 1 2 3; do
    for variant in "plain 0" "plain 1" "trace 0" "trace 1"; do
        set -- $variant
        extra=; [[ $1 != plain ]] && extra=/tmp/$1:
        env LD_LIBRARY_PATH=$extra$LD_LIBRARY_PATH RESET_NORM_IN_GEMV=$2 build-bundle/bin/reset bench decode $ck \
            --backend cuda --weights auto --json --prompt-tokens 1024 --sequences 1 --tokens 64 --repeat 2 2>/dev/null |
            sed "s/^{/{\"lib\": \"$1\", \"norm_in_gemv\": $2, \"round\": $round, /"
    done
done > "$OUT/norm_in_gemv_ab_run4.jsonl"
for norm in 0 1; do
    env RESET_NORM_IN_GEMV=$norm build-bundle/bin/reset bench decode $ck --backend cuda --weights auto --json \
        --prompt-tokens 1024 --sequences 1 --tokens 256 --repeat 1 2>/dev/null | sed "s/^{/{\"lib\": \"plain256\", \"norm_in_gemv\": $norm, \"round\": 1, /"
done >> "$OUT/norm_in_gemv_ab_run4.jsonl"
python3 -c '
import json, sys, statistics as st
rows = {}
for l in open(sys.argv[1]):
    d = json.loads(l); rows.setdefault((d["lib"], d["norm_in_gemv"]), []).append(d["ms_per_step"])
for k in rows: print(k, rows[k], "median", st.median(rows[k]))
' "$OUT/norm_in_gemv_ab_run4.jsonl"
echo "ab at $SECONDS s"
echo "done at $SECONDS s"
