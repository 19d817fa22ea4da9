#!/usr/bin/env bash
# Carried with: device run, carry .ab12 (this script; the extra builds named below, made here with
# scripts/make_device_bundle.sh's build of the named commit) and build-bundle.tar.xz (and COMMIT).
# Session 12, run 1 (the library built with step_row_kernel_skip_s12.patch applied to 0f7c598): what each row kernel costs inside the step (RESET_DEBUG_SKIP, a temporary
# switch, not kept: 1 q/k norm+RoPE+append, 2 post-attention norm, 4 input norm, 8 attention),
# then greedy / the rule / ReSET + top-p alternated.
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
M=/tmp/ckpt/qwen3-8b-nvfp4
SECONDS=0
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 $M > /tmp/ckpt.log 2>&1
echo "checkpoint $SECONDS s"
for r in 1 2; do
  for v in 0 1 2 4 8 15; do
    RESET_DEBUG_SKIP=$v build-bundle/bin/reset bench decode $M --backend cuda --prompt-tokens 1024 --tokens 64 --repeat 2 \
      --policy greedy --json 2>>"$OUT/err.log" | sed "s/^{/{\"skip\": $v, \"round\": $r, /"
  done
  echo "round $r $SECONDS s" >&2
done > "$OUT/skip.jsonl"
python3 - "$OUT/skip.jsonl" <<'PY'
import json, sys, statistics
by = {}
for l in open(sys.argv[1]):
    d = json.loads(l); by.setdefault(d["skip"], []).append(d["ms_per_step"])
b = statistics.median(by[0])
for k, v in by.items():
    m = statistics.median(v)
    print(f"skip {k:3d} {' '.join(f'{x:.4f}' for x in v)}  median {m:.4f}  {1000 * (b - m) / 36:+.2f} us per layer saved")
PY
for r in 1 2 3 4; do
  for pol in greedy "reset t_low=0.6 tau0=1.2 top_p=1" "reset t_low=0.6 tau0=1.2"; do
    build-bundle/bin/reset bench decode $M --backend cuda --prompt-tokens 1024 --tokens 64 --repeat 2 \
      --policy "$pol" --json 2>>"$OUT/err.log" | sed "s/^{/{\"round\": $r, /"
  done
  echo "policy round $r $SECONDS s" >&2
done > "$OUT/step_policies.jsonl"
python3 - "$OUT/step_policies.jsonl" <<'PY'
import json, sys, statistics
by = {}
for l in open(sys.argv[1]):
    d = json.loads(l); by.setdefault(d["policy"], []).append(d["ms_per_step"])
g = statistics.median(by["greedy"])
for p, v in by.items():
    m = statistics.median(v)
    print(f"{p:40s} {' '.join(f'{x:.4f}' for x in v)}  median {m:.4f}  {100 * (m / g - 1):+.2f}% over greedy")
PY
