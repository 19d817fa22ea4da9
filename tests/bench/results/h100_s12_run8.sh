#!/usr/bin/env bash
# Carried with: device run, carry .ab12 (this script; .ab12/nopdl_sampler: df95f49 built with the
# sampler's append_dependent_launch line removed) and build-bundle.tar.xz (df95f49).
# Session 12, run 8: is top-p's extra cost in the step a matter of programmatic dependent launch?
# Greedy and ReSET + top-p, alternated: this tree (df95f49); .ab12/nopdl_sampler (the same with the
# sampler launched without the PDL attribute); and PDL off for the whole step (--programmatic-launch -1).
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
M=/tmp/ckpt/qwen3-8b-nvfp4
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 $M > /tmp/ckpt.log 2>&1
for r in 1 2 3; do
  for v in this nopdl_sampler pdl_off; do
    path=$LD_LIBRARY_PATH; extra=""
    [[ $v == nopdl_sampler ]] && path=$PWD/.ab12/nopdl_sampler:$LD_LIBRARY_PATH
    [[ $v == pdl_off ]] && extra="--programmatic-launch -1"
    for pol in greedy "reset t_low=0.6 tau0=1.2"; do
      LD_LIBRARY_PATH=$path build-bundle/bin/reset bench decode $M --backend cuda --prompt-tokens 1024 --tokens 128 --repeat 2 \
        --policy "$pol" $extra --json 2>>"$OUT/err.log" | sed "s/^{/{\"variant\": \"$v\", \"round\": $r, /"
    done
  done
done > "$OUT/pdl_ab.jsonl"
python3 - "$OUT/pdl_ab.jsonl" <<'PY'
import json, sys, statistics
by = {}
for l in open(sys.argv[1]):
    d = json.loads(l); by.setdefault((d["variant"], d["policy"]), []).append(d["ms_per_step"])
for v in ("this", "nopdl_sampler", "pdl_off"):
    g = statistics.median(by[(v, "greedy")]); t = statistics.median(by[(v, "reset t_low=0.6 tau0=1.2")])
    print(f"{v:14s} greedy {' '.join(f'{x:.4f}' for x in by[(v, 'greedy')])} | top-p {' '.join(f'{x:.4f}' for x in by[(v, 'reset t_low=0.6 tau0=1.2')])}"
          f" | top-p over greedy {1000 * (t - g):.1f} us ({100 * (t / g - 1):+.2f}%)")
PY
