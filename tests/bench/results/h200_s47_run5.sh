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
mkdir -p /tmp/tr /tmp/traces && xz -dc .ab/trace/libreset.so.0.xz > /tmp/tr/libreset.so.0
trace() {  # NAME -- bench arguments
    local name=$1; shift 2
    env LD_LIBRARY_PATH=/tmp/tr:$LD_LIBRARY_PATH RESET_STEP_TRACE_FILE=/tmp/traces/$name.txt \
        build-bundle/bin/reset bench decode $ck --backend cuda --weights auto --json --tokens 64 --repeat 1 "$@" >/dev/null 2>&1
    echo "== $name" >> "$OUT/step_trace_s47_run5.txt"
    python3 tests/bench/step_trace_report.py /tmp/traces/$name.txt >> "$OUT/step_trace_s47_run5.txt" 2>&1
}
trace b1_1k -- --prompt-tokens 1024 --sequences 1
trace b8_1k -- --prompt-tokens 1024 --sequences 8
cat "$OUT/step_trace_s47_run5.txt"
echo "== 2. new token inside attention at $SECONDS s"
OUT=/tmp/ab tests/bench/ab_env_decode_on_device.sh RESET_NEW_TOKEN_IN_ATTENTION "1 0" $ck 3 --weights auto \
    --prompt-tokens 1024 --sequences 6,8 --tokens 64 --repeat 2 > "$OUT/new_token_ab_s47_run5.jsonl"
OUT=/tmp/ab tests/bench/ab_env_decode_on_device.sh RESET_NEW_TOKEN_IN_ATTENTION "1 0" $ck 2 --weights auto \
    --prompt-tokens 4096 --sequences 8 --tokens 64 --repeat 2 >> "$OUT/new_token_ab_s47_run5.jsonl"
python3 tests/bench/ab_summary.py "$OUT/new_token_ab_s47_run5.jsonl"
echo "done at $SECONDS s"
