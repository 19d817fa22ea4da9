#!/usr/bin/env bash
# Session 45, run 4 (H100): the step graph's new rule, new_token_in_attention_pays (the fused form
# from 8 rows, from 6 where K/V exceeds 10 MB, with the FP8 cache where it exceeds 48 MB), from
# runs 2-3.  Arms m0 (=0), m2 (=2), def (the rule) alternating, 3 rounds: 128 and 1k prompts at
# batch 4 and 6 (def: separate, separate, separate, fused), 16k prompt batch 1 with the FP8 cache
# (32 MB, def: separate; the FP8 bound's one unmeasured side).
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset"), COMMIT.
source tests/bench/results/start_device_run.sh
M=/tmp/ckpt/qwen3-8b-nvfp4
[[ -d $M ]] || python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 $M > /tmp/ckpt.log 2>&1
echo "checkpoint at $SECONDS s"
step() {  # arm, then bench arguments
    local arm=$1; shift
    local mode=${arm#m}; [[ $arm == def ]] && mode=1
    RESET_NEW_TOKEN_IN_ATTENTION=$mode timeout 150 build-bundle/bin/reset bench decode $M \
        --backend cuda --json --tokens 64 --repeat 2 "$@" 2>>"$OUT/bench_errors.log" | sed "s/^{/{\"arm\": \"$arm\", /"
}
for round in 1 2 3; do
    for arm in m0 m2 def; do
        step $arm --prompt-tokens 128,1024 --sequences 4,6
        step $arm --prompt-tokens 16384 --sequences 1 --kv-cache fp8
    done
    echo "round $round at $SECONDS s" >&2
done > "$OUT/h100_new_token_rule_s45_run4.jsonl"
python3 - "$OUT/h100_new_token_rule_s45_run4.jsonl" <<'PY'
import json, sys, statistics
by = {}
for l in open(sys.argv[1]):
    d = json.loads(l)
    key = (d.get("prompt_tokens"), d.get("sequences"), d.get("kv_cache"))
    by.setdefault(key, {}).setdefault(d["arm"], []).append(d["ms_per_step"])
for key, arms in sorted(by.items(), key=lambda kv: (kv[0][2], kv[0][0], kv[0][1])):
    med = {a: statistics.median(v) for a, v in arms.items()}
    print(key, "  ".join(f"{a} {med[a]:.4f} [{' '.join(f'{x:.4f}' for x in arms[a])}]" for a in ("m0", "m2", "def") if a in med),
          f"  m2/m0 {med['m2'] / med['m0'] - 1:+.2%}  def/m0 {med['def'] / med['m0'] - 1:+.2%}")
PY
echo "done at $SECONDS s"
