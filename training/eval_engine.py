#!/usr/bin/env python3
"""Greedy accuracy and decode speed of the model with libreset's own CPU engine.

    RESET_LIBRARY=build-model/libreset.so PYTHONPATH=bindings/python \\
        python3 training/eval_engine.py models/default --n 200 [--reference greedy_test.jsonl]
    ... python3 training/eval_engine.py models/default --speed     # decode tokens/s only

Prompts go through the library's chat_format (the Qwen3 template recognised by
its hash) and tokenizer, decoding is greedy with the session's own sampler.
With --reference (the greedy_test.jsonl written by train.py from the PyTorch
BF16 model) it also counts how many answers and token sequences agree.
Decode speed is generated tokens over the time spent in step() alone
(prefill excluded), one sequence at a time, as an interactive user sees it.
"""
import argparse
import json
import os
import re
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BOXED = re.compile(r"\\boxed\{([^{}]*)\}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("--data", default=os.path.join(HERE, "data", "test.jsonl"))
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--threads", type=int, default=0)
    parser.add_argument("--reference", default="")
    parser.add_argument("--max-tokens", type=int, default=900)
    parser.add_argument("--speed", action="store_true",
                        help="only time greedy decoding of the first problem's answer, three times")
    args = parser.parse_args()
    import reset

    if args.speed:
        model = reset.Model(args.model, threads=args.threads)
        with open(args.data, encoding="utf-8") as f:
            problem = json.loads(f.readline())["problem"]
        ids = model.tokenize(model.chat_format([{"role": "user", "content": problem}]))
        for _ in range(3):
            with model.session() as s:
                s.set_policy("greedy")
                s.prefill(ids)
                t = time.perf_counter()
                n = sum(1 for _ in s.generate(args.max_tokens))
                print(f"decode: {n} tokens, {n / (time.perf_counter() - t):.1f} tokens/s")
        return 0

    with open(args.data, encoding="utf-8") as f:
        problems = [json.loads(line) for line in f][:args.n]
    reference = []
    if args.reference:
        with open(args.reference, encoding="utf-8") as f:
            reference = [json.loads(line) for line in f]
    model = reset.Model(args.model, threads=args.threads)
    correct = same_answer = same_tokens = n_tokens = 0
    decode_s = 0.0
    t0 = time.time()
    for i, p in enumerate(problems):
        prompt = model.chat_format([{"role": "user", "content": p["problem"]}])
        ids = model.tokenize(prompt)
        with model.session() as s:
            s.set_policy("greedy")
            s.prefill(ids)
            t = time.perf_counter()
            out = [r.token for r in s.generate(args.max_tokens)]
            decode_s += time.perf_counter() - t
        n_tokens += len(out)
        text = model.detokenize(out)
        found = BOXED.findall(text)
        answer = found[-1].strip() if found else None
        correct += answer == p["answer"]
        if reference:
            ref = reference[i]
            ref_answer = BOXED.findall(ref["text"])
            same_answer += answer == (ref_answer[-1].strip() if ref_answer else None)
            same_tokens += out == ref["ids"]
        if (i + 1) % 20 == 0:  # partial results, for long runs on a slow CPU
            print(f"{i + 1}: correct {correct}, same answer {same_answer}, identical tokens {same_tokens}, "
                  f"{n_tokens / decode_s:.1f} tokens/s", flush=True)
    n = len(problems)
    print(f"libreset CPU greedy accuracy: {correct}/{n} = {correct / n:.4f}")
    print(f"decode: {n_tokens} tokens in {decode_s:.1f}s = {n_tokens / decode_s:.1f} tokens/s "
          f"(mean {n_tokens / n:.0f} tokens per answer; wall {time.time() - t0:.0f}s)")
    if reference:
        print(f"agreement with PyTorch BF16 greedy: same answer {same_answer}/{n}, identical tokens {same_tokens}/{n}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
