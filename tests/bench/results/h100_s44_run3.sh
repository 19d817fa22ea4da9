#!/usr/bin/env bash
# Session 44, run 3 (H100): the fused new token with its norm weights and cosines formed after the
# wait, in registers, while the heads load (runs 1-2 formed them before the wait, into shared memory
# behind a barrier: 2.6-2.9% slower at 1k, batch 1; the QKV GEMV placing attention only at its end
# was slower still, 3.05%, so it is not here).
#  1. The new-token cases of gpu_test_qk_norm_rope_kv_append (fused against the pair, bit for bit).
#  2. Decode step, arms alternating old (ba7a11f relinked), new (fused), off
#     (RESET_NEW_TOKEN_IN_ATTENTION=0), 3 rounds: Qwen3-8B-shape NVFP4 random checkpoint, 1k prompt
#     batch 1 and 8, 32k prompt FP8 cache batch 1; greedy, 64 tokens x 2.
#  3. test_cuda_engine's test_model (against the CPU reference) on four fixtures: YaRN, ModelOpt,
#     the chat model and the embedded model.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset gpu_test_qk_norm_rope_kv_append gpu_test_cuda_engine",
# plus build-bundle/lib-old/libreset.so.0 from ba7a11f), COMMIT.
source tests/bench/results/start_device_run.sh
M=/tmp/ckpt/qwen3-8b-nvfp4
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 $M > /tmp/ckpt.log 2>&1 &
ck=$!
echo "== 1. qk test, new-token cases"
RESET_GPU_TEST_ONLY=new_token timeout 100 build-bundle/bin/gpu_test_qk_norm_rope_kv_append > "$OUT/qk_new_token_s44_run3.txt" 2>&1
echo "rc $? at $SECONDS s: $(tail -1 "$OUT/qk_new_token_s44_run3.txt")"
grep FAIL "$OUT/qk_new_token_s44_run3.txt" | head -5
wait $ck; echo "checkpoint at $SECONDS s"
echo "== 2. decode step old/new/off"
step() {  # arm, then bench arguments
    local arm=$1; shift
    local path=$LD_LIBRARY_PATH fuse=1
    [[ $arm == old ]] && path=$PWD/build-bundle/lib-old:$LD_LIBRARY_PATH
    [[ $arm == off ]] && fuse=0
    LD_LIBRARY_PATH=$path RESET_NEW_TOKEN_IN_ATTENTION=$fuse timeout 120 build-bundle/bin/reset bench decode $M \
        --backend cuda --json --tokens 64 --repeat 2 "$@" 2>>"$OUT/bench_errors.log" | sed "s/^{/{\"arm\": \"$arm\", /"
}
for round in 1 2 3; do
    for arm in old new off; do
        step $arm --prompt-tokens 1024 --sequences 1,8
        step $arm --prompt-tokens 32768 --sequences 1 --kv-cache fp8
    done
    echo "round $round at $SECONDS s" >&2
done > "$OUT/h100_new_token_ab_s44_run3.jsonl"
python3 - "$OUT/h100_new_token_ab_s44_run3.jsonl" <<'PY'
import json, sys, statistics
by = {}
for l in open(sys.argv[1]):
    d = json.loads(l)
    key = (d.get("prompt_tokens"), d.get("sequences"), d.get("kv_cache"))
    by.setdefault(key, {}).setdefault(d["arm"], []).append(d["ms_per_step"])
for key, arms in sorted(by.items(), key=str):
    med = {a: statistics.median(v) for a, v in arms.items()}
    print(key)
    for a in ("old", "new", "off"):
        if a in arms:
            print(f"   {a:4} {med[a]:.4f} [{' '.join(f'{x:.4f}' for x in arms[a])}]  vs old {med[a] / med['old'] - 1:+.2%}")
PY
echo "== 3. engine test_model on four fixtures"
source build-bundle/env.sh
RESET_GPU_TEST_ONLY=test_model timeout 150 build-bundle/bin/gpu_test_cuda_engine tests/fixtures/models/qwen3-yarn \
    tests/fixtures/models/modelopt-qwen3 tests/fixtures/chat-model models/reset-arith-4m > "$OUT/engine_s44_run3.txt" 2>&1
echo "engine rc $? at $SECONDS s: $(tail -1 "$OUT/engine_s44_run3.txt")"
grep FAIL "$OUT/engine_s44_run3.txt" | head -10
echo "done at $SECONDS s"
