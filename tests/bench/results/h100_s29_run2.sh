#!/usr/bin/env bash
# Session 29, run 2 (H100): penalties in the decode engine.
#  1. The sampler test again: run 1's cost of penalties at batch 8 (+15-22 us) came from the
#     entropy pass re-reading the raw row from global memory in each thread's own range (a cache
#     line per lane); it now reads it strided over the threads.
#  2. The engine test against the CPU reference on every engine model, the fixtures and the
#     embedded model; its new case (test_penalties): a CUDA session of 3 sequences with presence
#     1.5 and frequency 0.5 against standalone policies fed the session's own logits, through a
#     cancelled step, reset_state, penalties off and on, a sequence prefill and a session reset.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset gpu_test_sampling gpu_test_cuda_engine"), COMMIT.
source tests/bench/results/start_device_run.sh
echo "== 1. sampler test"
timeout 200 build-bundle/bin/gpu_test_sampling 20261130 > "$OUT/sampling_s29_run2.txt" 2>&1
echo "sampling rc $? at $SECONDS s"
grep -E "penalt|FAIL|test_sampling:|timing: (greedy|ReSET \+ top-p 0.95)" "$OUT/sampling_s29_run2.txt" | head -60
echo "== 2. engine test"
python3 tests/gpu/make_engine_models.py /tmp/engine-models > /tmp/make_engine_models.log 2>&1
echo "models at $SECONDS s"
ENGINE_MODELS=/tmp/engine-models OUT=/tmp/engine SANITIZE=0 timeout 330 tests/gpu/run_cuda_engine_on_device.sh \
    > /tmp/engine.txt 2>&1
echo "engine rc $? at $SECONDS s"
cp /tmp/engine/test_cuda_engine.log "$OUT/engine_s29_run2.txt"
grep -E "penalties|checks|FAIL" "$OUT/engine_s29_run2.txt" | head -40
echo "done at $SECONDS s"
