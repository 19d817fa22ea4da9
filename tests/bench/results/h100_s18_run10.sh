#!/usr/bin/env bash
# Session 18, run 10: the pipelined GEMV loop's instance for three CTAs per SM on qkv alone (its
# warps have two quads each), which run 6 measured only together with gate_up.  .ab/p3 is this tree
# (ede04d6) with tests/bench/results/gemv_pipeline3_qkv_s18.patch: RESET_NVFP4_GEMV_PIPELINE=3
# pipelines the 3-CTA launches whose warps have at most two quads, 4 every local launch.  Against
# the library as it is ("head": two CTAs per SM or fewer).  1k, batch 1, greedy, 3 rounds, and
# 32k FP8, 2 rounds, alternated process by process.  Qwen3-8B shape, NVFP4 W4A16.
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
echo "commit $(cat COMMIT)"
mkdir -p /tmp/p3 && xz -dc .ab/p3/libreset.so.0.xz > /tmp/p3/libreset.so.0
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/ck/qwen3-8b-nvfp4 > /dev/null 2>&1
ck=/tmp/ck/qwen3-8b-nvfp4
run() {  # VARIANT ROUND bench arguments
    local lib=$1 round=$2; shift 2
    local extra= pipe=2
    [[ $lib == qkv3 ]] && extra=/tmp/p3: && pipe=3
    [[ $lib == all3 ]] && extra=/tmp/p3: && pipe=4
    env RESET_NVFP4_GEMV_PIPELINE=$pipe LD_LIBRARY_PATH=$extra$LD_LIBRARY_PATH build-bundle/bin/reset bench decode $ck \
        --backend cuda --weights auto --json "$@" 2>/dev/null | sed "s/^{/{\"lib\": \"$lib\", \"round\": $round, /"
}
for round in 1 2 3; do
    for lib in head qkv3 all3; do
        run $lib $round --prompt-tokens 1024 --sequences 1 --tokens 64 --repeat 2
        ((round < 3)) && [[ $lib != all3 ]] && run $lib $round --prompt-tokens 32000 --sequences 1 --kv-cache fp8 --tokens 32 --repeat 1
    done
done > "$OUT/pipeline3_qkv_ab_s18_run10.jsonl"
python3 - "$OUT"/pipeline3_qkv_ab_s18_run10.jsonl <<'PY'
import json, sys, statistics as st
rows = {}
for l in open(sys.argv[1]):
    d = json.loads(l)
    rows.setdefault((d["prompt_tokens"], d["sequences"], d.get("kv_cache", ""), d["policy"], d["lib"]), []).append(d["ms_per_step"])
for k in sorted(rows): print(k, " ".join(f"{v:.4f}" for v in rows[k]), "median %.4f" % st.median(rows[k]))
PY
echo "done at $SECONDS s"
