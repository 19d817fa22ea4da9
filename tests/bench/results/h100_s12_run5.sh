#!/usr/bin/env bash
# Carried with: device run, carry .ab12 (this script; the extra builds named below, made here with
# scripts/make_device_bundle.sh's build of the named commit) and build-bundle.tar.xz (and COMMIT).
# Session 12, run 5: the weights' evict-first L2 hint (6ddd806) on and off (.ab12/nohint: this tree
# with load_stream_16/8 back to plain loads), alternated: BF16 greedy, NVFP4 greedy and ReSET + top-p.
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
ck=/tmp/checkpoints
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 $ck/qwen3-8b-nvfp4 > /tmp/ck1.log 2>&1
python3 tests/bench/make_random_checkpoint.py qwen3-8b bf16 $ck/qwen3-8b-bf16 > /tmp/ck2.log 2>&1
echo "checkpoints at $SECONDS s"
for r in 1 2 3; do
  for lib in hint nohint; do
    path=$LD_LIBRARY_PATH; [[ $lib == nohint ]] && path=$PWD/.ab12/nohint:$LD_LIBRARY_PATH
    for c in "bf16|greedy" "nvfp4|greedy" "nvfp4|reset t_low=0.6 tau0=1.2"; do
      w=${c%%|*}; pol=${c#*|}
      LD_LIBRARY_PATH=$path build-bundle/bin/reset bench decode $ck/qwen3-8b-$w --backend cuda --weights $([[ $w == bf16 ]] && echo bf16 || echo auto) \
        --prompt-tokens 1024 --tokens 64 --repeat 2 --policy "$pol" --json 2>>"$OUT/err.log" | sed "s/^{/{\"lib\": \"$lib\", \"round\": $r, /"
    done
  done
  echo "round $r at $SECONDS s" >&2
done > "$OUT/hint_ab.jsonl"
python3 - "$OUT/hint_ab.jsonl" <<'PY'
import json, sys, statistics
by = {}
for l in open(sys.argv[1]):
    d = json.loads(l); by.setdefault((d["weights"], d["policy"], d["lib"]), []).append(d["ms_per_step"])
for k, v in sorted(by.items()):
    print(f"{k[0]:14s} {k[1]:34s} {k[2]:7s} {' '.join(f'{x:.4f}' for x in v)}  median {statistics.median(v):.4f}")
PY
