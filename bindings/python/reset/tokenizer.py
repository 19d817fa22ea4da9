"""Tokenizers and chat formatting: reset.Tokenizer, and the Model methods
tokenize / detokenize / chat_format.

    tok = reset.Tokenizer("/models/Qwen3-8B")          # a directory, tokenizer.json or tokenizer.model
    ids = tok.encode("Hello <|im_end|>")               # special tokens' text becomes their ids
    tok.decode(ids)
    tok.chat_format([{"role": "user", "content": "2+2?"}], enable_thinking=False)

Ownership: a Tokenizer from a path owns its reset_tokenizer and frees it on
close() (or at the end of a `with` block, or when garbage-collected).  A
model's tokenizer (Model.tokenizer()) belongs to the model and keeps it alive.
"""
import ctypes
import json

from ._lib import (RESET_ERR_OUT_OF_RANGE, OwnedHandle, c_path, c_string, check, enum_name, int32, int32_array,
                   lib)

c_tokenizer_p = ctypes.c_void_p

TOKENIZE_PARSE_SPECIAL = 1
TOKENIZE_ADD_BOS = 2
DETOKENIZE_SKIP_SPECIAL = 1

CHAT_TEMPLATES = {"auto": 0, "qwen3": 1, "deepseek-r1": 2, "llama3": 3, "plain": 4}


class TokenizerInfo(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("vocab_size", ctypes.c_int32), ("bos_id", ctypes.c_int32),
                ("n_eos", ctypes.c_int32), ("eos_ids", ctypes.c_int32 * 8), ("kind", ctypes.c_char * 16),
                ("chat_template", ctypes.c_int), ("has_chat_template", ctypes.c_int32)]


class ChatMessage(ctypes.Structure):
    _fields_ = [("role", ctypes.c_char_p), ("content", ctypes.c_char_p), ("content_len", ctypes.c_size_t)]


class ChatOptions(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("chat_template", ctypes.c_int),
                ("add_generation_prompt", ctypes.c_int32), ("enable_thinking", ctypes.c_int32),
                ("tools_json", ctypes.c_char_p), ("tool_calls_json", ctypes.POINTER(ctypes.c_char_p))]


def _declare(name, restype, argtypes):
    function = getattr(lib, name)
    function.restype = restype
    function.argtypes = argtypes


_size_p = ctypes.POINTER(ctypes.c_size_t)
_ids_p = ctypes.POINTER(ctypes.c_int32)
_declare("reset_tokenizer_load", ctypes.c_int, [ctypes.c_char_p, ctypes.POINTER(c_tokenizer_p)])
_declare("reset_tokenizer_free", None, [c_tokenizer_p])
_declare("reset_tokenizer_info_init_sized", None, [ctypes.POINTER(TokenizerInfo), ctypes.c_size_t])
_declare("reset_tokenizer_get_info", ctypes.c_int, [c_tokenizer_p, ctypes.POINTER(TokenizerInfo)])
_declare("reset_tokenize", ctypes.c_int,
         [c_tokenizer_p, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint32, _ids_p, ctypes.c_size_t, _size_p])
_declare("reset_detokenize", ctypes.c_int,
         [c_tokenizer_p, _ids_p, ctypes.c_size_t, ctypes.c_uint32, ctypes.c_char_p, ctypes.c_size_t, _size_p])
_declare("reset_token_to_text", ctypes.c_int,
         [c_tokenizer_p, ctypes.c_int32, ctypes.c_uint32, ctypes.c_char_p, ctypes.c_size_t, _size_p])
_declare("reset_token_id", ctypes.c_int, [c_tokenizer_p, ctypes.c_char_p, ctypes.c_size_t, _ids_p])
_declare("reset_tokenizer_step_delimiters", ctypes.c_int,
         [c_tokenizer_p, ctypes.c_int32, _ids_p, ctypes.c_size_t, _size_p])
_declare("reset_chat_options_init_sized", None, [ctypes.POINTER(ChatOptions), ctypes.c_size_t])
_declare("reset_chat_format", ctypes.c_int,
         [c_tokenizer_p, ctypes.POINTER(ChatMessage), ctypes.c_size_t, ctypes.POINTER(ChatOptions),
          ctypes.c_char_p, ctypes.c_size_t, _size_p])


def _json_text(value, what):
    """A tools / tool_calls value as the JSON text reset.h takes: lists and dicts as json.dumps writes
    them (the template prints them as transformers' tojson does), a str as JSON text already."""
    text = value if isinstance(value, (str, bytes)) else json.dumps(value, ensure_ascii=False)
    return c_string(_text_bytes(text, what), what)


