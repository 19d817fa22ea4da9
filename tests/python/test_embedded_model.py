"""The embedded model (models/default) still solves held-out problems on the CPU.

A guard against a broken model file, tokenizer, chat template or CPU engine
regression: load models/default, solve ten held-out test problems greedily and
check the \\boxed{} answers.

The ten are the shortest (by problem text) of the first 200 test problems, so
that the check stays within about 30 s on a slow, shared CPU; the choice is
fixed by the data, not by the model's results.

Threshold 9/10: the model solves 99.7% of the 2,000 test problems greedily in
PyTorch BF16 (models/default/README.md), and all ten of these.  The CPU engine
computes in FP32 from BF16 weights, so a rare near-tie between two tokens may
flip on another CPU; one miss is allowed for that, and a real regression
(wrong weights, tokenizer or template) gets almost none right.
"""
import json
import re

import pytest

import reset
from conftest import ROOT

MODEL = ROOT / "models" / "default"
TEST = ROOT / "training" / "data" / "test.jsonl"
BOXED = re.compile(r"\\boxed\{([^{}]*)\}")


def held_out(count=10, pool=200):
    with open(TEST, encoding="utf-8") as f:
        rows = [json.loads(line) for _, line in zip(range(pool), f)]
    return sorted(rows, key=lambda r: (len(r["problem"]), r["problem"]))[:count]


def test_embedded_model_solves_held_out_problems():
    if not (MODEL / "model.safetensors").exists():
        pytest.skip("models/default is missing")
    problems = held_out()
    correct = []
    # One thread: a 4M-parameter model gains nothing from more, and busy CI
    # machines make OpenMP threads wait on each other.
    with reset.Model(MODEL, weights="bf16", backend="cpu", threads=1) as model:
        for p in problems:
            ids = model.tokenize(model.chat_format([{"role": "user", "content": p["problem"]}]))
            with model.session(max_context=1024) as session:
                session.set_policy(kind="greedy")
                session.prefill(ids)
                out = [step.token for step in session.generate(600)]
            found = BOXED.findall(model.detokenize(out))
            correct.append(bool(found) and found[-1].strip() == p["answer"])
    assert sum(correct) >= 9, f"only {sum(correct)}/10 held-out problems solved: {correct}"
