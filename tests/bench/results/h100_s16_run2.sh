#!/usr/bin/env bash
# Session 16, run 2: the decode step's per-warp timeline (kernels/step_trace.h), step 40 of
# `reset bench decode` on the random Qwen3-8B-shaped NVFP4 checkpoint, with the trace library
# (tests/bench/build_step_trace.sh, carried as .ab/trace): batch 1 at 1k greedy with the norm
# launch (the default) and with the norm inside the GEMV (RESET_NORM_IN_GEMV=1), batch 8 at 1k,
# batch 1 at 32k with an FP8 cache, and ReSET + top-p 0.95 at 1k.  Each trace goes through
# tests/bench/step_trace_report.py.  Then the trace library's cost: the batch-1 greedy step with
# it and without, alternated.
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
echo "commit $(cat COMMIT)"
mkdir -p /tmp/tr /tmp/traces && xz -dc .ab/trace/libreset.so.0.xz > /tmp/tr/libreset.so.0
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/ck/qwen3-8b-nvfp4 > /dev/null 2>&1; echo "checkpoint at $SECONDS s"
ck=/tmp/ck/qwen3-8b-nvfp4
trace() {  # NAME ENV... -- bench arguments
    local name=$1; shift
    local envs=()
    while [[ $1 != -- ]]; do envs+=("$1"); shift; done; shift
    env LD_LIBRARY_PATH=/tmp/tr:$LD_LIBRARY_PATH RESET_STEP_TRACE_FILE=/tmp/traces/$name.txt "${envs[@]}" \
        build-bundle/bin/reset bench decode $ck --backend cuda --weights auto --json --tokens 64 --repeat 1 "$@" 2>/dev/null
    echo "== $name" >> "$OUT/step_trace_reports.txt"
    python3 tests/bench/step_trace_report.py /tmp/traces/$name.txt --json /tmp/traces/$name.json >> "$OUT/step_trace_reports.txt" 2>&1
}
trace b1_1k_greedy RESET_NORM_IN_GEMV=0 -- --prompt-tokens 1024 --sequences 1
trace b1_1k_greedy_norm_in_gemv RESET_NORM_IN_GEMV=1 -- --prompt-tokens 1024 --sequences 1
trace b8_1k_greedy RESET_NORM_IN_GEMV=0 -- --prompt-tokens 1024 --sequences 8
trace b1_1k_reset_top_p RESET_NORM_IN_GEMV=0 -- --prompt-tokens 1024 --sequences 1 --policy reset
trace b1_32k_fp8_greedy RESET_NORM_IN_GEMV=0 -- --prompt-tokens 32000 --sequences 1 --kv-cache fp8
echo "traces at $SECONDS s"
cat "$OUT/step_trace_reports.txt"
(cd /tmp/traces && tar cJf "$OUT/step_traces_s16_run2.tar.xz" *.txt *.json)
for round in 1 2 3; do
    for lib in plain trace; do
        extra=; [[ $lib == trace ]] && extra=/tmp/tr:
        env LD_LIBRARY_PATH=$extra$LD_LIBRARY_PATH build-bundle/bin/reset bench decode $ck --backend cuda --weights auto \
            --json --prompt-tokens 1024 --sequences 1 --tokens 64 --repeat 2 2>/dev/null | sed "s/^{/{\"lib\": \"$lib\", \"round\": $round, /"
    done
done > "$OUT/trace_cost_ab.jsonl"
cat "$OUT/trace_cost_ab.jsonl" | python3 -c '
import json, sys
for l in sys.stdin:
    d = json.loads(l); print(d["lib"], d["round"], d["ms_per_step"])'
echo "done at $SECONDS s"
