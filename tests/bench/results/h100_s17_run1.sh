#!/usr/bin/env bash
# Session 17, run 1 (measurement only): what the step's copies and its sampler cost, and the
# streamed GEMV plan on o and down alone.  .ab/x1 is this tree's library with two temporary
# switches (not in the library; /tmp/var1 in the session): RESET_X_STEP=nocopy leaves the step's
# five memcpy nodes (step input and ring uploads, the state copy, the output and ring downloads)
# out of the graph, =nosampler the sampler, =neither both (tokens then wrong: only the time
# means anything); RESET_NVFP4_GEMV_PLAN=streamed4096 forces the streamed plan on the GEMVs with
# 4096 output rows (Qwen3-8B's o and down).  Qwen3-8B shape, NVFP4, alternated round by round.
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
echo "commit $(cat COMMIT)"
mkdir -p /tmp/x1 && xz -dc .ab/x1/libreset.so.0.xz > /tmp/x1/libreset.so.0
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/ck/qwen3-8b-nvfp4 > /dev/null 2>&1; echo "checkpoint at $SECONDS s"
ck=/tmp/ck/qwen3-8b-nvfp4
run() {  # ENV ROUND bench arguments
    local e=$1 round=$2; shift 2
    env LD_LIBRARY_PATH=/tmp/x1:$LD_LIBRARY_PATH $e build-bundle/bin/reset bench decode $ck --backend cuda --weights auto \
        --json "$@" 2>/dev/null | sed "s/^{/{\"env\": \"$e\", \"round\": $round, /"
}
for round in 1 2 3 4; do
    for x in full nocopy nosampler neither; do
        run RESET_X_STEP=$x $round --prompt-tokens 1024 --sequences 1 --tokens 64 --repeat 2
    done
    for x in full nocopy; do
        run RESET_X_STEP=$x $round --prompt-tokens 1024 --sequences 1 --tokens 64 --repeat 2 --policy "reset t_low=0.6 tau0=1.2"
    done
done > "$OUT/step_parts_s17_run1.jsonl"
echo "parts done at $SECONDS s"
for round in 1 2 3; do
    for p in auto streamed4096; do
        run RESET_NVFP4_GEMV_PLAN=$p $round --prompt-tokens 1024 --sequences 1,8 --tokens 64 --repeat 2
        run RESET_NVFP4_GEMV_PLAN=$p $round --prompt-tokens 32000 --sequences 1 --kv-cache fp8 --tokens 32 --repeat 1
    done
done > "$OUT/plan_o_down_s17_run1.jsonl"
echo "plans done at $SECONDS s"
python3 - "$OUT"/step_parts_s17_run1.jsonl "$OUT"/plan_o_down_s17_run1.jsonl <<'PY'
import json, sys, statistics as st
for f in sys.argv[1:]:
    rows = {}
    for l in open(f):
        d = json.loads(l)
        rows.setdefault((d["prompt_tokens"], d["sequences"], d.get("kv_cache", ""), d["policy"], d["env"]), []).append(d["ms_per_step"])
    for k in sorted(rows): print(k, " ".join(f"{v:.4f}" for v in rows[k]), "median %.4f" % st.median(rows[k]))
PY
echo "done at $SECONDS s"
