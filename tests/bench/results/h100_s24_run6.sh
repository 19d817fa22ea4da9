#!/usr/bin/env bash
# Session 24, run 6 (the bundle: COMMIT + the working tree): after the audit's fixes (the step
# graph captured at session creation and by reset_set_policy instead of the first step; an ended
# sequence's text cleared; its CUDA logits refused; every exception after a device step or a
# logit-computing prefill call breaking the session; the standalone policy's pending decision
# kept across set_params; cancel inside the handle lock; a model's own tokenizer not freed):
# test_cuda_engine on every engine model, the quick set under memcheck, then the decode step
# (Qwen3-8B shape, 1k, batch 1 and 8, greedy and ReSET + top-p 0.95) against run 1's figures.
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version --format=csv
echo "commit $(cat COMMIT) + working tree"
rm -rf /tmp/ck; python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/ck/q8 > /tmp/ck.log 2>&1 &
ck_job=$!
[[ -d /tmp/engine-models/engine-llama3 ]] || python3 tests/gpu/make_engine_models.py /tmp/engine-models > /tmp/make_engine_models.log 2>&1
ENGINE_MODELS=/tmp/engine-models OUT=/tmp/engine timeout 420 tests/gpu/run_cuda_engine_on_device.sh > /tmp/engine.txt 2>&1; echo "engine rc $? at $SECONDS s"
{ echo "== engine"; cat /tmp/engine/test_cuda_engine.log; echo "== memcheck (quick)"; tail -n 8 /tmp/engine/memcheck_cuda_engine.log; } > "$OUT/tests_s24_run6.txt"
grep -E "checks|ERROR SUMMARY|FAIL|refused" "$OUT/tests_s24_run6.txt"
wait $ck_job; echo "checkpoint at $SECONDS s"
for policy in greedy "reset t_low=0.6 tau0=1.2"; do
    build-bundle/bin/reset bench decode /tmp/ck/q8 --backend cuda --weights auto --json --prompt-tokens 1024 \
        --sequences 1,8 --tokens 64 --repeat 2 --policy "$policy" >> "$OUT/decode_s24_run6.jsonl" 2>/dev/null
done
python3 - "$OUT/decode_s24_run6.jsonl" <<'PY'
import json, sys
for l in open(sys.argv[1]):
    if l.startswith("{"):
        d = json.loads(l)
        print(d["sequences"], d["policy"], "ms/step %.3f" % d["ms_per_step"], "prefill %.0f" % d["prefill_tokens_per_s"])
PY
rm -rf /tmp/ck
echo "done at $SECONDS s"
