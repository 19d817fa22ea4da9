#!/usr/bin/env bash
# Session 27, run 3 (H100): the tree after the sentencepiece fixes and `reset generate
# --think-budget`: the CLI test on the CUDA backend (its new check: generate closes the
# reasoning where chat does), generate --think-budget CUDA against CPU on the embedded model,
# and the fixtures' sentencepiece tokenizers through a CUDA model (the engine test on the
# chat fixture and the embedded model, both sentencepiece).
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset gpu_test_cuda_engine"), COMMIT.
exec > >(tee "$OUT/run.log") 2>&1
set -u
SECONDS=0
echo "commit $(cat COMMIT)"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
R=build-bundle/bin/reset
echo "== 1. the CLI test on CUDA"
timeout 200 python3 tests/cli/test_commands.py "$PWD/$R" "$PWD" > "$OUT/cli_s27_run3.txt" 2>&1
echo "cli rc $? at $SECONDS s"; grep -v '^ok' "$OUT/cli_s27_run3.txt" | head -20; grep -c '^ok' "$OUT/cli_s27_run3.txt"
echo "== 2. generate --think-budget, CUDA against CPU"
q="Leo has 2609 apples. Then the number of apples Leo has becomes 2 times as large. A friend gives Leo 3928 apples. How many apples does Leo have now?"
for backend in cpu cuda; do
    $R generate models/default "$q" --backend $backend --policy greedy --think-budget 20 2>/dev/null > /tmp/gen_$backend.txt
    echo "-- $backend"; cat /tmp/gen_$backend.txt
done
cmp -s /tmp/gen_cpu.txt /tmp/gen_cuda.txt && echo "generate --think-budget: CUDA output == CPU output" || echo "generate --think-budget: outputs DIFFER"
echo "== 3. engine test on the sentencepiece models"
timeout 200 build-bundle/bin/gpu_test_cuda_engine tests/fixtures/chat-model models/reset-arith-4m > "$OUT/engine_s27_run3.txt" 2>&1
echo "engine rc $? at $SECONDS s"; tail -n 3 "$OUT/engine_s27_run3.txt"
