#!/usr/bin/env bash
# Session 48, run 2 (H200): where the copies' check costs (run 1: the late comparison gained only
# 0.6% at batch 1).  HEAD ("new") against three relinked libraries ("old"), 1k batch 1 and 8,
# alternated, 3 rounds each:
#   few     — the producers (gate_up's y_amax, attention's out_amax) raise a row maximum only where
#             a warp's max exceeds 32768, the only maxima the row scale depends on (no atomics on
#             the target models' rows);
#   nocheck — DIAGNOSTIC, not exact past 32768: the consumers skip the check (producers unchanged);
#   none    — DIAGNOSTIC: both (session 47 run 8's experiment).
# Then few at 32k FP8 batch 1 (2 rounds).
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset"), .ab/{few,nocheck,none}
# (tests/bench/build_gemv_variant_lib.sh with KERNELS="nvfp4_gemv attention_decode" / nvfp4_gemv), COMMIT.
source tests/bench/results/start_device_run.sh
ck=/tmp/ck/qwen3-8b-nvfp4
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 $ck > /tmp/ck.log 2>&1
for v in few nocheck none; do mkdir -p /tmp/$v && xz -dc .ab/$v/libreset.so.0.xz > /tmp/$v/libreset.so.0; done
for v in few nocheck none; do
    echo "== HEAD against $v at $SECONDS s"
    OUT=/tmp/ab tests/bench/ab_decode_on_device.sh /tmp/$v $ck 3 --weights auto \
        --prompt-tokens 1024 --sequences 1,8 --tokens 64 --repeat 2 > "$OUT/${v}_ab_s48_run2.jsonl"
    python3 tests/bench/ab_summary.py "$OUT/${v}_ab_s48_run2.jsonl"
done
echo "== HEAD against few, 32k FP8, at $SECONDS s"
OUT=/tmp/ab tests/bench/ab_decode_on_device.sh /tmp/few $ck 2 --weights auto \
    --prompt-tokens 32000 --kv-cache fp8 --sequences 1 --tokens 32 --repeat 1 >> "$OUT/few_ab_s48_run2.jsonl"
python3 tests/bench/ab_summary.py "$OUT/few_ab_s48_run2.jsonl"
echo "done at $SECONDS s"
