#!/usr/bin/env bash
# Session 16, run 3: the norm inside the GEMV again, batch 1, 1k, greedy, Qwen3-8B shape, NVFP4:
# the library as committed with RESET_NORM_IN_GEMV=0 (the norm launch) and =1, and a variant
# whose normed GEMV loads its first quad after the norm, not before its wait (.ab/norm_late_quad,
# tests/bench/build_gemv_variant_lib.sh), alternated over 3 rounds; then the step timeline
# (per-SM trace counters now) of steps 40, 50 and 60 with the norm launch and with the norm in
# the GEMV.
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
echo "commit $(cat COMMIT)"
for v in trace norm_late_quad; do mkdir -p /tmp/$v && xz -dc .ab/$v/libreset.so.0.xz > /tmp/$v/libreset.so.0; done
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/ck/qwen3-8b-nvfp4 > /dev/null 2>&1; echo "checkpoint at $SECONDS s"
ck=/tmp/ck/qwen3-8b-nvfp4
for round in 1 2 3; do
    for variant in "plain 0" "plain 1" "norm_late_quad 1"; do
        set -- $variant
        extra=; [[ $1 != plain ]] && extra=/tmp/$1:
        env LD_LIBRARY_PATH=$extra$LD_LIBRARY_PATH RESET_NORM_IN_GEMV=$2 build-bundle/bin/reset bench decode $ck \
            --backend cuda --weights auto --json --prompt-tokens 1024 --sequences 1 --tokens 64 --repeat 2 2>/dev/null |
            sed "s/^{/{\"lib\": \"$1\", \"norm_in_gemv\": $2, \"round\": $round, /"
    done
done > "$OUT/norm_in_gemv_ab_run3.jsonl"
python3 -c '
import json, sys, statistics as st
rows = {}
for l in open(sys.argv[1]):
    d = json.loads(l); rows.setdefault((d["lib"], d["norm_in_gemv"]), []).append(d["ms_per_step"])
for k in rows: print(k, rows[k], "median", st.median(rows[k]))
' "$OUT/norm_in_gemv_ab_run3.jsonl"
echo "ab at $SECONDS s"
mkdir -p /tmp/traces
for norm in 0 1; do
    env LD_LIBRARY_PATH=/tmp/trace:$LD_LIBRARY_PATH RESET_STEP_TRACE_FILE=/tmp/traces/b1_1k_greedy_norm$norm.txt \
        RESET_STEP_TRACE_STEPS=40,50,60 RESET_NORM_IN_GEMV=$norm build-bundle/bin/reset bench decode $ck --backend cuda \
        --weights auto --json --tokens 64 --repeat 1 --prompt-tokens 1024 --sequences 1 2>/dev/null
    echo "== b1_1k_greedy_norm$norm" >> "$OUT/step_trace_reports_run3.txt"
    python3 tests/bench/step_trace_report.py /tmp/traces/b1_1k_greedy_norm$norm.txt \
        --json /tmp/traces/b1_1k_greedy_norm$norm.json >> "$OUT/step_trace_reports_run3.txt" 2>&1
done
cat "$OUT/step_trace_reports_run3.txt"
(cd /tmp/traces && tar cJf "$OUT/step_traces_s16_run3.tar.xz" *.txt *.json)
echo "done at $SECONDS s"
