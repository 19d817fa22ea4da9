#!/usr/bin/env python3
"""make_random_checkpoint.py -- a random-weight checkpoint at a real model's shape, for benchmarks.

Writes a Hugging Face directory (config.json, generation_config.json, model.safetensors and,
for ModelOpt NVFP4, hf_quant_config.json) in one of three real formats:
  bf16       every weight BF16, as a downloaded checkpoint;
  nvfp4      a ModelOpt NVFP4 export: linears as U8 codes [N, K/2] + F8_E4M3 block scales
             [N, K/16] + F32 weight_scale_2 and input_scale; embeddings, norms, lm_head BF16;
  ct-nvfp4   the same codes and scales as llm-compressor saves them (compressed-tensors,
             "nvfp4-pack-quantized", scheme NVFP4): weight_packed, weight_scale, and the
             reciprocal scales weight_global_scale = 200 and input_global_scale = 250, whose
             reciprocals are nvfp4's 0.005 and 0.004 to the bit, so both formats make one model.
Values are random but realistic in range (never zeros): BF16 weights of magnitude
2^-7..2^-6 with random signs, FP4 codes uniform over all 16 values, block scales
uniform in [0.5, 4), norm weights near 1.  Built with numpy in chunks (an 8B model
in well under a minute), no transformers needed.

    python3 tests/bench/make_random_checkpoint.py SHAPE FORMAT OUT_DIR
    SHAPE: qwen3-8b | qwen3-32b | r1-distill-qwen-7b | tiny     FORMAT: bf16 | nvfp4 | ct-nvfp4
Shapes from ../shared/docs/models.md.
"""

import json
import os
import struct
import sys

import numpy as np

SHAPES = {
    "qwen3-8b": dict(model_type="qwen3", hidden=4096, intermediate=12288, layers=36, heads=32, kv_heads=8,
                     head_dim=128, vocab=151936, max_pos=40960, theta=1000000.0, bias=False, qk_norm=True),
    "qwen3-32b": dict(model_type="qwen3", hidden=5120, intermediate=25600, layers=64, heads=64, kv_heads=8,
                      head_dim=128, vocab=151936, max_pos=40960, theta=1000000.0, bias=False, qk_norm=True),
    "r1-distill-qwen-7b": dict(model_type="qwen2", hidden=3584, intermediate=18944, layers=28, heads=28,
                               kv_heads=4, head_dim=128, vocab=152064, max_pos=131072, theta=10000.0, bias=True,
                               qk_norm=False),
    # A few MB, to check the writer and the loader on any machine.
    "tiny": dict(model_type="qwen3", hidden=256, intermediate=512, layers=2, heads=2, kv_heads=1, head_dim=128,
                 vocab=1024, max_pos=4096, theta=1000000.0, bias=False, qk_norm=True),
}

rng = np.random.default_rng(20261122)


def bf16_bits(n):
    """Random BF16 bit patterns: sign random, exponent 2^-7, mantissa random: |w| in [2^-7, 2^-6)."""
    r = rng.integers(0, 1 << 16, size=n, dtype=np.uint16)
    return (r & np.uint16(0x807F)) | np.uint16(0x3C00)


def norm_bits(n):
    """Near 1: exponent 2^0 with a random 3-bit mantissa tail (1.0 .. 1.06)."""
    return np.uint16(0x3F80) | rng.integers(0, 8, size=n, dtype=np.uint16)


