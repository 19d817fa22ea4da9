#!/usr/bin/env bash
# Session 48, run 7 (H200): fewer attention splits in the decode step at short contexts.  Run 5:
# alone, 16 forced splits at 1k batch 1 ran 6.29 µs a layer against 7.27 at the automatic 49
# (16 live either way); run 6: putting the live CTAs first in launch order gained 6% alone and
# nothing in the step.  Here the step itself with RESET_ATTENTION_SPLITS (an experiment's knob,
# tests/bench/build_gemv_variant_lib.sh splits with SOURCES=lib/cuda/device_session.cpp, copied over
# the bundle's library): 49 (the default), 16 and 8, alternated; 1k batch 1 (3 rounds), 2k (2).
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset"), .ab/splits, COMMIT.
source tests/bench/results/start_device_run.sh
ck=/tmp/ck/qwen3-8b-nvfp4
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 $ck > /tmp/ck.log 2>&1
xz -dc .ab/splits/libreset.so.0.xz > build-bundle/lib/libreset.so.0
echo "== A/B at $SECONDS s"
OUT=/tmp/ab tests/bench/ab_env_decode_on_device.sh RESET_ATTENTION_SPLITS "49 16 8" $ck 3 --weights auto \
    --prompt-tokens 1024 --sequences 1 --tokens 64 --repeat 2 > "$OUT/attention_splits_ab_s48_run7.jsonl"
OUT=/tmp/ab tests/bench/ab_env_decode_on_device.sh RESET_ATTENTION_SPLITS "49 16 8" $ck 2 --weights auto \
    --prompt-tokens 2048 --sequences 1 --tokens 64 --repeat 2 >> "$OUT/attention_splits_ab_s48_run7.jsonl"
python3 tests/bench/ab_summary.py "$OUT/attention_splits_ab_s48_run7.jsonl"
echo "done at $SECONDS s"
