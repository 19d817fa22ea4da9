#!/usr/bin/env python3
"""Tokenizer load time and single-thread encode throughput: libreset vs HF
`tokenizers`, in the same process and run.

    RESET_LIBRARY=build-text/libreset.so PYTHONPATH=bindings/python \
        python3 tests/bench/tokenizer_bench.py > tests/bench/tokenizer_bench.out

Text: a mix of English word problems (GSM8K questions), LaTeX math (MATH-500
problems) from ../shared/data/eval, and code (this repository's C++ sources),
interleaved in chunks of ~2 KB and encoded as one string per chunk (the shape
of prompts).  HF runs with RAYON_NUM_THREADS=1 and encodes chunk by chunk
(encode, not encode_batch), so both are single-threaded.  Best of 5 repeats.
"""
import json
import os
import pathlib
import platform
import sys
import time

os.environ["RAYON_NUM_THREADS"] = "1"
os.environ["TOKENIZERS_PARALLELISM"] = "false"

import tokenizers  # noqa: E402

import reset  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
SHARED = pathlib.Path(os.environ.get("RESET_SHARED_DIR", ROOT.parent / "shared")) / "data"


def corpus():
    english = [json.loads(line)["question"] for line in open(SHARED / "eval" / "gsm8k_test.jsonl", encoding="utf-8")]
    math = [json.loads(line)["problem"] for line in open(SHARED / "eval" / "math500.jsonl", encoding="utf-8")]
    code = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "lib").rglob("*.cpp"))]
    streams = ["\n\n".join(english), "\n\n".join(math), "\n\n".join(code)]
    chunks = []
    for text in streams:
        chunks += [text[i:i + 2048] for i in range(0, len(text), 2048)]
    # Interleave the three kinds so caches see a realistic mix.
    chunks.sort(key=lambda c: hash(c) & 0xFFFF)
    return chunks


def best_of(repeats, fn):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main():
    if not (SHARED / "eval").exists():
        sys.exit(f"{SHARED} is absent: the benchmark needs ../shared/data")
    chunks = corpus()
    n_bytes = sum(len(c.encode("utf-8")) for c in chunks)
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores; "
          f"tokenizers {tokenizers.__version__}")
    print(f"text: {len(chunks)} chunks, {n_bytes / 1e6:.2f} MB (English word problems, LaTeX math, C++ code)")
    for name in ("qwen3", "llama3"):
        path = SHARED / "tokenizers" / name / "tokenizer.json"
        load_ours = best_of(5, lambda: reset.Tokenizer(path).close())
        load_hf = best_of(5, lambda: tokenizers.Tokenizer.from_file(str(path)))
        ours = reset.Tokenizer(path)
        hf = tokenizers.Tokenizer.from_file(str(path))
        ids_ours = [ours.encode(c) for c in chunks]
        ids_hf = [hf.encode(c, add_special_tokens=False).ids for c in chunks]
        assert ids_ours == ids_hf, "ids differ"
        n_tokens = sum(len(i) for i in ids_ours)
        t_ours = best_of(5, lambda: [ours.encode(c) for c in chunks])
        t_hf = best_of(5, lambda: [hf.encode(c, add_special_tokens=False) for c in chunks])
        print(f"{name}: load libreset {load_ours * 1e3:.0f} ms, HF {load_hf * 1e3:.0f} ms; "
              f"encode {n_tokens} tokens: libreset {n_bytes / t_ours / 1e6:.2f} MB/s "
              f"({n_tokens / t_ours / 1e6:.2f} M tok/s), HF {n_bytes / t_hf / 1e6:.2f} MB/s "
              f"({n_tokens / t_hf / 1e6:.2f} M tok/s); ratio {t_hf / t_ours:.2f}x; ids identical")
    path = SHARED / "tokenizers" / "llama2" / "tokenizer.model"
    import sentencepiece
    ours = reset.Tokenizer(path)
    sp = sentencepiece.SentencePieceProcessor(model_file=str(path))
    t_ours = best_of(3, lambda: [ours.encode(c, special=False) for c in chunks])
    t_sp = best_of(3, lambda: [sp.encode(c) for c in chunks])
    print(f"llama2 (sentencepiece): libreset {n_bytes / t_ours / 1e6:.2f} MB/s, "
          f"sentencepiece python {n_bytes / t_sp / 1e6:.2f} MB/s (same library underneath)")


if __name__ == "__main__":
    main()