def _text_bytes(text, what):
    if isinstance(text, str):
        return text.encode("utf-8")  # a str with lone surrogates raises UnicodeEncodeError here
    if isinstance(text, (bytes, bytearray)):
        return bytes(text)  # passed as is: the library rejects invalid UTF-8 (RESET_ERR_BAD_UTF8)
    raise TypeError(f"{what} must be str or bytes, not {type(text).__name__}")


def _read_bytes(call):
    """Run call(buffer, capacity, size_p) by the snprintf idiom: ask the size, then fill."""
    size = ctypes.c_size_t(0)
    capacity = 256
    while True:
        buffer = ctypes.create_string_buffer(capacity)
        status = call(buffer, capacity, ctypes.byref(size))
        if status == 11 and size.value > capacity:  # RESET_ERR_BUFFER_TOO_SMALL
            capacity = size.value
            continue
        check(status)
        return buffer.raw[:size.value]


def _read_ids(call):
    size = ctypes.c_size_t(0)
    capacity = 256
    while True:
        array = (ctypes.c_int32 * max(capacity, 1))()
        status = call(array, capacity, ctypes.byref(size))
        if status == 11 and size.value > capacity:
            capacity = size.value
            continue
        check(status)
        return list(array[:size.value])


class _TokenizerCalls:
    """The calls shared by Tokenizer and Model (both hold a reset_tokenizer)."""

    def _tokenizer_handle(self):
        raise NotImplementedError

    def encode(self, text, special=True, add_bos=False):
        """Text (str, or UTF-8 bytes) to a list of ids.  special=True: the text of a special
        token becomes its id (HF's default); False: encoded as plain text."""
        data = _text_bytes(text, "text")
        flags = (TOKENIZE_PARSE_SPECIAL if special else 0) | (TOKENIZE_ADD_BOS if add_bos else 0)
        handle = self._tokenizer_handle()
        return _read_ids(lambda ids, cap, size: lib.reset_tokenize(handle, data, len(data), flags, ids, cap, size))

    def decode(self, ids, skip_special=False):
        """Ids to str (byte sequences that are not valid UTF-8 become U+FFFD)."""
        _keep, array, n = int32_array(ids, "ids", convert=int)
        flags = DETOKENIZE_SKIP_SPECIAL if skip_special else 0
        handle = self._tokenizer_handle()
        raw = _read_bytes(lambda buf, cap, size: lib.reset_detokenize(handle, array, n, flags, buf, cap, size))
        return raw.decode("utf-8")

    def token_bytes(self, token_id, skip_special=False):
        """The raw bytes of one token (possibly part of a UTF-8 character)."""
        token_id = int32(int(token_id), "token id", RESET_ERR_OUT_OF_RANGE)
        flags = DETOKENIZE_SKIP_SPECIAL if skip_special else 0
        handle = self._tokenizer_handle()
        return _read_bytes(lambda buf, cap, size: lib.reset_token_to_text(handle, token_id, flags, buf, cap, size))

    def token_id(self, text):
        """The id of a token by its exact text, or None."""
        data = _text_bytes(text, "text")
        out = ctypes.c_int32(-1)
        check(lib.reset_token_id(self._tokenizer_handle(), data, len(data), ctypes.byref(out)))
        return None if out.value < 0 else out.value

    def step_delimiters(self):
        """ReSET's (NL ids, DNL ids): tokens whose text is exactly "\\n" / contains "\\n\\n"."""
        handle = self._tokenizer_handle()
        return tuple(_read_ids(lambda ids, cap, size, w=which: lib.reset_tokenizer_step_delimiters(
            handle, w, ids, cap, size)) for which in (0, 1))

    def tokenizer_info(self):
        info = TokenizerInfo()
        lib.reset_tokenizer_info_init_sized(ctypes.byref(info), ctypes.sizeof(info))
        check(lib.reset_tokenizer_get_info(self._tokenizer_handle(), ctypes.byref(info)))
        return {"vocab_size": info.vocab_size, "bos_id": None if info.bos_id < 0 else info.bos_id,
                "eos_ids": list(info.eos_ids)[:info.n_eos], "kind": info.kind.decode(),
                "chat_template": enum_name(CHAT_TEMPLATES, info.chat_template) if info.chat_template else None,
                "has_chat_template": bool(info.has_chat_template)}

    def chat_format(self, messages, add_generation_prompt=True, enable_thinking=True, chat_template="auto",
                    tools=None):
        """Render [{"role": ..., "content": ...}, ...] as the model's chat template does
        (byte-identical to transformers' apply_chat_template).  chat_template: "auto" (recognise
        the tokenizer's), "qwen3", "deepseek-r1", "llama3" or "plain".  Tool calling as OpenAI's
        chat API has it (Qwen3's template): tools, a list of tool dicts; an assistant message's
        "tool_calls", a list of call dicts; content None is "" (an OpenAI tool-call message's)."""
        if chat_template not in CHAT_TEMPLATES:
            raise ValueError(f"chat_template must be one of {', '.join(CHAT_TEMPLATES)}; got {chat_template!r}")
        keep = []  # the bytes objects must outlive the call
        array = (ChatMessage * max(len(messages), 1))()
        calls = (ctypes.c_char_p * max(len(messages), 1))()
        any_calls = False
        for i, message in enumerate(messages):
            role = c_string(_text_bytes(message["role"], "role"), "role")  # role is NUL-terminated in C
            content = _text_bytes(message.get("content") or "", "content")
            keep.append((role, content))
            array[i].role = role
            array[i].content = content
            array[i].content_len = len(content)
            if message.get("tool_calls") is not None:
                keep.append(_json_text(message["tool_calls"], "tool_calls"))
                calls[i] = keep[-1]
                any_calls = True
        options = ChatOptions()
        lib.reset_chat_options_init_sized(ctypes.byref(options), ctypes.sizeof(options))
        options.chat_template = CHAT_TEMPLATES[chat_template]
        options.add_generation_prompt = int(bool(add_generation_prompt))
        options.enable_thinking = int(bool(enable_thinking))
        if tools is not None:
            keep.append(_json_text(tools, "tools"))
            options.tools_json = keep[-1]
        if any_calls:
            options.tool_calls_json = ctypes.cast(calls, ctypes.POINTER(ctypes.c_char_p))
        handle = self._tokenizer_handle()
        raw = _read_bytes(lambda buf, cap, size: lib.reset_chat_format(
            handle, array, len(messages), ctypes.byref(options), buf, cap, size))
        return raw.decode("utf-8")


