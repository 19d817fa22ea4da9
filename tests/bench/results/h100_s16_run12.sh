#!/usr/bin/env bash
# Session 16, run 12: the early-placement threshold of the q/k norm kernel at 6 MB of K/V
# (.ab/early_6mb) against the committed 16 MB, where they differ: 2k at batch 1 (8.4 MB of BF16
# K/V) and 1k at batch 2 (8.4 MB) and 3 (12.6 MB); 1k at batch 1 (4.2 MB, early in neither) as
# the control.  Qwen3-8B shape, NVFP4, greedy, 3 rounds alternated.
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
echo "commit $(cat COMMIT)"
mkdir -p /tmp/early_6mb && xz -dc .ab/early_6mb/libreset.so.0.xz > /tmp/early_6mb/libreset.so.0
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/ck/qwen3-8b-nvfp4 > /dev/null 2>&1; echo "checkpoint at $SECONDS s"
ck=/tmp/ck/qwen3-8b-nvfp4
run() {  # LIB ROUND bench arguments
    local lib=$1 round=$2; shift 2
    local extra=; [[ $lib != plain ]] && extra=/tmp/$lib:
    env LD_LIBRARY_PATH=$extra$LD_LIBRARY_PATH build-bundle/bin/reset bench decode $ck --backend cuda --weights auto \
        --json "$@" 2>/dev/null | sed "s/^{/{\"lib\": \"$lib\", \"round\": $round, /"
}
for round in 1 2 3; do
    for lib in plain early_6mb; do
        run $lib $round --prompt-tokens 1024 --sequences 1,2,3 --tokens 64 --repeat 2
        run $lib $round --prompt-tokens 2048 --sequences 1 --tokens 64 --repeat 2
    done
done > "$OUT/early_threshold_ab.jsonl"
python3 -c '
import json, sys, statistics as st
rows = {}
for l in open(sys.argv[1]):
    d = json.loads(l); rows.setdefault((d["prompt_tokens"], d["sequences"], d["lib"]), []).append(d["ms_per_step"])
for k in sorted(rows): print(k, rows[k], "median", st.median(rows[k]))
' "$OUT/early_threshold_ab.jsonl"
echo "done at $SECONDS s"
