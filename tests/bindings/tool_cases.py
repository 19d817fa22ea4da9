#!/usr/bin/env python3
"""Writes the tool-calling chat cases for the Rust and Java binding tests.

Those bindings have no JSON reader of their own, so this script takes the
cases of tests/text/chat_reference.json (transformers' apply_chat_template
with tools=, written by tests/text/chat_reference.py) whose conversation in
tests/text/conversations.json has tools or tool calls, and writes each as one
file of NUL-separated UTF-8 fields that a test splits without parsing JSON:

    add_generation_prompt ("0"/"1"), enable_thinking ("0"/"1"),
    tools (JSON text, "" for none), the number of messages,
    then per message: role, content, tool_calls (JSON text, "" for none),
    and last the reference text.

The tools and tool calls are written back with json.dumps, which keeps the
file's key order and writes every number as Python read it (the template
prints them through json.dumps too, so the rendering is unchanged).

Usage: tool_cases.py SOURCE_DIR OUT_DIR   (writes OUT_DIR/case-NN.bin)
"""
import json
import pathlib
import sys


def main():
    source, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    text = source / "tests" / "text"
    conversations = json.loads((text / "conversations.json").read_text(encoding="utf-8"))
    reference = json.loads((text / "chat_reference.json").read_text(encoding="utf-8"))
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("case-*.bin"):
        old.unlink()
    written = 0
    for case in reference["cases"]:
        conversation = conversations[case["conversation"]]
        messages = conversation["messages"]
        has_tools = "tools" in conversation or any("tool_calls" in m for m in messages)
        if case["template"] != "qwen3" or not has_tools:
            continue
        fields = [str(int(case["add_generation_prompt"])), str(int(case["enable_thinking"])),
                  json.dumps(conversation["tools"], ensure_ascii=False) if "tools" in conversation else "",
                  str(len(messages))]
        for m in messages:
            calls = m.get("tool_calls")
            fields += [m["role"], m.get("content") or "",
                       json.dumps(calls, ensure_ascii=False) if calls is not None else ""]
        fields.append(case["text"])
        if any("\0" in f for f in fields):
            sys.exit("a field holds a NUL: the format cannot carry it")
        (out / f"case-{written:02d}.bin").write_bytes("\0".join(fields).encode("utf-8"))
        written += 1
    # The reference renders 4 tool conversations x generation prompt on/off x thinking on/off.
    if written != 16:
        sys.exit(f"{written} tool cases in the reference, expected 16")


if __name__ == "__main__":
    main()
