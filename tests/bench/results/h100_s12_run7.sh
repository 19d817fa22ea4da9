#!/usr/bin/env bash
# Carried with: device run, carry .ab12 (this script) and build-bundle.tar.xz (df95f49).
# Session 12, run 7: the GPU's clocks and power while the step decodes (greedy, ReSET + top-p) and
# while the sampler runs alone, sampled by nvidia-smi every 50 ms.
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
M=/tmp/ckpt/qwen3-8b-nvfp4
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 $M > /tmp/ckpt.log 2>&1
for pol in greedy "reset t_low=0.6 tau0=1.2"; do
  tag=${pol%% *}
  nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv,noheader -lms 50 > "$OUT/clocks_$tag.csv" &
  smi=$!
  build-bundle/bin/reset bench decode $M --backend cuda --prompt-tokens 1024 --tokens 512 --repeat 4 --policy "$pol" --json
  kill $smi
done > "$OUT/steps.jsonl"
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv,noheader -lms 50 > "$OUT/clocks_sampler.csv" &
smi=$!
RESET_GPU_TEST_TIMING_ONLY=1 build-bundle/bin/gpu_test_sampling 1 | grep -E "flat75.*batch 1" > "$OUT/sampler_alone.txt"
kill $smi
python3 - "$OUT" <<'PY'
import sys, collections
out = sys.argv[1]
for tag in ("greedy", "reset", "sampler"):
    rows = [l.split(", ") for l in open(f"{out}/clocks_{tag}.csv") if l.strip()]
    busy = [r for r in rows if float(r[3].split()[0]) > 150]  # while the GPU works (W)
    if not busy: print(tag, "no busy samples"); continue
    sm = sorted(int(r[1].split()[0]) for r in busy)
    pw = sorted(float(r[3].split()[0]) for r in busy)
    reasons = collections.Counter(r[5].strip() for r in busy)
    print(f"{tag:8s} {len(busy)} busy samples: SM MHz median {sm[len(sm)//2]} (min {sm[0]}, max {sm[-1]}), "
          f"power median {pw[len(pw)//2]:.0f} W (max {pw[-1]:.0f}), throttle reasons {dict(reasons)}")
PY
cat "$OUT/steps.jsonl" | cut -c1-400
cat "$OUT/sampler_alone.txt"