class Tokenizer(_TokenizerCalls, OwnedHandle):
    """reset.Tokenizer(path): a tokenizer.json, a tokenizer.model, or a model directory (str, bytes or
    os.PathLike; a NUL in it raises ValueError)."""

    _free = "reset_tokenizer_free"
    _noun = "tokenizer"

    def __init__(self, path):
        handle = c_tokenizer_p()
        check(lib.reset_tokenizer_load(c_path(path), ctypes.byref(handle)))
        self._handle = handle

    def _tokenizer_handle(self):
        return self.handle

    @property
    def vocab_size(self):
        return self.tokenizer_info()["vocab_size"]


def attach_to_model(model_class):
    """Give the Model class tokenize / detokenize / chat_format (and tokenizer()), through
    the reset_tokenizer the model owns (reset_model_tokenizer).  model.py calls this once."""
    if hasattr(lib, "reset_model_tokenizer"):
        _declare("reset_model_tokenizer", c_tokenizer_p, [ctypes.c_void_p])

    class _ModelTokenizer(_TokenizerCalls):
        """A model's tokenizer: borrowed from the model, which it keeps alive."""

        def __init__(self, model):
            self._model = model

        def _tokenizer_handle(self):
            handle = lib.reset_model_tokenizer(self._model.handle)
            if not handle:
                raise ValueError("the model has no tokenizer")
            return handle

    def tokenizer(self):
        return _ModelTokenizer(self)

    def tokenize(self, text, special=True, add_bos=False):
        return _ModelTokenizer(self).encode(text, special=special, add_bos=add_bos)

    def detokenize(self, ids, skip_special=False):
        return _ModelTokenizer(self).decode(ids, skip_special=skip_special)

    def chat_format(self, messages, add_generation_prompt=True, enable_thinking=True, chat_template="auto",
                    tools=None):
        return _ModelTokenizer(self).chat_format(messages, add_generation_prompt=add_generation_prompt,
                                                 enable_thinking=enable_thinking, chat_template=chat_template,
                                                 tools=tools)

    model_class.tokenizer = tokenizer
    model_class.tokenize = tokenize
    model_class.detokenize = detokenize
    model_class.chat_format = chat_format
    return model_class
