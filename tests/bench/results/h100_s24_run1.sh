#!/usr/bin/env bash
# Session 24, run 1 (the bundle: COMMIT + the working tree): (1) test_cuda_engine with the new
# test_reset_window (a ReSET window of 40 reserved by reset_set_policy; device bytes checked; 64
# steps over 4 sequences against the CPU), every engine model, then the quick set under memcheck;
# (2) the GEMM prefill's activations sized for 256 rows (kDevicePrefillTokens) instead of 512:
# session device bytes, peak memory, prefill and step time of Qwen3-32B at 8k (FP8 cache) and of the
# Qwen3-8B shape at 1k and 2k, against session 23's runs 4-6 on the same cases.
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
echo "commit $(cat COMMIT) + working tree"
rm -rf /tmp/ck /tmp/checkpoints; df -h /tmp | tail -1
(python3 tests/bench/make_random_checkpoint.py qwen3-32b nvfp4 /tmp/ck/q32
 python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/ck/q8) > /tmp/ck.log 2>&1 &
ck_job=$!
python3 tests/gpu/make_engine_models.py /tmp/engine-models > /tmp/make_engine_models.log 2>&1
echo "engine models at $SECONDS s"
ENGINE_MODELS=/tmp/engine-models OUT=/tmp/engine timeout 330 tests/gpu/run_cuda_engine_on_device.sh > /tmp/engine.txt 2>&1; echo "engine rc $? at $SECONDS s"
{ echo "== engine"; cat /tmp/engine/test_cuda_engine.log; echo "== memcheck (quick)"; tail -n 5 /tmp/engine/memcheck_cuda_engine.log; } > "$OUT/tests_s24_run1.txt"
grep -E "checks|ERROR SUMMARY|FAIL|window" "$OUT/tests_s24_run1.txt"
wait $ck_job; echo "checkpoints at $SECONDS s"; tail -n 3 /tmp/ck.log
out=$OUT/memory_prefill_s24_run1.jsonl
peak() {  # LABEL command...: runs it, prints the peak memory.used (MiB) seen meanwhile
    local label=$1; shift
    ( set +x; while :; do nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits; sleep 0.1; done ) > /tmp/mem.txt 2>/dev/null &
    local mon=$!
    "$@"
    kill $mon; wait $mon 2>/dev/null
    echo "peak nvidia-smi memory.used during $label (MiB): $(sort -n /tmp/mem.txt | tail -1)" | tee -a "$OUT/memory_s24_run1.txt" >&2
}
peak "qwen3-32b 8k fp8" build-bundle/bin/reset bench decode /tmp/ck/q32 --backend cuda --weights auto --json \
    --prompt-tokens 8192 --sequences 1 --kv-cache fp8 --tokens 32 --repeat 1 >> "$out"
echo "q32 at $SECONDS s"
build-bundle/bin/reset bench decode /tmp/ck/q8 --backend cuda --weights auto --json --prompt-tokens 1024 \
    --sequences 1,8 --tokens 64 --repeat 2 >> "$out"
build-bundle/bin/reset bench decode /tmp/ck/q8 --backend cuda --weights auto --json --prompt-tokens 2048 \
    --sequences 1 --tokens 16 --repeat 3 >> "$out"
echo "q8 at $SECONDS s"
python3 - "$out" <<'PY'
import json, sys
for l in open(sys.argv[1]):
    if not l.startswith("{"): continue
    d = json.loads(l)
    print(d["model"], d["weights"], d["prompt_tokens"], d["sequences"], d["kv_cache"], "prefill tok/s %.0f" % d["prefill_tokens_per_s"],
          "ms/step %.3f" % d["ms_per_step"], "session bytes %d" % d["session_device_bytes"])
PY
rm -rf /tmp/ck
echo "done at $SECONDS s"
