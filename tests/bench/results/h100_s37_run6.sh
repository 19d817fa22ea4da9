#!/usr/bin/env bash
# Session 37, run 6 (H100), after the review commit: the load trace counts the model's own bytes;
# the same A/B and trace as run 5 against run 5's library (lib-old/ is 167bcff).
#  1. A/B, alternating old, new, old, new: tests/bench/model_load_bench.py on the random
#     Qwen3-8B-shape NVFP4 checkpoint; the same logits' SHA-256.  lib-old/ is 167bcff (run 5's).
#  2. RESET_LOAD_TRACE=1 on the new library.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset", plus build-bundle/lib-old/libreset.so.0), COMMIT.
source tests/bench/results/start_device_run.sh
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/qwen3-8b-nvfp4 > /tmp/checkpoint.log 2>&1
echo "checkpoint rc $? at $SECONDS s"
for round in 1 2; do
    for variant in lib-old lib; do
        PYTHONPATH=bindings/python:tests/bench RESET_LIBRARY=$PWD/build-bundle/$variant/libreset.so.0 timeout 100 \
            python3 tests/bench/model_load_bench.py /tmp/qwen3-8b-nvfp4 --repeats 3 --label "$variant round $round" \
            --out "$OUT/h100_model_load_s37_run6.jsonl"
        echo "bench $variant round $round rc $? at $SECONDS s"
    done
done
cat "$OUT/h100_model_load_s37_run6.jsonl"
RESET_LOAD_TRACE=1 PYTHONPATH=bindings/python:tests/bench RESET_LIBRARY=$PWD/build-bundle/lib/libreset.so.0 \
    timeout 100 python3 tests/bench/model_load_bench.py /tmp/qwen3-8b-nvfp4 --repeats 2 --label "traced" \
    --out /dev/null 2> "$OUT/h100_load_trace_s37_run6.txt"
cat "$OUT/h100_load_trace_s37_run6.txt"
echo "done at $SECONDS s"
