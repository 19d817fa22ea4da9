#!/usr/bin/env bash
# Session 23, run 3 (the bundle: COMMIT + the working tree): the lm_head in NVFP4 too (`--lm-head
# nvfp4`, quantize_lm_head, now also for a ModelOpt export's BF16 lm_head).  The CUDA engine against
# the CPU reference with the NVFP4 lm_head (test_cuda_engine's new check, every engine model, W4A16
# and W4A4; the quick set under memcheck runs it in W4A16), then the short decode grid with its new
# row: batch 1 at 1k with the NVFP4 lm_head, next to the default BF16 one and BF16 mode, same run.
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
echo "commit $(cat COMMIT)"
mkdir -p /tmp/checkpoints
(for fmt in nvfp4 bf16; do python3 tests/bench/make_random_checkpoint.py qwen3-8b $fmt /tmp/checkpoints/qwen3-8b-$fmt; done) > /tmp/checkpoints.log 2>&1 &
ck_job=$!
python3 tests/gpu/make_engine_models.py /tmp/engine-models > /tmp/make_engine_models.log 2>&1
echo "engine models at $SECONDS s"
ENGINE_MODELS=/tmp/engine-models OUT=/tmp/engine timeout 300 tests/gpu/run_cuda_engine_on_device.sh > /tmp/engine.txt 2>&1; echo "engine rc $? at $SECONDS s"
{ echo "== engine"; cat /tmp/engine/test_cuda_engine.log; echo "== memcheck (quick)"; tail -n 5 /tmp/engine/memcheck_cuda_engine.log; } > "$OUT/tests_s23_run3.txt"
grep -E "NVFP4 lm_head|checks|ERROR SUMMARY|FAIL" "$OUT/tests_s23_run3.txt" | head -40
wait $ck_job; echo "checkpoints at $SECONDS s"
OUT=/tmp/grid GRID=short CHECKPOINTS=/tmp/checkpoints timeout 240 tests/bench/run_decode_grid_on_device.sh > /tmp/grid.out 2>&1; echo "grid rc=$? at $SECONDS s"
cp /tmp/grid/decode_grid.jsonl "$OUT/decode_grid_s23_run3.jsonl"; cp /tmp/grid/decode_grid_env.json "$OUT/decode_grid_env_s23_run3.json"; cp /tmp/grid/decode_grid.log "$OUT/decode_grid_s23_run3.log"
python3 tests/bench/decode_grid_report.py "$OUT/decode_grid_s23_run3.jsonl" "$OUT/decode_grid_env_s23_run3.json" qwen3-8b > "$OUT/decode_grid_short_s23_run3.md"
tail -n 14 "$OUT/decode_grid_short_s23_run3.md"
echo "done at $SECONDS s"
