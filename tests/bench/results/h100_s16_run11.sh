#!/usr/bin/env bash
# Session 16, run 11: the local plan's warps load their second quad before the wait too
# (RESET_NVFP4_GEMV_SECOND_QUAD=1; the qkv and o GEMVs' warps have 2 quads each at the Qwen3-8B
# shape, and o's CTAs are placed ~7.6 us before attention ends).  The GEMV test with it on, then
# the decode step with it off and on, alternated: 1k at batch 1 and 8 (3 rounds), 32k FP8 (2).
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
echo "commit $(cat COMMIT)"
RESET_NVFP4_GEMV_SECOND_QUAD=1 timeout 100 build-bundle/bin/gpu_test_nvfp4_gemv > "$OUT/test_nvfp4_gemv_second_quad.txt" 2>&1; echo "gemv test rc=$?"
tail -n 2 "$OUT/test_nvfp4_gemv_second_quad.txt"
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/ck/qwen3-8b-nvfp4 > /dev/null 2>&1; echo "checkpoint at $SECONDS s"
OUT=/tmp/ab timeout 300 tests/bench/ab_env_decode_on_device.sh RESET_NVFP4_GEMV_SECOND_QUAD "0 1" /tmp/ck/qwen3-8b-nvfp4 3 \
    --weights auto --prompt-tokens 1024 --sequences 1,8 --tokens 64 --repeat 2 > "$OUT/second_quad_ab.jsonl"
OUT=/tmp/ab timeout 200 tests/bench/ab_env_decode_on_device.sh RESET_NVFP4_GEMV_SECOND_QUAD "0 1" /tmp/ck/qwen3-8b-nvfp4 2 \
    --weights auto --prompt-tokens 32000 --sequences 1 --kv-cache fp8 --tokens 32 --repeat 1 >> "$OUT/second_quad_ab.jsonl"
python3 -c '
import json, sys, statistics as st
rows = {}
for l in open(sys.argv[1]):
    d = json.loads(l); rows.setdefault((d["prompt_tokens"], d["sequences"], d["env"]), []).append(d["ms_per_step"])
for k in sorted(rows): print(k, rows[k], "median", st.median(rows[k]))
' "$OUT/second_quad_ab.jsonl"
echo "done at $SECONDS s"
