#!/usr/bin/env bash
# Session 51, run 2 (H200): attention's cluster merge (uncommitted tree on a04e399).  Run 1's
# per-CTA timelines put the merge's tail (partials stored, fence and arrival, the last CTA's merge)
# at 3.6 us of a 1k layer's ~7 us after the wait and 5.4 us at 32k.  The tree: where the splits are
# a multiple of 16 and the grid's clusters of 16 fit one wave (batch 1: 49 -> 48 splits), the
# launch runs as clusters of 16; rows of at most 2048 positions run on their first cluster (up to
# two pieces a split) and merge through distributed shared memory; RESET_ATTENTION_CLUSTER=0 is
# the old path (49 splits, the workspace's merge).  Run 1's conditional rescale is not in it.
# Prepare: cmake --build build-sm90; tests/bench/build_attention_trace.sh with and without TRACE
#   (.ab/trace51/{plain,trace}_cl, xz; plain_head and trace_head from run 1);
#   BUNDLE_PROGRAMS="reset gpu_test_attention_decode gpu_test_cuda_engine" scripts/make_device_bundle.sh
# Carry: build-bundle.tar.xz, .ab/trace51, COMMIT.
#  1. The quick attention test (its cluster-merge cases), memcheck and racecheck on it.
#  2. attention_decode_bench: head, cluster, cluster with RESET_ATTENTION_CLUSTER=0; batch 1 at
#     1024, 1088, 2048, 8k, 32k, batch 8 at 32k, FP8 and BF16; alternated, 2 rounds.
#  3. Timelines at 1088 (head, cluster), FP8 and BF16.
#  4. The engine test's quick set (PASSES=main).
#  5. The decode step, RESET_ATTENTION_CLUSTER 1 / 0: 1k batch 1, 3 rounds; 32k FP8 batch 1, 2 rounds.
source tests/bench/results/start_device_run.sh
ck=/tmp/checkpoints/qwen3-8b-nvfp4
(mkdir -p /tmp/checkpoints && python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 $ck > /tmp/ck.log 2>&1) &
ckpid=$!
mkdir -p /tmp/t && for f in .ab/trace51/*.xz; do xz -dc "$f" > /tmp/t/$(basename "$f" .xz); done; chmod +x /tmp/t/*
echo "== 1. tests at $SECONDS s"
RESET_GPU_TEST_QUICK=1 timeout 150 build-bundle/bin/gpu_test_attention_decode > "$OUT/attention_test_s51_run2.txt" 2>&1
echo "test rc $?: $(tail -n 1 "$OUT/attention_test_s51_run2.txt")"
grep -a "cluster\|FAIL" "$OUT/attention_test_s51_run2.txt" | head -20
for tool in memcheck racecheck; do
    RESET_GPU_TEST_QUICK=1 timeout 200 compute-sanitizer --tool $tool build-bundle/bin/gpu_test_attention_decode > /tmp/$tool.txt 2>&1
    echo "$tool rc $?: $(grep -a "ERROR SUMMARY\|RACECHECK SUMMARY" /tmp/$tool.txt | tail -n 1)"
    grep -a "FAIL\|=========  *[A-Z]" /tmp/$tool.txt | head -5
done
echo "== 2. bench at $SECONDS s"
for round in 1 2; do
    for case in fp8:1:1024 fp8:1:1088 fp8:1:2048 fp8:1:8192 fp8:1:32768 fp8:8:32768 bf16:1:1024 bf16:1:1088 bf16:1:2048 bf16:1:32768; do
        for arm in head cl off; do
            bin=/tmp/t/plain_$arm; env=RESET_ATTENTION_CLUSTER=1
            [[ $arm == off ]] && { bin=/tmp/t/plain_cl; env=RESET_ATTENTION_CLUSTER=0; }
            env $env $bin 36 25 $case 2>/dev/null | sed "s#^{#{\"arm\": \"$arm\", \"round\": $round, #" >> "$OUT/attention_cluster_s51_run2.jsonl"
        done
    done
done
python3 - "$OUT/attention_cluster_s51_run2.jsonl" <<'PY'
import json, sys, statistics, collections
d = collections.defaultdict(list); cl = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    d[(r["cache"], r["batch"], r["context"], r["arm"])].append(r["us_per_layer"])
    cl[(r["cache"], r["batch"], r["context"], r["arm"])] = (r["splits"], r.get("cluster_merge"))
for k in sorted(d):
    print(*k, "%.2f us/layer" % statistics.median(d[k]), d[k], "splits %s cluster %s" % cl[k])
PY
echo "== 3. traces at $SECONDS s"
for case in fp8:1:1088 bf16:1:1088; do
    for arm in head cl; do
        /tmp/t/trace_$arm 36 25 $case 2>/dev/null | grep '"trace": true' | sed "s#^{#{\"arm\": \"$arm\", #" >> "$OUT/attention_trace_s51_run2.jsonl"
    done
done
cut -c1-700 "$OUT/attention_trace_s51_run2.jsonl"
echo "== 4. engine test at $SECONDS s"
wait $ckpid; tail -n 1 /tmp/ck.log
PASSES=main RESET_GPU_TEST_QUICK=1 OUT=/tmp/engine timeout 120 tests/gpu/run_cuda_engine_on_device.sh > "$OUT/engine_s51_run2.txt" 2>&1
echo "engine rc $?: $(grep -a "checks" "$OUT/engine_s51_run2.txt" | tail -n 2)"
grep -a "FAIL" "$OUT/engine_s51_run2.txt" | head -5
echo "== 5. decode step at $SECONDS s"
OUT=/tmp/ab tests/bench/ab_env_decode_on_device.sh RESET_ATTENTION_CLUSTER "1 0" $ck 3 --weights auto \
    --prompt-tokens 1024 --sequences 1 --tokens 64 --repeat 2 >> "$OUT/cluster_ab_s51_run2.jsonl"
OUT=/tmp/ab tests/bench/ab_env_decode_on_device.sh RESET_ATTENTION_CLUSTER "1 0" $ck 2 --weights auto --kv-cache fp8 \
    --prompt-tokens 32768 --sequences 1 --tokens 64 --repeat 2 >> "$OUT/cluster_ab_s51_run2.jsonl"
python3 tests/bench/ab_summary.py "$OUT/cluster_ab_s51_run2.jsonl"
tail -n 3 /tmp/ab/ab_env_decode.log 2>/dev/null
echo "done at $SECONDS s"
