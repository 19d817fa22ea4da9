#!/usr/bin/env bash
# Session 45, run 5 (H100): new_token_in_attention_pays below 6 rows with the FP8 cache counts the
# longest row's own K/V (fused above 48 MB, 24k positions at this shape; measured at batch 1 only:
# 32k -0.6%, 16k +0.3%).  Batch 2 and 4 at 32k with the FP8 cache, m0 (=0) / m2 (=2) alternating,
# up to 3 rounds (no round starts after 150 s: the session's device time was nearly spent).
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset"), COMMIT.
source tests/bench/results/start_device_run.sh
M=/tmp/ckpt/qwen3-8b-nvfp4
[[ -d $M ]] || python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 $M > /tmp/ckpt.log 2>&1
echo "checkpoint at $SECONDS s"
step() {  # arm, then bench arguments
    local arm=$1; shift
    RESET_NEW_TOKEN_IN_ATTENTION=${arm#m} timeout 100 build-bundle/bin/reset bench decode $M \
        --backend cuda --json --tokens 64 --repeat 2 "$@" 2>>"$OUT/bench_errors.log" | sed "s/^{/{\"arm\": \"$arm\", /"
}
for round in 1 2 3; do
    (( SECONDS > 150 )) && break
    for arm in m0 m2; do
        step $arm --prompt-tokens 32768 --sequences 2,4 --kv-cache fp8 >> "$OUT/h100_new_token_fp8_rows_s45_run5.jsonl"
    done
    echo "round $round at $SECONDS s"
done
python3 - "$OUT/h100_new_token_fp8_rows_s45_run5.jsonl" <<'PY'
import json, sys, statistics
by = {}
for l in open(sys.argv[1]):
    d = json.loads(l)
    key = (d.get("prompt_tokens"), d.get("sequences"), d.get("kv_cache"))
    by.setdefault(key, {}).setdefault(d["arm"], []).append(d["ms_per_step"])
for key, arms in sorted(by.items(), key=lambda kv: (kv[0][2], kv[0][0], kv[0][1])):
    med = {a: statistics.median(v) for a, v in arms.items()}
    print(key, "  ".join(f"{a} {med[a]:.4f} [{' '.join(f'{x:.4f}' for x in arms[a])}]" for a in ("m0", "m2") if a in med),
          f"  m2/m0 {med['m2'] / med['m0'] - 1:+.2%}" if "m2" in med and "m0" in med else "")
PY
echo "done at $SECONDS s"
