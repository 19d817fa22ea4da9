#!/usr/bin/env bash
# Session 43, run 6 (H100): the weights' device buffers no longer zeroed before their upload
# overwrites them (DeviceBuffer::Overwritten in device_model.cpp's Uploader).
#  1. test_cuda_engine's test_model and test_file_access on the golden fixtures and the chat model
#     (CUDA against the CPU reference: any byte left unwritten would show).
#  2. A Qwen3-8B-shape ModelOpt NVFP4 checkpoint loaded from the page cache by
#     tests/bench/model_load_bench.py (3 loads after a warm-up, median, the same logits' SHA-256
#     required), the previous library (a: zeroed, 57f75bb) against this one (b), alternating over 3
#     rounds; one RESET_LOAD_TRACE load of each for the allocation's share.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="gpu_test_cuda_engine reset", plus 57f75bb's library as
# build-bundle/lib-a/libreset.so.0), COMMIT.
source tests/bench/results/start_device_run.sh
RESET_GPU_TEST_ONLY=test_model,test_file_access timeout 150 build-bundle/bin/gpu_test_cuda_engine \
    tests/fixtures/models/{llama3-scaled,qwen2-bias-sharded,modelopt-qwen3,ct-nvfp4-qwen3,ct-nvfp4a16-head-qwen3} \
    tests/fixtures/chat-model > "$OUT/h100_engine_uninitialized_s43_run6.txt" 2>&1
echo "engine rc $? at $SECONDS s: $(tail -1 "$OUT/h100_engine_uninitialized_s43_run6.txt")"
grep -E "FAIL" "$OUT/h100_engine_uninitialized_s43_run6.txt" | head -5
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/q8-nvfp4 > /tmp/checkpoint.log 2>&1
echo "checkpoint rc $? at $SECONDS s"
for round in 1 2 3; do
    for variant in a b; do
        lib=$PWD/build-bundle/lib/libreset.so.0
        [[ $variant == a ]] && lib=$PWD/build-bundle/lib-a/libreset.so.0
        PYTHONPATH=bindings/python:tests/bench RESET_LIBRARY=$lib timeout 100 \
            python3 tests/bench/model_load_bench.py /tmp/q8-nvfp4 --repeats 3 \
            --label "$variant round $round" --out "$OUT/h100_uninitialized_load_s43_run6.jsonl"
        echo "load $variant round $round rc $? at $SECONDS s"
    done
done
for variant in a b; do
    lib=$PWD/build-bundle/lib/libreset.so.0
    [[ $variant == a ]] && lib=$PWD/build-bundle/lib-a/libreset.so.0
    echo "== trace $variant"
    PYTHONPATH=bindings/python:tests/bench RESET_LIBRARY=$lib RESET_LOAD_TRACE=1 timeout 60 \
        python3 tests/bench/model_load_bench.py /tmp/q8-nvfp4 --repeats 1 --label "trace $variant" 2>&1 \
        | grep -E "allocation|on the device"
done
python3 - "$OUT" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(f"{sys.argv[1]}/h100_uninitialized_load_s43_run6.jsonl")]
for variant in ("a", "b"):
    picked = [r for r in rows if r["label"].startswith(variant + " ")]
    print(variant, "load medians", [r["load_median_s"] for r in picked],
          "device medians", [r["device_median_s"] for r in picked])
print("digests", sorted({r["logits_sha256"][:16] for r in rows}))
PY
echo "done at $SECONDS s"
