#!/usr/bin/env bash
# Session 17, run 6 (measurement): the RMSNorm before the qkv GEMV costs 2.25 µs per layer in the
# step (run 5), twice the one before gate_up, and the timeline (session 16) put the qkv GEMV's CTAs
# 1.9 µs late.  .ab/x4 is this tree's library with a temporary switch
# (tests/bench/results/norm_place_early_s17.patch): RESET_X_EARLY=qkv makes only the norm before
# qkv let its GEMV be placed before its own wait (cuda::begin_dependent_kernel_placing_next),
# =gate_up only the one before gate_up, =both both (session 16's run 6 measured both plus the
# embedding).  Qwen3-8B shape, NVFP4, greedy, alternated.
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
echo "commit $(cat COMMIT)"
mkdir -p /tmp/x4 && xz -dc .ab/x4/libreset.so.0.xz > /tmp/x4/libreset.so.0
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/ck/qwen3-8b-nvfp4 > /dev/null 2>&1; echo "checkpoint at $SECONDS s"
ck=/tmp/ck/qwen3-8b-nvfp4
run() {  # ENV ROUND bench arguments
    local e=$1 round=$2; shift 2
    env LD_LIBRARY_PATH=/tmp/x4:$LD_LIBRARY_PATH $e build-bundle/bin/reset bench decode $ck --backend cuda --weights auto \
        --json "$@" 2>/dev/null | sed "s/^{/{\"env\": \"$e\", \"round\": $round, /"
}
for round in 1 2 3; do
    for x in none qkv gate_up both; do
        run RESET_X_EARLY=$x $round --prompt-tokens 1024 --sequences 1 --tokens 64 --repeat 2
    done
    for x in none qkv; do
        run RESET_X_EARLY=$x $round --prompt-tokens 1024 --sequences 8 --tokens 64 --repeat 2
        ((round < 3)) && run RESET_X_EARLY=$x $round --prompt-tokens 32000 --sequences 1 --kv-cache fp8 --tokens 32 --repeat 1
    done
done > "$OUT/norm_place_early_s17_run6.jsonl"
python3 - "$OUT"/norm_place_early_s17_run6.jsonl <<'PY'
import json, sys, statistics as st
rows = {}
for l in open(sys.argv[1]):
    d = json.loads(l)
    rows.setdefault((d["prompt_tokens"], d["sequences"], d.get("kv_cache", ""), d["env"]), []).append(d["ms_per_step"])
for k in sorted(rows): print(k, " ".join(f"{v:.4f}" for v in rows[k]), "median %.4f" % st.median(rows[k]))
PY
echo "done at $SECONDS s"
