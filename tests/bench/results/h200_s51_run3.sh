#!/usr/bin/env bash
# Session 51, run 3 (H200): the cluster merge, measured.  Run 2: correct (quick test with its
# cluster cases, memcheck, racecheck, engine quick set) but never taken at the engine's batch-1
# shape: 24 clusters of 16 (48 splits x 8 KV heads) do not fit one wave of the H200, and the
# benchmark took only 1k, 8k and 32k (a 1k step's contexts are 1025-1088).  This tree adds
# RESET_ATTENTION_CLUSTER=8 (clusters of 8: 48 clusters at batch 1), up to three pieces a split on
# the first cluster, and any named context in attention_decode_bench.
# Prepare: cmake --build build-sm90; tests/bench/build_attention_trace.sh with and without TRACE
#   (.ab/trace51/{plain,trace}_cl; {plain,trace}_head from a04e399's kernel with this bench);
#   BUNDLE_PROGRAMS="reset gpu_test_attention_decode gpu_test_cuda_engine" scripts/make_device_bundle.sh
# Carry: build-bundle.tar.xz, .ab/trace51, COMMIT.
#  1. The quick attention test (cluster cases of 16 and 8).
#  2. attention_decode_bench at 1024, 1088 and 2048, batch 1, FP8 and BF16: head (49 splits);
#     forced 16 splits with the cluster merge (c16) and without (off16); clusters of 8 at the
#     automatic 48 splits (c8) and forced 8 splits without (off8: the same pieces a split as c8).
#     At 32k: head, c8, c16 (the automatic 48, not taken).  Alternated, 2 rounds.
#  3. Timelines at 1088: head, c16 (forced 16), c8.
#  4. The engine test's quick set with RESET_ATTENTION_CLUSTER=8.
#  5. The decode step, RESET_ATTENTION_CLUSTER 8 / 0: 1k batch 1, 3 rounds; 32k FP8 batch 1, 2 rounds.
source tests/bench/results/start_device_run.sh
ck=/tmp/checkpoints/qwen3-8b-nvfp4
(mkdir -p /tmp/checkpoints && python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 $ck > /tmp/ck.log 2>&1) &
ckpid=$!
mkdir -p /tmp/t && for f in .ab/trace51/*.xz; do xz -dc "$f" > /tmp/t/$(basename "$f" .xz); done; chmod +x /tmp/t/*
echo "== 1. test at $SECONDS s"
RESET_GPU_TEST_QUICK=1 timeout 150 build-bundle/bin/gpu_test_attention_decode > "$OUT/attention_test_s51_run3.txt" 2>&1
echo "test rc $?: $(tail -n 1 "$OUT/attention_test_s51_run3.txt")"
grep -a "cluster\|FAIL" "$OUT/attention_test_s51_run3.txt" | sort | uniq -c | head -20
echo "== 2. bench at $SECONDS s"
run() {  # arm, case
    local arm=$1 case=$2 bin=/tmp/t/plain_cl env=RESET_ATTENTION_CLUSTER=16 splits=
    case $arm in
    head) bin=/tmp/t/plain_head ;;
    c16) splits=16 ;;
    off16) env=RESET_ATTENTION_CLUSTER=0; splits=16 ;;
    c8) env=RESET_ATTENTION_CLUSTER=8 ;;
    off8) env=RESET_ATTENTION_CLUSTER=0; splits=8 ;;
    esac
    env $env $bin 36 25 $case $splits 2>/dev/null | sed "s#^{#{\"arm\": \"$arm\", \"round\": $round, #" >> "$OUT/attention_cluster_s51_run3.jsonl"
}
for round in 1 2; do
    for cache in fp8 bf16; do
        for ctx in 1024 1088 2048; do
            for arm in head c16 off16 c8 off8; do run $arm $cache:1:$ctx; done
        done
        for arm in head c8 c16; do run $arm $cache:1:32768; done
    done
done
python3 - "$OUT/attention_cluster_s51_run3.jsonl" <<'PY'
import json, sys, statistics, collections
d = collections.defaultdict(list); cl = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    k = (r["cache"], r["batch"], r["context"], r["arm"])
    d[k].append(r["us_per_layer"]); cl[k] = (r["splits"], r.get("cluster_merge"))
for k in sorted(d):
    print(*k, "%.2f us/layer" % statistics.median(d[k]), d[k], "splits %s cluster %s" % cl[k])
PY
echo "== 3. traces at $SECONDS s"
for cache in fp8 bf16; do
    /tmp/t/trace_head 36 25 $cache:1:1088 2>/dev/null | grep '"trace": true' | sed 's#^{#{"arm": "head", #' >> "$OUT/attention_trace_s51_run3.jsonl"
    /tmp/t/trace_cl 36 25 $cache:1:1088 16 2>/dev/null | grep '"trace": true' | sed 's#^{#{"arm": "c16", #' >> "$OUT/attention_trace_s51_run3.jsonl"
    RESET_ATTENTION_CLUSTER=8 /tmp/t/trace_cl 36 25 $cache:1:1088 2>/dev/null | grep '"trace": true' | sed 's#^{#{"arm": "c8", #' >> "$OUT/attention_trace_s51_run3.jsonl"
done
python3 - "$OUT/attention_trace_s51_run3.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    print(r["arm"], r["cache"], "replay", r["replay_us_per_layer"], "after_wait", r["after_wait_us"], "loop", r["loop_us"],
          "loop_end", r["loop_end_us"], "partials_end", r["partials_end_us"], "merge_end", r["merge_end_us"],
          "span_after_wait", r["span_after_wait_us"], "live", r["live_ctas"])
PY
echo "== 4. engine test at $SECONDS s"
wait $ckpid; tail -n 1 /tmp/ck.log
RESET_ATTENTION_CLUSTER=8 PASSES=main RESET_GPU_TEST_QUICK=1 OUT=/tmp/engine timeout 120 tests/gpu/run_cuda_engine_on_device.sh > "$OUT/engine_c8_s51_run3.txt" 2>&1
echo "engine rc $?: $(grep -a "checks" "$OUT/engine_c8_s51_run3.txt" | tail -n 1)"
grep -a "FAIL" "$OUT/engine_c8_s51_run3.txt" | head -5
echo "== 5. decode step at $SECONDS s"
OUT=/tmp/ab tests/bench/ab_env_decode_on_device.sh RESET_ATTENTION_CLUSTER "8 0" $ck 3 --weights auto \
    --prompt-tokens 1024 --sequences 1 --tokens 64 --repeat 2 >> "$OUT/cluster8_ab_s51_run3.jsonl"
OUT=/tmp/ab tests/bench/ab_env_decode_on_device.sh RESET_ATTENTION_CLUSTER "8 0" $ck 2 --weights auto --kv-cache fp8 \
    --prompt-tokens 32768 --sequences 1 --tokens 64 --repeat 2 >> "$OUT/cluster8_ab_s51_run3.jsonl"
python3 tests/bench/ab_summary.py "$OUT/cluster8_ab_s51_run3.jsonl"
echo "done at $SECONDS s"
