#!/usr/bin/env bash
# Session 49, run 6 (H200): attention with the FP8 cache at four CTAs per SM.  Run 5's profile at
# 32k batch 1: issue slots 28% busy, DRAM 40% (the kernel alone under Nsight Compute), 0.76
# eligible warps per scheduler with 12 resident per SM: latency-bound on too few warps.  The FP8
# ring at three stages (12 KiB a warp, attention_fp8_three_stages_s49.patch) and launch bounds
# for four CTAs (123 registers, no spills) fit 16 warps per SM; the splits that fill that wave
# are 66 for 8 KV heads at batch 1 (the bench forces them: attention_decode_splits still takes
# the minimum over the BF16 and FP8 instances).
#  1. The variant's gpu_test_attention_decode, quick set.
#  2. attention_decode_bench, this commit's kernel and the variant, at the default splits and at
#     the four-CTA wave's (FP8: batch 1 1k, 8k, 32k: 49 / 66; batch 8 32k: 6 / 8), alternated.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset attention_decode_bench gpu_test_attention_decode"),
# .ab/att3 (build_gemv_variant_lib.sh att3 with the patch, KERNELS=attention_decode
# PROGRAMS="attention_decode_bench gpu_test_attention_decode"), COMMIT.
source tests/bench/results/start_device_run.sh
mkdir -p /tmp/att3 && for f in .ab/att3/*.xz; do xz -dc "$f" > /tmp/att3/$(basename "$f" .xz); done
chmod +x /tmp/att3/attention_decode_bench /tmp/att3/gpu_test_attention_decode
echo "== 1. variant attention test (quick) at $SECONDS s"
RESET_GPU_TEST_QUICK=1 timeout 150 /tmp/att3/gpu_test_attention_decode > "$OUT/attention_test_fp8x3_s49_run6.txt" 2>&1
echo "rc $?: $(tail -n 1 "$OUT/attention_test_fp8x3_s49_run6.txt")"
grep -E "FAIL" "$OUT/attention_test_fp8x3_s49_run6.txt" | head -5
echo "== 2. bench at $SECONDS s"
for round in 1 2; do
    for c in "fp8:1:32768 49 66" "fp8:1:8192 49 66" "fp8:1:1024 49 66" "fp8:8:32768 6 8" "bf16:1:32768 49 49"; do
        read -r case s1 s2 <<<"$c"
        for bin in build-bundle/bin/attention_decode_bench /tmp/att3/attention_decode_bench; do
            for s in $s1 $s2; do
                $bin 36 25 $case $s 2>/dev/null | sed "s#^{#{\"binary\": \"$bin\", \"round\": $round, #" >> "$OUT/attention_fp8x3_s49_run6.jsonl"
            done
        done
    done
done
python3 - "$OUT/attention_fp8x3_s49_run6.jsonl" <<'PY'
import json, sys, statistics, collections
d = collections.defaultdict(list)
for line in open(sys.argv[1]):
    r = json.loads(line)
    d[(r["cache"], r["batch"], r["context"], "variant" if "att3" in r["binary"] else "head", r["splits"])].append(r["us_per_layer"])
for k in sorted(d):
    print(*k, "%.2f us/layer" % statistics.median(d[k]), d[k])
PY
echo "done at $SECONDS s"
