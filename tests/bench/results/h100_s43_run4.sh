#!/usr/bin/env bash
# Session 43, run 4 (H100): a mapped CUDA load asking the kernel for the whole files at once
# (madvise MADV_WILLNEED on each mapping, `read_soon`) against the library of c351589 (pages read
# as the repack and the upload fault them in), on run 3's Qwen3-8B-shape ModelOpt NVFP4 checkpoint
# (tests/bench/make_random_checkpoint.py), mapped, cold (the files evicted from the page cache
# before each load, posix_fadvise DONTNEED) and warm, 3 loads after a warm-up per variant and
# round, alternating over 3 rounds (tests/bench/model_load_bench.py; the same logits' SHA-256
# required of both).
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="gpu_test_cuda_engine reset", plus c351589's library as
# build-bundle/lib-a/libreset.so.0), COMMIT.
source tests/bench/results/start_device_run.sh
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/q8-nvfp4 > /tmp/checkpoint.log 2>&1
echo "checkpoint rc $? at $SECONDS s"; tail -1 /tmp/checkpoint.log
for round in 1 2 3; do
    for cold in "--cold" ""; do
        for variant in a b; do
            lib=$PWD/build-bundle/lib/libreset.so.0
            [[ $variant == a ]] && lib=$PWD/build-bundle/lib-a/libreset.so.0
            PYTHONPATH=bindings/python:tests/bench RESET_LIBRARY=$lib timeout 150 \
                python3 tests/bench/model_load_bench.py /tmp/q8-nvfp4 --repeats 3 --file-access map $cold \
                --label "$variant ${cold:-warm} round $round" --out "$OUT/h100_willneed_load_s43_run4.jsonl"
            echo "load $variant ${cold:-warm} round $round rc $? at $SECONDS s"
        done
    done
done
python3 - "$OUT" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(f"{sys.argv[1]}/h100_willneed_load_s43_run4.jsonl")]
for temp in (True, False):
    for variant in ("a", "b"):
        picked = [r for r in rows if r["label"].startswith(variant + " ") and r["cold"] == temp]
        print("cold" if temp else "warm", variant, "load medians", [r["load_median_s"] for r in picked],
              "read medians", [r["read_median_s"] for r in picked])
print("digests", sorted({r["logits_sha256"][:16] for r in rows}))
PY
echo "done at $SECONDS s"
