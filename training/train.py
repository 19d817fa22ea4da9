#!/usr/bin/env python3
"""Train libreset's own small reasoning model (Qwen3 architecture, a few million parameters) from scratch.

Everything is made here, seeded: the data (training/make_data.py), a
sentencepiece tokenizer, and the model.  Runs on one GPU (the project's H100
machine) in about eight minutes, then evaluates greedy accuracy on the
held-out test split with the PyTorch model in BF16 and writes a Hugging Face
model directory (BF16 safetensors, tokenizer.model, tokenizer_config.json with
the official Qwen3 chat template, generation_config.json).

    python3 training/train.py --out DIR [--steps N | --budget SECONDS] [--init CKPT]

--steps fixes the number of optimizer steps (reproducible); without it the
script times steps 100..200 and picks as many as fit in --budget seconds, printing
the number so that a rerun can pass it as --steps.  --init continues from an
FP32 state dict saved by an earlier run (a warm restart with a new schedule).

The tokenizer part needs only sentencepiece (and jinja2 for the template
check), so `python3 training/train.py --tokenizer-only DIR` runs anywhere.
"""
import argparse
import io
import json
import math
import os
import random
import re
import sys
import time

import sentencepiece as spm

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_data  # noqa: E402  (the sibling script is the data recipe)

SEED = 1234
# Specials right after <unk> (id 0), in this order: ids 1..5.  "\n\n" and "\n"
# are pieces of their own so that ReSET's step delimiters exist as tokens.
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<think>", "</think>"]
DELIMITERS = ["\n\n", "\n"]
VOCAB = 768  # 256 byte-fallback pieces + 7 specials + ~500 merges (the story text allows at most ~970)
# The default shape: 4.3M parameters.  Small on purpose, since CPU decode speed
# is proportional to the weights read per token; --layers/--intermediate change it.
SHAPE = dict(hidden_size=256, intermediate_size=640, num_hidden_layers=6, num_attention_heads=8,
             num_key_value_heads=4, head_dim=32)
ROPE_THETA = 10000.0


def chat_template():
    with open(os.path.join(HERE, "qwen3_chat_template.jinja"), encoding="utf-8") as f:
        return f.read()


# What the official Qwen3 template renders for one user turn and, for
# training, the assistant's reply (thinking enabled).  check_template() proves
# these strings equal the Jinja rendering, so training sees exactly what
# libreset's chat_format produces at inference.
def render_prompt(problem):
    return f"<|im_start|>user\n{problem}<|im_end|>\n<|im_start|>assistant\n"


def render_reply(example):
    return f"<think>\n{example['reasoning']}\n</think>\n\n{example['final']}<|im_end|>"


def check_template(example):
    import jinja2
    env = jinja2.Environment(trim_blocks=False, lstrip_blocks=False)
    tmpl = env.from_string(chat_template())
    reply = f"<think>\n{example['reasoning']}\n</think>\n\n{example['final']}"
    msgs = [{"role": "user", "content": example["problem"]}]
    assert tmpl.render(messages=msgs, add_generation_prompt=True) == render_prompt(example["problem"])
    full = tmpl.render(messages=msgs + [{"role": "assistant", "content": reply}], add_generation_prompt=False)
    assert full == render_prompt(example["problem"]) + render_reply(example) + "\n", "template mismatch"


def train_tokenizer(examples, out_dir):
    texts = [render_prompt(e["problem"]) + render_reply(e) for e in examples]
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(texts),
        model_writer=model,
        model_type="bpe",
        vocab_size=VOCAB,
        byte_fallback=True,
        split_digits=True,  # one token per digit: arithmetic stays digit-aligned
        character_coverage=1.0,
        user_defined_symbols=SPECIALS + DELIMITERS,
        # Keep text exactly as written (no NFKC, no whitespace folding, no
        # dummy prefix): the chat template's newlines must survive.
        normalization_rule_name="identity",
        remove_extra_whitespaces=False,
        add_dummy_prefix=False,
        split_by_whitespace=True,
        max_sentence_length=16384,
        bos_id=-1, eos_id=-1, pad_id=-1, unk_id=0,
        num_threads=1,
        minloglevel=2,
    )
    blob = model.getvalue()
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "tokenizer.model"), "wb") as f:
        f.write(blob)
    sp = spm.SentencePieceProcessor(model_proto=blob)
    ids = {p: sp.piece_to_id(p) for p in SPECIALS}
    assert [ids[p] for p in SPECIALS] == [1, 2, 3, 4, 5], ids
    return sp


