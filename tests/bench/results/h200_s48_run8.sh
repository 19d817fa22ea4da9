#!/usr/bin/env bash
# Session 48, run 8 (H200): why fewer splits helped in the step (run 7: 16 or 8 splits instead of 49,
# 1k batch 1 -1.9 / -2.1%, 2k -1.4%) when launch order alone did not (run 6).  The attention CTAs
# past the context's end left at once, each issuing its share of the next weight's L2 prefetch
# (gate_up's first 16 MB) before the previous kernel was done, while the QKV GEMV still streamed.
# Now they wait for the previous kernel first.
#  1. gpu_test_attention_decode quick set; the engine test's quick set.
#  2. The decode step, this tree ("new") against 73e44e1 ("old"): 1k batch 1 and 8 (3 rounds),
#     2k batch 1 (2 rounds).
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset gpu_test_cuda_engine gpu_test_attention_decode"),
# .ab/head (73e44e1's library, run 6), COMMIT.
source tests/bench/results/start_device_run.sh
ck=/tmp/ck/qwen3-8b-nvfp4
(python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 $ck > /tmp/ck.log 2>&1) &
writer=$!
mkdir -p /tmp/head && xz -dc .ab/head/libreset.so.0.xz > /tmp/head/libreset.so.0
echo "== 1. tests at $SECONDS s"
RESET_GPU_TEST_QUICK=1 timeout 100 build-bundle/bin/gpu_test_attention_decode > "$OUT/attention_test_s48_run8.txt" 2>&1
echo "attention (quick) rc $?: $(tail -n 1 "$OUT/attention_test_s48_run8.txt")"
grep -E "FAIL" "$OUT/attention_test_s48_run8.txt" | head -5
PASSES=main RESET_GPU_TEST_QUICK=1 OUT=/tmp/engine timeout 100 tests/gpu/run_cuda_engine_on_device.sh > /tmp/engine.txt 2>&1
echo "engine rc $? at $SECONDS s"
cp /tmp/engine/test_cuda_engine.log "$OUT/engine_s48_run8.txt"
grep -E "checks|FAIL" "$OUT/engine_s48_run8.txt" | head
wait $writer
echo "== 2. decode A/B at $SECONDS s"
OUT=/tmp/ab tests/bench/ab_decode_on_device.sh /tmp/head $ck 3 --weights auto \
    --prompt-tokens 1024 --sequences 1,8 --tokens 64 --repeat 2 > "$OUT/late_prefetch_ab_s48_run8.jsonl"
OUT=/tmp/ab tests/bench/ab_decode_on_device.sh /tmp/head $ck 2 --weights auto \
    --prompt-tokens 2048 --sequences 1 --tokens 64 --repeat 2 >> "$OUT/late_prefetch_ab_s48_run8.jsonl"
python3 tests/bench/ab_summary.py "$OUT/late_prefetch_ab_s48_run8.jsonl"
echo "done at $SECONDS s"
