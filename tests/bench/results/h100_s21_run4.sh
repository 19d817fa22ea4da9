#!/usr/bin/env bash
# Session 21, run 4: why fewer instructions made the pipelined GEMV faster (docs/cuda-engine.md,
# session 21) -- the decode step's per-layer kernels under Nsight Compute's WarpStateStats section
# (stall reasons per issued instruction, among them "no instruction": the warp's next instruction
# not in the instruction cache).  Qwen3-8B shape, random NVFP4 checkpoint, batch 1, 1k context,
# eager launches without programmatic dependent launch (one kernel at a time), clocks left alone;
# 16 kernels (two layers) of a decode step, skipping the prefill and the first steps; with the
# caches flushed before each kernel ("all") and not ("none").  The bundle is the final tree.
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version --format=csv
echo "commit $(cat COMMIT)"
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/ck/qwen3-8b-nvfp4 > /dev/null 2>&1
echo "checkpoint at $SECONDS s"
for cache in all none; do
  timeout 110 ncu --clock-control none --cache-control $cache --section WarpStateStats --metrics gpu__time_duration.sum \
      -k 'regex:nvfp4_gemv_kernel|split_kernel|rms_norm_prepare_kernel|qk_norm_rope_kernel' \
      --launch-skip 600 --launch-count 16 --csv --page raw --print-units base \
      build-bundle/bin/reset bench decode /tmp/ck/qwen3-8b-nvfp4 --backend cuda --prompt-tokens 1024 --sequences 1 \
      --tokens 8 --repeat 1 --eager --programmatic-launch -1 --json > /tmp/ncu_$cache.raw 2> /tmp/ncu_$cache.log
  echo "ncu cache $cache rc=$? at $SECONDS s"
  grep -E '^"' /tmp/ncu_$cache.raw > "$OUT/warp_stalls_$cache.csv"; tail -n 3 /tmp/ncu_$cache.log
done
python3 - "$OUT"/warp_stalls_all.csv "$OUT"/warp_stalls_none.csv > "$OUT/warp_stalls_s21_run4.txt" <<'PY'
import csv, sys
for path in sys.argv[1:]:
    rows = [r for r in csv.DictReader(open(path)) if r.get("Kernel Name")]
    rows = [r for r in rows if r.get("gpu__time_duration.sum", "").replace(",", "").replace(".", "").isdigit()]
    stalls = sorted(k for k in (rows[0] if rows else {}) if "issue_stalled" in k and k.endswith("per_warp_active.pct"))
    if not stalls:
        stalls = sorted(k for k in (rows[0] if rows else {}) if "issue_stalled" in k)
    print(f"== {path}: {len(rows)} kernels; stall columns: {len(stalls)}")
    for r in rows:
        name = r["Kernel Name"].replace("void ", "").replace("reset::", "").replace("(anonymous namespace)::", "")[:60]
        vals = []
        for k in stalls:
            try: vals.append((float(r[k].replace(",", "")), k))
            except ValueError: pass
        top = sorted(vals, reverse=True)[:6]
        short = lambda k: k.replace("smsp__average_warps_issue_stalled_", "").replace("smsp__average_warp_latency_issue_stalled_", "").replace("smsp__pcsamp_warps_issue_stalled_", "")
        noinst = [v for v, k in vals if "no_instruction" in k]
        print(f"{name:60} {float(r['gpu__time_duration.sum'].replace(',', ''))/1e3:8.2f} us  no_instruction "
              f"{noinst}  top: " + ", ".join(f"{short(k)} {v:.3g}" for v, k in top))
PY
cat "$OUT/warp_stalls_s21_run4.txt"
echo "done at $SECONDS s"
