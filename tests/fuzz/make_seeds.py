#!/usr/bin/env python3
"""make_seeds.py -- the seed corpora of the fuzz targets (tests/fuzz/README.md).

Each seed is one fuzz input: a few files in the archive form the targets read
(fuzz_support.h): every file starts with a line "%%FILE <name>" and runs to the
newline before the next such line.

  corpus/model_load/   tiny Hugging Face model directories: Qwen3 BF16 (tied),
                       Qwen2 with biases in two shards, Llama with llama3 RoPE
                       scaling, Qwen3 ModelOpt NVFP4 (hf_quant_config.json, and
                       quantization_config in config.json), Qwen3 compressed-tensors
                       NVFP4 (llm-compressor's format), one with a tokenizer,
                       four with an "options" file (load and session options),
                       one with the embedded model's sentencepiece tokenizer
  corpus/tokenizer_load/  tokenizer.json + tokenizer_config.json cut down from the
                       real Qwen3 and Llama 3 files in ../shared/data/tokenizers
                       (the first byte-level ids, the merges among them, the
                       real normalizer, pre-tokenizer, decoder, added tokens and
                       chat template)
                       and sentencepiece tokenizer.model files: the embedded
                       model's, and small ones written field by field (unigram
                       with byte fallback, BPE, word), one a finding
  corpus/tokenize/     UTF-8 and broken UTF-8 texts (raw bytes, no archive)
  corpus/json/         JSON texts (raw bytes)
  corpus/policy/       standalone policies (raw bytes, read field by field as
                       fuzz_policy.cpp's Bytes does): each kind with explicit and
                       preset T_low/tau0, delimiters that make step boundaries,
                       decide / sample / accept / set_params / reset / trace
                       operations, then entropies for reset_entropy_percentiles
  corpus/session/      API call sequences on one session of the chat fixture
                       (raw bytes, read as fuzz_session.cpp does): prefills,
                       reset_prefill_sequence, decode steps with older
                       reset_step layouts, policies, logits, cancel and reset
  corpus/sequence_file/  sequence files the library saved from the chat fixture
                       (an options byte, then the file): BF16, FP8 and FP32
                       caches after sampled steps, a sequence cut back, an
                       empty one, one holding a stop string's text, one ended
                       (these need the library: RESET_LIBRARY=.../libreset.so)
  corpus/serve_request/  `reset serve` request bodies (chat, completion,
                       /tokenize, /detokenize) and reasoning-splitter texts;
                       `make_seeds.py serve_request` writes these alone

Random weights come from a fixed seed; run from the repository root:
    python3 tests/fuzz/make_seeds.py
"""

import json
import os
import sys
import struct

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.path.join(HERE, "..", "..", "..", "shared", "data", "tokenizers")
RNG = np.random.default_rng(20261126)


def archive(files):
    """The fuzz input holding these files: {name: bytes}."""
    return b"\n".join(b"%%FILE " + name.encode() + b"\n" + data for name, data in files.items())


