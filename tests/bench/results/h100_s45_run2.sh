#!/usr/bin/env bash
# Session 45, run 2 (H100): where the new token inside attention starts to pay, on d2cf603.
#  1. Decode step, Qwen3-8B-shape NVFP4 random checkpoint, greedy, 64 tokens x 2, arms alternating:
#     m0 (RESET_NEW_TOKEN_IN_ATTENTION=0, never), m2 (=2, every step), def (default: where
#     long_attention holds, K/V above 10 MB), old (ba7a11f's library relinked), 3 rounds:
#     1k prompt at batch 1, 2, 3, 4, 8 and 2k, 4k, 8k prompts at batch 1 (the 10 MB rule puts the
#     switch between batch 2 and 3 at 1k, and between 2k and 4k at batch 1).
#  2. test_model with =2 on the two models run 1's engine pass did not reach in its time.
# Carry: build-bundle.tar.xz (as run 1, plus build-bundle/lib-old/libreset.so.0 from ba7a11f), COMMIT.
source tests/bench/results/start_device_run.sh
M=/tmp/ckpt/qwen3-8b-nvfp4
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 $M > /tmp/ckpt.log 2>&1
echo "checkpoint at $SECONDS s"
step() {  # arm, then bench arguments
    local arm=$1; shift
    local path=$LD_LIBRARY_PATH mode
    case $arm in m0) mode=0;; m2) mode=2;; *) mode=1;; esac
    [[ $arm == old ]] && path=$PWD/build-bundle/lib-old:$LD_LIBRARY_PATH
    LD_LIBRARY_PATH=$path RESET_NEW_TOKEN_IN_ATTENTION=$mode timeout 120 build-bundle/bin/reset bench decode $M \
        --backend cuda --json --tokens 64 --repeat 2 "$@" 2>>"$OUT/bench_errors.log" | sed "s/^{/{\"arm\": \"$arm\", /"
}
for round in 1 2 3; do
    for arm in m0 m2 def old; do
        step $arm --prompt-tokens 1024 --sequences 1,2,3,4,8
        step $arm --prompt-tokens 2048,4096,8192 --sequences 1
    done
    echo "round $round at $SECONDS s" >&2
done > "$OUT/h100_new_token_threshold_s45_run2.jsonl"
python3 - "$OUT/h100_new_token_threshold_s45_run2.jsonl" <<'PY'
import json, sys, statistics
by = {}
for l in open(sys.argv[1]):
    d = json.loads(l)
    key = (d.get("prompt_tokens"), d.get("sequences"), d.get("kv_cache"))
    by.setdefault(key, {}).setdefault(d["arm"], []).append(d["ms_per_step"])
for key, arms in sorted(by.items(), key=lambda kv: (kv[0][0], kv[0][1])):
    med = {a: statistics.median(v) for a, v in arms.items()}
    print(key, "  ".join(f"{a} {med[a]:.4f}" for a in ("m0", "m2", "def", "old") if a in med),
          f"  m2/m0 {med['m2'] / med['m0'] - 1:+.2%}  def/old {med['def'] / med['old'] - 1:+.2%}")
PY
echo "== 2. test_model with =2, chat model and embedded model"
RESET_NEW_TOKEN_IN_ATTENTION=2 RESET_GPU_TEST_ONLY=test_model timeout 100 build-bundle/bin/gpu_test_cuda_engine \
    tests/fixtures/chat-model models/reset-arith-4m > "$OUT/engine_new_token_s45_run2.txt" 2>&1
echo "engine rc $? at $SECONDS s: $(tail -1 "$OUT/engine_new_token_s45_run2.txt")"
grep FAIL "$OUT/engine_new_token_s45_run2.txt" | head
echo "done at $SECONDS s"
