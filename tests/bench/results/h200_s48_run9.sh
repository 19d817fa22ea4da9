#!/usr/bin/env bash
# Session 48, run 9 (H200): batch-1 steps up to 2k positions run attention over 16 splits (a third
# step graph, kShortSeparate; run 7: -1.9% at 1k, -1.4% at 2k with an experiment's knob).
#  1. The engine test's quick set (its batch-1 sessions replay the new graph).
#  2. The decode step, this tree ("new") against 73e44e1 ("old"): 1k batch 1 and 8 (3 rounds),
#     1,960 + 64 positions at batch 1 (2 rounds; the rule holds to 2,048).
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset gpu_test_cuda_engine"), .ab/head (73e44e1's
# library, run 6), COMMIT.
source tests/bench/results/start_device_run.sh
ck=/tmp/ck/qwen3-8b-nvfp4
(python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 $ck > /tmp/ck.log 2>&1) &
writer=$!
mkdir -p /tmp/head && xz -dc .ab/head/libreset.so.0.xz > /tmp/head/libreset.so.0
echo "== 1. engine test at $SECONDS s"
PASSES=main RESET_GPU_TEST_QUICK=1 OUT=/tmp/engine timeout 100 tests/gpu/run_cuda_engine_on_device.sh > /tmp/engine.txt 2>&1
echo "engine rc $? at $SECONDS s"
cp /tmp/engine/test_cuda_engine.log "$OUT/engine_s48_run9.txt"
grep -E "checks|FAIL" "$OUT/engine_s48_run9.txt" | head
wait $writer
echo "== 2. decode A/B at $SECONDS s"
OUT=/tmp/ab tests/bench/ab_decode_on_device.sh /tmp/head $ck 3 --weights auto \
    --prompt-tokens 1024 --sequences 1,8 --tokens 64 --repeat 2 > "$OUT/short_attention_ab_s48_run9.jsonl"
python3 tests/bench/ab_summary.py "$OUT/short_attention_ab_s48_run9.jsonl"
OUT=/tmp/ab tests/bench/ab_decode_on_device.sh /tmp/head $ck 2 --weights auto \
    --prompt-tokens 1960 --sequences 1 --tokens 64 --repeat 2 >> "$OUT/short_attention_ab_s48_run9.jsonl"
python3 tests/bench/ab_summary.py "$OUT/short_attention_ab_s48_run9.jsonl"
echo "done at $SECONDS s"