def bf16(array):
    """FP32 array -> BF16 bytes (round to nearest even)."""
    bits = np.asarray(array, dtype=np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return bits.astype(np.uint16).tobytes()


def safetensors(tensors):
    """{name: (dtype, shape, bytes)} -> a safetensors file."""
    header = {"__metadata__": {"format": "pt"}}
    offset = 0
    blob = b""
    for name, (dtype, shape, data) in tensors.items():
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blob += data
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + blob


def dense(shape, scale=0.2):
    return ("BF16", shape, bf16(RNG.standard_normal(shape) * scale))


def ones(n):
    return ("BF16", (n,), bf16(1.0 + 0.1 * RNG.standard_normal(n)))


def nvfp4(out, inp, rng=RNG, compressed_tensors=False):
    """A ModelOpt NVFP4 linear: E2M1 codes, E4M3 block scales (exponents 6..8: 0.125..2), FP32 scales.  With
    compressed_tensors, the linear as llm-compressor saves it ("nvfp4-pack-quantized"): the codes as
    weight_packed, the reciprocal scales as [1]-shaped global scales (its seeds draw from a generator of their
    own, so that adding them left every other seed's bytes as they were)."""
    codes = rng.integers(0, 256, (out, inp // 2), dtype=np.uint8)
    scales = (rng.integers(6, 9, (out, inp // 16)) << 3 | rng.integers(0, 8, (out, inp // 16))).astype(np.uint8)
    if compressed_tensors:
        return {"weight_packed": ("U8", (out, inp // 2), codes.tobytes()),
                "weight_scale": ("F8_E4M3", (out, inp // 16), scales.tobytes()),
                "weight_global_scale": ("F32", (1,), struct.pack("<f", 100.0)),
                "input_global_scale": ("F32", (1,), struct.pack("<f", 20.0))}
    return {"weight": ("U8", (out, inp // 2), codes.tobytes()),
            "weight_scale": ("F8_E4M3", (out, inp // 16), scales.tobytes()),
            "weight_scale_2": ("F32", (), struct.pack("<f", 0.01)),
            "input_scale": ("F32", (), struct.pack("<f", 0.05))}


# llm-compressor's quantization_config for its NVFP4 scheme (as in tests/fixtures/models/ct-nvfp4-qwen3).
COMPRESSED_TENSORS_NVFP4 = {
    "config_groups": {"group_0": {
        "targets": ["Linear"], "format": "nvfp4-pack-quantized", "output_activations": None,
        "weights": {"num_bits": 4, "type": "float", "symmetric": True, "group_size": 16, "strategy": "tensor_group",
                    "dynamic": False, "scale_dtype": "torch.float8_e4m3fn"},
        "input_activations": {"num_bits": 4, "type": "float", "symmetric": True, "group_size": 16,
                              "strategy": "tensor_group", "dynamic": "local", "scale_dtype": "torch.float8_e4m3fn"}}},
    "format": "nvfp4-pack-quantized", "ignore": ["lm_head"], "kv_cache_scheme": None,
    "quant_method": "compressed-tensors", "quantization_status": "compressed", "sparsity_config": {},
    "transform_config": {}}


def config(model_type, vocab, hidden=32, heads=2, kv_heads=1, head_dim=16, inter=48, layers=1, **extra):
    c = {"architectures": [{"qwen3": "Qwen3ForCausalLM", "qwen2": "Qwen2ForCausalLM",
                            "llama": "LlamaForCausalLM"}[model_type]],
         "model_type": model_type, "vocab_size": vocab, "hidden_size": hidden, "num_hidden_layers": layers,
         "num_attention_heads": heads, "num_key_value_heads": kv_heads, "head_dim": head_dim,
         "intermediate_size": inter, "max_position_embeddings": 64, "rms_norm_eps": 1e-6,
         "rope_theta": 10000.0, "tie_word_embeddings": False, "bos_token_id": 1, "eos_token_id": 2,
         "hidden_act": "silu", "torch_dtype": "bfloat16"}
    c.update(extra)
    return json.dumps(c, indent=1).encode()


def model_tensors(c, quantized=False, compressed_tensors_rng=None):
    """The tensors of the model config c describes (a dict parsed from config()); NVFP4 linears as ModelOpt
    exports them (quantized) or as compressed-tensors saves them (compressed_tensors_rng given)."""
    hidden, heads, kv, hd = c["hidden_size"], c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"]
    inter, vocab = c["intermediate_size"], c["vocab_size"]
    t = {"model.embed_tokens.weight": dense((vocab, hidden)), "model.norm.weight": ones(hidden)}
    if not c.get("tie_word_embeddings"):
        t["lm_head.weight"] = dense((vocab, hidden))
    for i in range(c["num_hidden_layers"]):
        p = f"model.layers.{i}."
        t[p + "input_layernorm.weight"] = ones(hidden)
        t[p + "post_attention_layernorm.weight"] = ones(hidden)
        linears = {"self_attn.q_proj": (heads * hd, hidden), "self_attn.k_proj": (kv * hd, hidden),
                   "self_attn.v_proj": (kv * hd, hidden), "self_attn.o_proj": (hidden, heads * hd),
                   "mlp.gate_proj": (inter, hidden), "mlp.up_proj": (inter, hidden), "mlp.down_proj": (hidden, inter)}
        for name, (out, inp) in linears.items():
            if compressed_tensors_rng is not None:
                for suffix, tensor in nvfp4(out, inp, compressed_tensors_rng, compressed_tensors=True).items():
                    t[p + name + "." + suffix] = tensor
            elif quantized:
                for suffix, tensor in nvfp4(out, inp).items():
                    t[p + name + "." + suffix] = tensor
            else:
                t[p + name + ".weight"] = dense((out, inp))
            if c.get("attention_bias") and name in ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj"):
                t[p + name + ".bias"] = dense((out,))
        if c["model_type"] == "qwen3":
            t[p + "self_attn.q_norm.weight"] = ones(hd)
            t[p + "self_attn.k_norm.weight"] = ones(hd)
    return t


GENERATION = json.dumps({"bos_token_id": 1, "eos_token_id": [2, 3], "do_sample": True, "temperature": 0.6,
                         "top_p": 0.95, "top_k": 20}).encode()


def model_seeds(tokenizer_files):
    seeds = {}
    c = config("qwen3", 40, tie_word_embeddings=True)
    seeds["qwen3_bf16_tied"] = {"config.json": c, "generation_config.json": GENERATION,
                                "model.safetensors": safetensors(model_tensors(json.loads(c)))}

    c = config("qwen2", 40, attention_bias=True, head_dim=16)
    tensors = model_tensors(json.loads(c))
    names = sorted(tensors)
    first = {n: tensors[n] for n in names[: len(names) // 2]}
    second = {n: tensors[n] for n in names[len(names) // 2:]}
    index = {"metadata": {"total_size": 0},
             "weight_map": {**{n: "model-00001-of-00002.safetensors" for n in first},
                            **{n: "model-00002-of-00002.safetensors" for n in second}}}
    seeds["qwen2_bias_sharded"] = {"config.json": c, "model.safetensors.index.json": json.dumps(index).encode(),
                                   "model-00001-of-00002.safetensors": safetensors(first),
                                   "model-00002-of-00002.safetensors": safetensors(second)}

    c = config("llama", 40, rope_scaling={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                           "high_freq_factor": 4.0, "original_max_position_embeddings": 32})
    seeds["llama3_scaled"] = {"config.json": c, "model.safetensors": safetensors(model_tensors(json.loads(c)))}

    c = config("qwen3", 40)
    quant = {"producer": {"name": "modelopt", "version": "0.47.0"},
             "quantization": {"quant_algo": "NVFP4", "kv_cache_quant_algo": None, "group_size": 16,
                              "exclude_modules": ["lm_head", "model.embed_tokens"]}}
    seeds["qwen3_modelopt_hf_quant"] = {"config.json": c, "hf_quant_config.json": json.dumps(quant).encode(),
                                        "model.safetensors": safetensors(model_tensors(json.loads(c), True))}

    c = config("qwen3", 40, quantization_config={"quant_method": "modelopt", "quant_algo": "NVFP4",
                                                  "ignore": ["lm_head"], "kv_cache_quant_algo": None})
    seeds["qwen3_modelopt_config"] = {"config.json": c,
                                      "model.safetensors": safetensors(model_tensors(json.loads(c), True))}

    # The "options" file (fuzz_model_load.cpp): weights, lm_head/activations bits, max_context, KV cache,
    # sequences, then the prompt ids (two bytes each).
    prompt = struct.pack("<6H", 3, 5, 7, 11, 13, 39)
    seeds["qwen3_bf16_as_w4a16_options"] = {**seeds["qwen3_bf16_tied"],
                                            "options": bytes([2, 1, 30, 1, 3]) + prompt}
    seeds["llama3_as_w4a4_options"] = {**seeds["llama3_scaled"], "options": bytes([3, 2, 12, 2, 7]) + prompt}
    seeds["qwen3_modelopt_as_w4a4_options"] = {**seeds["qwen3_modelopt_hf_quant"],
                                               "options": bytes([3, 1, 5, 1, 1]) + prompt}

    vocab = json.loads(tokenizer_files["tokenizer.json"])["added_tokens"][-1]["id"] + 1
    c = config("qwen3", vocab, tie_word_embeddings=True)
    seeds["qwen3_with_tokenizer"] = {"config.json": c, "generation_config.json": GENERATION,
                                     "model.safetensors": safetensors(model_tensors(json.loads(c))),
                                     **tokenizer_files}

    # The embedded model's sentencepiece tokenizer (byte fallback, a Qwen3 chat template), on a
    # model of its vocabulary.
    c = config("qwen3", 768, tie_word_embeddings=True)
    seeds["qwen3_with_sentencepiece"] = {"config.json": c, "generation_config.json": GENERATION,
                                         "model.safetensors": safetensors(model_tensors(json.loads(c))),
                                         **embedded_tokenizer_files()}

    c = config("qwen3", 40, quantization_config=COMPRESSED_TENSORS_NVFP4)
    tensors = model_tensors(json.loads(c), compressed_tensors_rng=np.random.default_rng(20261127))
    seeds["qwen3_compressed_tensors"] = {"config.json": c, "model.safetensors": safetensors(tensors)}
    seeds["qwen3_compressed_tensors_as_w4a4_options"] = {**seeds["qwen3_compressed_tensors"],
                                                         "options": bytes([3, 1, 12, 1, 1]) + prompt}
    return seeds


def embedded_tokenizer_files():
    """models/default's tokenizer.model and tokenizer_config.json."""
    files = {}
    for name in ("tokenizer.model", "tokenizer_config.json"):
        with open(os.path.join(HERE, "..", "..", "models", "default", name), "rb") as f:
            files[name] = f.read()
    return files


def shrunk_tokenizer(name, keep):
    """The real tokenizer.json cut to its first `keep` ids and the merges among them; added tokens follow."""
    with open(os.path.join(SHARED, name, "tokenizer.json"), encoding="utf-8") as f:
        tok = json.load(f)
    with open(os.path.join(SHARED, name, "tokenizer_config.json"), encoding="utf-8") as f:
        cfg = json.load(f)
    vocab = {text: i for text, i in tok["model"]["vocab"].items() if i < keep}
    merges = []
    for merge in tok["model"]["merges"]:
        left, right = merge if isinstance(merge, list) else merge.split(" ", 1)
        if left in vocab and right in vocab and left + right in vocab:
            merges.append(merge)
    tok["model"]["vocab"] = vocab
    tok["model"]["merges"] = merges
    renumber = {}
    for n, added in enumerate(tok["added_tokens"][:12]):
        renumber[added["id"]] = keep + n
        added["id"] = keep + n
    tok["added_tokens"] = tok["added_tokens"][:12]
    cfg["added_tokens_decoder"] = {str(renumber[int(i)]): v for i, v in cfg.get("added_tokens_decoder", {}).items()
                                   if int(i) in renumber}
    return {"tokenizer.json": json.dumps(tok, ensure_ascii=False).encode(),
            "tokenizer_config.json": json.dumps(cfg, ensure_ascii=False, indent=1).encode()}


TEXTS = [
    "Hello, world!", "  leading spaces and\ttabs\n\nnew paragraph\r\n", "<|im_start|>user\nHi<|im_end|>",
    "Straße naïve café – “quotes” 你好，世界 こんにちは 🙂👍🏽", "e\u0301 vs \u00e9 (NFC)", "12345 + 678 = 13023",
    "I'll we've they're IT'S", "\u200b\ufeff zero width", "<think>\nstep\n</think>\n\n", "",
]
BROKEN = [b"\xff\xfe", b"abc\xc3", b"\xe2\x82", b"\xed\xa0\x80 surrogate", b"\xf4\x90\x80\x80 above U+10FFFF",
          b"\xc0\xaf overlong", b"ok \x00 nul"]
JSONS = [b'{"a": [1, 2.5e-3, -0, true, false, null, "x\\u00e9\\ud83d\\ude42\\n"]}', b"[[[[[]]]]]", b'"\\u0000"',
         b'{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}}', b"1e400", b'{"a":1,"a":2}']


# fuzz_policy.cpp's encodings: number() is b / 64 - 0.25 for b < 128, integer() is b - 8.
def number(x):
    b = round((x + 0.25) * 64)
    assert 0 <= b < 128, x
    return bytes([b])


def integer(n):
    assert -8 <= n < 120, n
    return bytes([n + 8])


KINDS = {"greedy": 0, "fixed": 1, "reset": 2, "entropy": 3}
PRESETS = {None: 0, "Qwen3-8B": 1, "DeepSeek-R1-Distill-Qwen-7B": 4}


def policy_params(kind, temperature=0.6, top_k=0, top_p=1.0, min_p=0.0, seed=7, t_high=1.0, t_low=0.25,
                  tau0=0.5, window=4, preset=None, reset_state=0, presence=None, frequency=0.0, repetition=None):
    """The penalties are read where the preset byte's bits 3 (presence and frequency, as number() - 1) and 4
    (repetition, as 0.5 + number()) ask for them."""
    flags = (8 if presence is not None else 0) | (16 if repetition is not None else 0)
    penalties = b""
    if presence is not None:
        penalties += number(presence + 1.0) + number(frequency + 1.0)
    if repetition is not None:
        penalties += number(repetition - 0.5)
    return (bytes([KINDS[kind]]) + number(temperature) + integer(top_k) + number(top_p) + number(min_p) +
            struct.pack("<Q", seed) + number(t_high) + number(t_low) + number(tau0) + integer(window) +
            bytes([PRESETS[preset] | flags, reset_state]) + penalties + bytes([0]))  # 0: the whole struct


def policy_options(newline=(1,), double_newline=(2,), sequence=0):
    out = bytes([len(newline), len(double_newline)])
    for token in list(newline) + list(double_newline):
        out += bytes([token, 0])
    return out + bytes([0, sequence, 0])  # sequence: a small one; struct_size: the whole struct


def logits(values):
    """decide/sample's logits: v / 8 for v in 0..127, None masked."""
    out = bytes([len(values)])
    for v in values:
        assert v is None or 0 <= v < 128, v
        out += bytes([0xF0 if v is None else v])
    return out


def decide(values, sample=False):
    return bytes([2 if sample else 0]) + logits(values)


def accept(token):
    return bytes([4, token])


def policy_run(tokens, sample):
    """Decide (or sample) then accept each token, with logits whose spread varies."""
    out = b""
    for i, token in enumerate(tokens):
        spread = (i * 7) % 24 + 1
        out += decide([(j * 5 + i) % 9 * spread // 4 for j in range(12)] + [None], sample) + accept(token)
    return out


def policy_logit_bias(entries=(), too_many=False):
    """reset_policy_set_logit_bias (0.7): operation 8 with its next byte at 192, the count, then (id, byte)
    pairs read as fuzz_policy reads them (id 255: -1; byte 0 -inf, 1 NaN, 2 +inf, 3 150, else (b - 130) / 1.25)."""
    return bytes([8, 192, 5 if too_many else len(entries)]) + b"".join(bytes([t, b]) for t, b in entries)


def add_context(ids, negative=(), null=False):
    """reset_policy_add_context (operation 9): each id then its flag byte (0xFF: id - 20, refused), then,
    for a non-empty list, 0xFE for a NULL array."""
    out = bytes([9, len(ids)])
    for i, token in enumerate(ids):
        out += bytes([token, 0xFF if i in negative else 0])
    return out + (bytes([0xFE if null else 0]) if ids else b"")


def percentiles(values, percentile):
    return number(percentile / 64) + b"".join(number(v) for v in values)


def policy_seeds():
    steps = [5, 6, 1, 1, 7, 8, 2, 9, 3, 1, 4, 2, 5, 6, 7, 1, 1, 8]
    tail = bytes([8, 0, 8, 8, 0, 3, ord("a"), ord("\n"), 0xC3, 0]) + percentiles([0.5, 0.25, 1.0, 0.75, 0.0], 80)
    seeds = {
        "greedy": policy_params("greedy") + policy_options() + policy_run(steps[:6], True) + tail,
        "fixed_top_k": policy_params("fixed", top_k=3) + policy_options() + policy_run(steps[:8], True) + tail,
        "fixed_top_p_min_p": policy_params("fixed", temperature=0.75, top_p=0.9, min_p=0.1) + policy_options() +
        policy_run(steps, True) + tail,
        "reset_explicit": policy_params("reset") + policy_options() + policy_run(steps, False) + tail,
        "reset_sampled": policy_params("reset", top_p=0.95, window=3) + policy_options((1, 3), (2,)) +
        policy_run(steps, True) + tail,
        "reset_preset": policy_params("reset", t_low=-0.25, tau0=-0.25, preset="Qwen3-8B") + policy_options() +
        policy_run(steps, True) + tail,
        "entropy_preset": policy_params("entropy", t_low=-0.25, tau0=-0.25, preset="DeepSeek-R1-Distill-Qwen-7B") +
        policy_options() + policy_run(steps, True) + tail,
        "set_params": policy_params("reset") + policy_options() + policy_run(steps[:5], True) + decide([1, 2, 3]) +
        bytes([6]) + policy_params("reset", window=2, t_low=0.5) + policy_run(steps[5:10], True) + bytes([6]) +
        policy_params("entropy", window=6, reset_state=1) + policy_run(steps[10:], False) + bytes([7]) +
        policy_run(steps[:4], True) + tail,
        "bad_logits": policy_params("reset") + policy_options() + policy_run(steps[:3], True) +
        bytes([0, 3, 0xF9, 1, 2, 2, 2, 0xF0, 0xF0, 0, 0, 0, 3, 0xF8, 0, 1, 5, 0xFA, 0x52]) + bytes([4, 0xFF]) +
        policy_run(steps[3:8], True) + tail,
        # Found: a struct_size ending inside `preset` (52 of 64 bytes) made the library read half the
        # caller's pointer over the default NULL, then strlen it (SIGSEGV); now INVALID_ARGUMENT.
        "found_struct_size_in_pointer": policy_params("reset", preset="Qwen3-8B")[:-1] + bytes([0xE0, 52]) +
        policy_options() + policy_run(steps[:3], True) + tail,
        # 0.3: the penalties over a context told by reset_policy_add_context (and refused calls of it),
        # then a greedy repetition penalty for a new generation, which keeps the old one as context.
        "penalties_context": policy_params("fixed", temperature=0.8, top_k=5, presence=0.5, frequency=0.25,
                                           repetition=1.25) + policy_options() + add_context([1, 5, 7]) +
        policy_run(steps[:8], True) + add_context([3, 4], negative=(1,)) + add_context([6], null=True) +
        bytes([6]) + policy_params("greedy", repetition=1.5, reset_state=1) + policy_run(steps[8:12], True) +
        bytes([7]) + policy_run(steps[12:15], True) + tail,
        # 0.7: a logit bias (a ban, +100, a raise) under a sampled policy with a penalty; refused biases
        # (NaN, a negative id, a duplicate, too many) keep it, and it outlives reset_policy_reset; then an id
        # past the rows (each sample refused), and none.
        "logit_bias": policy_params("fixed", temperature=0.8, repetition=1.25) + policy_options() +
        policy_logit_bias([(2, 0), (5, 255), (9, 140)]) + policy_run(steps[:6], True) +
        policy_logit_bias([(1, 1)]) + policy_logit_bias([(255, 140)]) + policy_logit_bias([(4, 140), (4, 150)]) +
        policy_logit_bias(too_many=True) + bytes([7]) + policy_run(steps[6:10], True) +
        policy_logit_bias([(19, 140)]) + policy_run(steps[10:12], True) + policy_logit_bias() +
        policy_run(steps[12:], True) + tail,
        # Found (session 34): a sample refused because the bias left nothing to draw kept its decision pending,
        # and the next accept counted that row's entropy; now the refusal touches nothing.
        "found_banned_row_pending": bytes.fromhex("0140084a160700000000000000502030"
                                                  "0c000039000000" "0f8da8fd7f00005d01"
                                                  "0069730c731e06c21e0006c2"),
        # Found (session 34, a harness bug since 0.4): a reset_step whose struct_size ends inside
        # top_logprob_count; the library reads the count's first bytes, the harness took it as 0.
        "found_step_size_inside_count": bytes.fromhex("023608501007000000000000005030300c005959640059ff6062616c"
                                                      "5965726174ff59ff59ff5972ff5972ff597572ff5965726174ff59ff59"),
        "invalid_params": bytes([1]) + number(0.5) + integer(0) + number(1.0) + number(1.0) + bytes(8) +
        number(1.0) + number(0.25) + number(0.5) + integer(0) + bytes([0, 0, 0]) + policy_options() + tail,
    }
    return seeds


# fuzz_session.cpp's operations, byte for byte.
def session_header(weights, sequences, context, kv="bf16"):
    return bytes([{"bf16": 0, "w4a16": 1, "w4a4": 2}[weights], sequences, context, {"bf16": 0, "fp8": 1, "fp32": 2}[kv]])


def ids_bytes(ids):
    """Prompt ids as read_ids reads them: a byte below 250 is that id."""
    assert all(0 <= i < 250 for i in ids)
    return bytes([len(ids), *ids])


def prefill(ids):
    return bytes([0]) + ids_bytes(ids)


def prefill_sequence(sequence, ids):
    return bytes([1, sequence + 1]) + ids_bytes(ids)


def step(capacity, layout=3):
    return bytes([2, capacity, layout])


def run(steps):
    """Up to `steps` plain decode steps, until a sequence ends."""
    return bytes([8, steps - 1])


def session_policy(kind, temperature=0.0, seed=5, t_low=0.25, tau0=0.5, window=8, penalties=None, repetition=None):
    """penalties: (presence, frequency), read by fuzz_session where the reset_state byte has bit 1 set;
    repetition: the repetition penalty, where it has bit 2 set."""
    kinds = {"greedy": 0, "fixed": 1, "reset": 2, "entropy": 3, "none": 4}
    flags = 1 | (2 if penalties is not None else 0) | (4 if repetition is not None else 0)
    tail = bytes([0, flags])
    if penalties is not None:
        tail += number(penalties[0] / 1.5) + number(penalties[1] / 1.5)
    if repetition is not None:
        r = repetition - 0.5
        tail += number(r) if -0.25 <= r < 1.75 else bytes([0x80]) + struct.pack("<f", r)  # raw bits past the range
    return (bytes([3, kinds[kind], int(temperature * 8)]) + integer(0) + number(1.0) + number(0.0) +
            struct.pack("<Q", seed) + number(1.0) + number(t_low) + number(tau0 / 4) + integer(window) + tail)


def set_stop(strings=(), ids=(), max_tokens=0, include=0, clear=False, too_many=False):
    """fuzz_session's reset_set_stop (0.5): operation 7 with its byte's high half, then the options."""
    shape = 240 if clear else 7 if too_many else len(strings)
    out = bytes([7, 128, shape])
    for text in strings:
        data = text.encode() if isinstance(text, str) else text
        out += bytes([len(data)]) + data
    out += bytes([len(ids)]) + bytes(i if 0 <= i < 250 else 250 if i == -1 else 251 for i in ids)
    return out + bytes([max_tokens, include])


def truncate(sequence=None, back=0, over=None):
    """fuzz_session's cut (0.6): operation 4 with its shape byte's high half: every sequence, or one, cut to
    `back` (0..24) tokens fewer than the shortest holds, or to `over` (-2..3) more (refused above 0)."""
    length = back if over is None else over + 252
    return bytes([4, sequence + 1 if sequence is not None else 0, 129 if sequence is not None else 128, length])


def copy_sequence(source, target):
    """fuzz_session's reset_copy_sequence (0.7): operation 4 with its shape byte at 64 (-1 and 9: refused)."""
    return bytes([4, source + 1, 64, target + 1])


def save_and_load(source, target):
    """fuzz_session's reset_save_sequence + reset_load_sequence (0.8): operation 4 with its shape byte at 48
    (-1 and 9: refused); the twin copies instead."""
    return bytes([4, source + 1, 48, target + 1])


def logit_bias(entries=(), too_many=False):
    """fuzz_session's reset_set_logit_bias (0.6): operation 7 with its byte at 64; entries are (id, byte)
    with the byte as the harness reads it: 0 -inf, 1 NaN, 2 +inf, 3 150, else (byte - 130) / 1.25."""
    assert len(entries) <= 3 or not entries
    shape = 5 if too_many else (len(entries) if entries else 4)
    out = bytes([7, 64, shape])
    for token, b in entries:
        out += bytes([token if 0 <= token < 250 else 250 if token == -1 else 251, b])
    return out


def session_seeds():
    hot = session_policy("fixed", temperature=8.0)  # near-uniform over 512 ids: sequences end at random
    return {
        "parallel_then_one": session_header("bf16", 4, 40) + hot + prefill([10, 20, 30, 40, 50]) +
        step(4) * 6 + prefill_sequence(2, [60, 70, 80]) + step(4) * 6 + bytes([4, 3, 0]) + step(4, 1) + step(4, 2) +
        bytes([6]) + prefill_sequence(1, [90]) + step(4) + bytes([5]) + step(4) + prefill_sequence(0, [4]),
        # Seed 5 at T 16 ends a sequence within the run; the ended one is then prefilled again.
        "ended_then_prefilled": session_header("bf16", 8, 0) + session_policy("fixed", temperature=15.875, seed=5) +
        prefill([10, 11, 12]) + run(64) + run(64) + step(8) + prefill_sequence(0, [13]) + prefill_sequence(7, [14]) +
        run(64) + prefill([15, 16]) + run(16),
        "overflow": session_header("w4a16", 8, 20) + session_policy("reset", temperature=0.0) +
        prefill(list(range(2, 30, 2))) + step(8) * 8 + prefill_sequence(7, [100, 102]) + prefill([6, 8, 10]) +
        step(7) + step(8, 0) + bytes([7, 0, 7, 1]),
        "one_sequence_w4a4": session_header("w4a4", 1, 0, "fp8") + prefill([2, 4, 6, 8]) + step(1) * 4 +
        prefill_sequence(0, [12, 14]) + step(1) * 4 + bytes([6, 5]) + prefill([16]) + step(1),
        "bad_arguments": session_header("bf16", 2, 16, "fp32") + prefill_sequence(0, [2]) + prefill([]) + bytes([1]) +
        bytes([0, 2, 250, 251]) + prefill([2, 4]) + prefill_sequence(9, [2]) + bytes([1, 0xF0, 0xFF, 0xFF, 0xFF, 0x7F,
        1, 4]) + bytes([4, 10, 0, 4, 1, 1, 4, 1, 2, 4, 1, 3]) + step(1) + step(0, 7) + session_policy("reset") +
        session_policy("none") + session_policy("entropy", temperature=2.0) + step(2) * 3,
        "bad_options": session_header("bf16", 9, 16),
        # Penalties on, off (counting goes on) and on again, across parallel sequences, a sequence prefill, a
        # cancelled step and a reset; then out of range (refused, the twin keeps the old policy).
        "penalties": session_header("w4a16", 3, 0) + session_policy("fixed", 1.0, penalties=(1.5, 0.75)) +
        prefill([10, 20, 30]) + step(3) * 12 + session_policy("greedy", penalties=(0.0, 0.0)) + step(3) * 4 +
        session_policy("greedy", penalties=(1.5, 1.0)) + step(3) * 8 + prefill_sequence(1, [40]) + run(32) +
        bytes([6]) + step(3) + bytes([5]) + prefill([50, 60]) + session_policy("fixed", 2.0, penalties=(2.5, 0.0)) +
        step(3) * 4,
        # The repetition penalty (0.3) over the prompt, a second turn's prefill and a sequence prefill, alone and
        # with the others; then out of range.
        "repetition": session_header("w4a16", 2, 0) + session_policy("greedy", repetition=1.75) +
        prefill([10, 20, 30, 10]) + step(2) * 8 + prefill([40, 50]) + step(2) * 4 +
        session_policy("fixed", 1.0, penalties=(0.5, 0.25), repetition=1.25) + prefill_sequence(0, [60]) + run(16) +
        bytes([5]) + prefill([70]) + session_policy("greedy", repetition=0.0) + step(2) * 2,
        # Stop conditions (0.5): single letters the hot fixture writes often (and "ea" across tokens),
        # a stop id and max_tokens over 3 sequences, included or not; a change mid-answer, refused
        # options (empty, not UTF-8, too many, an id outside the vocabulary), then none.
        "stop_conditions": session_header("bf16", 3, 0) + session_policy("fixed", temperature=2.0) +
        set_stop(["t", "ea"], ids=[7], max_tokens=12, include=1) + prefill([10, 11, 12]) + run(64) + run(64) +
        step(3) + prefill_sequence(1, [13]) + set_stop(["o", "\u00e9"], max_tokens=5) + run(64) + run(64) +
        set_stop([""]) + set_stop([b"\xff"]) + set_stop(too_many=True, strings=["a"] * 17) + set_stop(ids=[251]) +
        prefill([14]) + run(8) + set_stop(clear=True) + bytes([5]) + prefill([15]) + run(16),
        # Cutting back (0.6): every sequence inside its answer (a step is then refused until a prefill), one
        # sequence alone, one past its length and one outside the session (refused), a cut to the length held
        # (nothing changes), a stop string held back when cut, and every sequence back to nothing.
        "truncate": session_header("bf16", 3, 0) + session_policy("fixed", temperature=2.0) +
        prefill([10, 11, 12, 13]) + run(16) + truncate(back=3) + step(3) + prefill([14]) + run(8) +
        truncate(1, back=2) + step(3) + prefill_sequence(1, [15]) + run(8) + truncate(0, over=1) + truncate(5) +
        truncate(2) + set_stop(["e", "qu"]) + run(8) + truncate(back=1) + prefill([16, 17]) + run(8) +
        bytes([5]) + prefill([18]) + truncate(back=1) + prefill_sequence(0, [19]) + prefill([20]) + run(4),
        # The logit bias (0.6): bans and moves under a hot policy with penalties, then +100 on one token,
        # refused entries (NaN, +inf, 150, an id outside the vocabulary, a duplicate, too many), cleared.
        "logit_bias": session_header("bf16", 3, 0) + session_policy("fixed", 2.0, penalties=(0.5, 0.25)) +
        logit_bias([(5, 0), (6, 0), (7, 200)]) + prefill([10, 11, 12]) + run(32) + logit_bias([(40, 255)]) +
        run(8) + logit_bias([(9, 1)]) + logit_bias([(9, 2)]) + logit_bias([(9, 3)]) + logit_bias([(-1, 140)]) +
        logit_bias([(9, 140), (9, 150)]) + logit_bias(too_many=True) + run(8) + logit_bias() + run(8),
        # Copies (0.7): one sequence onto another mid-answer, onto itself, out of range (refused), a copy of a
        # sequence cut back (no logits until a prefill), a stop string's held text and max_tokens count carried
        # over, and an ended sequence copied onto a live one (every sequence then ended: a step is refused).
        "copy_sequence": session_header("bf16", 3, 0) + session_policy("fixed", 2.0, penalties=(0.5, 0.25)) +
        prefill([10, 11, 12]) + prefill_sequence(1, [13, 14]) + run(12) + copy_sequence(0, 2) + run(8) +
        copy_sequence(2, 2) + copy_sequence(0, 3) + copy_sequence(-1, 0) + copy_sequence(1, 8) +
        truncate(1, back=2) + copy_sequence(1, 0) + step(3) + prefill([15]) + run(8) +
        set_stop(["e", "qu"], max_tokens=6) + run(64) + run(64) + prefill_sequence(1, [20]) + copy_sequence(0, 1) +
        step(3) + prefill([21]) + run(4) + copy_sequence(2, 0) + run(8),
        # Sequence files (0.8), as the copies above but through a file, on a BF16 and an FP8 cache, with
        # ReSET's window in play; a sequence cut back, one that ended, one holding a stop string's text.
        "save_and_load": session_header("bf16", 3, 0) + session_policy("fixed", 2.0, penalties=(0.5, 0.25)) +
        prefill([10, 11, 12]) + prefill_sequence(1, [13, 14]) + run(12) + save_and_load(0, 2) + run(8) +
        save_and_load(2, 2) + save_and_load(0, 3) + save_and_load(-1, 0) + save_and_load(1, 8) +
        truncate(1, back=2) + save_and_load(1, 0) + step(3) + prefill([15]) + run(8) +
        set_stop(["e", "qu"], max_tokens=6) + run(64) + run(64) + prefill_sequence(1, [20]) + save_and_load(0, 1) +
        step(3) + prefill([21]) + run(4) + save_and_load(2, 0) + run(8),
        "save_and_load_fp8": session_header("w4a16", 2, 0, kv="fp8") + session_policy("reset", 1.0) + prefill([30, 31, 32, 33]) +
        run(20) + save_and_load(1, 0) + run(20) + save_and_load(0, 1) + run(8),
    }


def proto_varint(v):
    out = bytearray()
    while True:
        out.append((v & 0x7F) | (0x80 if v > 0x7F else 0))
        v >>= 7
        if not v:
            return bytes(out)


def proto_number(field, v):
    return proto_varint(field << 3) + proto_varint(v)


def proto_bytes(field, data):
    return proto_varint(field << 3 | 2) + proto_varint(len(data)) + data


def sentencepiece_model(pieces, model_type=1, byte_fallback=False, normalizer="identity"):
    """A sentencepiece ModelProto written field by field: pieces (1) = {piece 1, score 2, type 3:
    NORMAL 1, UNKNOWN 2, CONTROL 3, USER_DEFINED 4, BYTE 6}; trainer_spec (2) = {model_type 3:
    UNIGRAM 1, BPE 2, WORD 3, CHAR 4; unk_id 40; bos_id 41; eos_id 42; byte_fallback 35};
    normalizer_spec (3) = {name 1}."""
    out = b""
    for text, kind, score in pieces:
        out += proto_bytes(1, proto_bytes(1, text.encode("utf-8")) + bytes([2 << 3 | 5]) + struct.pack("<f", score)
                           + proto_number(3, kind))
    spec = proto_number(3, model_type) + proto_number(40, 0) + proto_number(41, 1) + proto_number(42, 2)
    if byte_fallback:
        spec += proto_number(35, 1)
    return out + proto_bytes(2, spec) + proto_bytes(3, proto_bytes(1, normalizer.encode()))


def sentencepiece_seeds():
    """tokenizer.model directories: the embedded model's real file, and small models written here
    (unigram with byte fallback, BPE, a word model), plus what fuzzing found."""
    special = [("<unk>", 2, 0.0), ("<s>", 3, 0.0), ("</s>", 3, 0.0)]
    normal = [(p, 1, -float(i)) for i, p in enumerate(["\u2581", "a", "b", "\u2581a", "ab", "\n", "\u00e9", "12"])]
    byte_pieces = [(f"<0x{b:02X}>", 6, 0.0) for b in range(256)]
    return {
        "spm_embedded": embedded_tokenizer_files(),
        "spm_unigram_byte_fallback": {"tokenizer.model": sentencepiece_model(special + byte_pieces + normal,
                                                                            byte_fallback=True)},
        "spm_bpe": {"tokenizer.model": sentencepiece_model(special + normal, model_type=2)},
        "spm_word_user_defined": {"tokenizer.model": sentencepiece_model(
            special + [("<think>", 4, 0.0)] + normal, model_type=3, normalizer="nmt_nfkc")},
        # Session 27: a "\0" piece made Debian's libsentencepiece throw from darts_clone inside Load,
        # which reached the API as RESET_ERR_INTERNAL.
        "found_spm_nul_piece": {"tokenizer.model": sentencepiece_model(special + normal + [("\0", 1, -9.0)])},
    }


def sequence_file_seeds():
    """Files reset_save_sequence wrote from the chat fixture, each behind fuzz_sequence_file's options
    byte (bits 0-1 the KV cache, bit 2 the target sequence, bits 3-7 max_context 8 + 4 x them).  They
    need the library, through the Python binding ($RESET_LIBRARY, or a build folder it finds); without
    it the committed seeds are kept."""
    import sys
    import tempfile
    sys.path.insert(0, os.path.join(HERE, "..", "..", "bindings", "python"))
    try:
        import reset
    except ImportError as e:
        print(f"make_seeds.py: corpus/sequence_file kept as committed ({e})")
        return None
    model = reset.Model(os.path.join(HERE, "..", "fixtures", "chat-model"), backend="cpu")
    seeds = {}
    tmp = tempfile.mkdtemp(prefix="reset-seeds-")
    path = os.path.join(tmp, "s.safetensors")

    def saved(session, sequence, options):
        session.save_sequence(sequence, path)
        with open(path, "rb") as f:
            return bytes([options]) + f.read()

    for kv, kv_bits in (("bf16", 0), ("fp8", 1), ("fp32", 2)):
        session = model.session(max_context=64, sequences=2, kv_cache=kv)
        session.set_policy("reset", temperature=1.0, t_low=0.5, tau0=4.0, window=4, seed=3, presence_penalty=0.5,
                           repetition_penalty=1.2)
        session.set_stop(ignore_eos=True)
        session.prefill([10, 11, 12, 13, 14])
        for _ in range(9):
            session.steps()
        # max_context 64 (bits 3-7 = 14), the other sequence as target.
        seeds[f"decoded_{kv}"] = saved(session, 0, kv_bits | 4 | 14 << 3)
    # A sequence cut back (no logits), an empty one, one holding a stop string's text, one that ended.
    session = model.session(max_context=64, sequences=1)
    session.set_policy("greedy")
    session.prefill([10, 11, 12, 13, 14, 15])
    session.truncate(4)
    seeds["cut_back"] = saved(session, 0, 14 << 3)
    seeds["empty"] = saved(model.session(max_context=8, sequences=1), 0, 0)
    session = model.session(max_context=64, sequences=1)
    session.set_policy("greedy")
    session.prefill([10, 11, 12])
    first = next(r.text for r in session.generate(20) if r.text)
    session.reset()
    session.set_stop(strings=[first + "\x7f\x01"], max_tokens=30)
    session.prefill([10, 11, 12])
    for r in session.generate(30):
        if r.text == "" and session.held_text():
            break
    seeds["held_text"] = saved(session, 0, 14 << 3)
    for _ in session.generate(40):
        pass
    seeds["ended"] = saved(session, 0, 4 | 14 << 3)
    # Too long for a max_context of 8.
    seeds["overflow"] = bytes([0]) + seeds["decoded_bf16"][1:]
    return seeds


def write(directory, name, data):
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, name), "wb") as f:
        f.write(data)


def serve_request_seeds():
    """Request bodies for `reset serve` (byte 0: 0 chat, 1 completion, 2 /tokenize, 3 /detokenize,
    4 the reasoning splitter: then a flags byte (1 split, 2 reasoning first), cut lengths up to a 0 byte,
    then the text)."""
    problem = "Tom has 25 tickets. Tom gets 9 more. How many tickets does Tom have now?"
    chat = {"model": "arith", "messages": [{"role": "system", "content": "Be brief."},
                                           {"role": "user", "content": problem}],
            "temperature": 0.7, "top_p": 0.9, "top_k": 20, "min_p": 0.05, "seed": 3, "max_tokens": 64, "n": 2,
            "stop": ["\n\n", "So"], "stop_token_ids": [3], "logit_bias": {"5": -100, "7": 2.5},
            "logprobs": True, "top_logprobs": 3, "presence_penalty": 0.5, "frequency_penalty": 0.1,
            "repetition_penalty": 1.1, "stream": True, "stream_options": {"include_usage": True}}
    seeds = {
        "chat": b"\x00" + json.dumps(chat).encode(),
        "chat_minimal": b"\x00" + json.dumps({"messages": [{"role": "user", "content": "hi"}]}).encode(),
        "chat_history": b"\x00" + json.dumps({"messages": [
            {"role": "user", "content": problem},
            {"role": "assistant", "content": "34", "reasoning_content": "25 + 9 = 34."},
            {"role": "user", "content": [{"type": "text", "text": "And twice that?"}]}],
            "chat_template_kwargs": {"enable_thinking": False}, "thinking_token_budget": 16,
            "policy": "reset t_low=0.6 tau0=1.2", "max_completion_tokens": 100}).encode(),
        "chat_refused": b"\x00" + json.dumps({"messages": [{"role": "tool", "content": "x"}],
                                              "tools": [{"type": "function"}], "n": 9}).encode(),
        "completion": b"\x01" + json.dumps({"prompt": problem, "max_tokens": 8, "echo": True, "best_of": 1,
                                            "ignore_eos": True, "temperature": 0}).encode(),
        "completion_ids": b"\x01" + json.dumps({"prompt": [[2, 10, 20, 30]], "logprobs": 5,
                                                "suffix": ""}).encode(),
        "tokenize": b"\x02" + json.dumps({"prompt": problem, "add_special_tokens": False}).encode(),
        "tokenize_chat": b"\x02" + json.dumps({"messages": [{"role": "user", "content": problem}]}).encode(),
        "detokenize": b"\x03" + json.dumps({"tokens": [2, 10, 20, 30, 700]}).encode(),
        "split": b"\x04\x01\x03\x01\x07\x00<think>\nTom has 25.\n\nSo 34.\n</think>\n\nThe answer is 34.",
        "split_first": b"\x04\x03\x02\x00Tom has 25.\n</think>\n\n34</thi",
        "chat_tools": b"\x00" + json.dumps({"messages": [
            {"role": "user", "content": "Add 2 and 3."},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "add", "arguments": "{\"a\": 2, \"b\": 3}"}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "5"}],
            "tools": [{"type": "function", "function": {"name": "add", "description": "Add.", "parameters": {
                "type": "object", "properties": {"a": {"type": "number", "default": 1.5e-7}}}}}],
            "tool_choice": "auto", "parallel_tool_calls": False, "max_tokens": 8}).encode(),
        "tool_calls": b"\x04\x01\x05\x02\x0b\x00<think>\nAdd them.\n</think>\n\nSure.\n<tool_call>\n"
                      b"{\"name\": \"add\", \"arguments\": {\"a\": 2, \"b\": 3}}\n</tool_call>\n<tool_call>\n"
                      b"{\"name\": 1}\n</tool_call>\n<tool_call>\n{\"name\": \"f\", \"arguments\": []}",
    }
    return seeds


def main():
    corpus = os.path.join(HERE, "corpus")
    for name, data in serve_request_seeds().items():
        write(os.path.join(corpus, "serve_request"), name, data)
    if sys.argv[1:] == ["serve_request"]:  # those seeds alone (they need no model or library)
        return
    qwen3 = shrunk_tokenizer("qwen3", 400)
    llama3 = shrunk_tokenizer("llama3", 400)
    qwen3_gen = json.dumps({"bos_token_id": 400, "eos_token_id": [401, 400]}).encode()
    write(os.path.join(corpus, "tokenizer_load"), "qwen3", archive({**qwen3, "generation_config.json": qwen3_gen}))
    write(os.path.join(corpus, "tokenizer_load"), "llama3", archive(llama3))
    for name, files in sentencepiece_seeds().items():
        write(os.path.join(corpus, "tokenizer_load"), name, archive(files))
    for name, files in model_seeds(qwen3).items():
        write(os.path.join(corpus, "model_load"), name, archive(files))
    for i, text in enumerate(TEXTS):
        write(os.path.join(corpus, "tokenize"), f"text_{i}", text.encode())
    for i, data in enumerate(BROKEN):
        write(os.path.join(corpus, "tokenize"), f"broken_{i}", data)
    for i, data in enumerate(JSONS):
        write(os.path.join(corpus, "json"), f"json_{i}", data)
    write(os.path.join(corpus, "json"), "qwen3_config", config("qwen3", 40, rope_scaling=None))
    for name, data in policy_seeds().items():
        write(os.path.join(corpus, "policy"), name, data)
    for name, data in session_seeds().items():
        write(os.path.join(corpus, "session"), name, data)
    sequence_files = sequence_file_seeds()
    for name, data in (sequence_files or {}).items():
        write(os.path.join(corpus, "sequence_file"), name, data)


if __name__ == "__main__":
    main()
