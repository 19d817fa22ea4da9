#!/usr/bin/env bash
# Session 48, run 6 (H200): attention's split as the grid's outermost index.  Run 5: at 1k batch 1,
# 16 forced splits ran 6.29 µs a layer against 7.27 at the automatic 49, of which 16 are live as
# well: the 33 empty splits of each KV head sat between the live ones in launch order, so live
# CTAs shared SMs.  With the split outermost the 128 live CTAs come first.
#  1. gpu_test_attention_decode quick set and its memcheck; the engine test's quick set.
#  2. attention_decode_bench, this tree against 73e44e1's kernel relinked: every default case,
#     and 1k batch 1 with 16 splits forced.
#  3. The decode step, this tree ("new") against 73e44e1's kernel ("old"): 1k batch 1 and 8
#     (3 rounds), 2k batch 1 and 32k FP8 batch 1 (2 rounds).
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset gpu_test_cuda_engine gpu_test_attention_decode
# attention_decode_bench"), .ab/head (build_gemv_variant_lib.sh head, KERNELS=attention_decode,
# PROGRAMS=attention_decode_bench, from 73e44e1), COMMIT.
source tests/bench/results/start_device_run.sh
ck=/tmp/ck/qwen3-8b-nvfp4
(python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 $ck > /tmp/ck.log 2>&1) &
writer=$!
mkdir -p /tmp/head && for f in .ab/head/*.xz; do xz -dc "$f" > /tmp/head/$(basename "$f" .xz); done
chmod +x /tmp/head/attention_decode_bench
echo "== 1. tests at $SECONDS s"
RESET_GPU_TEST_QUICK=1 timeout 100 build-bundle/bin/gpu_test_attention_decode > "$OUT/attention_test_s48_run6.txt" 2>&1
echo "attention (quick) rc $?: $(tail -n 1 "$OUT/attention_test_s48_run6.txt")"
grep -E "FAIL" "$OUT/attention_test_s48_run6.txt" | head -5
RESET_GPU_TEST_QUICK=1 timeout 100 compute-sanitizer --tool memcheck --error-exitcode 3 \
    build-bundle/bin/gpu_test_attention_decode > /tmp/memcheck.txt 2>&1
echo "memcheck rc $?: $(grep -E 'ERROR SUMMARY' /tmp/memcheck.txt)"
PASSES=main RESET_GPU_TEST_QUICK=1 OUT=/tmp/engine timeout 100 tests/gpu/run_cuda_engine_on_device.sh > /tmp/engine.txt 2>&1
echo "engine rc $? at $SECONDS s"
cp /tmp/engine/test_cuda_engine.log "$OUT/engine_s48_run6.txt"
grep -E "checks|FAIL" "$OUT/engine_s48_run6.txt" | head
echo "== 2. attention benchmark at $SECONDS s"
for side in new old; do
    bench=build-bundle/bin/attention_decode_bench
    [[ $side == old ]] && bench=/tmp/head/attention_decode_bench
    for round in 1 2; do
        { $bench 36 25; $bench 36 25 bf16:1:1024 16; $bench 36 25 fp8:1:1024 16; } | grep '^{' |
            sed "s/^{/{\"side\": \"$side\", \"round\": $round, /"
    done
done > "$OUT/attention_split_order_s48_run6.jsonl"
python3 - "$OUT/attention_split_order_s48_run6.jsonl" <<'PY'
import json, sys, statistics
from collections import defaultdict
cases = defaultdict(lambda: defaultdict(list))
for line in open(sys.argv[1]):
    r = json.loads(line)
    cases[(r['cache'], r['batch'], r['context'], r['splits'])][r['side']].append(r['us_per_layer'])
for (cache, batch, context, splits), sides in cases.items():
    new, old = statistics.median(sides['new']), statistics.median(sides['old'])
    print(f"{cache} batch {batch} context {context:6d} splits {splits:3d}: new {new:7.2f} old {old:7.2f} us/layer ({100 * (new / old - 1):+.1f}%)")
PY
wait $writer
echo "== 3. decode A/B at $SECONDS s"
OUT=/tmp/ab tests/bench/ab_decode_on_device.sh /tmp/head $ck 3 --weights auto \
    --prompt-tokens 1024 --sequences 1,8 --tokens 64 --repeat 2 > "$OUT/split_order_ab_s48_run6.jsonl"
OUT=/tmp/ab tests/bench/ab_decode_on_device.sh /tmp/head $ck 2 --weights auto \
    --prompt-tokens 2048 --sequences 1 --tokens 64 --repeat 2 >> "$OUT/split_order_ab_s48_run6.jsonl"
OUT=/tmp/ab tests/bench/ab_decode_on_device.sh /tmp/head $ck 2 --weights auto \
    --prompt-tokens 32000 --kv-cache fp8 --sequences 1 --tokens 32 --repeat 1 >> "$OUT/split_order_ab_s48_run6.jsonl"
python3 tests/bench/ab_summary.py "$OUT/split_order_ab_s48_run6.jsonl"
echo "done at $SECONDS s"
