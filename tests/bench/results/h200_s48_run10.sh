#!/usr/bin/env bash
# Session 48, run 10 (H200, the machine of run 9 still held): run 9's 1k batch-1 case again, 4 rounds
# (short_attention_graph_s48.patch, "new", against 73e44e1, "old").  Run as one command line through
# the device tool with run 9's carry (build-bundle.tar.xz, .ab/head, COMMIT).
source tests/bench/results/start_device_run.sh >/dev/null 2>&1
ck=/tmp/ck/qwen3-8b-nvfp4
ls $ck >/dev/null 2>&1 || python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 $ck > /tmp/ck.log 2>&1
mkdir -p /tmp/head && xz -dc .ab/head/libreset.so.0.xz > /tmp/head/libreset.so.0
OUT=/tmp/ab tests/bench/ab_decode_on_device.sh /tmp/head $ck 4 --weights auto --prompt-tokens 1024 --sequences 1 \
    --tokens 64 --repeat 2 > $OUT/short_attention_ab_s48_run10.jsonl
python3 tests/bench/ab_summary.py $OUT/short_attention_ab_s48_run10.jsonl
echo "done at $SECONDS s"
