#!/usr/bin/env bash
# Session 51, run 1 (H200): attention's online softmax rescales only when a head's running max grew.
# In the tree (kernels/attention_decode.cu): the warp votes whether any of its heads' block max
# exceeds the running max; only then are alpha = exp2(m - new_m), its two shuffles and the
# 4·kSteps products of the accumulators computed (alpha = 1 exactly otherwise, so the same bits).
# Registers (sm_90a, head_dim 128; ptxas -v): FP8 156 -> 145, BF16 150 -> 134 (new token: 159 -> 152,
# 148 -> 141).  With the registers freed both q parts in registers fit the FP8 loop (167-168, no
# spills; session 50 run 2 spilled 20 bytes): variant qall51.
# Prepare (repository root):
#   git worktree add /tmp/head51 a04e399; git worktree add /tmp/qall51 a04e399 and apply the tree's
#   change plus q_high[kSteps][kParts] (both parts);
#   KERNELS=attention_decode tests/bench/build_gemv_variant_lib.sh head51 /tmp/head51 (keep its library),
#   KERNELS=attention_decode PROGRAMS=gpu_test_attention_decode tests/bench/build_gemv_variant_lib.sh
#       qall51 /tmp/qall51 (keep its test);
#   tests/bench/build_attention_trace.sh .ab/trace51/trace_{new,head} and with TRACE=0
#       .ab/trace51/plain_{new,head,qall} (from each tree), xz (the carry is 64 MiB with the tree)
#   BUNDLE_PROGRAMS="reset gpu_test_attention_decode" scripts/make_device_bundle.sh
# Carry: build-bundle.tar.xz, .ab/head51, .ab/qall51, .ab/trace51, COMMIT.
#  1. Quick attention tests: the tree's and qall51's (compare against FP64; same bits as head by
#     construction for the tree), then racecheck on the tree's quick set.
#  2. attention_decode_bench: head / new / qall, FP8 and BF16, batch 1 at 1k, 8k, 32k and batch 8 at
#     32k, alternated, 2 rounds.
#  3. Per-CTA timelines (trace builds) at 32k and 1k FP8 batch 1, head and new.
#  4. The decode step, new against head's attention: FP8 cache 32k batch 1 and 8, 2 rounds; BF16
#     cache 1k batch 1, 2 rounds.
source tests/bench/results/start_device_run.sh
ck=/tmp/checkpoints/qwen3-8b-nvfp4
(mkdir -p /tmp/checkpoints && python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 $ck > /tmp/ck.log 2>&1) &
ckpid=$!
for v in head51 qall51 trace51; do
    mkdir -p /tmp/$v && for f in .ab/$v/*.xz; do xz -dc "$f" > /tmp/$v/$(basename "$f" .xz); done
    chmod +x /tmp/$v/*
done
echo "== 1. tests at $SECONDS s"
RESET_GPU_TEST_QUICK=1 timeout 150 build-bundle/bin/gpu_test_attention_decode > "$OUT/attention_test_new_s51_run1.txt" 2>&1
echo "new test rc $?: $(tail -n 1 "$OUT/attention_test_new_s51_run1.txt")"
RESET_GPU_TEST_QUICK=1 timeout 150 /tmp/qall51/gpu_test_attention_decode > "$OUT/attention_test_qall_s51_run1.txt" 2>&1
echo "qall test rc $?: $(tail -n 1 "$OUT/attention_test_qall_s51_run1.txt")"
RESET_GPU_TEST_QUICK=1 timeout 200 compute-sanitizer --tool racecheck build-bundle/bin/gpu_test_attention_decode > /tmp/race.txt 2>&1
echo "racecheck rc $?: $(grep -a "RACECHECK SUMMARY\|hazard" /tmp/race.txt | tail -n 1)"
echo "== 2. bench at $SECONDS s"
for round in 1 2; do
    for case in fp8:1:32768 fp8:1:8192 fp8:1:1024 fp8:8:32768 bf16:1:32768 bf16:1:8192 bf16:1:1024 bf16:8:32768; do
        for bin in /tmp/trace51/plain_head /tmp/trace51/plain_new /tmp/trace51/plain_qall; do
            $bin 36 25 $case 2>/dev/null | sed "s#^{#{\"binary\": \"$bin\", \"round\": $round, #" >> "$OUT/attention_cond_rescale_s51_run1.jsonl"
        done
    done
done
python3 - "$OUT/attention_cond_rescale_s51_run1.jsonl" <<'PY'
import json, sys, statistics, collections
d = collections.defaultdict(list)
for line in open(sys.argv[1]):
    r = json.loads(line)
    arm = r["binary"].rsplit("_", 1)[1]
    d[(r["cache"], r["batch"], r["context"], arm)].append(r["us_per_layer"])
for k in sorted(d):
    print(*k, "%.2f us/layer" % statistics.median(d[k]), d[k])
PY
echo "== 3. traces at $SECONDS s"
for case in fp8:1:32768 fp8:1:1024; do
    for v in head new; do
        /tmp/trace51/trace_$v 36 25 $case 2>/dev/null | sed "s#^{#{\"variant\": \"$v\", #" >> "$OUT/attention_trace_s51_run1.jsonl"
    done
done
grep '"trace": true' "$OUT/attention_trace_s51_run1.jsonl" | cut -c1-600
echo "== 4. decode step at $SECONDS s"
wait $ckpid; tail -n 2 /tmp/ck.log
OUT=/tmp/ab tests/bench/ab_decode_on_device.sh /tmp/head51 $ck 2 --weights auto --kv-cache fp8 \
    --prompt-tokens 32768 --sequences 1,8 --tokens 64 --repeat 2 >> "$OUT/cond_rescale_ab_s51_run1.jsonl"
OUT=/tmp/ab tests/bench/ab_decode_on_device.sh /tmp/head51 $ck 2 --weights auto \
    --prompt-tokens 1024 --sequences 1 --tokens 64 --repeat 2 >> "$OUT/cond_rescale_ab_s51_run1.jsonl"
python3 tests/bench/ab_summary.py "$OUT/cond_rescale_ab_s51_run1.jsonl"
tail -n 3 /tmp/ab/ab_decode.log 2>/dev/null
echo "done at $SECONDS s"
