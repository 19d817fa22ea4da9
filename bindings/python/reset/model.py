"""Model and Session: loading a checkpoint, prefilling a prompt, decoding.

Ownership: a Model owns its reset_model handle and a Session its
reset_session; both free them on close() (or at the end of a `with` block,
or when garbage-collected).  A Session keeps its Model alive.
"""
import ctypes
import math
import operator
from collections import namedtuple
from dataclasses import dataclass, field

from ._lib import (ACTIVATIONS, BACKENDS, CHECKPOINT_FORMATS, END_REASONS, FILE_ACCESSES, POLICIES,
                   RESET_ERR_OUT_OF_RANGE, WEIGHTS, ModelInfo, ModelOptions, OwnedHandle, PolicyParams, SessionOptions,
                   Step, StopOptions, INT32_MAX, INT32_MIN, byte_buffer, c_path, c_string, check, int32, enum_name,
                   int32_array, lib, logit_bias_entries, policy_params)
from .tokenizer import _read_ids  # the snprintf idiom of reset.h for id arrays
from .tokenizer import _text_bytes  # str as UTF-8, bytes as they are (the library checks them)

try:
    import numpy as _np
except ImportError:  # numpy is optional: lists are returned without it
    _np = None


def _choice(table, value, what):
    try:
        return table[value]
    except KeyError:
        raise ValueError(f"{what} must be one of {', '.join(table)}; got {value!r}") from None


# 0.4: one of a step's most likely tokens (reset_token_logprob): its id and log p, natural log, of
# softmax(raw logits), as StepResult.logprob.
TokenLogprob = namedtuple("TokenLogprob", ["token", "logprob"])


@dataclass
class StepResult:
    """What one decode step produced for one sequence."""
    sequence: int
    token: int
    end: bool
    entropy: float
    step_entropy: float
    global_mean: float
    threshold: float
    temperature: float
    step_index: int
    boundary: bool
    uncertain: bool
    text: str
    # 0.3: log p(token), natural log, of softmax(raw logits): the model's own probability of the token, before
    # the temperature, the truncation and the penalties (vLLM's raw logprobs).  NaN when there is no token.
    logprob: float = math.nan
    # 0.4: the session's top_logprobs most likely tokens of the same raw softmax, as TokenLogprob pairs, most
    # likely first (ties in id order); where the chosen token is among them its logprob equals logprob exactly.
    # Empty when the session asked for none or there is no token.
    top_logprobs: list = field(default_factory=list)
    # 0.5: why the sequence ended, by name (reset_end_reason): "none" while it generates, "eos" (an
    # end-of-generation id), "finished" (it had ended before: token -1), "stop" (a stop string or stop id of
    # Session.set_stop), "length" (set_stop's max_tokens); "unknown-N" for a reason a newer library adds.
    end_reason: str = "none"
    # 0.5: with end_reason "stop", the index of the stop string matched in set_stop's strings, or -1 for a
    # stop id; else -1.
    stop_index: int = -1


def _top_logprobs(step):
    """A reset_step's top_logprobs as a list of TokenLogprob (copies: the C array is the session's)."""
    if step.top_logprob_count <= 0 or not step.top_logprobs:  # none asked for, or no token (NULL then)
        return []
    return [TokenLogprob(entry.token, entry.logprob) for entry in step.top_logprobs[:step.top_logprob_count]]


