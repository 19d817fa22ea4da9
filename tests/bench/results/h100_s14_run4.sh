#!/usr/bin/env bash
# Session 14, run 4, the committed tree (COMMIT): the decode step with the engine's default (the pair
# from 2 rows) against RESET_GEMV_PAIR=0 (never), batch 1, 2, 4, 8, 3 rounds alternated; then the
# engine test at the default.
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version --format=csv
echo "commit $(cat COMMIT)"
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/ck/qwen3-8b-nvfp4 > /tmp/ck.log 2>&1; echo "checkpoint at $SECONDS s"
for r in 1 2 3; do
  for v in never default; do
    if [[ $v == never ]]; then export RESET_GEMV_PAIR=0; else unset RESET_GEMV_PAIR; fi
    timeout 90 build-bundle/bin/reset bench decode /tmp/ck/qwen3-8b-nvfp4 --backend cuda --weights auto \
      --prompt-tokens 1024 --sequences 1,2,4,8 --tokens 64 --repeat 2 --json 2>>"$OUT/err.log" | sed "s/^{/{\"variant\": \"$v\", \"round\": $r, /"
  done
  echo "round $r at $SECONDS s" >&2
done > "$OUT/pair_default_ab.jsonl"
unset RESET_GEMV_PAIR
python3 - "$OUT/pair_default_ab.jsonl" <<'PY'
import json, sys, statistics
by = {}
for l in open(sys.argv[1]):
    d = json.loads(l); by.setdefault((d.get("sequences"), d["variant"]), []).append(d["ms_per_step"])
base = {k[0]: statistics.median(v) for k, v in by.items() if k[1] == "never"}
for k, v in sorted(by.items(), key=str):
    m = statistics.median(v)
    print(f"batch {str(k[0]):3s} {k[1]:8s} {' '.join(f'{x:.4f}' for x in v)}  median {m:.4f}  {100 * (m / base[k[0]] - 1):+.1f}%  {1000 * k[0] / m:.0f} tok/s")
PY
SANITIZE=0 timeout 300 tests/gpu/run_cuda_engine_on_device.sh > "$OUT/engine.txt" 2>&1; echo "engine rc=$? at $SECONDS s"
grep -E "checks|FAIL" "$OUT/engine.txt" | head
echo "done at $SECONDS s"
