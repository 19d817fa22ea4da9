#!/usr/bin/env python3
"""transformers_baseline.py -- the external baseline of issue 6: the Qwen3-8B shape in BF16 through
Hugging Face transformers on the GPU, batch 1, greedy, a 1,024-token prompt.

    python3 tests/bench/transformers_baseline.py OUT.jsonl [--shape qwen3-8b] [--prompt 1024] [--tokens 64]

The model is built from its config with random weights (transformers' own initialisation, BF16,
on the GPU; no checkpoint needed).  Per-token decode time = (time of generate with 1+T new tokens
- time with 1 new token) / T, each the median of --repeat runs timed with CUDA events, so the
prefill and the first token cancel out.  Two modes, each its own JSON line:
  static-eager    generate(cache_implementation="static", disable_compile=True)
  static-compiled generate(cache_implementation="static"): transformers compiles the forward
                  with torch.compile (CUDA graphs) when the cache is static.
A mode that fails writes its error instead of a time.
"""
import argparse
import json
import statistics
import sys
import time

import torch
import transformers

SHAPES = {
    "qwen3-8b": dict(hidden_size=4096, intermediate_size=12288, num_hidden_layers=36, num_attention_heads=32,
                     num_key_value_heads=8, head_dim=128, vocab_size=151936, max_position_embeddings=40960,
                     rope_theta=1000000.0, tie_word_embeddings=False),
}


def timed_generate(model, ids, new_tokens, **kw):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    out = model.generate(ids, max_new_tokens=new_tokens, min_new_tokens=new_tokens, do_sample=False, **kw)
    end.record()
    torch.cuda.synchronize()
    assert out.shape[1] == ids.shape[1] + new_tokens, out.shape
    return start.elapsed_time(end) / 1e3


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out")
    p.add_argument("--shape", default="qwen3-8b", choices=sorted(SHAPES))
    p.add_argument("--prompt", type=int, default=1024)
    p.add_argument("--tokens", type=int, default=64)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--modes", default="static-eager,static-compiled")
    a = p.parse_args()
    torch.manual_seed(0)
    config = transformers.Qwen3Config(**SHAPES[a.shape], torch_dtype="bfloat16")
    t0 = time.time()
    with torch.device("cuda"):
        model = transformers.Qwen3ForCausalLM(config).to(torch.bfloat16).eval()
    build_s = time.time() - t0
    model.generation_config.pad_token_id = 0
    model.generation_config.eos_token_id = None  # decode every token
    ids = torch.randint(1000, 100000, (1, a.prompt), device="cuda")
    for mode in a.modes.split(","):
        kw = {"cache_implementation": "static"}
        if mode == "static-eager":
            kw["disable_compile"] = True
        record = {"baseline": "transformers", "transformers": transformers.__version__, "torch": torch.__version__,
                  "device": torch.cuda.get_device_name(0), "shape": a.shape, "weights": "bf16", "mode": mode,
                  "sequences": 1, "prompt_tokens": a.prompt, "decode_tokens": a.tokens, "build_s": build_s}
        try:
            with torch.inference_mode():
                t0 = time.time()
                timed_generate(model, ids, 1 + a.tokens, **kw)  # warm-up (compiles in the compiled mode)
                record["warmup_s"] = time.time() - t0
                short = [timed_generate(model, ids, 1, **kw) for _ in range(a.repeat)]
                long = [timed_generate(model, ids, 1 + a.tokens, **kw) for _ in range(a.repeat)]
            ms = 1e3 * (statistics.median(long) - statistics.median(short)) / a.tokens
            record.update(ms_per_step=ms, tokens_per_s=1e3 / ms, prefill_plus_first_s=statistics.median(short))
        except Exception as e:  # noqa: BLE001 -- the record says what failed
            record["error"] = f"{type(e).__name__}: {str(e)[:500]}"
        print(json.dumps(record), flush=True)
        with open(a.out, "a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")


if __name__ == "__main__":
    sys.exit(main())
