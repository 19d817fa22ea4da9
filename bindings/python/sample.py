#!/usr/bin/env python3
"""Generate from a model directory and stream each token with its ReSET signals.

    RESET_LIBRARY=build/libreset.so PYTHONPATH=bindings/python \\
        python3 bindings/python/sample.py tests/fixtures/models/qwen3-tied [PROMPT_IDS...]

A model with a tokenizer also prints the text; the golden fixtures have none.
"""
import sys

import reset


def main():
    path = sys.argv[1]
    prompt = [int(x) for x in sys.argv[2:]] or [1, 2, 3]
    with reset.Model(path) as model, model.session(max_context=256) as session:
        session.set_policy(kind="greedy")
        session.prefill(prompt)
        for step in session.generate(32):
            print(f"{step.token:6d} {step.entropy:8.4f} {step.text!r}")


if __name__ == "__main__":
    main()
