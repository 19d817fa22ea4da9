#!/usr/bin/env bash
# Session 16, run 7: the q/k norm + RoPE kernel lets attention be placed before its own wait only
# where the launch's K/V exceed 16 MB (long_attention_follows), against the committed order
# (.ab/trigger_after_wait).  Decode step, Qwen3-8B shape, NVFP4, greedy: 1k at batch 1 and 8
# (3 rounds), 8k BF16 and 32k FP8 at batch 1 (2 rounds), alternated; then the kernel's own test.
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
echo "commit $(cat COMMIT)"
for v in trigger_after_wait; do mkdir -p /tmp/$v && xz -dc .ab/$v/libreset.so.0.xz > /tmp/$v/libreset.so.0; done
timeout 120 build-bundle/bin/gpu_test_qk_norm_rope_kv_append > "$OUT/test_qk_norm_rope.txt" 2>&1; echo "rope test rc=$?"; tail -n 2 "$OUT/test_qk_norm_rope.txt"
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/ck/qwen3-8b-nvfp4 > /dev/null 2>&1; echo "checkpoint at $SECONDS s"
ck=/tmp/ck/qwen3-8b-nvfp4
run() {  # LIB ROUND bench arguments
    local lib=$1 round=$2; shift 2
    local extra=; [[ $lib != plain ]] && extra=/tmp/$lib:
    env LD_LIBRARY_PATH=$extra$LD_LIBRARY_PATH build-bundle/bin/reset bench decode $ck --backend cuda --weights auto \
        --json "$@" 2>/dev/null | sed "s/^{/{\"lib\": \"$lib\", \"round\": $round, /"
}
for round in 1 2 3; do
    for lib in trigger_after_wait plain; do
        run $lib $round --prompt-tokens 1024 --sequences 1,8 --tokens 64 --repeat 2
    done
done > "$OUT/rope_trigger_ab.jsonl"
echo "1k at $SECONDS s"
for round in 1 2; do
    for lib in trigger_after_wait plain; do
        run $lib $round --prompt-tokens 8192 --sequences 1 --tokens 32 --repeat 1
        run $lib $round --prompt-tokens 32000 --sequences 1 --kv-cache fp8 --tokens 32 --repeat 1
    done
done >> "$OUT/rope_trigger_ab.jsonl"
python3 -c '
import json, sys, statistics as st
rows = {}
for l in open(sys.argv[1]):
    d = json.loads(l); rows.setdefault((d["prompt_tokens"], d["kv_cache"], d["sequences"], d["lib"]), []).append(d["ms_per_step"])
for k in sorted(rows): print(k, rows[k], "median", st.median(rows[k]))
' "$OUT/rope_trigger_ab.jsonl"
echo "done at $SECONDS s"
