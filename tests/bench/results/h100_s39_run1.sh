#!/usr/bin/env bash
# Session 39, run 1 (H100): compressed-tensors NVFP4 checkpoints (llm-compressor's
# "nvfp4-pack-quantized") on the CUDA backend.
#  1. The engine test's test_model on every engine model, the new fixture
#     tests/fixtures/models/ct-nvfp4-qwen3 among them (CUDA logits and greedy tokens against the
#     CPU reference, W4A16 and W4A4 with the calibrated input_global_scale).
#  2. One random Qwen3-8B-shape model written twice by tests/bench/make_random_checkpoint.py, as a
#     ModelOpt export (nvfp4) and as compressed-tensors (ct-nvfp4: the same codes and scales, the
#     global scales' reciprocals equal to ModelOpt's scales to the bit).  Both must give the same
#     logits (model_load_bench.py's SHA-256 after a 64-token prefill) and the same speed: loading
#     (3 loads each) and the decode step (1k context, batch 1, 64 tokens, greedy), alternating
#     formats over 3 rounds.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="gpu_test_cuda_engine reset"), COMMIT.
source tests/bench/results/start_device_run.sh
echo "== 1. engine test_model on every engine model"
python3 tests/gpu/make_engine_models.py /tmp/engine-models > /tmp/make_engine_models.log 2>&1
echo "models at $SECONDS s"
RESET_GPU_TEST_ONLY=test_model ENGINE_MODELS=/tmp/engine-models OUT=/tmp/engine SANITIZE=0 timeout 300 \
    tests/gpu/run_cuda_engine_on_device.sh > /tmp/engine.txt 2>&1
echo "engine rc $? at $SECONDS s"
cp /tmp/engine/test_cuda_engine.log "$OUT/h100_engine_s39_run1.txt"
grep -E "ct-nvfp4|checks|FAIL|failed" "$OUT/h100_engine_s39_run1.txt" | head -30
echo "== 2. Qwen3-8B shape: ModelOpt and compressed-tensors, one model"
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/q8-nvfp4 > /tmp/checkpoint.log 2>&1
python3 tests/bench/make_random_checkpoint.py qwen3-8b ct-nvfp4 /tmp/q8-ct-nvfp4 >> /tmp/checkpoint.log 2>&1
echo "checkpoints rc $? at $SECONDS s"; cat /tmp/checkpoint.log
for round in 1 2 3; do
    for format in nvfp4 ct-nvfp4; do
        PYTHONPATH=bindings/python:tests/bench RESET_LIBRARY=$PWD/build-bundle/lib/libreset.so.0 timeout 120 \
            python3 tests/bench/model_load_bench.py /tmp/q8-$format --repeats 3 --label "$format round $round" \
            --out "$OUT/h100_ct_load_s39_run1.jsonl"
        echo "load $format round $round rc $? at $SECONDS s"
        timeout 120 build-bundle/bin/reset bench decode /tmp/q8-$format --backend cuda --weights auto \
            --prompt-tokens 1024 --sequences 1 --tokens 64 --repeat 2 --json 2>/dev/null \
            | sed "s/^{/{\"format\": \"$format\", \"round\": $round, /" >> "$OUT/h100_ct_decode_s39_run1.jsonl"
        echo "decode $format round $round rc $? at $SECONDS s"
    done
done
python3 - "$OUT" <<'PY'
import json, statistics, sys
out = sys.argv[1]
loads = [json.loads(l) for l in open(f"{out}/h100_ct_load_s39_run1.jsonl")]
for fmt in ("nvfp4", "ct-nvfp4"):
    rows = [r for r in loads if r["label"].startswith(fmt + " ")]
    print(fmt, "load median of medians", statistics.median(r["load_median_s"] for r in rows),
          "digests", sorted({r["logits_sha256"][:16] for r in rows}))
for line in open(f"{out}/h100_ct_decode_s39_run1.jsonl"):
    r = json.loads(line)
    print({k: r[k] for k in r if k in ("format", "round", "ms_per_step", "tokens_per_s", "median_ms_per_step",
                                       "weights", "checkpoint")} or line[:300])
PY
echo "done at $SECONDS s"
