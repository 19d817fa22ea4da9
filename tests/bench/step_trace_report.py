#!/usr/bin/env python3
"""step_trace_report.py — the boundaries between a decode step's kernels, from
the per-warp records of a -DRESET_STEP_TRACE build (kernels/step_trace.h;
tests/bench/build_step_trace.sh makes the library, CudaSession::step writes
the records where RESET_STEP_TRACE_FILE is set).

Usage: step_trace_report.py TRACE_FILE [--json OUT.json]

A launch is the records of one kernel kind and tags whose waits lie within
10 us of each other (launches of the same shape are a layer, ~60 us, apart).
For each launch, in the order of their first wait, in microseconds:
  placed  first warp's entry, from the previous launch's last end (negative:
          placed early, under programmatic dependent launch)
  release first warp's return from the wait, from the previous launch's
          last end: what the hardware boundary costs
  spread  last warp's wait return minus the first's
  run     last warp's end minus the first warp's wait return
  tail    last warp's end minus the median warp's end
Each traced step's total is split into run and release; each row of the
table is the median over the launches of that name (one per layer and step).
"""
import json
import statistics
import sys
from collections import defaultdict

KINDS = {1: "embedding", 2: "norm_prepare", 3: "gemv", 4: "qk_norm_rope", 5: "attention", 6: "bf16_gemv",
         7: "sampling", 8: "gemv_pair", 9: "range_copy",
         10: "top_logprobs", 11: "rms_norm",
         12: "prepare"}


def name_of(kind, tag, tag2):
    base = KINDS.get(kind, f"kind{kind}")
    if kind in (3, 8):
        return f"{base} {tag}x{tag2}"
    return base


def read(path):
    """The records of each traced step (a "# step trace" line starts one)."""
    steps = []
    for line in open(path):
        if line.startswith("#"):
            steps.append([])
            continue
        if not line.strip():
            continue
        kind, tag, tag2, block, warp, sm, start, waited, end = (int(v) for v in line.split())
        steps[-1].append((kind, tag, tag2, block, warp, sm, start, waited, end))
    return [s for s in steps if s]


def launches_of(records):
    by_key = defaultdict(list)
    for r in records:
        by_key[(r[0], r[1], r[2])].append(r)
    launches = []
    for key, rs in by_key.items():
        rs.sort(key=lambda r: r[7])
        group = [rs[0]]
        for r in rs[1:]:
            if r[7] - group[-1][7] > 10_000:
                launches.append((key, group))
                group = []
            group.append(r)
        launches.append((key, group))
    out = []
    for key, rs in launches:
        waited = sorted(r[7] for r in rs)
        ends = sorted(r[8] for r in rs if r[8])
        out.append({
            "name": name_of(*key),
            "warps": len(rs),
            "ctas": len({r[3] for r in rs}),
            "first_start": min(r[6] for r in rs),
            "first_waited": waited[0],
            "last_waited": waited[-1],
            "median_end": statistics.median(ends) if ends else None,
            "last_end": ends[-1] if ends else None,
        })
    out.sort(key=lambda l: l["first_waited"])
    return out


def rows_of(launches):
    t0 = launches[0]["first_waited"]
    prev_end = None
    rows = []
    for l in launches:
        row = {"name": l["name"], "ctas": l["ctas"], "at": (l["first_waited"] - t0) / 1e3,
               "spread": (l["last_waited"] - l["first_waited"]) / 1e3}
        if l["last_end"] is not None:
            row["run"] = (l["last_end"] - l["first_waited"]) / 1e3
            row["tail"] = (l["last_end"] - l["median_end"]) / 1e3
        if prev_end is not None:
            row["placed"] = (l["first_start"] - prev_end) / 1e3
            row["release"] = (l["first_waited"] - prev_end) / 1e3
        if l["last_end"] is not None:
            prev_end = l["last_end"]
        rows.append(row)
    return rows


def main():
    path = sys.argv[1]
    steps = read(path)
    all_rows = []
    for i, records in enumerate(steps):
        launches = launches_of(records)
        rows = rows_of(launches)
        all_rows += rows
        total = (max(l["last_end"] or 0 for l in launches) - launches[0]["first_waited"]) / 1e3
        print(f"step {i}: {len(launches)} launches, {len(records)} warps; from the first wait to the last end "
              f"{total:.1f} us: run {sum(r.get('run', 0) for r in rows):.1f}, "
              f"release {sum(r.get('release', 0) for r in rows):.1f}")
    by_name = defaultdict(list)
    order = []
    for r in all_rows:
        if r["name"] not in by_name:
            order.append(r["name"])
        by_name[r["name"]].append(r)
    print(f"{'launch':28} {'n':>3} {'ctas':>5} {'placed':>7} {'release':>7} {'spread':>7} {'run':>7} {'tail':>6}"
          f"   (medians over the steps' launches, us)")
    summary = []
    for name in order:
        rs = by_name[name]

        def med(k):
            v = [r[k] for r in rs if k in r]
            return statistics.median(v) if v else float("nan")
        s = {"name": name, "n": len(rs), "ctas": rs[0]["ctas"], "placed": med("placed"), "release": med("release"),
             "spread": med("spread"), "run": med("run"), "tail": med("tail")}
        summary.append(s)
        print(f"{name:28} {s['n']:>3} {s['ctas']:>5} {s['placed']:>7.2f} {s['release']:>7.2f} {s['spread']:>7.2f} "
              f"{s['run']:>7.2f} {s['tail']:>6.2f}")
    if "--json" in sys.argv:
        with open(sys.argv[sys.argv.index("--json") + 1], "w") as f:
            json.dump({"launches": all_rows, "summary": summary}, f)


if __name__ == "__main__":
    main()
