#!/usr/bin/env bash
# Session 28, run 1 (H100): reset_prefill_sequence and `reset eval --think-budget` on the CUDA
# backend.
#  1. (beside 2) The CLI test on CUDA (its new checks: eval --think-budget closes every greedy
#     sample's reasoning as generate does, and closing one sample leaves the others as they were),
#     and eval --think-budget on the embedded model, CUDA against CPU (greedy x3; T 3 x4).
#  2. The engine test against the CPU reference on every engine model, the fixtures and the
#     embedded model (its new case: 5 ids appended to sequence 1 of 3, the others' device logits
#     bit for bit unchanged), then compute-sanitizer memcheck over the quick set (which runs it too).
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset gpu_test_cuda_engine"), COMMIT.
source tests/bench/results/start_device_run.sh
R=build-bundle/bin/reset
(
    timeout 240 python3 tests/cli/test_commands.py "$PWD/$R" "$PWD" > "$OUT/cli_s28_run1.txt" 2>&1
    echo "cli rc $? at $SECONDS s" >> "$OUT/cli_s28_run1.txt"
    head -n 1 training/data/test.jsonl > /tmp/held.jsonl
    for backend in cpu cuda; do
        $R eval models/default /tmp/held.jsonl --backend $backend --policy greedy --samples 3 --think-budget 12 \
            --out /tmp/greedy_$backend.jsonl > /dev/null 2>&1
        $R eval models/default /tmp/held.jsonl --backend $backend --policy "fixed 3.0" --samples 4 --seed 3 \
            --max-tokens 60 --think-budget 12 --out /tmp/hot_$backend.jsonl > /dev/null 2>&1
    done
    python3 - > "$OUT/eval_budget_s28_run1.txt" 2>&1 <<'PY'
import json
for name in ("greedy", "hot"):
    rows = {b: [json.loads(l) for l in open(f"/tmp/{name}_{b}.jsonl")] for b in ("cpu", "cuda")}
    for k, (c, g) in enumerate(zip(rows["cpu"], rows["cuda"])):
        print(f"{name} sample {k}: closed cpu {c['reasoning_closed']} cuda {g['reasoning_closed']}, "
              f"text {'same' if c['text'] == g['text'] else 'DIFFERS'}")
        print("   cuda:", repr(g["text"][:140]))
PY
) &
side=$!
echo "== engine test"
python3 tests/gpu/make_engine_models.py /tmp/engine-models > /tmp/make_engine_models.log 2>&1
echo "models at $SECONDS s"
ENGINE_MODELS=/tmp/engine-models OUT=/tmp/engine SANITIZE=0 timeout 420 tests/gpu/run_cuda_engine_on_device.sh \
    > /tmp/engine.txt 2>&1
echo "engine rc $? at $SECONDS s"
cp /tmp/engine/test_cuda_engine.log "$OUT/engine_s28_run1.txt"
grep -E "sequence prefill|checks|FAIL" "$OUT/engine_s28_run1.txt" | head -40
wait $side
echo "== CLI test on CUDA"
tail -n 1 "$OUT/cli_s28_run1.txt"; grep -v '^ok' "$OUT/cli_s28_run1.txt" | head -20; grep -c '^ok' "$OUT/cli_s28_run1.txt"
echo "== eval --think-budget, CUDA against CPU"
cat "$OUT/eval_budget_s28_run1.txt"
echo "== memcheck (quick set)"
RESET_GPU_TEST_QUICK=1 timeout 120 compute-sanitizer --tool memcheck --error-exitcode 3 --leak-check no \
    build-bundle/bin/gpu_test_cuda_engine /tmp/engine-models/engine-qwen3 > "$OUT/memcheck_s28_run1.txt" 2>&1
echo "memcheck rc $? at $SECONDS s"
grep -E "sequence prefill|checks|ERROR SUMMARY" "$OUT/memcheck_s28_run1.txt"
echo "done at $SECONDS s"
