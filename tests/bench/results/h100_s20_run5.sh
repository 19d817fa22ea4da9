#!/usr/bin/env bash
# Session 20, run 5: the pipelined GEMV loop's unrolling (kernels/nvfp4_gemv.cu, tile_quads:
# `#pragma unroll 2`, the library, "base" = the bundle, 29877dc) against unroll 1 (.ab/u1: 90 / 120
# registers and 1,912 / 2,248 SASS instructions for the FP16 / FP32 instances, against 106 / 125 and
# 2,576 / 3,104) and unroll 4 (.ab/u4: 117 / 128, 3,288 / 4,032), each relinked into the same
# library (tests/bench/build_gemv_variant_lib.sh with only that line changed).  Run 3 showed o and
# down sensitive to their code alone.  The decode step alternated process by process, Qwen3-8B
# shape, random NVFP4 checkpoint, greedy: 1k batch 1 (4 rounds), 1k batch 8 and 32k FP8 (2 rounds).
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
echo "commit $(cat COMMIT)"
for v in u1 u4; do mkdir -p /tmp/$v && xz -dc .ab/$v/libreset.so.0.xz > /tmp/$v/libreset.so.0; done
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/ck/qwen3-8b-nvfp4 > /dev/null 2>&1
echo "checkpoint at $SECONDS s"
ck=/tmp/ck/qwen3-8b-nvfp4
run() {  # VARIANT ROUND bench arguments
    local v=$1 round=$2; shift 2
    local extra=; [[ $v != base ]] && extra=/tmp/$v:
    env LD_LIBRARY_PATH=$extra$LD_LIBRARY_PATH build-bundle/bin/reset bench decode $ck \
        --backend cuda --weights auto --json "$@" 2>/dev/null | sed "s/^{/{\"variant\": \"$v\", \"round\": $round, /"
}
ab=$OUT/pipelined_unroll_ab_s20_run5.jsonl
for round in 1 2 3 4; do
    for v in base u1 u4; do
        run $v $round --prompt-tokens 1024 --sequences 1 --tokens 64 --repeat 2
        if ((round < 3)); then
            run $v $round --prompt-tokens 1024 --sequences 8 --tokens 64 --repeat 2
            run $v $round --prompt-tokens 32000 --sequences 1 --kv-cache fp8 --tokens 32 --repeat 1
        fi
    done
done > "$ab"
python3 - "$ab" <<'PY'
import json, sys, statistics as st
rows = {}
for l in open(sys.argv[1]):
    d = json.loads(l)
    rows.setdefault((d["prompt_tokens"], d["sequences"], d.get("kv_cache", ""), d["policy"], d["variant"]), []).append(d["ms_per_step"])
for k in sorted(rows): print(k, " ".join(f"{v:.4f}" for v in rows[k]), "median %.4f" % st.median(rows[k]))
PY
echo "done at $SECONDS s"
