#!/usr/bin/env bash
# Session 51, run 5 (H200): run 4's round of 24 only where it saves a round (17-24 live splits,
# a 1k step's 1025-1088 positions), rounds of 16 elsewhere (kWideMergeRound; the same bits: the
# same terms in the same order).  ptxas: FP8 156-164 registers, BF16 148-160, no spills.
# Prepare: cmake --build build-sm90; TRACE=0 tests/bench/build_attention_trace.sh .ab/trace51/plain_new
#   (plain_head from run 4), xz; .ab/head51 (run 4's);
#   BUNDLE_PROGRAMS="reset gpu_test_attention_decode gpu_test_cuda_engine" scripts/make_device_bundle.sh
# Carry: build-bundle.tar.xz, .ab/trace51, .ab/head51, COMMIT.  (~4 minutes of device time were left.)
#  1. The quick attention test.
#  2. attention_decode_bench head / new, batch 1 at 1024, 1088, 2048 and 32768, FP8 and BF16, 1 round.
#  3. The engine test's quick set.
#  4. The 1k batch-1 decode step against a04e399's attention, 2 rounds.
source tests/bench/results/start_device_run.sh
ck=/tmp/checkpoints/qwen3-8b-nvfp4
(mkdir -p /tmp/checkpoints && python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 $ck > /tmp/ck.log 2>&1) &
ckpid=$!
mkdir -p /tmp/t /tmp/head51 && for f in .ab/trace51/*.xz; do xz -dc "$f" > /tmp/t/$(basename "$f" .xz); done; chmod +x /tmp/t/*
xz -dc .ab/head51/libreset.so.0.xz > /tmp/head51/libreset.so.0
echo "== 1. test at $SECONDS s"
RESET_GPU_TEST_QUICK=1 timeout 100 build-bundle/bin/gpu_test_attention_decode > "$OUT/attention_test_s51_run5.txt" 2>&1
echo "test rc $?: $(tail -n 1 "$OUT/attention_test_s51_run5.txt")"
grep -a "FAIL" "$OUT/attention_test_s51_run5.txt" | head -5
echo "== 2. bench at $SECONDS s"
for case in fp8:1:1024 fp8:1:1088 fp8:1:2048 fp8:1:32768 bf16:1:1024 bf16:1:1088 bf16:1:2048 bf16:1:32768; do
    for arm in head new; do
        /tmp/t/plain_$arm 36 25 $case 2>/dev/null | sed "s#^{#{\"arm\": \"$arm\", \"round\": 1, #" >> "$OUT/attention_merge_wide_s51_run5.jsonl"
    done
done
python3 - "$OUT/attention_merge_wide_s51_run5.jsonl" <<'PY'
import json, sys, collections
d = {}
for line in open(sys.argv[1]):
    r = json.loads(line); d[(r["cache"], r["batch"], r["context"], r["arm"])] = r["us_per_layer"]
for k in sorted(d):
    if k[3] == "new":
        h = d[k[:3] + ("head",)]; print(*k[:3], "head %.2f new %.2f us/layer (%+.1f%%)" % (h, d[k], 100 * (d[k] / h - 1)))
PY
echo "== 3. engine test at $SECONDS s"
wait $ckpid; tail -n 1 /tmp/ck.log
PASSES=main RESET_GPU_TEST_QUICK=1 OUT=/tmp/engine timeout 100 tests/gpu/run_cuda_engine_on_device.sh > "$OUT/engine_s51_run5.txt" 2>&1
echo "engine rc $?: $(grep -a "checks" "$OUT/engine_s51_run5.txt" | tail -n 1)"
grep -a "FAIL" "$OUT/engine_s51_run5.txt" | head -5
echo "== 4. decode step at $SECONDS s"
OUT=/tmp/ab tests/bench/ab_decode_on_device.sh /tmp/head51 $ck 2 --weights auto \
    --prompt-tokens 1024 --sequences 1 --tokens 64 --repeat 2 >> "$OUT/merge_wide_ab_s51_run5.jsonl"
python3 tests/bench/ab_summary.py "$OUT/merge_wide_ab_s51_run5.jsonl"
echo "done at $SECONDS s"
