#!/usr/bin/env bash
# Session 26, run 2 (H100): this session's library changes on the CUDA backend.
#  1. `reset info` (the sampling a session starts with, read through
#     reset_session_get_policy on a one-position session) and `reset chat` /
#     `reset generate` with --top-p / --top-k / --seed over the model's own sampling.
#  2. The committed and grown model-loading fuzz corpora with RESET_FUZZ_BACKEND=cuda
#     (tests/fuzz/replay_on_device.sh): fuzz_model_load now also reads each session's
#     policy back and sets it again; then memcheck over the committed corpus.
#  3. The engine test against the CPU reference on the fixtures and the embedded model.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset fuzz_replay_model_load gpu_test_cuda_engine"), COMMIT.
exec > >(tee "$OUT/run.log") 2>&1
set -u
echo "commit $(cat COMMIT)"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
R=build-bundle/bin/reset
echo "== 1. the reset command on CUDA"
for m in models/default tests/fixtures/models/qwen3-tied; do
    $R info "$m" --backend cuda 2>&1 | grep -E "backend|sampling"
done
printf '/policy\n' | $R chat --backend cuda --top-p 0.5 --seed 3 2>&1 | grep '^policy'
q="Leo has 2609 apples. Then the number of apples Leo has becomes 2 times as large. How many apples does Leo have now?"
a=$($R generate models/default --backend cuda --max-tokens 60 --top-k 1 --seed 9 "$q" 2>/dev/null)
b=$($R generate models/default --backend cuda --max-tokens 60 --policy greedy "$q" 2>/dev/null)
[[ -n $a && $a == "$b" ]] && echo "generate --top-k 1 over the model's sampling == greedy: yes" || echo "DIFFERENT: $a // $b"
$R chat --backend cuda --top-p 2 < /dev/null 2>&1 | tail -n 1
echo "== 2. fuzz corpora on CUDA"
mkdir -p /tmp/grown && tar xJf tests/fuzz/grown/model_load.tar.xz -C /tmp/grown
start=$(date +%s)
OUT=$OUT timeout 300 tests/fuzz/replay_on_device.sh tests/fuzz/corpus/model_load /tmp/grown/model_load
echo "replay status $? in $(( $(date +%s) - start )) s"
echo "== 3. engine test (fixtures, embedded model)"
start=$(date +%s)
timeout 200 build-bundle/bin/gpu_test_cuda_engine tests/fixtures/models/llama3-scaled \
    tests/fixtures/models/qwen2-bias-sharded tests/fixtures/models/modelopt-qwen3 tests/fixtures/chat-model \
    models/reset-arith-4m > "$OUT/test_cuda_engine.log" 2>&1
echo "engine test status $? in $(( $(date +%s) - start )) s"
tail -n 5 "$OUT/test_cuda_engine.log"
