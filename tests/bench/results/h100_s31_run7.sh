#!/usr/bin/env bash
# Session 31, run 7 (H100):
#  1. The kernel test with 4 and 64 logits per thread (RESET_TOP_LOGPROBS_PER_THREAD: 149 and 10 CTAs a
#     row at vocabulary 151,936; 16, the default, ran in runs 1-4).
#  2. The engine test's quick set: the penalties' counts now upload only when the policy has a penalty
#     (a row left stale by an unpenalized step uploads when a penalty comes; test_penalties switches
#     them off and on through prefills, a new generation and a reset).
#  3. Does the branch's kernel cost less beside the layers with fewer, longer CTAs?  The Qwen3-8B shape,
#     1k context, batch 1 and 8, greedy, --top-logprobs 0,20, with 16, 32 and 64 logits per thread
#     alternated over 3 rounds (tests/bench/ab_env_decode_on_device.sh).
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset gpu_test_cuda_engine gpu_test_top_logprobs"), COMMIT.
source tests/bench/results/start_device_run.sh
echo "== 1. kernel test, 4 and 64 logits per thread"
for per in 4 64; do
    RESET_TOP_LOGPROBS_PER_THREAD=$per timeout 120 build-bundle/bin/gpu_test_top_logprobs 2026113$per \
        > "$OUT/top_logprobs_per_thread${per}_s31_run7.txt" 2>&1
    echo "per thread $per rc $? at $SECONDS s"
    grep -E "FAIL|top_logprobs" "$OUT/top_logprobs_per_thread${per}_s31_run7.txt" | head -12
done
echo "== 2. engine test, quick set"
python3 tests/gpu/make_engine_models.py /tmp/engine-models > /tmp/make_engine_models.log 2>&1
RESET_GPU_TEST_QUICK=1 ENGINE_MODELS=/tmp/engine-models OUT=/tmp/engine SANITIZE=0 timeout 200 \
    tests/gpu/run_cuda_engine_on_device.sh > /tmp/engine.txt 2>&1
echo "engine rc $? at $SECONDS s"
cp /tmp/engine/test_cuda_engine.log "$OUT/engine_quick_s31_run7.txt"
grep -E "penalties|top_logprobs|checks|FAIL" "$OUT/engine_quick_s31_run7.txt" | head -20
echo "== 3. logits per thread in the step"
mkdir -p /tmp/checkpoints
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/checkpoints/qwen3-8b-nvfp4 > /tmp/checkpoint.log 2>&1
echo "checkpoint rc $? at $SECONDS s"
timeout 280 tests/bench/ab_env_decode_on_device.sh RESET_TOP_LOGPROBS_PER_THREAD "16 32 64" \
    /tmp/checkpoints/qwen3-8b-nvfp4 3 --prompt-tokens 1024 --sequences 1,8 --tokens 64 --repeat 3 \
    --policy greedy --top-logprobs 0,20 > "$OUT/top_logprobs_per_thread_s31_run7.jsonl"
echo "ab rc $? at $SECONDS s"
python3 - "$OUT/top_logprobs_per_thread_s31_run7.jsonl" <<'PY'
import json, statistics, sys
from collections import defaultdict
cases = defaultdict(list)
for line in open(sys.argv[1]):
    r = json.loads(line)
    cases[(r["env"], r["sequences"], r["top_logprobs"])].append(r["ms_per_step"])
for key in sorted(cases):
    print(key, " ".join(f"{v:.4f}" for v in cases[key]), f"median {statistics.median(cases[key]):.4f}")
PY
echo "done at $SECONDS s"