class Model(OwnedHandle):
    """reset.Model(path, weights="auto"|"bf16"|"nvfp4-w4a16"|"nvfp4-w4a4", backend="auto"|"cpu"|"cuda",
    activations="fp16"|"fp32", file_access="map"|"read"): activations is what W4A16 linears multiply, FP16
    as the CUDA GEMV reads them or (CPU backend only) FP32 unrounded.  file_access (0.12) is how the
    safetensors files are brought into memory: "map" (mmap, the default: quick, the page cache's pages, but
    a file truncated or rewritten while mapped kills the process with SIGBUS) or "read" (read whole into
    memory the model owns, as llama.cpp's --no-mmap: a file changing while read is RESET_ERR_IO, and the
    files are not read afterwards; costs their size in host memory).  path: str, bytes or os.PathLike (a
    NUL in it raises ValueError)."""

    _free = "reset_model_free"
    _noun = "model"

    def __init__(self, path, weights="auto", backend="auto", quantize_lm_head=False, threads=0, activations="fp16",
                 file_access="map"):
        options = ModelOptions()
        lib.reset_model_options_init_sized(ctypes.byref(options), ctypes.sizeof(options))
        options.weights = _choice(WEIGHTS, weights, "weights")
        options.backend = _choice(BACKENDS, backend, "backend")
        options.w4a16_activations = _choice(ACTIVATIONS, activations, "activations")
        options.file_access = _choice(FILE_ACCESSES, file_access, "file_access")
        options.quantize_lm_head = int(bool(quantize_lm_head))
        options.threads = int32(int(threads), "threads")
        handle = ctypes.c_void_p()
        check(lib.reset_model_load(c_path(path), ctypes.byref(options), ctypes.byref(handle)))
        self._handle = handle

    def info(self):
        """The model summary as a dict (architecture, sizes, weight format, bytes, backend), with the reset_model_info
        fields by name: "weights" and "backend" are names as Model() takes them, "checkpoint_format" (0.10) the
        checkpoint's NVFP4 format, "unquantized" (BF16/F16/F32 tensors), "modelopt" (an NVIDIA ModelOpt export) or
        "compressed-tensors" (llm-compressor's nvfp4-pack-quantized); "unknown-N" for a value a newer library adds;
        "kv_cache_scales" (0.10) a bool: True if the checkpoint carries calibrated FP8 KV-cache scales (llm-compressor's
        kv_cache_scheme, ModelOpt's FP8 KV cache), which a kv_cache="fp8" session stores e4m3(x / scale) with, False if
        it uses scale 1."""
        info = ModelInfo()
        lib.reset_model_info_init_sized(ctypes.byref(info), ctypes.sizeof(info))
        check(lib.reset_model_get_info(self.handle, ctypes.byref(info)))
        out = {name: getattr(info, name) for name, _ in ModelInfo._fields_ if name != "struct_size"}
        out["architecture"] = info.architecture.decode()
        out["eos_ids"] = list(info.eos_ids)[:info.n_eos]
        out["weights"] = enum_name(WEIGHTS, info.weights)
        out["backend"] = enum_name(BACKENDS, info.backend)
        out["checkpoint_format"] = enum_name(CHECKPOINT_FORMATS, info.checkpoint_format)
        out["kv_cache_scales"] = bool(info.kv_cache_scales)
        return out

    def session(self, max_context=0, sequences=1, kv_cache="bf16", eager=False, prefill_gemm_tokens=0,
                programmatic_launch=True, top_logprobs=0):
        return Session(self, max_context=max_context, sequences=sequences, kv_cache=kv_cache, eager=eager,
                       prefill_gemm_tokens=prefill_gemm_tokens, programmatic_launch=programmatic_launch,
                       top_logprobs=top_logprobs)


