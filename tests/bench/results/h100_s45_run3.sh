#!/usr/bin/env bash
# Session 45, run 3 (H100): run 2 found the new token inside attention slower than its own launch
# everywhere it measured but 1k batch 8 (1k batch 2-4: +0.1-0.3%; 2k-8k batch 1: +1.0-2.7%; 1k
# batch 8: -1.7%), so session 44's 10 MB rule (K/V bytes) picks the wrong form at 1k batch 3-4 and
# 4k-8k batch 1.  Where does it pay?  Same checkpoint and method, arms m0 (=0, never) and m2 (=2,
# every step) alternating, 3 rounds: batch 6 and 8 at 128 and 1k prompts, batch 4 and 8 at 4k,
# batch 1 at 16k and 32k (BF16 cache) and 32k (FP8 cache).
# Carry: build-bundle.tar.xz (as run 1), COMMIT.
source tests/bench/results/start_device_run.sh
M=/tmp/ckpt/qwen3-8b-nvfp4
[[ -d $M ]] || python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 $M > /tmp/ckpt.log 2>&1
echo "checkpoint at $SECONDS s"
step() {  # arm, then bench arguments
    local arm=$1; shift
    RESET_NEW_TOKEN_IN_ATTENTION=${arm#m} timeout 150 build-bundle/bin/reset bench decode $M \
        --backend cuda --json --tokens 64 --repeat 2 "$@" 2>>"$OUT/bench_errors.log" | sed "s/^{/{\"arm\": \"$arm\", /"
}
for round in 1 2 3; do
    for arm in m0 m2; do
        step $arm --prompt-tokens 128,1024 --sequences 6,8
        step $arm --prompt-tokens 4096 --sequences 4,8
        step $arm --prompt-tokens 16384,32768 --sequences 1
        step $arm --prompt-tokens 32768 --sequences 1 --kv-cache fp8
    done
    echo "round $round at $SECONDS s" >&2
done > "$OUT/h100_new_token_where_s45_run3.jsonl"
python3 - "$OUT/h100_new_token_where_s45_run3.jsonl" <<'PY'
import json, sys, statistics
by = {}
for l in open(sys.argv[1]):
    d = json.loads(l)
    key = (d.get("prompt_tokens"), d.get("sequences"), d.get("kv_cache"))
    by.setdefault(key, {}).setdefault(d["arm"], []).append(d["ms_per_step"])
for key, arms in sorted(by.items(), key=lambda kv: (kv[0][2], kv[0][0], kv[0][1])):
    med = {a: statistics.median(v) for a, v in arms.items()}
    print(key, "  ".join(f"{a} {med[a]:.4f} [{' '.join(f'{x:.4f}' for x in arms[a])}]" for a in ("m0", "m2") if a in med),
          f"  m2/m0 {med['m2'] / med['m0'] - 1:+.2%}")
PY
echo "done at $SECONDS s"
