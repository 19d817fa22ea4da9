#!/usr/bin/env bash
# Session 16, run 13, after the review (one K/V estimate shared by attention and the q/k norm; the
# L2 knob out of the GEMV): the q/k norm and attention tests (attention's quick set), the engine
# test, and the decode step at 1k (batch 1) and 32k with an FP8 cache, 2 rounds, to see the early
# placement still taken where it was.
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
echo "commit $(cat COMMIT)"
timeout 100 build-bundle/bin/gpu_test_qk_norm_rope_kv_append > "$OUT/test_qk_norm_rope.txt" 2>&1; echo "rope rc=$?"; tail -n 1 "$OUT/test_qk_norm_rope.txt"
RESET_GPU_TEST_QUICK=1 timeout 150 build-bundle/bin/gpu_test_attention_decode > "$OUT/test_attention_quick.txt" 2>&1; echo "attention rc=$?"; tail -n 1 "$OUT/test_attention_quick.txt"
OUT=/tmp/engine SANITIZE=0 timeout 200 tests/gpu/run_cuda_engine_on_device.sh > /tmp/engine.out 2>&1; echo "engine rc=$? at $SECONDS s"
cp /tmp/engine/test_cuda_engine.log "$OUT/engine_full.txt"; grep -E "checks|FAIL" "$OUT/engine_full.txt" | head -5
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/ck/qwen3-8b-nvfp4 > /dev/null 2>&1
for round in 1 2; do
    build-bundle/bin/reset bench decode /tmp/ck/qwen3-8b-nvfp4 --backend cuda --weights auto --json --prompt-tokens 1024 --tokens 64 --repeat 2 2>/dev/null
    build-bundle/bin/reset bench decode /tmp/ck/qwen3-8b-nvfp4 --backend cuda --weights auto --json --prompt-tokens 32000 --kv-cache fp8 --tokens 32 --repeat 1 2>/dev/null
done > "$OUT/step_after_review.jsonl"
python3 -c '
import json, sys
for l in open(sys.argv[1]):
    d = json.loads(l); print(d["prompt_tokens"], d["kv_cache"], d["ms_per_step"])
' "$OUT/step_after_review.jsonl"
echo "done at $SECONDS s"
