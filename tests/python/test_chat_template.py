"""reset_chat_format against transformers' apply_chat_template, byte for byte.

The references (tests/text/chat_reference.json) were rendered by
tests/text/chat_reference.py with transformers on the GPU machine, for every
conversation in tests/text/conversations.json, with and without
add_generation_prompt and enable_thinking (conversations with tools or tool
calls: Qwen3's template only, the one that renders them).  Qwen3 and Llama 3 use their
official tokenizer_config.json from ../shared (skipped when absent); the
DeepSeek-R1-Distill template is the committed fixture.  When transformers is
installed here too, the same cases are also re-rendered live.
"""
import json
import os
import pathlib

import pytest

import reset

ROOT = pathlib.Path(__file__).resolve().parents[2]
TEXT = ROOT / "tests" / "text"
SHARED = pathlib.Path(os.environ.get("RESET_SHARED_DIR", ROOT.parent / "shared")) / "data" / "tokenizers"
REFERENCE = json.loads((TEXT / "chat_reference.json").read_text(encoding="utf-8"))
CONVERSATIONS = json.loads((TEXT / "conversations.json").read_text(encoding="utf-8"))


def tokenizer_dir(name, tmp_path_factory):
    if not (SHARED / "qwen3" / "tokenizer.json").exists():
        pytest.skip(f"{SHARED} is absent: the chat template tests need ../shared/data/tokenizers")
    if name in ("qwen3", "llama3"):
        return SHARED / name
    # DeepSeek-R1-Distill-Qwen: Qwen's vocabulary with DeepSeek's config.
    folder = tmp_path_factory.mktemp("deepseek")
    (folder / "tokenizer.json").write_bytes((SHARED / "qwen3" / "tokenizer.json").read_bytes())
    fixture = json.loads((TEXT / "templates" / "deepseek_r1_distill.json").read_text(encoding="utf-8"))
    config = {k: v for k, v in fixture.items() if not k.startswith("_")}
    (folder / "tokenizer_config.json").write_text(json.dumps(config, ensure_ascii=False), encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def tokenizers_by_template(tmp_path_factory):
    return {name: reset.Tokenizer(tokenizer_dir(name, tmp_path_factory)) for name in REFERENCE["templates"]}


def test_reference_covers_the_required_cases():
    cases = REFERENCE["cases"]
    assert {c["template"] for c in cases} == {"qwen3", "llama3", "deepseek-r1"}
    templates = list(REFERENCE["templates"])
    assert len(cases) == sum(len(c.get("templates", templates)) for c in CONVERSATIONS) * 4
    assert sum(1 for c in CONVERSATIONS if c.get("tools")) >= 2
    assert sum(1 for c in CONVERSATIONS for m in c["messages"] if m.get("tool_calls")) >= 3


def test_templates_are_recognised(tokenizers_by_template):
    for name, tok in tokenizers_by_template.items():
        assert tok.tokenizer_info()["chat_template"] == name


def test_byte_identical_to_transformers(tokenizers_by_template):
    failures = []
    for case in REFERENCE["cases"]:
        tok = tokenizers_by_template[case["template"]]
        conversation = CONVERSATIONS[case["conversation"]]
        got = tok.chat_format(conversation["messages"], tools=conversation.get("tools"),
                              add_generation_prompt=case["add_generation_prompt"],
                              enable_thinking=case["enable_thinking"])
        if got != case["text"]:
            failures.append((case["template"], CONVERSATIONS[case["conversation"]]["name"],
                             case["add_generation_prompt"], case["enable_thinking"], got, case["text"]))
    assert not failures, f"{len(failures)} differ; first: {failures[0]!r}"


def test_chat_text_tokenizes_like_transformers(tokenizers_by_template):
    tokenizers = pytest.importorskip("tokenizers")
    for name in ("qwen3", "llama3"):
        hf = tokenizers.Tokenizer.from_file(str(SHARED / name / "tokenizer.json"))
        for case in REFERENCE["cases"]:
            if case["template"] == name:
                assert tokenizers_by_template[name].encode(case["text"]) == \
                    hf.encode(case["text"], add_special_tokens=False).ids


def test_live_transformers_rendering_when_installed(tokenizers_by_template):
    pytest.importorskip("transformers", reason="the committed reference covers this without transformers")
    import importlib.util
    spec = importlib.util.spec_from_file_location("chat_reference", TEXT / "chat_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for name in ("qwen3", "llama3"):
        config = json.loads((SHARED / name / "tokenizer_config.json").read_text(encoding="utf-8"))
        assert module.fnv1a(config["chat_template"]) == REFERENCE["templates"][name]["fnv1a"]
        renderer = module.renderer(config)
        for conversation in CONVERSATIONS[:4]:
            want = renderer.apply_chat_template(conversation["messages"], tokenize=False, add_generation_prompt=True,
                                                enable_thinking=False)
            assert tokenizers_by_template[name].chat_format(conversation["messages"], enable_thinking=False) == want


def tool_conversations():
    return [c for c in CONVERSATIONS if c.get("templates") == ["qwen3"]]


def test_templates_without_tools_refuse_them(tokenizers_by_template):
    # DeepSeek-R1's template shows no tools list and fails on a tool-call message under transformers 5
    # (its `content is none` test meets a dropped key); Llama 3's first release has neither.
    for name in ("deepseek-r1", "llama3"):
        for conversation in tool_conversations():
            with pytest.raises(reset.ResetError) as error:
                tokenizers_by_template[name].chat_format(conversation["messages"], tools=conversation.get("tools"))
            assert error.value.name == "RESET_ERR_UNSUPPORTED"
            assert "renders neither tools nor tool calls" in str(error.value)
        # "[]" is no tools, as `if tools` reads it in the template.
        assert tokenizers_by_template[name].chat_format(CONVERSATIONS[0]["messages"], tools=[]) == \
            tokenizers_by_template[name].chat_format(CONVERSATIONS[0]["messages"])


@pytest.mark.parametrize("tools, messages, status, words", [
    ("{", [], "RESET_ERR_INVALID_ARGUMENT", "tools_json: malformed JSON at byte 1"),
    ({"type": "function"}, [], "RESET_ERR_INVALID_ARGUMENT", "tools_json is not a JSON array"),
    ([1], [], "RESET_ERR_INVALID_ARGUMENT", "tools_json[0] is not a JSON object"),
    (None, [{"role": "user", "content": "x", "tool_calls": []}], "RESET_ERR_INVALID_ARGUMENT",
     "only assistant messages carry tool calls"),
    (None, [{"role": "assistant", "content": "", "tool_calls": [{"function": {"arguments": "{}"}}]}],
     "RESET_ERR_INVALID_ARGUMENT", 'tool_calls_json[0][0] has no "name"'),
    (None, [{"role": "assistant", "content": "", "tool_calls": [{"function": {"name": 7, "arguments": "{}"}}]}],
     "RESET_ERR_INVALID_ARGUMENT", 'tool_calls_json[0][0]\'s "name" is not a string'),
    (None, [{"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "f"}}]}],
     "RESET_ERR_INVALID_ARGUMENT", 'tool_calls_json[0][0] has no "arguments"'),
    (None, [{"role": "assistant", "content": "", "tool_calls": [{"function": [], "name": "f", "arguments": 1}]}],
     "RESET_ERR_INVALID_ARGUMENT", '"function" is not a non-empty JSON object'),
    (b'[{"d": "\xff"}]', [], "RESET_ERR_BAD_UTF8", "tools_json"),
])
def test_malformed_tools_are_refused_by_name(tokenizers_by_template, tools, messages, status, words):
    with pytest.raises(reset.ResetError) as error:
        tokenizers_by_template["qwen3"].chat_format(messages or [{"role": "user", "content": "q"}], tools=tools)
    assert error.value.name == status
    assert words in str(error.value)


def random_json(rng, depth=0):
    """A JSON value with the parts json.dumps writes in its own way: floats of random bits (subnormal,
    huge, negative zero), integers past 2**64, strings with control characters, quotes, backslashes
    and astral code points, nesting."""
    import math
    import struct
    kind = rng.randrange(9 if depth < 3 else 6)
    if kind == 0:
        while True:
            x = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0]
            if math.isfinite(x):
                return x
    if kind == 1:
        return rng.choice([0.1, 1e-05, 1e16, 1e15, -0.0, 0.0001, 5e-324, 1.5, 100.0, 1e22, 123456.789])
    if kind == 2:
        return rng.choice([0, -1, 7, 2**53 + 1, -(2**70), 10**30])
    if kind == 3:
        return rng.choice([True, False, None])
    if kind in (4, 5):
        alphabet = "ab \"\\\n\t\r\b\f\x00\x01\x1f\x7f\u2028é東😀/<>&'"
        return "".join(rng.choice(alphabet) for _ in range(rng.randrange(12)))
    if kind == 6:
        return [random_json(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {"".join(rng.choice("kéy\"\n") for _ in range(rng.randrange(1, 5))): random_json(rng, depth + 1)
            for _ in range(rng.randrange(4))}


def test_random_tools_and_arguments_match_transformers(tokenizers_by_template):
    """Tools and tool-call arguments of random JSON, rendered by transformers (tojson: json.dumps) and
    by reset_chat_format (its own writer): every number, string and nesting must print the same."""
    pytest.importorskip("transformers", reason="needs transformers to render the references live")
    import importlib.util
    import random
    spec = importlib.util.spec_from_file_location("chat_reference", TEXT / "chat_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    renderer = module.renderer(json.loads((SHARED / "qwen3" / "tokenizer_config.json").read_text(encoding="utf-8")))
    rng = random.Random(20261127)
    for case in range(200):
        tools = [{"type": "function", "function": {"name": f"f{case}", "parameters": random_json(rng)}},
                 {"random": random_json(rng), "list": [random_json(rng) for _ in range(3)]}]
        arguments = {"a": random_json(rng), "b": random_json(rng)}
        messages = [{"role": "user", "content": "go"},
                    {"role": "assistant", "content": "",
                     "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": arguments}}]},
                    {"role": "tool", "content": "done"}]
        want = renderer.apply_chat_template(messages, tools=tools, tokenize=False, add_generation_prompt=True)
        got = tokenizers_by_template["qwen3"].chat_format(messages, tools=tools)
        assert got == want, (case, tools, arguments)
