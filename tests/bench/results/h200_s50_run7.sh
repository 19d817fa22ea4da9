#!/usr/bin/env bash
# Session 50, run 7 (H200): run 6's grid measured ReSET + top-p 0.95 at +1.26% over greedy (sessions
# 49-50 runs before: +0.7 to +0.9%), each case once, not alternated.  Here greedy, ReSET with top-p
# 0.95 and ReSET without top-p alternated, 5 rounds, at d64413f (1k batch 1, Qwen3-8B shape).
# Carry: build-bundle.tar.xz (run 6's), COMMIT.
source tests/bench/results/start_device_run.sh
ck=/tmp/ck/qwen3-8b-nvfp4
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 $ck > /tmp/ck.log 2>&1
for round in 1 2 3 4 5; do
    for policy in greedy "reset t_low=0.6 tau0=1.2" "reset t_low=0.6 tau0=1.2 top_p=1"; do
        build-bundle/bin/reset bench decode $ck --backend cuda --json --weights auto --prompt-tokens 1024 \
            --sequences 1 --tokens 64 --repeat 2 --policy "$policy" 2>>/tmp/bench.log |
            sed "s/^{/{\"round\": $round, /" >> "$OUT/reset_cost_s50_run7.jsonl"
    done
done
python3 - "$OUT/reset_cost_s50_run7.jsonl" <<'PY'
import json, sys, statistics, collections
d = collections.defaultdict(list)
for line in open(sys.argv[1]):
    r = json.loads(line)
    d[(r["policy"], r["top_p"])].append(r["ms_per_step"])
base = statistics.median(d[("greedy", 1)])
for k, v in d.items():
    m = statistics.median(v)
    print(k, "median %.4f ms (%+.2f%% over greedy)" % (m, 100 * (m / base - 1)), v)
PY
echo "done at $SECONDS s"