def write_tokenizer_config(out_dir, sp):
    ids = {p: sp.piece_to_id(p) for p in SPECIALS}
    added = {str(ids[p]): {"content": p, "lstrip": False, "normalized": False, "rstrip": False,
                           "single_word": False, "special": p not in ("<think>", "</think>")} for p in SPECIALS}
    config = {
        "added_tokens_decoder": added,
        "add_bos_token": False,
        "add_eos_token": False,
        "bos_token": None,
        "eos_token": "<|im_end|>",
        "pad_token": "<|endoftext|>",
        "unk_token": "<unk>",
        "chat_template": chat_template(),
        "model_max_length": 4096,
        "tokenizer_class": "LlamaTokenizer",
    }
    generation = {"do_sample": True, "temperature": 0.6, "top_p": 0.95, "top_k": 0,
                  "eos_token_id": [ids["<|im_end|>"], ids["<|endoftext|>"]], "pad_token_id": ids["<|endoftext|>"]}
    for name, value in (("tokenizer_config.json", config), ("generation_config.json", generation)):
        with open(os.path.join(out_dir, name), "w", encoding="utf-8") as f:
            json.dump(value, f, indent=2, ensure_ascii=False)
            f.write("\n")


def encode_examples(sp, examples):
    """(ids, n_prompt) per example; the prompt and the reply are encoded apart, which
    equals encoding the whole text because both boundaries are user-defined symbols."""
    prompts = sp.encode([render_prompt(e["problem"]) for e in examples], num_threads=16)
    replies = sp.encode([render_reply(e) for e in examples], num_threads=16)
    for e, p, r in list(zip(examples, prompts, replies))[:50]:
        assert sp.encode(render_prompt(e["problem"]) + render_reply(e)) == p + r
    return [(p + r, len(p)) for p, r in zip(prompts, replies)]


BOXED = re.compile(r"\\boxed\{([^{}]*)\}")


def extract_answer(text):
    found = BOXED.findall(text)
    return found[-1].strip() if found else None


