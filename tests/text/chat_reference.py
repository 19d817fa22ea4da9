#!/usr/bin/env python3
"""Render tests/text/conversations.json with transformers' apply_chat_template
for every chat template libreset supports, writing chat_reference.json (the
committed reference that tests/python/test_chat_template.py compares
libreset's reset_chat_format against, byte for byte).

A conversation with "templates" is rendered for those only (tools and tool
calls: Qwen3's), with its "tools" passed as apply_chat_template(tools=...).

Run on the GPU machine (it has transformers and jinja2; no network needed):
    python3 tests/text/chat_reference.py QWEN3_CONFIG LLAMA3_CONFIG > tests/text/chat_reference.json
QWEN3_CONFIG / LLAMA3_CONFIG: the official tokenizer_config.json files (the
project's tests read them from ../shared/data/tokenizers/; they are not part
of the repository).  The DeepSeek-R1-Distill template is the committed
fixture tests/text/templates/deepseek_r1_distill.json.
"""
import json
import pathlib
import sys

import transformers
from tokenizers import Tokenizer, models
from transformers import PreTrainedTokenizerFast

HERE = pathlib.Path(__file__).resolve().parent


def fnv1a(text):
    """FNV-1a 64 of the UTF-8 template text: libreset recognises templates by it."""
    h = 0xcbf29ce484222325
    for b in text.encode("utf-8"):
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return f"0x{h:016x}"


def token_text(value):
    if isinstance(value, dict):
        return value.get("content")
    return value


def renderer(config):
    """A transformers tokenizer carrying only the template and BOS/EOS texts:
    apply_chat_template(tokenize=False) needs nothing else."""
    tok = PreTrainedTokenizerFast(tokenizer_object=Tokenizer(models.BPE()),
                                  bos_token=token_text(config.get("bos_token")),
                                  eos_token=token_text(config.get("eos_token")))
    tok.chat_template = config["chat_template"]
    return tok


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    configs = {
        "qwen3": json.load(open(sys.argv[1], encoding="utf-8")),
        "llama3": json.load(open(sys.argv[2], encoding="utf-8")),
        "deepseek-r1": json.load(open(HERE / "templates" / "deepseek_r1_distill.json", encoding="utf-8")),
    }
    conversations = json.load(open(HERE / "conversations.json", encoding="utf-8"))
    out = {"transformers": transformers.__version__, "templates": {}, "cases": []}
    for name, config in configs.items():
        out["templates"][name] = {"fnv1a": fnv1a(config["chat_template"]),
                                  "bos_token": token_text(config.get("bos_token"))}
        tok = renderer(config)
        for index, conversation in enumerate(conversations):
            if name not in conversation.get("templates", configs):
                continue
            messages = conversation["messages"]
            for add_generation_prompt in (True, False):
                for enable_thinking in (True, False):
                    text = tok.apply_chat_template(messages, tools=conversation.get("tools"), tokenize=False,
                                                   add_generation_prompt=add_generation_prompt,
                                                   enable_thinking=enable_thinking)
                    out["cases"].append({"template": name, "conversation": index,
                                         "add_generation_prompt": add_generation_prompt,
                                         "enable_thinking": enable_thinking, "text": text})
    json.dump(out, sys.stdout, ensure_ascii=False, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
