#!/usr/bin/env bash
# Session 47, run 5 (H200), after the o and down GEMVs read prepared FP16 at every row count:
#  1. The step timeline (-DRESET_STEP_TRACE library of this tree, .ab/trace) at 1k batch 1 and 8.
#  2. Whether the new token inside attention still pays where its rule takes it (batch 6-8 at 1k,
#     batch 8 at 4k): the default against RESET_NEW_TOKEN_IN_ATTENTION=0, alternated, 3 / 2 rounds.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset"), .ab/trace, COMMIT.
source tests/bench/results/start_device_run.sh
ck=/tmp/ck/qwen3-8b-nvfp4
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 $ck > /tmp/ck.log 2>&1
echo "== 1. step timeline at $SECONDS s"
for rows in 1 8; do
    tests/bench/step_trace_on_device.sh $ck b${rows}_1k "$OUT/step_trace_s47_run5.txt" -- \
        --tokens 64 --repeat 1 --prompt-tokens 1024 --sequences $rows
done
cat "$OUT/step_trace_s47_run5.txt"
echo "== 2. new token inside attention at $SECONDS s"
OUT=/tmp/ab tests/bench/ab_env_decode_on_device.sh RESET_NEW_TOKEN_IN_ATTENTION "1 0" $ck 3 --weights auto \
    --prompt-tokens 1024 --sequences 6,8 --tokens 64 --repeat 2 > "$OUT/new_token_ab_s47_run5.jsonl"
OUT=/tmp/ab tests/bench/ab_env_decode_on_device.sh RESET_NEW_TOKEN_IN_ATTENTION "1 0" $ck 2 --weights auto \
    --prompt-tokens 4096 --sequences 8 --tokens 64 --repeat 2 >> "$OUT/new_token_ab_s47_run5.jsonl"
python3 tests/bench/ab_summary.py "$OUT/new_token_ab_s47_run5.jsonl"
echo "done at $SECONDS s"
