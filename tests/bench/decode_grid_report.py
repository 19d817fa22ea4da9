#!/usr/bin/env python3
"""decode_grid_report.py -- the decode benchmark's table (issue 6) from run_decode_grid_on_device.sh's output.

    python3 tests/bench/decode_grid_report.py GRID.jsonl ENV.json SHAPE > REPORT.md

Roofline per case: the bytes one decode step must read -- every linear's weights (NVFP4 codes +
E4M3 block scales, or BF16), the lm_head (BF16, or NVFP4 where the row says so: `--lm-head nvfp4`,
rows before session 23 carry no lm_head key and were BF16), and the K/V of every sequence at its context
(prompt + half the decoded tokens, on average) -- over the streaming bandwidth measured in the
same run (ENV.json: a 2 x 2 GiB device copy timed with CUDA events).  The embedding table is not
counted: a step reads one row of it.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_random_checkpoint import SHAPES  # noqa: E402


def nvfp4_bytes(n, k):
    return n * k // 2 + n * k // 16  # E2M1 codes and one E4M3 scale per 16


def step_bytes(shape, weights, sequences, context, kv_cache, lm_head="bf16"):
    s = SHAPES[shape]
    h, i, hd = s["hidden"], s["intermediate"], s["head_dim"]
    linears = [(s["heads"] * hd, h), (s["kv_heads"] * hd, h), (s["kv_heads"] * hd, h), (h, s["heads"] * hd),
               (i, h), (i, h), (h, i)]
    per_layer = sum(nvfp4_bytes(n, k) if weights.startswith("nvfp4") else 2 * n * k for n, k in linears)
    kv_per_token = s["layers"] * 2 * s["kv_heads"] * hd * (1 if kv_cache == "fp8" else 2)
    head = nvfp4_bytes(s["vocab"], h) if lm_head == "nvfp4" else 2 * s["vocab"] * h
    return s["layers"] * per_layer + head + sequences * context * kv_per_token


def main():
    rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
    env = json.load(open(sys.argv[2]))
    shape = sys.argv[3]
    bw = env["stream_copy_GBps"] * 1e9
    print(f"Device: {env['device']} (driver {env['driver']}); streaming bandwidth {bw / 1e9:.0f} GB/s "
          f"(device copy, same run).  Model: random weights at the {shape} shape.\n")
    print("| weights | lm_head | batch | context | KV | graph | policy | prefill tok/s | ms/step | tok/s | roofline ms "
          "| % of roofline |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    def policy(r):  # the truncation the policy ran with, where the bench recorded it (since session 6)
        cuts = [f"{name} {r[key]:g}" for name, key, off in (("top-k", "top_k", 0), ("top-p", "top_p", 1),
                                                             ("min-p", "min_p", 0)) if r.get(key, off) != off]
        return r["policy"] + (f" ({', '.join(cuts)})" if cuts and r["policy"] != "greedy" else "")

    for r in rows:
        context = r["prompt_tokens"] + r["decode_tokens"] // 2
        lm_head = r.get("lm_head", "bf16")
        roof = step_bytes(shape, r["weights"], r["sequences"], context, r["kv_cache"], lm_head) / bw * 1e3
        print(f"| {r['weights']} | {lm_head} | {r['sequences']} | {r['prompt_tokens']} | {r['kv_cache']} | "
              f"{'graph' if r['cuda_graph'] else 'eager'} | {policy(r)} | {r['prefill_tokens_per_s']:.0f} | "
              f"{r['ms_per_step']:.3f} | {r['tokens_per_s']:.1f} | {roof:.3f} | {100 * roof / r['ms_per_step']:.0f}% |")


if __name__ == "__main__":
    main()
