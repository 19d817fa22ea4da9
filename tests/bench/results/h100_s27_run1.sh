#!/usr/bin/env bash
# Session 27, run 1 (H100): this session's changes on the CUDA backend, and the headline
# figures re-measured on the current tree.
#  1. The engine test against the CPU reference (every engine model, the fixtures, the embedded
#     model), with its new check: a prefill appended to an unfinished generation (what
#     `reset chat --think-budget` does), then memcheck over the quick set.
#  2. The reset command on CUDA: the CLI test (tests/cli/test_commands.py, whose new checks cover
#     context fitting, --think-budget, /budget, presets and sampling options checked before
#     loading); chat --think-budget on the embedded model, CUDA against CPU, greedy.
#  3. The short decode grid (Qwen3-8B shape, batch 1 / 8 at 1k, BF16 mode, NVFP4 lm_head, 32k FP8,
#     ReSET), to check that sessions 24-27 (API and command changes only) moved no figure.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset gpu_test_cuda_engine"), COMMIT.
exec > >(tee "$OUT/run.log") 2>&1
set -u
SECONDS=0
echo "commit $(cat COMMIT)"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
R=build-bundle/bin/reset
mkdir -p /tmp/checkpoints
(for fmt in nvfp4 bf16; do python3 tests/bench/make_random_checkpoint.py qwen3-8b $fmt /tmp/checkpoints/qwen3-8b-$fmt; done) \
    > /tmp/checkpoints.log 2>&1 &
ck_job=$!
echo "== 1. engine test"
python3 tests/gpu/make_engine_models.py /tmp/engine-models > /tmp/make_engine_models.log 2>&1
ENGINE_MODELS=/tmp/engine-models OUT=/tmp/engine timeout 300 tests/gpu/run_cuda_engine_on_device.sh > /tmp/engine.txt 2>&1
echo "engine rc $? at $SECONDS s"
{ echo "== engine"; cat /tmp/engine/test_cuda_engine.log; echo "== memcheck (quick)"; tail -n 5 /tmp/engine/memcheck_cuda_engine.log; } \
    > "$OUT/tests_s27_run1.txt"
grep -E "mid-generation|checks|ERROR SUMMARY|FAIL" "$OUT/tests_s27_run1.txt" | head -60
echo "== 2. the reset command on CUDA"
timeout 240 python3 tests/cli/test_commands.py "$PWD/$R" "$PWD" > "$OUT/cli_s27_run1.txt" 2>&1
echo "cli rc $? at $SECONDS s"; grep -v '^ok' "$OUT/cli_s27_run1.txt" | head -20
q="Leo has 2609 apples. Then the number of apples Leo has becomes 2 times as large. A friend gives Leo 3928 apples. How many apples does Leo have now?"
for backend in cpu cuda; do
    echo "$q" | $R chat --backend $backend --policy greedy --think-budget 20 2>/dev/null > /tmp/budget_$backend.txt
    echo "-- $backend: $(wc -c < /tmp/budget_$backend.txt) bytes"; cat /tmp/budget_$backend.txt
done
cmp -s /tmp/budget_cpu.txt /tmp/budget_cuda.txt && echo "think budget: CUDA output == CPU output" || echo "think budget: outputs DIFFER"
printf 'What is 2+3?\nAnd 4+4?\nAnd 5+5?\nAnd 6+6?\n/context\n' | \
    $R chat tests/fixtures/chat-model --backend cuda --context 120 --max-tokens 20 2>/dev/null | grep -E '^\[|^context'
echo "== 3. short decode grid"
wait $ck_job; echo "checkpoints at $SECONDS s"
OUT=/tmp/grid GRID=short CHECKPOINTS=/tmp/checkpoints timeout 240 tests/bench/run_decode_grid_on_device.sh > /tmp/grid.out 2>&1
echo "grid rc=$? at $SECONDS s"
cp /tmp/grid/decode_grid.jsonl "$OUT/decode_grid_s27_run1.jsonl"; cp /tmp/grid/decode_grid_env.json "$OUT/decode_grid_env_s27_run1.json"
cp /tmp/grid/decode_grid.log "$OUT/decode_grid_s27_run1.log"
python3 tests/bench/decode_grid_report.py "$OUT/decode_grid_s27_run1.jsonl" "$OUT/decode_grid_env_s27_run1.json" qwen3-8b \
    > "$OUT/decode_grid_short_s27_run1.md"
tail -n 14 "$OUT/decode_grid_short_s27_run1.md"
echo "done at $SECONDS s"
