#!/usr/bin/env bash
# Session 19, run 4, the final library (the bundle): the issue's other two models, last measured in
# sessions 8-12.  Qwen3-32B NVFP4 (random weights, ModelOpt export) at 1k and 8k, batch 1, FP8 and BF16
# KV caches, with the whole process's peak device memory (nvidia-smi every 0.1 s: the 24 GB goal), and
# R1-Distill-Qwen-7B NVFP4 at 1k, batch 1 and 8.  Few files under $OUT.
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
echo "commit $(cat COMMIT)"
python3 tests/bench/make_random_checkpoint.py r1-distill-qwen-7b nvfp4 /tmp/ck/r1-7b > /dev/null 2>&1 &
r1_job=$!
python3 tests/bench/make_random_checkpoint.py qwen3-32b nvfp4 /tmp/ck/q32 > /dev/null 2>&1; echo "q32 checkpoint at $SECONDS s"
out=$OUT/models_s19_run4.jsonl
peak() {  # LABEL command...: runs it, prints the peak memory.used (MiB) seen meanwhile
    local label=$1; shift
    ( while :; do nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits; sleep 0.1; done ) > /tmp/mem.txt &
    local mon=$!
    "$@"
    kill $mon
    echo "peak nvidia-smi memory.used during $label (MiB): $(sort -n /tmp/mem.txt | tail -1)" | tee -a "$OUT/memory_s19_run4.txt"
}
for kv in fp8 bf16; do
    peak "qwen3-32b 8k $kv" build-bundle/bin/reset bench decode /tmp/ck/q32 --backend cuda --weights auto --json \
        --prompt-tokens 8192 --sequences 1 --kv-cache $kv --tokens 32 --repeat 1 >> "$out"
done
build-bundle/bin/reset bench decode /tmp/ck/q32 --backend cuda --weights auto --json --prompt-tokens 1024 --sequences 1 \
    --kv-cache fp8 --tokens 32 --repeat 2 >> "$out"
echo "q32 at $SECONDS s"
wait $r1_job; echo "r1 checkpoint at $SECONDS s"
build-bundle/bin/reset bench decode /tmp/ck/r1-7b --backend cuda --weights auto --json --prompt-tokens 1024 \
    --sequences 1,8 --tokens 64 --repeat 2 >> "$out"
python3 - "$out" <<'PY'
import json, sys
for l in open(sys.argv[1]):
    d = json.loads(l)
    print(d["model"], d["prompt_tokens"], d["sequences"], d["kv_cache"], "ms/step %.3f" % d["ms_per_step"],
          "tok/s %.1f" % d["tokens_per_s"], "model+session GB %.2f + %.2f" % (d["model_device_bytes"] / 1e9, d["session_device_bytes"] / 1e9))
PY
echo "done at $SECONDS s"
