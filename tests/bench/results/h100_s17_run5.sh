#!/usr/bin/env bash
# Session 17, run 5, the committed tree (COMMIT, the bundle; the step's input and output by copy_ranges launches): the short decode grid
# (tests/bench/run_decode_grid_on_device.sh GRID=short: the goals' rows) with its streaming bandwidth
# (the engine test ran on this tree in run 3).  Then, measurement only, what each row kernel
# before a GEMV or attention costs in the step now: .ab/x3 is this tree's library with a temporary
# switch (tests/bench/results/step_skip_s17.patch, not in the library): RESET_X_SKIP=qknorm leaves
# the q/k norm + RoPE + KV append out of decode steps, norm_qkv / norm_gate_up the RMSNorm before
# that GEMV (results then wrong: only the time means anything).
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
echo "commit $(cat COMMIT)"
OUT=/tmp/grid GRID=short timeout $((585 - SECONDS)) tests/bench/run_decode_grid_on_device.sh > /tmp/grid.out 2>&1; echo "grid rc=$? at $SECONDS s"
cp /tmp/grid/decode_grid.jsonl /tmp/grid/decode_grid_env.json "$OUT/"
cat /tmp/grid/decode_grid_env.json
python3 -c '
import json, sys
for l in open(sys.argv[1]):
    d = json.loads(l)
    print(d["weights"], d["policy"], "top_p", d["top_p"], "batch", d["sequences"], "ctx", d["prompt_tokens"], d["kv_cache"], "graph" if d["cuda_graph"] else "eager", d["ms_per_step"], "ms", d["tokens_per_s"], "tok/s", d.get("pct_of_roofline", ""))
' "$OUT/decode_grid.jsonl"
mkdir -p /tmp/x3 && xz -dc .ab/x3/libreset.so.0.xz > /tmp/x3/libreset.so.0
ck=/tmp/checkpoints/qwen3-8b-nvfp4
[[ -d $ck ]] || { python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/ck/qwen3-8b-nvfp4 > /dev/null 2>&1; ck=/tmp/ck/qwen3-8b-nvfp4; }
run() {  # ENV ROUND bench arguments
    local e=$1 round=$2; shift 2
    env LD_LIBRARY_PATH=/tmp/x3:$LD_LIBRARY_PATH $e build-bundle/bin/reset bench decode $ck --backend cuda --weights auto \
        --json "$@" 2>/dev/null | sed "s/^{/{\"env\": \"$e\", \"round\": $round, /"
}
for round in 1 2 3; do
    for x in none qknorm norm_qkv norm_gate_up; do
        run RESET_X_SKIP=$x $round --prompt-tokens 1024 --sequences 1 --tokens 64 --repeat 2
    done
    if ((round < 3)); then
        for x in none qknorm; do
            run RESET_X_SKIP=$x $round --prompt-tokens 32000 --sequences 1 --kv-cache fp8 --tokens 32 --repeat 1
        done
    fi
done > "$OUT/row_kernel_skip_s17_run5.jsonl"
python3 - "$OUT"/row_kernel_skip_s17_run5.jsonl <<'PY'
import json, sys, statistics as st
rows = {}
for l in open(sys.argv[1]):
    d = json.loads(l)
    rows.setdefault((d["prompt_tokens"], d["sequences"], d.get("kv_cache", ""), d["env"]), []).append(d["ms_per_step"])
for k in sorted(rows): print(k, " ".join(f"{v:.4f}" for v in rows[k]), "median %.4f" % st.median(rows[k]))
PY
echo "done at $SECONDS s"
