#!/usr/bin/env python3
"""make_engine_models.py -- random-weight Hugging Face checkpoints for the CUDA engine test.

The golden fixtures (tests/fixtures/models) have head dimensions of 16-32 so the CPU
tests stay fast; the CUDA attention kernels serve the head dimensions real models use
(64 and 128; see docs/cuda-engine.md).  This script builds small models with those head
dimensions in the real HF format with `transformers`, covering what the engine must get
right: Qwen3 (q/k norm, head_dim != hidden/heads, tied embeddings, GQA 2), Qwen2 (q/k/v
biases, MQA-like group 4, intermediate 600 so down_proj's K is padded to 608), Llama 3
(llama3 RoPE scaling, group 8, hidden 200 so every hidden-side K is padded to 208).

test_cuda_engine compares the CUDA backend with the CPU reference engine on them; the CPU
engine itself is checked against transformers on the golden fixtures.

    python3 tests/gpu/make_engine_models.py OUT_DIR
"""

import copy
import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "fixtures"))
from make_fixtures import config_class, init_weights, legacy_config  # noqa: E402

SEED = 20261123

SPECS = {
    "engine-qwen3": dict(
        model_type="qwen3",
        config=dict(vocab_size=1000, hidden_size=256, num_hidden_layers=3, num_attention_heads=4,
                    num_key_value_heads=2, head_dim=128, intermediate_size=688, tie_word_embeddings=True,
                    rope_parameters={"rope_type": "default", "rope_theta": 1000000.0},
                    max_position_embeddings=4096, rms_norm_eps=1e-6, initializer_range=0.1,
                    bos_token_id=1, eos_token_id=2)),
    "engine-qwen2": dict(
        model_type="qwen2",
        config=dict(vocab_size=777, hidden_size=256, num_hidden_layers=2, num_attention_heads=4,
                    num_key_value_heads=1, intermediate_size=600, tie_word_embeddings=False,
                    rope_parameters={"rope_type": "default", "rope_theta": 10000.0},
                    max_position_embeddings=4096, rms_norm_eps=1e-6, initializer_range=0.1,
                    bos_token_id=1, eos_token_id=3)),
    "engine-llama3": dict(
        model_type="llama",
        config=dict(vocab_size=1024, hidden_size=200, num_hidden_layers=2, num_attention_heads=8,
                    num_key_value_heads=1, head_dim=64, intermediate_size=512, tie_word_embeddings=False,
                    rope_parameters={"rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0,
                                     "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                     "original_max_position_embeddings": 64},
                    max_position_embeddings=4096, rms_norm_eps=1e-5, initializer_range=0.1,
                    bos_token_id=0, eos_token_id=[1, 2])),
}


def main():
    from transformers import AutoModelForCausalLM
    out_root = sys.argv[1]
    for i, (name, spec) in enumerate(SPECS.items()):
        out_dir = os.path.join(out_root, name)
        os.makedirs(out_dir, exist_ok=True)
        config = config_class(spec["model_type"])(**spec["config"])
        torch.manual_seed(SEED + i)
        model = AutoModelForCausalLM.from_config(config).to(torch.float32).eval()
        init_weights(model, SEED + i)
        copy.deepcopy(model).to(torch.bfloat16).save_pretrained(out_dir)
        path = os.path.join(out_dir, "config.json")
        with open(path) as f:
            native = json.load(f)
        with open(path, "w") as f:
            json.dump(legacy_config(native), f, indent=2, sort_keys=True)
        print("wrote", out_dir, flush=True)


if __name__ == "__main__":
    main()
