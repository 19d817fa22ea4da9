#!/usr/bin/env bash
# Session 38, run 3 (H100): Nsight Compute on the NVFP4 GEMV with its weight served from the
# L2 (nvfp4_gemv_bench --warm-l2, ncu --cache-control none so the L2 is not flushed), Qwen3-8B
# o and down at M = 1: where a launch's time goes when the DRAM is out of the way (run 1: warm
# o 4.9 us, down 9.4 us chained, against 1.5 / 3.5 us for a read of the same bytes).  Per
# case: the section summary, the warp-state (stall) breakdown, and the SASS lines with the most
# stall samples.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="nvfp4_gemv_bench"), COMMIT.
source tests/bench/results/start_device_run.sh
B=$PWD/build-bundle/bin/nvfp4_gemv_bench
for shape in "Qwen3-8B o" "Qwen3-8B down"; do
    tag=$(echo "$shape" | tr -c 'A-Za-z0-9\n' '_')warm_m1
    for cache in none all; do
        timeout 240 ncu --set full --import-source no --cache-control $cache --clock-control none \
            -k regex:nvfp4_gemv_kernel --launch-skip 60 --launch-count 1 -o /tmp/$tag$cache -f \
            $B --only "$shape" --m 1 --nvfp4-only --warm-l2 > /tmp/ncu_$tag$cache.log 2>&1
        echo "== $shape, cache-control $cache: rc $? at $SECONDS s"
        ncu -i /tmp/$tag$cache.ncu-rep --page details --print-details all > "$OUT/ncu_${tag}_$cache.txt" 2>&1
        grep -E "^\s+(Duration|DRAM Throughput|L2 Hit Rate|L1/TEX Hit Rate|Memory Throughput|Achieved Occupancy|Eligible Warps Per Scheduler|Issued Warp Per Scheduler|Executed Ipc Active|Warp Cycles Per Issued Instruction|Executed Instructions|Registers Per Thread) " \
            "$OUT/ncu_${tag}_$cache.txt" | head -14
        grep -iE "stall|cycles being stalled" "$OUT/ncu_${tag}_$cache.txt" | head -12
        ncu -i /tmp/$tag$cache.ncu-rep --page raw --csv \
            --metrics regex:smsp__pcsamp_warps_issue_stalled_.*,regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio \
            > "$OUT/ncu_${tag}_${cache}_stalls.csv" 2>&1
        ncu -i /tmp/$tag$cache.ncu-rep --page source --csv --print-source sass > "$OUT/ncu_${tag}_${cache}_sass.csv" 2>&1
    done
done
python3 - "$OUT" <<'PY'
import csv, glob, sys
for f in sorted(glob.glob(sys.argv[1] + "/ncu_*_stalls.csv")):
    rows = list(csv.reader(open(f)))
    hdr = next((r for r in rows if any("stalled" in c for c in r)), None)
    if not hdr: print(f, "no stall metrics"); continue
    vals = rows[rows.index(hdr) + 2] if len(rows) > rows.index(hdr) + 2 else []
    pairs = [(h, v) for h, v in zip(hdr, vals) if "per_issue_active" in h]
    def num(v):
        try: return float(v.replace(",", ""))
        except ValueError: return 0.0
    pairs.sort(key=lambda p: -num(p[1]))
    print("==", f.split("/")[-1]); [print(f"  {num(v):8.3f}  {h}") for h, v in pairs[:10]]
for f in sorted(glob.glob(sys.argv[1] + "/ncu_*_sass.csv")):
    rows = list(csv.reader(open(f)))
    hdr = next((r for r in rows if "Source" in r), None)
    if not hdr: print(f, "no source page"); continue
    i_src = hdr.index("Source")
    cols = [i for i, h in enumerate(hdr) if "Warp Stall Sampling (All" in h]
    if not cols: print(f, "columns:", hdr[:12]); continue
    body = rows[rows.index(hdr) + 1:]
    def num(v):
        try: return float(v.replace(",", ""))
        except ValueError: return 0.0
    body.sort(key=lambda r: -num(r[cols[0]]) if len(r) > cols[0] else 0)
    total = sum(num(r[cols[0]]) for r in body if len(r) > cols[0])
    print("==", f.split("/")[-1], "samples", total)
    for r in body[:25]: print(f"  {num(r[cols[0]]):7.0f}  {r[i_src][:110]}")
PY
echo "done at $SECONDS s"
