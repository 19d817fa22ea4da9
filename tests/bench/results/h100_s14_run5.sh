#!/usr/bin/env bash
# Session 14, run 5 (review commit): RESET_GEMV_PAIR read through environment_integer: unset (the
# default, pair from 2 rows), 0 (never), 1 (every row count), batch 1 and 8, 2 rounds alternated.
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version --format=csv
echo "commit $(cat COMMIT)"
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/ck/qwen3-8b-nvfp4 > /tmp/ck.log 2>&1; echo "checkpoint at $SECONDS s"
for r in 1 2; do
  for v in unset 0 1; do
    if [[ $v == unset ]]; then unset RESET_GEMV_PAIR; else export RESET_GEMV_PAIR=$v; fi
    timeout 90 build-bundle/bin/reset bench decode /tmp/ck/qwen3-8b-nvfp4 --backend cuda --weights auto \
      --prompt-tokens 1024 --sequences 1,8 --tokens 64 --repeat 2 --json 2>>"$OUT/err.log" | sed "s/^{/{\"pair_env\": \"$v\", \"round\": $r, /"
  done
done > "$OUT/pair_env_ab.jsonl"
python3 - "$OUT/pair_env_ab.jsonl" <<'PY'
import json, sys, statistics
by = {}
for l in open(sys.argv[1]):
    d = json.loads(l); by.setdefault((d.get("sequences"), d["pair_env"]), []).append(d["ms_per_step"])
for k, v in sorted(by.items(), key=str):
    print(f"batch {str(k[0]):3s} RESET_GEMV_PAIR={k[1]:6s} {' '.join(f'{x:.4f}' for x in v)}  median {statistics.median(v):.4f}")
PY
echo "done at $SECONDS s"
