#!/usr/bin/env bash
# profile_decode_step_on_device.sh — where one decode step's time goes: every
# kernel of a `reset bench decode` run under Nsight Compute (one kernel at a
# time, caches flushed before each, clocks left alone), then the kernels of the
# last decode step summed by kind, next to the step time the same binary
# measures without the profiler.  Isolated, every kernel pays its whole launch
# ramp, drain and cold-cache misses, so the sum exceeds the replayed step; the
# per-kind rows say where the time goes and which kernels stream below
# bandwidth (a kernel at a few GB/s is latency, not bytes).
#
#   tests/bench/profile_decode_step_on_device.sh MODEL_DIR [PROMPT_TOKENS [SEQUENCES [EXTRA BENCH ARGS...]]]
#
# From the repository root with build-bundle/ carried over
# (scripts/make_device_bundle.sh).  Output: $OUT/decode_step_profile_*.{csv,txt}.
set -uo pipefail
out=${OUT:-$PWD/build-device/out}
mkdir -p "$out"
source build-bundle/env.sh
model=$1
prompt=${2:-1024}
sequences=${3:-1}
shift $(( $# < 3 ? $# : 3 ))
tag=p${prompt}_b${sequences}
csv=$out/decode_step_profile_$tag.csv
# Eager launches, plain stream order: each kernel is its own launch under the profiler.
ncu --clock-control none --cache-control all --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum \
    --csv --page raw --print-units base \
    build-bundle/bin/reset bench decode "$model" --backend cuda --prompt-tokens "$prompt" --sequences "$sequences" \
    --tokens 3 --repeat 1 --eager --programmatic-launch -1 --json "$@" >"$csv.raw" 2>"$out/decode_step_profile_$tag.log"
grep -E '^"' "$csv.raw" >"$csv" || true
rm -f "$csv.raw"
# The same step unprofiled, graph replay with and without programmatic dependent launch.
build-bundle/bin/reset bench decode "$model" --backend cuda --prompt-tokens "$prompt" --sequences "$sequences" \
    --tokens 64 --repeat 2 --programmatic-launch 0,-1 --json "$@" >"$out/decode_step_timed_$tag.jsonl"
python3 - "$csv" "$out/decode_step_timed_$tag.jsonl" >"$out/decode_step_profile_$tag.txt" <<'PY'
import csv, json, sys
def number(text):  # ncu may group digits
    return float(text.replace(",", ""))
rows = list(csv.DictReader(open(sys.argv[1])))
rows = [r for r in rows
        if r.get("Kernel Name") and r.get("gpu__time_duration.sum", "").replace(",", "").replace(".", "").isdigit()]
# The last decode step: from the last sampler launch (a step samples, then runs the layers).
def short(name):  # "void reset::<unnamed>::split_kernel<128, 4, false>(...)" -> "split_kernel"
    return name.replace("void ", "", 1).replace("<unnamed>", "").split("(")[0].split("<")[0].split("::")[-1]
start = max(i for i, r in enumerate(rows) if short(r["Kernel Name"]) == "sampling_kernel")
step = rows[start:]
kinds = {}
for r in step:
    name = short(r["Kernel Name"])
    k = kinds.setdefault(name, [0, 0.0, 0.0])
    k[0] += 1
    k[1] += number(r["gpu__time_duration.sum"]) / 1e3                      # ns -> us
    k[2] += number(r["dram__bytes_read.sum"]) + number(r["dram__bytes_write.sum"])
timed = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
total = sum(k[1] for k in kinds.values())
print(f"kernels in the last step: {len(step)}; sum of their isolated times under the profiler {total:.1f} us")
for t in timed:
    print(f"measured step without the profiler (graph replay, programmatic_launch {t['programmatic_launch']}): "
          f"{t['ms_per_step'] * 1e3:.1f} us")
print(f"{'kernel':34} {'count':>5} {'us':>9} {'us/launch':>9} {'MB':>9} {'GB/s':>7} {'share':>6}")
for name, (n, us, b) in sorted(kinds.items(), key=lambda kv: -kv[1][1]):
    print(f"{name:34} {n:5d} {us:9.1f} {us / n:9.2f} {b / 1e6:9.2f} {b / us / 1e3 if us else 0:7.0f} {us / total:6.1%}")
PY
cat "$out/decode_step_profile_$tag.txt"
