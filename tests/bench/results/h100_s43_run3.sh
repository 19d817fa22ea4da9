#!/usr/bin/env bash
# Session 43, run 3 (H100): what reset_file_access costs a CUDA load of a Qwen3-8B-shape model.
# One random ModelOpt NVFP4 checkpoint (tests/bench/make_random_checkpoint.py, 6.4 GB of weights,
# 8.2 GB of files with the BF16 embeddings and lm_head) loaded by tests/bench/model_load_bench.py
# (3 loads after a warm-up, median; the same logits' SHA-256 required of every variant), mapped
# against read, with the files in the page cache (warm) and evicted before each load (cold,
# posix_fadvise DONTNEED), alternating over 2 rounds.  rss_loaded_mib: the process's resident
# memory with the model loaded (no mapping or copy of the files left on the CUDA backend).
# As run 2, with the read done by up to 8 threads in 32 MiB pieces into huge pages (run 2: one
# thread, 3.8-4.0 s to read the 8.2 GB from the page cache).  First, test_file_access on the fixtures.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="gpu_test_cuda_engine reset"), COMMIT.
source tests/bench/results/start_device_run.sh
echo "transparent huge pages: $(cat /sys/kernel/mm/transparent_hugepage/enabled), $(nproc) CPUs"
RESET_GPU_TEST_ONLY=test_file_access timeout 100 build-bundle/bin/gpu_test_cuda_engine \
    tests/fixtures/models/{llama3-scaled,qwen2-bias-sharded,modelopt-qwen3,ct-nvfp4-qwen3} tests/fixtures/chat-model \
    > "$OUT/h100_engine_file_access_s43_run3.txt" 2>&1
echo "test_file_access rc $? at $SECONDS s: $(tail -1 "$OUT/h100_engine_file_access_s43_run3.txt")"
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/q8-nvfp4 > /tmp/checkpoint.log 2>&1
echo "checkpoint rc $? at $SECONDS s"; tail -2 /tmp/checkpoint.log; du -sh /tmp/q8-nvfp4; df -h /tmp | tail -1
for round in 1 2; do
    for cold in "" "--cold"; do
        for access in map read; do
            PYTHONPATH=bindings/python:tests/bench RESET_LIBRARY=$PWD/build-bundle/lib/libreset.so.0 timeout 150 \
                python3 tests/bench/model_load_bench.py /tmp/q8-nvfp4 --repeats 3 --file-access $access $cold \
                --label "$access ${cold:-warm} round $round" --out "$OUT/h100_file_access_load_s43_run3.jsonl"
            echo "load $access ${cold:-warm} round $round rc $? at $SECONDS s"
        done
    done
done
python3 - "$OUT" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(f"{sys.argv[1]}/h100_file_access_load_s43_run3.jsonl")]
for temp in (False, True):
    for access in ("map", "read"):
        picked = [r for r in rows if r["file_access"] == access and r["cold"] == temp]
        print("cold" if temp else "warm", access, "load medians", [r["load_median_s"] for r in picked],
              "read medians", [r["read_median_s"] for r in picked], "peak RSS MiB", [r["max_rss_mib"] for r in picked],
              "RSS loaded MiB", [r["rss_loaded_mib"] for r in picked])
print("digests", sorted({r["logits_sha256"][:16] for r in rows}))
PY
echo "done at $SECONDS s"
