#!/usr/bin/env python3
"""PyTorch int4 weight-only baseline (tinygemm, torch.ops.aten._weight_int4pack_mm,
group size 128, BF16 activations) on the same shapes and with the same method
as nvfp4_gemv_bench.cu: random weights, copies rotating past 4x the L2, a CUDA
graph of 20 launches replayed 25 times, median per launch.

Usage (on the GPU machine): python3 tests/bench/tinygemm_bench.py --json OUT.json
"""
import argparse
import json
import statistics

import torch

LAUNCHES = 20
SAMPLES = 25
GROUP = 128
TOKENS = (1, 2, 4, 8)

# (model, hidden, qkv N, o K, intermediate, vocab), as in nvfp4_gemv_bench.cu (models.md).
MODELS = [
    ("R1-Distill-Qwen-7B", 3584, 4608, 3584, 18944, 152064),
    ("Qwen3-8B", 4096, 6144, 4096, 12288, 151936),
    ("Qwen3-14B", 5120, 7168, 5120, 17408, 151936),
    ("R1-Distill-Qwen-14B", 5120, 7168, 5120, 13824, 152064),
    ("Qwen3-32B", 5120, 10240, 8192, 25600, 151936),
]


def shapes():
    for model, hidden, qkv, o_in, inter, vocab in MODELS:
        yield model, "qkv", qkv, hidden
        yield model, "o", hidden, o_in
        yield model, "gate_up", 2 * inter, hidden
        yield model, "down", hidden, inter
        yield model, "lm_head", vocab, hidden


def pack(n, k, device):
    """A random int4 weight packed for tinygemm (the uint8 [N, K/2] input form)."""
    q = torch.randint(0, 256, (n, k // 2), dtype=torch.uint8, device=device)
    return torch._convert_weight_to_int4pack(q, 8)


def time_graph(body):
    for i in range(LAUNCHES):
        body(i)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for i in range(LAUNCHES):
            body(i)
    graph.replay()
    samples = []
    for _ in range(SAMPLES):
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        stop.record()
        stop.synchronize()
        samples.append(1000.0 * start.elapsed_time(stop) / LAUNCHES)
    return statistics.median(samples)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", required=True)
    args = parser.parse_args()
    device = torch.device("cuda")
    props = torch.cuda.get_device_properties(device)
    l2 = props.L2_cache_size
    results = []
    measured = {}
    for model, role, n, k in shapes():
        key = (n, k)
        if key not in measured:
            bytes_ = n * k / 2 + (k // GROUP) * n * 2 * 2  # int4 codes + BF16 scales and zeros
            copies = max(2, int(4 * l2 / bytes_) + 1)
            weights = [pack(n, k, device) for _ in range(copies)]
            scales = [
                (torch.rand(k // GROUP, n, 2, device=device, dtype=torch.bfloat16) * 0.02 + 0.001)
                for _ in range(copies)
            ]
            times = {}
            for m in TOKENS:
                x = torch.randn(m, k, device=device, dtype=torch.bfloat16)

                def body(i, x=x):
                    torch.ops.aten._weight_int4pack_mm(x, weights[i % copies], GROUP, scales[i % copies])

                times[m] = time_graph(body)
            measured[key] = (times, bytes_)
            del weights, scales
            torch.cuda.empty_cache()
        times, bytes_ = measured[key]
        for m in TOKENS:
            results.append({"shape": f"{model} {role}", "model": model, "role": role, "impl": "torch_int4_tinygemm",
                            "n": n, "k": k, "m": m, "us": times[m], "bytes": bytes_, "splits": 0})
            print(f"{model + ' ' + role:30s} M={m}  tinygemm {times[m]:8.2f} us {bytes_ / times[m] / 1e3:6.0f} GB/s",
                  flush=True)
    with open(args.json, "w") as f:
        json.dump({"device": props.name, "torch": torch.__version__, "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
