#!/usr/bin/env bash
# Session 13, run 4: the pair (cooperative launch, the shipped form; "plain": PDL only) against two
# launches, at batch 1, 2, 4 and 8 (2 rounds, alternated); then the engine test with the pair at
# every row count (RESET_GEMV_PAIR=1).
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version --format=csv
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/ck/qwen3-8b-nvfp4 > /tmp/ck.log 2>&1; echo "checkpoint at $SECONDS s"
for r in 1 2; do
  for v in off coop plain; do
    pair=1; [[ $v == off ]] && pair=0
    launch=cooperative; [[ $v == plain ]] && launch=plain
    RESET_GEMV_PAIR=$pair RESET_GEMV_PAIR_LAUNCH=$launch timeout 90 build-bundle/bin/reset bench decode /tmp/ck/qwen3-8b-nvfp4 --backend cuda --weights auto \
      --prompt-tokens 1024 --sequences 1,2,4,8 --tokens 64 --repeat 2 --json 2>>"$OUT/err.log" | sed "s/^{/{\"variant\": \"$v\", \"round\": $r, /"
  done
  echo "round $r at $SECONDS s" >&2
done > "$OUT/pair_ab.jsonl"
python3 - "$OUT/pair_ab.jsonl" <<'PY'
import json, sys, statistics
by = {}
for l in open(sys.argv[1]):
    d = json.loads(l); by.setdefault((d.get("sequences"), d["variant"]), []).append(d["ms_per_step"])
for k, v in sorted(by.items(), key=str):
    print(f"{str(k[0]):4s} {k[1]:8s} {' '.join(f'{x:.4f}' for x in v)}  median {statistics.median(v):.4f}")
PY
RESET_GEMV_PAIR=1 SANITIZE=0 timeout 330 tests/gpu/run_cuda_engine_on_device.sh > "$OUT/engine.txt" 2>&1; echo "engine rc=$? at $SECONDS s"
tail -n 5 "$OUT/engine.txt"
