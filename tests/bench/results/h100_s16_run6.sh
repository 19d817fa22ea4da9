#!/usr/bin/env bash
# Session 16, run 6: the short kernels (row norms, the embedding, the q/k norm and RoPE) let the
# next kernel be placed before their own wait (cuda::begin_dependent_kernel_placing_next), against
# the committed order (wait, then place the next: .ab/trigger_after_wait) and against the norms
# and the embedding only (.ab/trigger_norms_only, the q/k norm kernel as committed).  Decode step,
# Qwen3-8B shape, NVFP4, greedy: 1k at batch 1 and 8 (3 rounds) and 32k with an FP8 cache at batch 1
# (2 rounds), alternated.  Then the engine test on this tree (the chain of launches may now run
# one kernel further ahead), and the step trace of steps 40-42 at batch 1, 1k.
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
echo "commit $(cat COMMIT)"
for v in trace trigger_after_wait trigger_norms_only; do mkdir -p /tmp/$v && xz -dc .ab/$v/libreset.so.0.xz > /tmp/$v/libreset.so.0; done
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/ck/qwen3-8b-nvfp4 > /dev/null 2>&1; echo "checkpoint at $SECONDS s"
ck=/tmp/ck/qwen3-8b-nvfp4
run() {  # LIB ROUND bench arguments
    local lib=$1 round=$2; shift 2
    local extra=; [[ $lib != plain ]] && extra=/tmp/$lib:
    env LD_LIBRARY_PATH=$extra$LD_LIBRARY_PATH build-bundle/bin/reset bench decode $ck --backend cuda --weights auto \
        --json "$@" 2>/dev/null | sed "s/^{/{\"lib\": \"$lib\", \"round\": $round, /"
}
for round in 1 2 3; do
    for lib in trigger_after_wait trigger_norms_only plain; do
        run $lib $round --prompt-tokens 1024 --sequences 1,8 --tokens 64 --repeat 2
    done
done > "$OUT/trigger_ab.jsonl"
echo "1k at $SECONDS s"
for round in 1 2; do
    for lib in trigger_after_wait trigger_norms_only plain; do
        run $lib $round --prompt-tokens 32000 --sequences 1 --kv-cache fp8 --tokens 32 --repeat 1
    done
done >> "$OUT/trigger_ab.jsonl"
python3 -c '
import json, sys, statistics as st
rows = {}
for l in open(sys.argv[1]):
    d = json.loads(l); rows.setdefault((d["prompt_tokens"], d["sequences"], d["lib"]), []).append(d["ms_per_step"])
for k in sorted(rows): print(k, rows[k], "median", st.median(rows[k]))
' "$OUT/trigger_ab.jsonl"
echo "ab at $SECONDS s"
OUT=/tmp/engine SANITIZE=0 timeout 200 tests/gpu/run_cuda_engine_on_device.sh > /tmp/engine.out 2>&1; echo "engine rc=$? at $SECONDS s"
cp /tmp/engine/test_cuda_engine.log "$OUT/engine_full.txt"; grep -E "checks|FAIL" "$OUT/engine_full.txt" | head
env LD_LIBRARY_PATH=/tmp/trace:$LD_LIBRARY_PATH RESET_STEP_TRACE_FILE=/tmp/trace_b1.txt RESET_STEP_TRACE_STEPS=40,41,42 \
    build-bundle/bin/reset bench decode $ck --backend cuda --weights auto --json --tokens 64 --repeat 1 --prompt-tokens 1024 \
    --sequences 1 2>/dev/null
python3 tests/bench/step_trace_report.py /tmp/trace_b1.txt > "$OUT/step_trace_report_run6.txt" 2>&1; cat "$OUT/step_trace_report_run6.txt"
echo "done at $SECONDS s"
