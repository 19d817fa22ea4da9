"""reset.Tokenizer through the C ABI: buffers, flags, errors, streaming text,
the ReSET newline sets, and the load-time budget."""
import ctypes
import os
import pathlib
import time

import pytest

import reset
from reset import tokenizer as tk
from reset._lib import lib

ROOT = pathlib.Path(__file__).resolve().parents[2]
SHARED = pathlib.Path(os.environ.get("RESET_SHARED_DIR", ROOT.parent / "shared")) / "data" / "tokenizers"


@pytest.fixture(scope="module")
def qwen3():
    path = SHARED / "qwen3" / "tokenizer.json"
    if not path.exists():
        pytest.skip(f"{path} is absent: these tests need ../shared/data/tokenizers")
    return reset.Tokenizer(path)


def test_load_budget_and_directory_pick(qwen3):
    start = time.perf_counter()
    tok = reset.Tokenizer(SHARED / "qwen3")  # a directory: tokenizer.json is picked
    elapsed = time.perf_counter() - start
    info = tok.tokenizer_info()
    assert info["kind"] == "bpe" and info["vocab_size"] == 151669
    assert info["eos_ids"] == [151645] and info["bos_id"] is None
    assert info["chat_template"] == "qwen3"
    # The budget is 300 ms on the development machine; allow slack for
    # a loaded CI runner but catch a regression to the slow JSON path.
    assert elapsed < 1.0, elapsed


def test_special_tokens_flag(qwen3):
    assert qwen3.encode("<|im_end|>") == [151645]
    assert 151645 not in qwen3.encode("<|im_end|>", special=False)
    assert qwen3.decode([151645, 9707]) == "<|im_end|>Hello"
    assert qwen3.decode([151645, 9707], skip_special=True) == "Hello"


def test_invalid_utf8_is_rejected_not_altered(qwen3):
    for bad in (b"abc\xff", b"\xc0\xaf", b"\xed\xa0\x80", b"caf\xc3", b"\xf4\x90\x80\x80"):
        with pytest.raises(reset.ResetError) as error:
            qwen3.encode(bad)
        assert error.value.name == "RESET_ERR_BAD_UTF8"
        assert "byte" in error.value.message


def test_out_of_range_ids(qwen3):
    for bad in ([-1], [151669], [0, 10**9]):
        with pytest.raises(reset.ResetError) as error:
            qwen3.decode(bad)
        assert error.value.name == "RESET_ERR_OUT_OF_RANGE"
    with pytest.raises(reset.ResetError):
        qwen3.token_bytes(151669)


def test_buffers_report_needed_size(qwen3):
    handle = qwen3._tokenizer_handle()
    text = "Hello world, hello again".encode()
    needed = ctypes.c_size_t(0)
    status = lib.reset_tokenize(handle, text, len(text), 1, None, 0, ctypes.byref(needed))
    assert status == 11 and needed.value == len(qwen3.encode(text))  # RESET_ERR_BUFFER_TOO_SMALL
    short = (ctypes.c_int32 * 2)(-7, -7)
    status = lib.reset_tokenize(handle, text, len(text), 1, short, 2, ctypes.byref(needed))
    assert status == 11 and list(short) == [-7, -7]  # nothing written
    ids = (ctypes.c_int32 * 2)(9707, 1879)
    out = ctypes.create_string_buffer(4)
    status = lib.reset_detokenize(handle, ids, 2, 0, out, 4, ctypes.byref(needed))
    assert status == 11 and needed.value == len("Hello world") and out.raw == b"\0" * 4


def test_token_bytes_and_ids(qwen3):
    assert qwen3.token_bytes(9707) == b"Hello"
    assert qwen3.token_id(" world") == 1879
    assert qwen3.token_id("<|im_start|>") == 151644
    assert qwen3.token_id("no such token text") is None
    assert qwen3.token_bytes(151645, skip_special=True) == b""


def test_step_delimiters(qwen3):
    nl, dnl = qwen3.step_delimiters()
    assert nl == [qwen3.token_id("\n")]
    assert qwen3.token_id("\n\n") in dnl and qwen3.token_id(".\n\n") in dnl
    for token in dnl:
        assert b"\n\n" in qwen3.token_bytes(token)
    assert all(qwen3.token_bytes(t) == b"\n" for t in nl)


def test_chat_unknown_template_says_how_to_override(tmp_path, qwen3):
    (tmp_path / "tokenizer.json").write_bytes((SHARED / "qwen3" / "tokenizer.json").read_bytes())
    (tmp_path / "tokenizer_config.json").write_text('{"chat_template": "{{ messages[0].content }} custom"}')
    tok = reset.Tokenizer(tmp_path)
    with pytest.raises(reset.ResetError) as error:
        tok.chat_format([{"role": "user", "content": "hi"}])
    assert error.value.name == "RESET_ERR_UNSUPPORTED"
    assert "chat_template" in error.value.message and "RESET_CHAT_TEMPLATE_QWEN3" in error.value.message
    # The explicit override renders it as the family asked for.
    assert tok.chat_format([{"role": "user", "content": "hi"}], chat_template="qwen3") == \
        "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"
    assert tok.chat_format([{"role": "user", "content": "a"}, {"role": "user", "content": "b"}],
                           chat_template="plain") == "ab"


def test_chat_rejects_invalid_utf8(qwen3):
    with pytest.raises(reset.ResetError) as error:
        qwen3.chat_format([{"role": "user", "content": b"\xff"}])
    assert error.value.name == "RESET_ERR_BAD_UTF8"


def test_freed_handle_is_rejected():
    handle = tk.c_tokenizer_p()
    path = SHARED / "llama2" / "tokenizer.model"
    if not path.exists():
        pytest.skip(f"{path} is absent")
    assert lib.reset_tokenizer_load(str(path).encode(), ctypes.byref(handle)) == 0
    lib.reset_tokenizer_free(handle)
    n = ctypes.c_size_t(0)
    assert lib.reset_tokenize(handle, b"x", 1, 0, None, 0, ctypes.byref(n)) == 2  # RESET_ERR_INVALID_HANDLE


def test_missing_and_unsupported_files(tmp_path):
    with pytest.raises(reset.ResetError) as error:
        reset.Tokenizer(tmp_path / "nope")
    assert error.value.name == "RESET_ERR_IO"
    (tmp_path / "tokenizer.json").write_text('{"model": {"type": "WordPiece", "vocab": {}}}')
    with pytest.raises(reset.ResetError) as error:
        reset.Tokenizer(tmp_path)
    assert error.value.name == "RESET_ERR_UNSUPPORTED" and "WordPiece" in error.value.message
    (tmp_path / "tokenizer.json").write_text('{"model": {"type": "BPE", "vocab": {"a": 0,}}}')
    with pytest.raises(reset.ResetError) as error:
        reset.Tokenizer(tmp_path)
    assert error.value.name == "RESET_ERR_FORMAT"
