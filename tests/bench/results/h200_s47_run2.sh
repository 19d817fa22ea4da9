#!/usr/bin/env bash
# Session 47, run 2 (H200): run 1 found the o GEMV 3.9% faster per step at batch 8 when its input is
# prepared by a launch first (RESET_O_FLOAT_INPUT_ROWS=0) and level at 1-2 rows.
#  1. Where the bound goes: o "8 0" at 1k, batch 3-8, 3 rounds alternated.
#  2. Down too (RESET_DOWN_FLOAT_INPUT_ROWS=0, which leaves the pair kernel out) and the pair alone
#     off (RESET_GEMV_PAIR=0, down reading FP32), each with o prepared, at 1k batch 2, 4, 6, 8.
#  3. o prepared at batch 8 with longer contexts: 4k BF16 cache and 32k FP8, 2 rounds.
#  4. The BF16 lm_head on the tensor cores at batch 8 (run 1: +3.5%, clocks equal): the step
#     timeline with it, and if nsys is there, both variants' per-kernel totals over the same steps.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset"), .ab/trace, COMMIT.
source tests/bench/results/start_device_run.sh
ck=/tmp/ck/qwen3-8b-nvfp4
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 $ck > /tmp/ck.log 2>&1
echo "== 1. o input by rows at $SECONDS s"
OUT=/tmp/ab tests/bench/ab_env_decode_on_device.sh RESET_O_FLOAT_INPUT_ROWS "8 0" $ck 3 --weights auto \
    --prompt-tokens 1024 --sequences 3,4,5,6,7,8 --tokens 64 --repeat 2 > "$OUT/o_input_rows_s47_run2.jsonl"
python3 tests/bench/ab_summary.py "$OUT/o_input_rows_s47_run2.jsonl"
echo "== 2. down input, pair, at $SECONDS s"
OUT=/tmp/ab tests/bench/ab_env_decode_on_device.sh - "RESET_O_FLOAT_INPUT_ROWS=8 RESET_O_FLOAT_INPUT_ROWS=0 \
RESET_O_FLOAT_INPUT_ROWS=0,RESET_DOWN_FLOAT_INPUT_ROWS=0 RESET_O_FLOAT_INPUT_ROWS=0,RESET_GEMV_PAIR=0" $ck 3 \
    --weights auto --prompt-tokens 1024 --sequences 2,4,6,8 --tokens 64 --repeat 2 > "$OUT/down_input_s47_run2.jsonl"
python3 tests/bench/ab_summary.py "$OUT/down_input_s47_run2.jsonl"
echo "== 3. long contexts at $SECONDS s"
OUT=/tmp/ab tests/bench/ab_env_decode_on_device.sh RESET_O_FLOAT_INPUT_ROWS "8 0" $ck 2 --weights auto \
    --prompt-tokens 4096 --sequences 8 --tokens 64 --repeat 2 > "$OUT/o_input_long_s47_run2.jsonl"
OUT=/tmp/ab tests/bench/ab_env_decode_on_device.sh RESET_O_FLOAT_INPUT_ROWS "8 0" $ck 2 --weights auto \
    --prompt-tokens 32000 --kv-cache fp8 --sequences 8 --tokens 32 --repeat 1 >> "$OUT/o_input_long_s47_run2.jsonl"
python3 tests/bench/ab_summary.py "$OUT/o_input_long_s47_run2.jsonl"
echo "== 4. lm_head on the tensor cores at $SECONDS s"
for v in 0 1; do
    tests/bench/step_trace_on_device.sh $ck "b8_1k RESET_LM_HEAD_TENSOR_CORES=$v" "$OUT/lm_head_tc_trace_s47_run2.txt" \
        RESET_LM_HEAD_TENSOR_CORES=$v -- --tokens 64 --repeat 1 --prompt-tokens 1024 --sequences 8
done
cat "$OUT/lm_head_tc_trace_s47_run2.txt"
if command -v nsys > /dev/null; then
    for v in 0 1; do
        RESET_LM_HEAD_TENSOR_CORES=$v timeout 120 nsys profile -t cuda --cuda-graph-trace=node -o /tmp/tc$v -f true \
            build-bundle/bin/reset bench decode $ck --backend cuda --weights auto --json --tokens 128 --repeat 1 \
            --prompt-tokens 1024 --sequences 8 > /tmp/nsys$v.log 2>&1
        echo "== RESET_LM_HEAD_TENSOR_CORES=$v rc $?" >> "$OUT/lm_head_tc_nsys_s47_run2.txt"
        nsys stats -q -r cuda_gpu_kern_sum -f csv /tmp/tc$v.nsys-rep 2>&1 | cut -d, -f1-9 | head -30 \
            >> "$OUT/lm_head_tc_nsys_s47_run2.txt"
        nsys stats -q -r cuda_api_sum -f csv /tmp/tc$v.nsys-rep 2>&1 | cut -d, -f1-9 | head -12 \
            >> "$OUT/lm_head_tc_nsys_s47_run2.txt"
    done
    cat "$OUT/lm_head_tc_nsys_s47_run2.txt"
else
    echo "no nsys on this machine"
fi
echo "done at $SECONDS s"
