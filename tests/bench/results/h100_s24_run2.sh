#!/usr/bin/env bash
# Session 24, run 2 (the bundle: COMMIT + the working tree; build-bundle/lib-prev holds run 1's
# libreset.so.0): (1) test_cuda_engine with test_cancelled_prefill (a 3,000-token prefill
# cancelled from another thread between its chunks must leave the logits bit for bit as they
# were) and the quick set's ReSET-window requirement gated, every engine model, then the quick
# set under memcheck; (2) prefill with only each sequence's last chunk through the lm_head,
# against run 1's library (every chunk through it), alternating 3 rounds, Qwen3-8B shape, 2k and
# 8k prompts.
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
echo "commit $(cat COMMIT) + working tree"
rm -rf /tmp/ck /tmp/checkpoints; df -h /tmp | tail -1
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/ck/q8 > /tmp/ck.log 2>&1 &
ck_job=$!
[[ -d /tmp/engine-models/engine-llama3 ]] || python3 tests/gpu/make_engine_models.py /tmp/engine-models > /tmp/make_engine_models.log 2>&1
echo "engine models at $SECONDS s"
ENGINE_MODELS=/tmp/engine-models OUT=/tmp/engine timeout 360 tests/gpu/run_cuda_engine_on_device.sh > /tmp/engine.txt 2>&1; echo "engine rc $? at $SECONDS s"
{ echo "== engine"; cat /tmp/engine/test_cuda_engine.log; echo "== memcheck (quick)"; tail -n 8 /tmp/engine/memcheck_cuda_engine.log; } > "$OUT/tests_s24_run2.txt"
grep -E "checks|ERROR SUMMARY|FAIL|cancelled prefill" "$OUT/tests_s24_run2.txt"
wait $ck_job; echo "checkpoint at $SECONDS s"; tail -n 1 /tmp/ck.log
bundle_lib=$PWD/build-bundle/lib
for round in 1 2 3; do
    for variant in prev new; do
        if [[ $variant == prev ]]; then lib=$PWD/build-bundle/lib-prev:$LD_LIBRARY_PATH; else lib=$LD_LIBRARY_PATH; fi
        LD_LIBRARY_PATH=$lib build-bundle/bin/reset bench decode /tmp/ck/q8 --backend cuda --weights auto --json \
            --prompt-tokens 2048,8192 --sequences 1 --tokens 4 --repeat 2 2>/dev/null | sed "s/^{/{\"variant\": \"$variant\", \"round\": $round, /" >> "$OUT/prefill_ab_s24_run2.jsonl"
    done
done
echo "ab at $SECONDS s"
python3 - "$OUT/prefill_ab_s24_run2.jsonl" <<'PY'
import json, sys, statistics
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
for p in (2048, 8192):
    for v in ("prev", "new"):
        r = [d["prefill_tokens_per_s"] for d in rows if d["variant"] == v and d["prompt_tokens"] == p]
        print(p, v, "prefill tok/s", ["%.0f" % x for x in r], "median %.0f" % statistics.median(r))
PY
rm -rf /tmp/ck
echo "done at $SECONDS s"