def tensors(shape, fmt):
    """(name, dtype, shape, generator of byte chunks) in file order."""
    s = SHAPES[shape]
    h, i, hd = s["hidden"], s["intermediate"], s["head_dim"]
    out = []

    def bf16(name, dims, fill=bf16_bits):
        count = int(np.prod(dims))

        def gen():
            step = 1 << 26
            for at in range(0, count, step):
                yield fill(min(step, count - at)).tobytes()
        out.append((name, "BF16", list(dims), gen, count * 2))

    def scalar(name, value, dims=()):
        out.append((name, "F32", list(dims), lambda v=value: iter([struct.pack("<f", v)]), 4))

    def linear(name, n, k, bias):
        if fmt == "bf16":
            bf16(name + ".weight", [n, k])
        else:
            def codes():
                step = 1 << 28
                for at in range(0, n * k // 2, step):
                    yield rng.integers(0, 256, size=min(step, n * k // 2 - at), dtype=np.uint8).tobytes()

            def scales():
                step = 1 << 26
                for at in range(0, n * k // 16, step):
                    # E4M3 bytes 0x30..0x47: 0.5 .. 3.75, positive
                    yield rng.integers(0x30, 0x48, size=min(step, n * k // 16 - at), dtype=np.uint8).tobytes()
            compressed_tensors = fmt == "ct-nvfp4"
            out.append((name + (".weight_packed" if compressed_tensors else ".weight"), "U8", [n, k // 2], codes,
                        n * k // 2))
            out.append((name + ".weight_scale", "F8_E4M3", [n, k // 16], scales, n * k // 16))
            if compressed_tensors:
                scalar(name + ".weight_global_scale", 200.0, [1])
                scalar(name + ".input_global_scale", 250.0, [1])
            else:
                scalar(name + ".weight_scale_2", 0.005)
                scalar(name + ".input_scale", 0.004)
        if bias:
            bf16(name + ".bias", [n])

    bf16("model.embed_tokens.weight", [s["vocab"], h])
    for l in range(s["layers"]):
        p = f"model.layers.{l}."
        bf16(p + "input_layernorm.weight", [h], norm_bits)
        bf16(p + "post_attention_layernorm.weight", [h], norm_bits)
        if s["qk_norm"]:
            bf16(p + "self_attn.q_norm.weight", [hd], norm_bits)
            bf16(p + "self_attn.k_norm.weight", [hd], norm_bits)
        linear(p + "self_attn.q_proj", s["heads"] * hd, h, s["bias"])
        linear(p + "self_attn.k_proj", s["kv_heads"] * hd, h, s["bias"])
        linear(p + "self_attn.v_proj", s["kv_heads"] * hd, h, s["bias"])
        linear(p + "self_attn.o_proj", h, s["heads"] * hd, False)
        linear(p + "mlp.gate_proj", i, h, False)
        linear(p + "mlp.up_proj", i, h, False)
        linear(p + "mlp.down_proj", h, i, False)
    bf16("model.norm.weight", [h], norm_bits)
    bf16("lm_head.weight", [s["vocab"], h])
    return out


def main():
    shape, fmt, out_dir = sys.argv[1], sys.argv[2], sys.argv[3]
    s = SHAPES[shape]
    os.makedirs(out_dir, exist_ok=True)
    config = {
        "architectures": ["Qwen3ForCausalLM" if s["model_type"] == "qwen3" else "Qwen2ForCausalLM"],
        "model_type": s["model_type"], "hidden_size": s["hidden"], "intermediate_size": s["intermediate"],
        "num_hidden_layers": s["layers"], "num_attention_heads": s["heads"],
        "num_key_value_heads": s["kv_heads"], "head_dim": s["head_dim"], "vocab_size": s["vocab"],
        "max_position_embeddings": s["max_pos"], "rope_theta": s["theta"], "rope_scaling": None,
        "rms_norm_eps": 1e-6, "tie_word_embeddings": False, "torch_dtype": "bfloat16",
        "bos_token_id": s["vocab"] - 3, "eos_token_id": s["vocab"] - 2, "attention_bias": s["bias"],
    }
    if fmt == "ct-nvfp4":
        nvfp4 = {"num_bits": 4, "type": "float", "symmetric": True, "group_size": 16, "strategy": "tensor_group",
                 "block_structure": None, "actorder": None, "scale_dtype": "torch.float8_e4m3fn", "zp_dtype": None,
                 "observer_kwargs": {}}
        config["quantization_config"] = {
            "config_groups": {"group_0": {
                "targets": ["Linear"], "format": "nvfp4-pack-quantized", "output_activations": None,
                "weights": dict(nvfp4, dynamic=False, observer="memoryless_minmax"),
                "input_activations": dict(nvfp4, dynamic="local", observer="static_minmax")}},
            "format": "nvfp4-pack-quantized", "global_compression_ratio": None, "ignore": ["lm_head"],
            "kv_cache_scheme": None, "quant_method": "compressed-tensors", "quantization_status": "compressed",
            "sparsity_config": {}, "transform_config": {}, "version": "0.19.0"}
    with open(os.path.join(out_dir, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    with open(os.path.join(out_dir, "generation_config.json"), "w") as f:
        json.dump({"bos_token_id": s["vocab"] - 3, "eos_token_id": [s["vocab"] - 2], "do_sample": False}, f,
                  indent=2)
    if fmt == "nvfp4":
        with open(os.path.join(out_dir, "hf_quant_config.json"), "w") as f:
            json.dump({"producer": {"name": "modelopt", "version": "0.47.0"},
                       "quantization": {"quant_algo": "NVFP4", "kv_cache_quant_algo": None, "group_size": 16,
                                        "exclude_modules": ["lm_head", "model.embed_tokens"]}}, f, indent=2)
    items = tensors(shape, fmt)
    header, offset = {"__metadata__": {"format": "pt"}}, 0
    for name, dtype, dims, _, nbytes in items:
        header[name] = {"dtype": dtype, "shape": dims, "data_offsets": [offset, offset + nbytes]}
        offset += nbytes
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(os.path.join(out_dir, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for _, _, _, gen, _ in items:
            for chunk in gen():
                f.write(chunk)
    print(f"wrote {out_dir}: {shape} {fmt}, {offset / 1e9:.2f} GB", flush=True)


if __name__ == "__main__":
    main()
