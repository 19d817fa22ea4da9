#!/usr/bin/env bash
# Not run (session 48 had no device time left): the next measurement for attention at short
# contexts.  Alone, 16 forced splits at 1k batch 1 ran 6.29 µs a layer against 7.27 at the wave's
# 49 (16 live either way, session 48 run 5); in the step, 16 splits gained 1.9% on one machine
# (run 7) and nothing on another (runs 9-10).  The step's own timeline with both counts says where
# attention's time goes there (placed, release, run, tail), alternated, two rounds each.
# Prepare (from the repository root):
#   git apply tests/bench/results/attention_splits_knob_s48.patch   # RESET_ATTENTION_SPLITS
#   tests/bench/build_step_trace.sh && git checkout lib/cuda/device_session.cpp
#   git rev-parse --short HEAD > COMMIT; BUNDLE_PROGRAMS="reset" scripts/make_device_bundle.sh
# Carry: build-bundle.tar.xz, .ab/trace, COMMIT.
source tests/bench/results/start_device_run.sh
ck=/tmp/ck/qwen3-8b-nvfp4
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 $ck > /tmp/ck.log 2>&1
for round in 1 2; do
    for s in 49 16; do
        tests/bench/step_trace_on_device.sh $ck "b1_1k splits=$s round $round" "$OUT/step_trace_attention_splits.txt" \
            RESET_ATTENTION_SPLITS=$s -- --tokens 64 --repeat 1 --prompt-tokens 1024 --sequences 1
    done
done
grep -E "^==|^step|attention|gemv 4096x4096" "$OUT/step_trace_attention_splits.txt"
echo "done at $SECONDS s"
