#!/usr/bin/env bash
# Session 47, run 6 (H200): the activation preparations before the o and down GEMVs (every row
# count since run 4) placing their GEMV early (Nvfp4PrepareArgs::place_next_early), so that its
# CTAs load their first weights while the preparation runs: RESET_PREPARE_PLACES_GEMV 0 (neither,
# the default), 1 (o), 2 (down), 3 (both).
#  1. The engine test's quick set with 3 (every GEMV-path forward, prefill chunks included).
#  2. The four alternated: 1k batch 1 and 8 (3 rounds), 32k FP8 batch 1 (2 rounds).
#  3. The step timeline at 1k batch 1 with 0 and 3 (the preparation now records itself).
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset gpu_test_cuda_engine"), .ab/trace, COMMIT.
source tests/bench/results/start_device_run.sh
ck=/tmp/ck/qwen3-8b-nvfp4
(python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 $ck > /tmp/ck.log 2>&1) &
writer=$!
echo "== 1. engine test (quick set), RESET_PREPARE_PLACES_GEMV=3, at $SECONDS s"
RESET_PREPARE_PLACES_GEMV=3 PASSES=main RESET_GPU_TEST_QUICK=1 OUT=/tmp/engine timeout 150 \
    tests/gpu/run_cuda_engine_on_device.sh > /tmp/engine.txt 2>&1
echo "engine rc $? at $SECONDS s"
cp /tmp/engine/test_cuda_engine.log "$OUT/engine_s47_run6.txt"
grep -E "checks|FAIL" "$OUT/engine_s47_run6.txt" | head
wait $writer
echo "== 2. A/B at $SECONDS s"
OUT=/tmp/ab tests/bench/ab_env_decode_on_device.sh RESET_PREPARE_PLACES_GEMV "0 1 2 3" $ck 3 --weights auto \
    --prompt-tokens 1024 --sequences 1,8 --tokens 64 --repeat 2 > "$OUT/prepare_places_ab_s47_run6.jsonl"
OUT=/tmp/ab tests/bench/ab_env_decode_on_device.sh RESET_PREPARE_PLACES_GEMV "0 1 2 3" $ck 2 --weights auto \
    --prompt-tokens 32000 --kv-cache fp8 --sequences 1 --tokens 32 --repeat 1 >> "$OUT/prepare_places_ab_s47_run6.jsonl"
python3 tests/bench/ab_summary.py "$OUT/prepare_places_ab_s47_run6.jsonl"
echo "== 3. step timeline at $SECONDS s"
for v in 0 3; do
    tests/bench/step_trace_on_device.sh $ck "b1_1k RESET_PREPARE_PLACES_GEMV=$v" "$OUT/step_trace_s47_run6.txt" \
        RESET_PREPARE_PLACES_GEMV=$v -- --tokens 64 --repeat 1 --prompt-tokens 1024 --sequences 1
done
cat "$OUT/step_trace_s47_run6.txt"
echo "done at $SECONDS s"
