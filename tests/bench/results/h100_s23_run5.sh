#!/usr/bin/env bash
# Session 23, run 5 (the bundle: COMMIT): the other models of issue 6 and the external baseline on
# the current tree, in one run: Qwen3-32B (NVFP4 export; 8k context with an FP8 and a BF16 cache,
# peak device memory: the 24 GB goal; 1k), R1-Distill-Qwen-7B (1k, batch 1 and 8), the Qwen3-8B
# shape in our BF16 and NVFP4 modes (batch 1, 1k), and transformers' BF16 baseline at that shape
# (tests/bench/transformers_baseline.py: static cache, eager and torch.compile).  Last measured:
# the models in session 19 (run 4), the baseline in session 3.  (A first try stopped at 119 s:
# the memory monitor's loop traced by set -x flooded the log; a second stopped answering, most
# likely its disk full with run 4's checkpoints still on the warm machine.)
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
echo "commit $(cat COMMIT)"
rm -rf /tmp/checkpoints /tmp/ck; df -h /tmp | tail -1  # 64 GiB of disk: q32 20 GB, q8 4 + 16 GB, r1 5 GB
(python3 tests/bench/make_random_checkpoint.py r1-distill-qwen-7b nvfp4 /tmp/ck/r1-7b
 for fmt in nvfp4 bf16; do python3 tests/bench/make_random_checkpoint.py qwen3-8b $fmt /tmp/ck/q8-$fmt; done) > /tmp/ck.log 2>&1 &
others_job=$!
python3 tests/bench/make_random_checkpoint.py qwen3-32b nvfp4 /tmp/ck/q32 > /dev/null 2>&1; echo "q32 checkpoint at $SECONDS s"
out=$OUT/models_s23_run5.jsonl
peak() {  # LABEL command...: runs it, prints the peak memory.used (MiB) seen meanwhile
    local label=$1; shift
    ( set +x; while :; do nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits; sleep 0.1; done ) > /tmp/mem.txt 2>/dev/null &
    local mon=$!
    "$@"
    kill $mon; wait $mon 2>/dev/null
    # (to stderr: the run that made the committed files sent it to stdout, into models_s23_run5.jsonl,
    # whose JSON lines were then kept with grep '^{')
    echo "peak nvidia-smi memory.used during $label (MiB): $(sort -n /tmp/mem.txt | tail -1)" | tee -a "$OUT/memory_s23_run5.txt" >&2
}
for kv in fp8 bf16; do
    peak "qwen3-32b 8k $kv" build-bundle/bin/reset bench decode /tmp/ck/q32 --backend cuda --weights auto --json \
        --prompt-tokens 8192 --sequences 1 --kv-cache $kv --tokens 32 --repeat 1 >> "$out"
done
build-bundle/bin/reset bench decode /tmp/ck/q32 --backend cuda --weights auto --json --prompt-tokens 1024 --sequences 1 \
    --kv-cache fp8 --tokens 32 --repeat 2 >> "$out"
echo "q32 at $SECONDS s"
wait $others_job; echo "r1 and q8 checkpoints at $SECONDS s"
build-bundle/bin/reset bench decode /tmp/ck/r1-7b --backend cuda --weights auto --json --prompt-tokens 1024 \
    --sequences 1,8 --tokens 64 --repeat 2 >> "$out"
build-bundle/bin/reset bench decode /tmp/ck/q8-nvfp4 --backend cuda --weights auto --json --prompt-tokens 1024 \
    --sequences 1 --tokens 64 --repeat 2 >> "$out"
build-bundle/bin/reset bench decode /tmp/ck/q8-bf16 --backend cuda --weights bf16 --json --prompt-tokens 1024 \
    --sequences 1 --tokens 64 --repeat 2 >> "$out"
echo "ours at $SECONDS s"
rm -rf /tmp/ck/q32  # disk for torch's compile caches
timeout 300 python3 tests/bench/transformers_baseline.py "$OUT/transformers_baseline_s23_run5.jsonl" > /tmp/tf.log 2>&1
echo "transformers rc=$? at $SECONDS s"; tail -n 5 /tmp/tf.log; cp /tmp/tf.log "$OUT/transformers_baseline_s23_run5.log"
python3 - "$out" "$OUT/transformers_baseline_s23_run5.jsonl" <<'PY'
import json, sys
for l in open(sys.argv[1]):
    d = json.loads(l)
    print(d["model"], d["weights"], d["prompt_tokens"], d["sequences"], d["kv_cache"], "ms/step %.3f" % d["ms_per_step"],
          "tok/s %.1f" % d["tokens_per_s"], "model+session GB %.2f + %.2f" % (d["model_device_bytes"] / 1e9, d["session_device_bytes"] / 1e9))
for l in open(sys.argv[2]):
    d = json.loads(l)
    print("transformers", d.get("mode"), "ms/step", d.get("ms_per_step"), "tok/s", d.get("tokens_per_s"), d.get("error", ""))
PY
echo "done at $SECONDS s"
