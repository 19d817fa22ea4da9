#!/usr/bin/env bash
# Session 51, run 4 (H200): the attention merge holds 24 splits a round instead of 16
# (kMergeRound; ptxas: FP8 156 -> 157-164 registers, BF16 150 -> 149-160, no spills; 32 spilled).
# Run 3 (attention_decode_bench, alone) found a 1k step's contexts (1025-1088: 17 pieces, 17 live
# splits) 0.85 us a layer slower than 1024 (16 live): the merge's second round.  With 24, 17-24
# live splits merge in one round, 8k's 43 and 32k's 47 in two instead of three.
# Run 3 also measured the cluster merge (tests/bench/results/attention_cluster_merge_s51.patch,
# not kept: neither 24 clusters of 16 nor 48 of 8 fit one wave at batch 1 on the H200).
# Prepare: cmake --build build-sm90; tests/bench/build_attention_trace.sh with and without TRACE
#   (.ab/trace51/{plain,trace}_new; {plain,trace}_head: a04e399's kernel with this tree's bench);
#   .ab/head51: KERNELS=attention_decode build_gemv_variant_lib.sh head51 (a04e399's tree);
#   BUNDLE_PROGRAMS="reset gpu_test_attention_decode gpu_test_cuda_engine" scripts/make_device_bundle.sh
# Carry: build-bundle.tar.xz, .ab/trace51, .ab/head51, COMMIT.
#  1. The quick attention test, memcheck and racecheck on it.
#  2. attention_decode_bench, head / new, batch 1 at 1024, 1088, 2048, 8192, 32768 and batch 8 at
#     32768, FP8 and BF16, alternated, 2 rounds; timelines at 1088 and 32768 (FP8).
#  3. The engine test's quick set.
#  4. The decode step against a04e399's attention: 1k batch 1, 3 rounds; 32k FP8 batch 1 and 8k
#     batch 1, 2 rounds.
source tests/bench/results/start_device_run.sh
ck=/tmp/checkpoints/qwen3-8b-nvfp4
(mkdir -p /tmp/checkpoints && python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 $ck > /tmp/ck.log 2>&1) &
ckpid=$!
mkdir -p /tmp/t /tmp/head51 && for f in .ab/trace51/*.xz; do xz -dc "$f" > /tmp/t/$(basename "$f" .xz); done; chmod +x /tmp/t/*
xz -dc .ab/head51/libreset.so.0.xz > /tmp/head51/libreset.so.0
echo "== 1. tests at $SECONDS s"
RESET_GPU_TEST_QUICK=1 timeout 150 build-bundle/bin/gpu_test_attention_decode > "$OUT/attention_test_s51_run4.txt" 2>&1
echo "test rc $?: $(tail -n 1 "$OUT/attention_test_s51_run4.txt")"
grep -a "FAIL" "$OUT/attention_test_s51_run4.txt" | head -5
for tool in memcheck racecheck; do
    RESET_GPU_TEST_QUICK=1 timeout 200 compute-sanitizer --tool $tool build-bundle/bin/gpu_test_attention_decode > /tmp/$tool.txt 2>&1
    echo "$tool rc $?: $(grep -a "ERROR SUMMARY\|RACECHECK SUMMARY" /tmp/$tool.txt | tail -n 1)"
done
echo "== 2. bench at $SECONDS s"
for round in 1 2; do
    for case in fp8:1:1024 fp8:1:1088 fp8:1:2048 fp8:1:8192 fp8:1:32768 fp8:8:32768 bf16:1:1024 bf16:1:1088 bf16:1:2048 bf16:1:8192 bf16:1:32768 bf16:8:32768; do
        for arm in head new; do
            /tmp/t/plain_$arm 36 25 $case 2>/dev/null | sed "s#^{#{\"arm\": \"$arm\", \"round\": $round, #" >> "$OUT/attention_merge24_s51_run4.jsonl"
        done
    done
done
python3 - "$OUT/attention_merge24_s51_run4.jsonl" <<'PY'
import json, sys, statistics, collections
d = collections.defaultdict(list)
for line in open(sys.argv[1]):
    r = json.loads(line)
    d[(r["cache"], r["batch"], r["context"], r["arm"])].append(r["us_per_layer"])
for k in sorted(d):
    if k[3] != "new": continue
    h, n = statistics.median(d[k[:3] + ("head",)]), statistics.median(d[k])
    print(*k[:3], "head %.2f new %.2f us/layer (%+.1f%%)" % (h, n, 100 * (n / h - 1)), d[k[:3] + ("head",)], d[k])
PY
for case in fp8:1:1088 fp8:1:32768; do
    for arm in head new; do
        /tmp/t/trace_$arm 36 25 $case 2>/dev/null | grep '"trace": true' | sed "s#^{#{\"arm\": \"$arm\", #" >> "$OUT/attention_trace_s51_run4.jsonl"
    done
done
python3 - "$OUT/attention_trace_s51_run4.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    print(r["arm"], r["context"], "replay", r["replay_us_per_layer"], "loop_end", r["loop_end_us"], "partials_end", r["partials_end_us"],
          "merge_end", r["merge_end_us"], "rounds", r["merge_rounds"], "x", r["merge_batch"], "span_after_wait", r["span_after_wait_us"])
PY
echo "== 3. engine test at $SECONDS s"
wait $ckpid; tail -n 1 /tmp/ck.log
PASSES=main RESET_GPU_TEST_QUICK=1 OUT=/tmp/engine timeout 120 tests/gpu/run_cuda_engine_on_device.sh > "$OUT/engine_s51_run4.txt" 2>&1
echo "engine rc $?: $(grep -a "checks" "$OUT/engine_s51_run4.txt" | tail -n 1)"
grep -a "FAIL" "$OUT/engine_s51_run4.txt" | head -5
echo "== 4. decode step at $SECONDS s"
OUT=/tmp/ab tests/bench/ab_decode_on_device.sh /tmp/head51 $ck 3 --weights auto \
    --prompt-tokens 1024 --sequences 1 --tokens 64 --repeat 2 >> "$OUT/merge24_ab_s51_run4.jsonl"
for ctx in 32768 8192; do
    OUT=/tmp/ab tests/bench/ab_decode_on_device.sh /tmp/head51 $ck 2 --weights auto --kv-cache fp8 \
        --prompt-tokens $ctx --sequences 1 --tokens 64 --repeat 2 >> "$OUT/merge24_ab_s51_run4.jsonl"
done
python3 tests/bench/ab_summary.py "$OUT/merge24_ab_s51_run4.jsonl"
echo "done at $SECONDS s"
