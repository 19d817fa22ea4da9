#!/usr/bin/env bash
# (Its -DRESET_BF16_GEMV_MMA_* knobs were compile-time macros of that tree; the committed code has the
# environment variable RESET_BF16_GEMV_TENSOR_CORES_FROM instead, docs/history/cuda-engine-sessions.md session 46.)
# Session 46, run 5 (H200): why run 4's tensor-core BF16 GEMV made the NVFP4 batch-8 step 3.1% slower
# although its lm_head alone was faster at 8 tokens (362 against 417 us), and a version whose K slices
# read contiguous runs of columns (128 bytes of a row per two steps; run 4's interleaved the slices'
# steps, 64 bytes of a row each).
#  1. gpu_test_bf16_gemv built three ways (nvcc of the test, kernels/bf16_gemv.cu, lib/api/errors.cpp;
#     carried as .ab/bf16/*.xz): the FP32 path at every token count (-DRESET_BF16_GEMV_MMA_MIN_TOKENS=9),
#     run 4's interleaved slices (-DRESET_BF16_GEMV_MMA_INTERLEAVED=1), contiguous slices (this tree):
#     checks and timing at 1, 2, 4, 8 tokens, twice, alternating.
#  2. The step timeline (-DRESET_STEP_TRACE library of this tree, .ab/trace) of the NVFP4 step at 1k,
#     batch 8 and 2: the lm_head's time inside the step.
#  3. The decode step against 01a29bd's library, alternated, 2 rounds: NVFP4 at 1k batch 2, 4, 8;
#     BF16 mode at 1k batch 8.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset"), .ab, COMMIT.
source tests/bench/results/start_device_run.sh
mkdir -p /tmp/old /tmp/tr /tmp/traces && xz -dc .ab/old/libreset.so.0.xz > /tmp/old/libreset.so.0
xz -dc .ab/trace/libreset.so.0.xz > /tmp/tr/libreset.so.0
ck=/tmp/ck
(for f in nvfp4 bf16; do python3 tests/bench/make_random_checkpoint.py qwen3-8b $f $ck/qwen3-8b-$f; done > /tmp/ck.log 2>&1) &
writer=$!
echo "== 1. BF16 GEMV test builds"
for n in fp32 interleaved contiguous; do xz -dc .ab/bf16/test_bf16_$n.xz > /tmp/test_bf16_$n; chmod +x /tmp/test_bf16_$n; done
for r in 1 2; do
    for n in fp32 interleaved contiguous; do
        timeout 100 /tmp/test_bf16_$n > /tmp/bf16_${n}_r$r.txt 2>&1
        echo "$n r$r rc $?: $(tail -1 /tmp/bf16_${n}_r$r.txt)"
    done
done
grep -h "timing" /tmp/bf16_*_r*.txt > "$OUT/bf16_gemv_variants_s46_run5.txt"
python3 - /tmp <<'PY'
import re, sys, glob
rows = {}
for f in sorted(glob.glob(sys.argv[1] + "/bf16_*_r*.txt")):
    n, r = re.search(r"bf16_(\w+?)_r(\d)", f).groups()
    for line in open(f):
        m = re.match(r"timing: bf16_gemv (\S+)\s+N\s+\d+ K\s+\d+ tokens (\d): median\s+([\d.]+) us", line)
        if m: rows.setdefault((m.group(1), int(m.group(2))), {}).setdefault(n, []).append(float(m.group(3)))
print("| shape | tokens | FP32 path | interleaved | contiguous |")
for (s, t), d in rows.items():
    print(f"| {s} | {t} | " + " | ".join("/".join(f"{v:.1f}" for v in d.get(n, [])) for n in ("fp32", "interleaved", "contiguous")) + " |")
PY
echo "== 2. step timeline at $SECONDS s"
wait $writer
trace() {  # NAME -- bench arguments
    local name=$1; shift 2
    env LD_LIBRARY_PATH=/tmp/tr:$LD_LIBRARY_PATH RESET_STEP_TRACE_FILE=/tmp/traces/$name.txt \
        build-bundle/bin/reset bench decode $ck/qwen3-8b-nvfp4 --backend cuda --weights auto --json --tokens 64 --repeat 1 "$@" \
        2>/dev/null | grep -o '"ms_per_step": [0-9.]*'
    echo "== $name" >> "$OUT/step_trace_s46_run5.txt"
    python3 tests/bench/step_trace_report.py /tmp/traces/$name.txt >> "$OUT/step_trace_s46_run5.txt" 2>&1
}
trace b8_1k -- --prompt-tokens 1024 --sequences 8
trace b2_1k -- --prompt-tokens 1024 --sequences 2
grep -E "^==|bf16_gemv|step 0" "$OUT/step_trace_s46_run5.txt"
echo "== 3. decode A/B at $SECONDS s"
OUT=/tmp/ab tests/bench/ab_decode_on_device.sh /tmp/old $ck/qwen3-8b-nvfp4 2 --weights auto --prompt-tokens 1024 \
    --sequences 2,4,8 --tokens 64 --repeat 2 > "$OUT/bf16_gemv_mma_ab_s46_run5.jsonl"
OUT=/tmp/ab tests/bench/ab_decode_on_device.sh /tmp/old $ck/qwen3-8b-bf16 2 --weights bf16 --prompt-tokens 1024 \
    --sequences 8 --tokens 64 --repeat 2 >> "$OUT/bf16_gemv_mma_ab_s46_run5.jsonl"
# (The log shows the inline summary this call replaced after the runs: the same medians.)
python3 tests/bench/ab_summary.py "$OUT/bf16_gemv_mma_ab_s46_run5.jsonl"
echo "done at $SECONDS s"
