#!/usr/bin/env bash
# Session 48, run 5 (H200): attention at short contexts, batch 1, by split count.  At 1k the
# automatic count (one wave: 49) leaves 16 live splits per KV head (whole 64-position pieces), and
# the merge of their partials is a ~3 µs tail (run 4's timeline); session 46 only tried counts of
# 24-132 (all 16 live at 1k).  attention_decode_bench forcing 1-16 splits, 36 layers of cold
# caches in one graph, median of 25 replays; BF16 and FP8 caches at 1k, BF16 at 2k and 4k.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="attention_decode_bench"), COMMIT.
source tests/bench/results/start_device_run.sh
for c in bf16:1:1024 fp8:1:1024 bf16:1:2048 bf16:1:4096 fp8:1:4096; do
    for s in 0 2 4 6 8 12 16; do
        build-bundle/bin/attention_decode_bench 36 25 $c $s | grep '^{' | sed "s/^{/{\"forced\": $s, /"
    done
done > "$OUT/attention_splits_s48_run5.jsonl"
python3 - "$OUT/attention_splits_s48_run5.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    print(f"{r['cache']} batch {r['batch']} context {r['context']:6d} splits {r['splits']:3d} (forced {r['forced']:2d}): "
          f"{r['us_per_layer']:6.2f} us/layer  [{r['us_min']:.2f} {r['us_max']:.2f}]")
PY
echo "done at $SECONDS s"