def batches(encoded, batch_size, rng):
    """Batches of similar length (sorted within pools of 64 batches) to keep padding low."""
    order = list(range(len(encoded)))
    rng.shuffle(order)
    pool = batch_size * 64
    out = []
    for i in range(0, len(order), pool):
        chunk = sorted(order[i:i + pool], key=lambda j: len(encoded[j][0]))
        out += [chunk[k:k + batch_size] for k in range(0, len(chunk) - batch_size + 1, batch_size)]
    rng.shuffle(out)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="output model directory")
    parser.add_argument("--train-size", type=int, default=600000)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--steps", type=int, default=0)
    parser.add_argument("--budget", type=float, default=360.0, help="training seconds when --steps is not given")
    parser.add_argument("--init", default="", help="FP32 state dict to start from")
    parser.add_argument("--eval-n", type=int, default=2000)
    parser.add_argument("--sample-n", type=int, default=500)
    parser.add_argument("--workers", type=int, default=16)
    parser.add_argument("--layers", type=int, default=SHAPE["num_hidden_layers"])
    parser.add_argument("--intermediate", type=int, default=SHAPE["intermediate_size"])
    parser.add_argument("--tokenizer-only", action="store_true")
    args = parser.parse_args()
    SHAPE.update(num_hidden_layers=args.layers, intermediate_size=args.intermediate)
    t_start = time.time()
    random.seed(SEED)

    splits, used = make_data.eval_splits()
    if args.tokenizer_only:
        train = make_data.train_split(20000, used, 1)
    else:
        train = make_data.train_split(args.train_size, used, args.workers)
    check_template(train[0])
    sp = train_tokenizer(train[:20000], args.out)
    write_tokenizer_config(args.out, sp)
    encoded = encode_examples(sp, train)
    lengths = sorted(len(ids) for ids, _ in encoded)
    print(f"data: {len(train)} train problems, tokens/example mean {sum(lengths) / len(lengths):.0f} "
          f"p99 {lengths[int(len(lengths) * 0.99)]} max {lengths[-1]}; vocab {sp.get_piece_size()}; "
          f"{time.time() - t_start:.0f}s", flush=True)
    if args.tokenizer_only:
        return

    import torch
    import torch.nn.functional as F
    from transformers import Qwen3Config, Qwen3ForCausalLM

    torch.manual_seed(SEED)
    device = "cuda"
    torch.backends.cuda.matmul.allow_tf32 = True
    pad_id, im_end = sp.piece_to_id("<|endoftext|>"), sp.piece_to_id("<|im_end|>")
    common = dict(vocab_size=VOCAB, max_position_embeddings=4096, rms_norm_eps=1e-6, tie_word_embeddings=True,
                  hidden_act="silu", attention_bias=False, bos_token_id=None, eos_token_id=im_end,
                  pad_token_id=pad_id, use_cache=True, **SHAPE)
    try:  # transformers 5 keeps RoPE settings in rope_parameters
        config = Qwen3Config(rope_parameters={"rope_type": "default", "rope_theta": ROPE_THETA}, **common)
    except TypeError:
        config = Qwen3Config(rope_theta=ROPE_THETA, **common)
    model = Qwen3ForCausalLM(config).to(device)
    if args.init:
        model.load_state_dict(torch.load(args.init, map_location=device))
        print("initialised from", args.init)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"model: {n_params / 1e6:.2f}M parameters, {SHAPE}", flush=True)

    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=args.lr, betas=(0.9, 0.95), eps=1e-8, fused=True)
    rng = random.Random(SEED)

    def make_batch(idx):
        seqs = [encoded[j] for j in idx]
        width = max(len(ids) for ids, _ in seqs)
        inp = torch.full((len(seqs), width), pad_id, dtype=torch.long)
        tgt = torch.full((len(seqs), width), -100, dtype=torch.long)
        for r, (ids, n_prompt) in enumerate(seqs):
            inp[r, :len(ids)] = torch.tensor(ids)
            # Loss on the assistant's tokens only (predicting position t+1 from t).
            tgt[r, n_prompt - 1:len(ids) - 1] = torch.tensor(ids[n_prompt:])
        return inp.to(device, non_blocking=True), tgt.to(device, non_blocking=True)

    def lr_at(step, total):
        if step < args.warmup:
            return args.lr * (step + 1) / args.warmup
        frac = min(1.0, (step - args.warmup) / max(1, total - args.warmup))
        return args.lr * (0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * frac)))

    model.train()
    total = args.steps or 10 ** 9
    step, epoch, t_train, ema = 0, 0, time.time(), None
    queue = []
    while step < total:
        if not queue:
            queue = batches(encoded, args.batch, rng)
            epoch += 1
        inp, tgt = make_batch(queue.pop())
        for g in opt.param_groups:
            g["lr"] = lr_at(step, total)
        # Right padding and a causal mask: pads never influence real tokens, so
        # no attention mask is needed and SDPA keeps its fast causal path.
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(input_ids=inp).logits
        loss = F.cross_entropy(logits.float().view(-1, VOCAB), tgt.view(-1), ignore_index=-100)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        step += 1
        # The first ~100 steps run slower (allocator and kernel warm-up on new
        # shapes), so the step time is measured over steps 100..200.
        if step == 100:
            torch.cuda.synchronize()
            t100 = time.time()
        if step == 200 and not args.steps:
            torch.cuda.synchronize()
            per_step = (time.time() - t100) / 100
            total = max(args.warmup + 100, int((args.budget - (time.time() - t_train)) / per_step) + step)
            print(f"{per_step * 1000:.1f} ms/step: training for {total} steps (pass --steps {total} to repeat)",
                  flush=True)
        if step % 100 == 0 or step == total:
            value = loss.item()
            ema = value if ema is None else 0.9 * ema + 0.1 * value
            print(f"step {step}/{total} epoch {epoch} loss {value:.4f} (ema {ema:.4f}) lr {lr_at(step, total):.2e} "
                  f"{time.time() - t_train:.0f}s", flush=True)
    torch.cuda.synchronize()
    print(f"trained {step} steps in {time.time() - t_train:.0f}s, final loss ema {ema:.4f}", flush=True)

    # Save before evaluating, so a slow evaluation cannot lose the model.
    torch.save({k: v.detach().float().cpu() for k, v in model.state_dict().items()},
               os.path.join(args.out, "..", "fp32_state.pt"))
    model.eval()
    model_bf16 = model.to(torch.bfloat16)
    model_bf16.generation_config.eos_token_id = [im_end, pad_id]
    model_bf16.generation_config.pad_token_id = pad_id
    model_bf16.generation_config.bos_token_id = None
    model_bf16.save_pretrained(args.out, safe_serialization=True)
    write_tokenizer_config(args.out, sp)  # overwrite the generation_config that save_pretrained wrote
    print("saved", sorted(os.listdir(args.out)), flush=True)

    def solve(problems, sample, seed=0):
        from transformers import GenerationConfig
        gen = GenerationConfig(max_new_tokens=900, do_sample=sample, temperature=0.6 if sample else None,
                               top_p=0.95 if sample else None, top_k=0 if sample else None,
                               eos_token_id=[im_end], pad_token_id=pad_id, bos_token_id=None)
        torch.manual_seed(seed)
        outs = []
        for i in range(0, len(problems), 500):
            chunk = [sp.encode(render_prompt(p["problem"])) for p in problems[i:i + 500]]
            width = max(len(c) for c in chunk)
            # Left padding so that every prompt ends where generation starts.
            inp = torch.tensor([[pad_id] * (width - len(c)) + c for c in chunk], device=device)
            mask = torch.tensor([[0] * (width - len(c)) + [1] * len(c) for c in chunk], device=device)
            with torch.no_grad():
                res = model_bf16.generate(input_ids=inp, attention_mask=mask, generation_config=gen)
            for row in res[:, width:].tolist():
                if im_end in row:
                    row = row[:row.index(im_end) + 1]
                outs.append([t for t in row if t != pad_id])
        return outs

    t_eval = time.time()
    test = splits["test"][:args.eval_n]
    greedy = solve(test, sample=False)
    texts = [sp.decode(o) for o in greedy]
    correct = [extract_answer(t) == p["answer"] for t, p in zip(texts, test)]
    gen_len = sum(len(o) for o in greedy) / len(greedy)
    print(f"GREEDY BF16 test accuracy: {sum(correct)}/{len(test)} = {sum(correct) / len(test):.4f} "
          f"(mean {gen_len:.0f} generated tokens, {time.time() - t_eval:.0f}s)", flush=True)
    with open(os.path.join(args.out, "..", "greedy_test.jsonl"), "w") as f:
        for p, o, t, c in zip(test, greedy, texts, correct):
            f.write(json.dumps({"answer": p["answer"], "ids": o, "correct": c, "text": t}) + "\n")
    for t, p, c in zip(texts, test, correct):
        if not c:
            print("FIRST WRONG:", p["problem"], "expected", p["answer"], "\n", t, flush=True)
            break
    if args.sample_n:
        t_s = time.time()
        sampled = solve(test[:args.sample_n], sample=True, seed=SEED)
        ok = sum(extract_answer(sp.decode(o)) == p["answer"] for o, p in zip(sampled, test))
        print(f"SAMPLED (T=0.6, top-p 0.95, seed {SEED}) BF16 accuracy on first {len(sampled)} test: "
              f"{ok}/{len(sampled)} = {ok / len(sampled):.4f} ({time.time() - t_s:.0f}s)", flush=True)
    print(f"total {time.time() - t_start:.0f}s", flush=True)


if __name__ == "__main__":
    main()
