#!/usr/bin/env python3
"""ab_summary.py — the medians of an alternated A/B run of `reset bench decode`.

Usage: ab_summary.py JSONL [--arm FIELD] [--base VALUE]

Reads the JSON lines tests/bench/ab_decode_on_device.sh ("lib": new / old) or
ab_env_decode_on_device.sh ("env": VAR=value) write, one per case, arm and
round.  A case is what the run measured: weights, lm_head, batch, context, KV
cache, graph and policy.  For each case it prints every arm's median ms per
step, its rounds, and its change against the base arm.  --arm names the field
that tells the arms apart: by default "lib" if the lines have it, else "env",
else "arm".  --base is that field's value to compare with: by default "old"
for "lib", else the first arm seen.
"""
import argparse
import json
import statistics

CASE = ("weights", "lm_head", "sequences", "prompt_tokens", "kv_cache", "cuda_graph", "policy")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("jsonl")
    parser.add_argument("--arm")
    parser.add_argument("--base")
    args = parser.parse_args()
    lines = [json.loads(line) for line in open(args.jsonl) if line.strip()]
    if not lines:
        raise SystemExit(f"{args.jsonl}: no results")
    arm = args.arm or next(f for f in ("lib", "env", "arm") if f in lines[0])
    cases = {}
    for d in lines:
        cases.setdefault(tuple(d.get(k) for k in CASE), {}).setdefault(d[arm], []).append(d["ms_per_step"])
    for case, arms in cases.items():
        base = args.base or ("old" if arm == "lib" and "old" in arms else next(iter(arms)))
        medians = {a: statistics.median(v) for a, v in arms.items()}
        label = "  ".join(f"{k} {v}" for k, v in zip(CASE, case) if v is not None)
        parts = []
        for a, v in arms.items():
            change = f" ({100 * (medians[a] / medians[base] - 1):+.2f}% against {base})" if a != base and base in medians else ""
            parts.append(f"{a} {medians[a]:.4f} ms [{' '.join(f'{x:.4f}' for x in v)}]{change}")
        print(f"{label}: " + "; ".join(parts))


if __name__ == "__main__":
    main()
