"""reset_chat_format against transformers' apply_chat_template, byte for byte.

The references (tests/text/chat_reference.json) were rendered by
tests/text/chat_reference.py with transformers on the GPU machine, for every
conversation in tests/text/conversations.json, with and without
add_generation_prompt and enable_thinking.  Qwen3 and Llama 3 use their
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
    assert len(cases) == 3 * len(CONVERSATIONS) * 4


def test_templates_are_recognised(tokenizers_by_template):
    for name, tok in tokenizers_by_template.items():
        assert tok.tokenizer_info()["chat_template"] == name


def test_byte_identical_to_transformers(tokenizers_by_template):
    failures = []
    for case in REFERENCE["cases"]:
        tok = tokenizers_by_template[case["template"]]
        got = tok.chat_format(CONVERSATIONS[case["conversation"]]["messages"],
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
