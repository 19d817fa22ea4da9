#!/usr/bin/env bash
# Session 46, run 2 (H200): where the H200's decode step and GEMV lose against its 4.3-4.5 TB/s, at 01a29bd.
#  1. The GEMV benchmark on the Qwen3-8B shapes (NVFP4 only, cold L2), built three ways
#     (tests/bench/build_gemv_variants.sh gemv-variants base=flags: c4=flags:-DRESET_NVFP4_GEMV_MIN_CTAS=4
#     xa4=flags:-DRESET_NVFP4_GEMV_X_AHEAD=4): the default, 4 CTAs per SM (64 registers, 32 warps)
#     and all four supers' activations with the weights, rounds alternating; then the default with
#     its weights served from the L2 (--warm-l2): the kernel's own rate on this chip.
#  2. Attention alone at batch 1 (attention_decode_bench, 36 layers), splits swept at 32k FP8 and
#     BF16 and at 1k BF16: 24, 33, 49 (the default: one wave at capacity 32k), 66, 98, 132.
#  3. The step's per-launch timeline (-DRESET_STEP_TRACE library, tests/bench/build_step_trace.sh,
#     carried as .ab/trace) on the random Qwen3-8B NVFP4 checkpoint: 1k batch 1 and 8, 32k FP8 batch 1.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset attention_decode_bench"), .ab (with gemv-variants as .ab/gv/gemv-variants.tar.xz), COMMIT.
source tests/bench/results/start_device_run.sh
tar xJf .ab/gv/gemv-variants.tar.xz
ck=/tmp/ck/qwen3-8b-nvfp4
(python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 $ck > /tmp/ck.log 2>&1) &
writer=$!
echo "== 1. GEMV variants, Qwen3-8B"
OUT=/tmp/gv tests/bench/run_gemv_variants_on_device.sh gemv-variants "Qwen3-8B" 2 | tee "$OUT/gemv_variants_s46_run2.md"
gemv-variants/gemv_bench_base --only "Qwen3-8B" --nvfp4-only --warm-l2 > "$OUT/gemv_warm_l2_s46_run2.log" 2>&1
grep -E "M=1 " "$OUT/gemv_warm_l2_s46_run2.log" | head -12
echo "at $SECONDS s"
echo "== 2. attention splits, batch 1"
for case in fp8:1:32768 bf16:1:32768 bf16:1:1024; do
    for splits in 24 33 49 66 98 132; do
        build-bundle/bin/attention_decode_bench 36 25 $case $splits 2>/dev/null
    done
done | tee "$OUT/attention_splits_s46_run2.jsonl" | python3 -c '
import json, sys
for line in sys.stdin:
    d = json.loads(line)
    print(d["cache"], d["context"], "splits", d["splits"], d["us_per_layer"], "us", d["pct_of_stream"], "%")'
echo "at $SECONDS s"
echo "== 3. step timeline"
wait $writer
mkdir -p /tmp/tr /tmp/traces && xz -dc .ab/trace/libreset.so.0.xz > /tmp/tr/libreset.so.0
trace() {  # NAME -- bench arguments
    local name=$1; shift 2
    env LD_LIBRARY_PATH=/tmp/tr:$LD_LIBRARY_PATH RESET_STEP_TRACE_FILE=/tmp/traces/$name.txt \
        build-bundle/bin/reset bench decode $ck --backend cuda --weights auto --json --tokens 64 --repeat 1 "$@" 2>/dev/null
    echo "== $name" >> "$OUT/step_trace_s46_run2.txt"
    python3 tests/bench/step_trace_report.py /tmp/traces/$name.txt --json /tmp/traces/$name.json \
        >> "$OUT/step_trace_s46_run2.txt" 2>&1
}
trace b1_1k -- --prompt-tokens 1024 --sequences 1
trace b8_1k -- --prompt-tokens 1024 --sequences 8
trace b1_32k_fp8 -- --prompt-tokens 32000 --sequences 1 --kv-cache fp8
cat "$OUT/step_trace_s46_run2.txt"
(cd /tmp/traces && tar cJf "$OUT/step_traces_s46_run2.tar.xz" *.txt *.json)
echo "done at $SECONDS s"