class Session(OwnedHandle):
    """A decoding session; see reset.h for the contract of every call."""

    _free = "reset_session_free"
    _noun = "session"

    # reset_kv_cache values by name ("fp32": the CPU backend's unrounded reference cache).
    KV_CACHE = {"bf16": 0, "fp8": 1, "fp32": 2}

    def __init__(self, model, max_context=0, sequences=1, kv_cache="bf16", eager=False, prefill_gemm_tokens=0,
                 programmatic_launch=True, top_logprobs=0):
        """The reset_session_options fields by name; prefill_gemm_tokens 0 is the library's crossover, -1 never
        (reset.h); programmatic_launch False is plain stream order; top_logprobs (0.4; 0..20) is how many of
        the most likely tokens each step reports in StepResult.top_logprobs (outside 0..20: ResetError
        RESET_ERR_INVALID_ARGUMENT)."""
        if kv_cache not in self.KV_CACHE:
            raise ValueError(f"kv_cache must be one of {sorted(self.KV_CACHE)}, not {kv_cache!r}")
        options = SessionOptions()
        lib.reset_session_options_init_sized(ctypes.byref(options), ctypes.sizeof(options))
        options.max_context = int32(int(max_context), "max_context")
        options.sequences = int32(int(sequences), "sequences")
        options.kv_cache = self.KV_CACHE[kv_cache]
        options.eager = 1 if eager else 0
        options.prefill_gemm_tokens = int32(int(prefill_gemm_tokens), "prefill_gemm_tokens")
        options.programmatic_launch = 0 if programmatic_launch else -1
        options.top_logprobs = int32(int(top_logprobs), "top_logprobs")
        handle = ctypes.c_void_p()
        check(lib.reset_session_create(model.handle, ctypes.byref(options), ctypes.byref(handle)))
        self._handle = handle
        self._model = model  # keeps the Model object (and its handle) alive
        self.sequences = int(sequences)
        # Tokens each sequence can hold (max_context, 0 resolved to min(model maximum, 4096)).
        self.max_context = lib.reset_session_max_context(handle)
        self.vocab_size = model.info()["vocab_size"]
        self._steps = (Step * self.sequences)()


    def set_policy(self, kind="greedy", temperature=0.6, top_p=1.0, top_k=0, min_p=0.0, seed=0, t_high=1.0,
                   t_low=-1.0, tau0=-1.0, window=32, preset=None, reset_state=False, presence_penalty=0.0,
                   frequency_penalty=0.0, repetition_penalty=1.0):
        """The reset_policy_params fields by name.  presence_penalty / frequency_penalty (each in [-2, 2],
        0 = off) lower the logit of a token the sequence has generated c > 0 times in this generation to
        z - frequency_penalty * c - presence_penalty; reset_state=True also starts their counts afresh.
        repetition_penalty r (0.3; [0.1, 10], 1 = off) first divides by r the logit z > 0 (multiplies
        z <= 0 by r) of every token of the sequence's context: prompt, earlier turns and generated tokens."""
        params = policy_params(kind, temperature, top_k, top_p, min_p, seed, t_high, t_low, tau0, window, preset,
                               reset_state, presence_penalty, frequency_penalty, repetition_penalty)
        check(lib.reset_set_policy(self.handle, ctypes.byref(params)))

    def policy(self):
        """The policy in force, as set_policy's keywords: the model's own sampling until set_policy
        (reset_session_get_policy); t_low and tau0 resolved, preset None.  set_policy(**policy()) changes
        nothing."""
        p = PolicyParams()
        lib.reset_policy_params_init_sized(ctypes.byref(p), ctypes.sizeof(p))
        check(lib.reset_session_get_policy(self.handle, ctypes.byref(p)))
        kind = enum_name(POLICIES, p.kind)
        return {"kind": kind, "temperature": p.temperature, "top_p": p.top_p, "top_k": p.top_k, "min_p": p.min_p,
                "seed": p.seed, "t_high": p.t_high, "t_low": p.t_low, "tau0": p.tau0, "window": p.window,
                "presence_penalty": p.presence_penalty, "frequency_penalty": p.frequency_penalty,
                "repetition_penalty": p.repetition_penalty}

    def set_stop(self, strings=(), ids=(), max_tokens=0, include_stop_string=False, ignore_eos=False):
        """Set the stop conditions of every sequence from the next step on (0.5; reset_set_stop): they replace
        the ones in force, and stay through reset() and set_policy.  A sequence ends with end_reason "stop" at
        the first token after which its generated text contains one of `strings` (str, encoded as UTF-8, or
        bytes; a single str or bytes is one stop string), or that draws one of `ids`, with stop_index the
        string's index in `strings` (-1 for an id); with "length" at the max_tokens-th token it generated
        since its last prefill (0 = no limit).  The text before a stop string is reported, the string too
        with include_stop_string, and text that may begin one is held back until it is decided.  With
        ignore_eos an end-of-generation id no longer ends a sequence: it is reported and enters the context
        like any other token (vLLM's ignore_eos, llama.cpp's --ignore-eos), so a benchmark decodes as many
        tokens as it asks for; stop ids, stop strings and max_tokens still end it.  The
        library's errors raise ResetError and leave the conditions as they were: an empty string, one over
        256 bytes, more than 16 strings or 256 ids (RESET_ERR_INVALID_ARGUMENT), bytes that are not UTF-8
        (RESET_ERR_BAD_UTF8), an id outside the vocabulary (RESET_ERR_OUT_OF_RANGE), strings on a model
        without a tokenizer (RESET_ERR_UNSUPPORTED).  A NUL in a string raises ValueError."""
        if isinstance(strings, (str, bytes)):
            strings = [strings]
        encoded = [c_string(_text_bytes(s, f"strings[{i}]"), f"strings[{i}]") for i, s in enumerate(strings)]
        array = (ctypes.c_char_p * max(len(encoded), 1))(*encoded)  # the library copies them
        _keep, pointer, n = int32_array(ids, "ids")
        options = StopOptions()
        lib.reset_stop_options_init_sized(ctypes.byref(options), ctypes.sizeof(options))
        options.strings = array
        options.string_count = len(encoded)
        options.ids = pointer
        options.id_count = n
        options.max_tokens = int32(max_tokens, "max_tokens")
        options.include_stop_string = 1 if include_stop_string else 0
        options.ignore_eos = 1 if ignore_eos else 0
        check(lib.reset_set_stop(self.handle, ctypes.byref(options)))

    def clear_stop(self):
        """Remove every stop condition (reset_set_stop with NULL): sequences end only on end-of-generation ids."""
        check(lib.reset_set_stop(self.handle, None))

    def set_logit_bias(self, bias):
        """Set the logit bias of every sequence from the next step on (0.6; reset_set_logit_bias), as OpenAI's and
        vLLM's logit_bias: `bias` is a dict {token: bias}, or an iterable of (token, bias) pairs, of at most
        1024 tokens (RESET_MAX_LOGIT_BIAS).  It replaces the bias in force; an empty one removes it, as
        clear_logit_bias() does.  A listed token's logit z becomes z + bias (one float32 addition) after the
        repetition penalties and before the temperature, the truncation and the draw, greedy included.  A bias
        is finite in [-100, 100], or float("-inf") to ban the token (OpenAI's -100 makes one all but impossible,
        +100 all but certain).  StepResult.logprob and top_logprobs, the entropy and the ReSET decision still see
        the raw logits, as logits() gives them.  The bias stays through reset(), truncate and set_policy.
        The library's errors raise ResetError and leave the bias in force as it was: a bias that is NaN, +inf
        or outside [-100, 100] and not -inf, a token listed twice, more than 1024 entries, every token of the vocabulary
        banned (RESET_ERR_INVALID_ARGUMENT), a token outside the vocabulary (RESET_ERR_OUT_OF_RANGE); so do a
        token outside int32 (RESET_ERR_OUT_OF_RANGE) and a finite bias that float32 would round to an infinity
        (RESET_ERR_INVALID_ARGUMENT), refused here before ctypes wraps or rounds them."""
        entries, count = logit_bias_entries(bias)
        check(lib.reset_set_logit_bias(self.handle, entries, count))

    def clear_logit_bias(self):
        """Remove the logit bias (reset_set_logit_bias with count 0): no logit is biased from the next step on."""
        check(lib.reset_set_logit_bias(self.handle, None, 0))

    def held_text(self, sequence=0):
        """The text `sequence` has generated that no step has reported yet, held back because it may begin a
        stop string of set_stop ("" when none; 0.5, reset_session_held_text).  A caller that ends a generation
        itself (its own budget, a user's interrupt) or appends prompt text to it shows this first: the next
        prefill of the sequence forgets it, as does reset().  After each step of a sequence still generating,
        the texts its steps reported since its last prefill plus this are what they would have reported without
        stop strings; a sequence that has ended holds none.  A sequence outside [0, sequences) raises ResetError
        RESET_ERR_OUT_OF_RANGE."""
        index = int32(sequence, "sequence", RESET_ERR_OUT_OF_RANGE)
        text = ctypes.c_void_p()
        size = ctypes.c_size_t()
        check(lib.reset_session_held_text(self.handle, index, ctypes.byref(text), ctypes.byref(size)))
        # Owned by the session until its next call and not NUL-terminated: copied out here, by its length.
        return ctypes.string_at(text, size.value).decode("utf-8") if size.value else ""

    def prefill(self, ids):
        """Append ids (a sequence of ints or a 1-D integer NumPy array; int32 is passed without a copy)."""
        _keep, pointer, n = int32_array(ids, "ids")
        check(lib.reset_prefill(self.handle, pointer, n))

    def prefill_sequence(self, sequence, ids):
        """Append ids to one sequence only (reset_prefill_sequence), after prefill has given every sequence
        the shared prompt; the others are left as they were, and an ended sequence generates again."""
        index = int32(sequence, "sequence", RESET_ERR_OUT_OF_RANGE)
        _keep, pointer, n = int32_array(ids, "ids")
        check(lib.reset_prefill_sequence(self.handle, index, pointer, n))

    def truncate(self, length):
        """Keep the first `length` tokens of every sequence and forget the rest (0.6; reset_truncate), as
        llama.cpp's llama_memory_seq_rm: an application that edits, regenerates or re-renders a conversation
        cuts back to the longest prefix the session shares with its new prompt (tokens() gives what it holds)
        and prefills only the rest.  A sequence cut back is then as a new session with this session's policy
        and stop conditions holds it after prefill of those tokens, but without logits: its sampler starts
        over (so a seeded answer regenerated from the same prompt comes out the same), its held text is
        dropped, it no longer counts as ended, and a step or logits() raises ResetError RESET_ERR_STATE until
        it is prefilled with at least one token.  To regenerate from the very end of a prompt, cut one token
        less and prefill that token again.  A sequence that holds exactly `length` tokens is left as it is,
        logits included; nothing is computed.  A `length` below 0 or above the tokens a sequence holds raises
        ResetError RESET_ERR_OUT_OF_RANGE, and the session is unchanged on any error."""
        check(lib.reset_truncate(self.handle, int32(length, "length", RESET_ERR_OUT_OF_RANGE)))

    def truncate_sequence(self, sequence, length):
        """truncate() for one sequence only (reset_truncate_sequence); the others are left exactly as they
        were.  It is prefilled again with prefill_sequence.  A sequence outside [0, sequences) raises
        ResetError RESET_ERR_OUT_OF_RANGE, as does a `length` outside [0, length(sequence)]."""
        index = int32(sequence, "sequence", RESET_ERR_OUT_OF_RANGE)
        check(lib.reset_truncate_sequence(self.handle, index, int32(length, "length", RESET_ERR_OUT_OF_RANGE)))

    def copy_sequence(self, source, target):
        """Make sequence `target` a copy of sequence `source` (0.7; reset_copy_sequence, C's `from` and `to`), as
        llama.cpp's llama_memory_seq_cp: branch a reasoning trace to sample several continuations of one state, or
        give one sequence's conversation to another.  `target` forgets what it held and takes `source`'s tokens and
        KV cache, its logits, its sampler's state (the ReSET step state, the penalties' counts, the count of drawn
        tokens), its held text, whether it has ended and its max_tokens count; `source` is left as it is.  From then
        on `target` continues as `source` would, except that its draws are keyed by its own index, so a sampled copy
        explores another continuation.  Nothing is computed (on the CUDA backend the KV cache is copied on the
        device).  source == target does nothing.  A sequence outside [0, sequences) raises ResetError
        RESET_ERR_OUT_OF_RANGE, and the sequences are unchanged on any error."""
        source = int32(source, "source", RESET_ERR_OUT_OF_RANGE)
        check(lib.reset_copy_sequence(self.handle, source, int32(target, "target", RESET_ERR_OUT_OF_RANGE)))

    def save_sequence(self, sequence, path):
        """Save `sequence`'s state to the file at `path` (0.8; reset_save_sequence), as llama.cpp's
        llama_state_seq_save_file: keep a long prompt's prefill across runs, or park a reasoning trace and resume it
        elsewhere with load_sequence().  The file holds what copy_sequence() copies (the tokens and KV cache, the
        logits, the sampler's state, the held text, whether the sequence has ended and its max_tokens count); the
        policy, the stop conditions and the logit bias are the session's and are not saved.  It is a safetensors
        file, written beside `path` and renamed onto it, so a failed save leaves `path` as it was.  `path` is str,
        bytes or os.PathLike (a NUL in it raises ValueError).  A file that cannot be written raises ResetError
        RESET_ERR_IO, a sequence outside [0, sequences) RESET_ERR_OUT_OF_RANGE; the session is unchanged whatever
        the outcome."""
        index = int32(sequence, "sequence", RESET_ERR_OUT_OF_RANGE)
        check(lib.reset_save_sequence(self.handle, index, c_path(path)))

    def load_sequence(self, sequence, path):
        """Make `sequence` the sequence save_sequence() wrote to the file at `path` (0.8; reset_load_sequence), in
        this session or another of the same model: it forgets what it held and continues as the saved one would,
        except that its draws are keyed by its own index (as after copy_sequence()); this session's policy, stop
        conditions and logit bias apply from the next step.  The file must come from the same model, loaded with
        the same weights format, and from a session with the same kv_cache; the backend may differ (the values are
        then the other backend's, equal to its tolerances, not bit for bit).  The library's errors raise ResetError
        and leave every sequence as it was: a missing or unreadable file (RESET_ERR_IO), one that is not a libreset
        sequence file or is malformed (RESET_ERR_FORMAT), one of a newer format (RESET_ERR_UNSUPPORTED), another
        model, weights format or kv_cache (RESET_ERR_SHAPE), a sequence longer than max_context
        (RESET_ERR_CONTEXT_OVERFLOW), a sequence outside [0, sequences) (RESET_ERR_OUT_OF_RANGE); only a failure
        while writing the CUDA device's KV cache stops the session until reset() (RESET_ERR_STATE).  `path` is
        str, bytes or os.PathLike (a NUL in it raises ValueError)."""
        index = int32(sequence, "sequence", RESET_ERR_OUT_OF_RANGE)
        check(lib.reset_load_sequence(self.handle, index, c_path(path)))

    def save_sequence_bytes(self, sequence):
        """`sequence`'s state as the bytes save_sequence() would write to its file (0.9;
        reset_save_sequence_to_memory), as llama.cpp's llama_state_seq_get_data: for an application that keeps
        states in its own store or sends them to another process, without a file and its fsync.  The same
        safetensors image, holding the same state (the policy, the stop conditions and the logit bias are the
        session's and are not in it); load_sequence_bytes() or load_sequence() of a file holding it gives it back.
        Returned as a bytearray, filled in place: the state can take a gigabyte (the KV cache of a long context),
        and bytes would be a second copy of it (bytes(state) makes one where an immutable object is needed).  A
        sequence outside [0, sequences) raises ResetError RESET_ERR_OUT_OF_RANGE; the session is unchanged
        whatever the outcome."""
        index = int32(sequence, "sequence", RESET_ERR_OUT_OF_RANGE)
        size = ctypes.c_size_t(0)
        state = bytearray()
        status = lib.reset_save_sequence_to_memory(self.handle, index, None, 0, ctypes.byref(size))  # the size
        while status == 11:  # RESET_ERR_BUFFER_TOO_SMALL: size is what the state takes now
            state = bytearray(size.value)
            array = (ctypes.c_char * len(state)).from_buffer(state)  # filled in place: no copy
            status = lib.reset_save_sequence_to_memory(self.handle, index, array, len(state), ctypes.byref(size))
            del array  # while a ctypes array exports the bytearray, it cannot be resized
        check(status)
        del state[size.value:]
        return state

    def load_sequence_bytes(self, sequence, data):
        """Make `sequence` the sequence whose state save_sequence_bytes() gave (0.9;
        reset_load_sequence_from_memory), or that a sequence file holds, read into memory: load_sequence() without
        the file.  `data` is any bytes-like object (bytes, bytearray, memoryview, a NumPy array, an mmap), only read
        during the call; it is passed without a copy where ctypes allows (see _lib.byte_buffer), and needs no
        alignment.  The same checks, outcome and errors as load_sequence(), except that there is no file (no
        RESET_ERR_IO) and messages name the bytes '<memory>': bytes that are not a libreset sequence file, are cut
        short or malformed raise ResetError RESET_ERR_FORMAT, another model, weights format or kv_cache
        RESET_ERR_SHAPE, a sequence longer than max_context RESET_ERR_CONTEXT_OVERFLOW, a sequence outside
        [0, sequences) RESET_ERR_OUT_OF_RANGE, and every sequence is left as it was.  Anything not bytes-like (a str,
        a list) raises TypeError."""
        index = int32(sequence, "sequence", RESET_ERR_OUT_OF_RANGE)
        _keep, pointer, size = byte_buffer(data, "data")
        check(lib.reset_load_sequence_from_memory(self.handle, index, pointer, size))

    def options(self):
        """The options the session was created with, as the keywords of Model.session (0.9;
        reset_session_get_options): max_context resolved (never 0: as the max_context attribute), kv_cache by
        name ("unknown-N" for a value a newer library adds), eager and programmatic_launch as booleans, the
        rest as given.  model.session(**session.options()) makes a session like this one."""
        o = SessionOptions()
        lib.reset_session_options_init_sized(ctypes.byref(o), ctypes.sizeof(o))
        check(lib.reset_session_get_options(self.handle, ctypes.byref(o)))
        return {"max_context": o.max_context, "sequences": o.sequences,
                "kv_cache": enum_name(self.KV_CACHE, o.kv_cache), "eager": bool(o.eager),
                "prefill_gemm_tokens": o.prefill_gemm_tokens,
                "programmatic_launch": o.programmatic_launch != -1, "top_logprobs": o.top_logprobs}

    def tokens(self, sequence=0):
        """The ids of `sequence`'s context in order, as a list of ints (0.6; reset_session_tokens): every prompt
        token and every generated token that entered the context, length(sequence) of them (an end-of-generation
        id or stop token that ended the sequence is not among them).  A sequence outside [0, sequences) raises
        ResetError RESET_ERR_OUT_OF_RANGE."""
        index = int32(sequence, "sequence", RESET_ERR_OUT_OF_RANGE)
        handle = self.handle
        return _read_ids(lambda ids, capacity, size: lib.reset_session_tokens(handle, index, ids, capacity, size))

    def logits(self, sequence=None):
        """Raw logits of the last position: one sequence's (1-D), or every sequence's (2-D) when the
        session has several and `sequence` is None.  NumPy arrays when numpy is installed."""
        wanted = [sequence] if sequence is not None or self.sequences == 1 else range(self.sequences)
        rows = []
        for s in wanted:
            buffer = (ctypes.c_float * self.vocab_size)()
            index = int32(s if s is not None else 0, "sequence", RESET_ERR_OUT_OF_RANGE)
            check(lib.reset_session_logits(self.handle, index, buffer, self.vocab_size))
            rows.append(_np.frombuffer(buffer, dtype=_np.float32).copy() if _np else list(buffer))
        if len(rows) == 1:
            return rows[0]
        return _np.stack(rows) if _np else rows

    def length(self, sequence=0):
        """Tokens the sequence holds; -1 for a bad sequence (reset.h), including one outside int32."""
        sequence = operator.index(sequence)
        if not INT32_MIN <= sequence <= INT32_MAX:
            return -1  # ctypes would wrap 2**32 to sequence 0
        return lib.reset_session_length(self.handle, sequence)

    def device_bytes(self):
        """Device memory the session holds (0 on the CPU backend)."""
        return lib.reset_session_device_bytes(self.handle)

    def steps(self):
        """One decode step for every sequence: a list of StepResult, one per sequence."""
        lib.reset_step_init_sized(self._steps, self.sequences, ctypes.sizeof(Step))
        check(lib.reset_decode_step(self.handle, self._steps, self.sequences, None))
        # The text and the top logprobs live in the session until its next call: copied out here.
        return [StepResult(sequence=s.sequence, token=s.token, end=bool(s.end_of_generation), entropy=s.entropy,
                           step_entropy=s.step_entropy, global_mean=s.global_mean, threshold=s.threshold,
                           temperature=s.temperature, step_index=s.step_index, boundary=bool(s.boundary),
                           uncertain=bool(s.uncertain), logprob=s.logprob,
                           text=ctypes.string_at(s.text, s.text_len).decode("utf-8") if s.text_len else "",
                           top_logprobs=_top_logprobs(s), end_reason=enum_name(END_REASONS, s.end_reason),
                           stop_index=s.stop_index)
                for s in self._steps]

    def step(self):
        """One decode step: a StepResult for a one-sequence session, else a list of them."""
        results = self.steps()
        return results[0] if self.sequences == 1 else results

    def generate(self, max_tokens):
        """Yield StepResults of sequence 0 until it ends or max_tokens were produced."""
        for _ in range(max_tokens):
            result = self.steps()[0]
            if result.token >= 0:
                yield result
            if result.end:
                return

    def cancel(self):
        """Stop a running prefill/step from another thread (it raises ResetError RESET_ERR_CANCELLED)."""
        check(lib.reset_session_cancel(self.handle))

    def reset(self):
        check(lib.reset_session_reset(self.handle))


# Model.tokenize / detokenize / chat_format / tokenizer() come from the text module.
from .tokenizer import attach_to_model  # noqa: E402  (needs Model defined)

attach_to_model(Model)
