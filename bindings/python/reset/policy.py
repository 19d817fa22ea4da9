"""reset.Policy: the standalone ReSET policy (reset.h, "The standalone ReSET
policy") for logits computed by any engine.

    import numpy as np, reset
    p = reset.Policy(preset="Qwen3-8B", nl_ids=[198], dnl_ids=[271, 382])
    for each generated token:
        d = p.decide(logits)           # d.temperature, d.entropy, d.step_entropy, ...
        token = my_engine_sample(logits, d.temperature)
        p.accept(token)
    # or let libreset draw it:  token, d = p.sample(logits); p.accept(token)
"""
import ctypes
import math
from collections import namedtuple

from ._lib import (RESET_ERR_INVALID_ARGUMENT, RESET_ERR_OUT_OF_RANGE, LogitBiasStruct, OwnedHandle, PolicyParams,
                   check, declare, int32, int32_array, lib, logit_bias_entries, policy_params)

try:
    import numpy as _np
except ImportError:  # numpy is optional: lists and array('f') work too
    _np = None


class _Options(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32),
                ("newline_ids", ctypes.POINTER(ctypes.c_int32)), ("n_newline_ids", ctypes.c_size_t),
                ("double_newline_ids", ctypes.POINTER(ctypes.c_int32)), ("n_double_newline_ids", ctypes.c_size_t),
                ("sequence", ctypes.c_int32)]


class _Decision(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("temperature", ctypes.c_float), ("entropy", ctypes.c_float),
                ("step_entropy", ctypes.c_float), ("global_mean", ctypes.c_float), ("threshold", ctypes.c_float),
                ("step_index", ctypes.c_int32), ("boundary", ctypes.c_int32), ("uncertain", ctypes.c_int32),
                ("logprob", ctypes.c_float)]


# What the policy decided for one token (reset_decision).  logprob (0.3): sample()'s drawn token's log p
# under softmax(raw logits), as StepResult.logprob; NaN from decide(), which draws nothing (the default).
Decision = namedtuple("Decision", ["temperature", "entropy", "step_entropy", "global_mean", "threshold",
                                   "step_index", "boundary", "uncertain", "logprob"], defaults=(math.nan,))

_c_policy_p = ctypes.c_void_p
_floats = ctypes.POINTER(ctypes.c_float)
declare("reset_policy_options_init_sized", None, [ctypes.POINTER(_Options), ctypes.c_size_t])
declare("reset_decision_init_sized", None, [ctypes.POINTER(_Decision), ctypes.c_size_t])
declare("reset_policy_create", ctypes.c_int,
        [ctypes.POINTER(PolicyParams), ctypes.POINTER(_Options), ctypes.POINTER(_c_policy_p)])
declare("reset_policy_create_for_model", ctypes.c_int,
        [ctypes.c_void_p, ctypes.POINTER(PolicyParams), ctypes.POINTER(_Options), ctypes.POINTER(_c_policy_p)])
declare("reset_policy_free", None, [_c_policy_p])
declare("reset_policy_set_params", ctypes.c_int, [_c_policy_p, ctypes.POINTER(PolicyParams)])
declare("reset_policy_decide", ctypes.c_int, [_c_policy_p, _floats, ctypes.c_size_t, ctypes.POINTER(_Decision)])
declare("reset_policy_sample", ctypes.c_int,
        [_c_policy_p, _floats, ctypes.c_size_t, ctypes.POINTER(ctypes.c_int32), ctypes.POINTER(_Decision)])
declare("reset_policy_accept", ctypes.c_int, [_c_policy_p, ctypes.c_int32])
declare("reset_policy_add_context", ctypes.c_int, [_c_policy_p, ctypes.POINTER(ctypes.c_int32), ctypes.c_size_t])
declare("reset_policy_reset", ctypes.c_int, [_c_policy_p])
declare("reset_policy_set_logit_bias", ctypes.c_int,
        [_c_policy_p, ctypes.POINTER(LogitBiasStruct), ctypes.c_size_t])
_decision_to_json = declare("reset_decision_to_json", ctypes.c_int,
                            [ctypes.POINTER(_Decision), ctypes.c_int32, ctypes.c_int32, ctypes.c_char_p,
                             ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t)])


def _logits(logits):
    """A float32 C array view of logits (copied only when it must be)."""
    if _np is not None:
        a = _np.ascontiguousarray(logits, dtype=_np.float32)
        if a.ndim != 1:
            raise ValueError(f"logits must be one-dimensional, not of shape {a.shape}")
        return a, a.ctypes.data_as(_floats), a.size
    a = (ctypes.c_float * len(logits))(*logits)
    return a, ctypes.cast(a, _floats), len(logits)


class Policy(OwnedHandle):
    """One sequence's ReSET policy: reset.Policy(t_high, t_low, tau0, window, nl_ids, dnl_ids).
    t_low/tau0 None: from `preset` (a row of the paper's table, e.g.
    "Qwen3-8B") or, with `model` (a reset.Model), from the recognised model.
    nl_ids / dnl_ids: the NL and DNL id sets (with `model` and none given, the
    model tokenizer's).  kind (keyword): "reset" (default), "entropy" (the
    token-entropy-only ablation), "fixed" or "greedy".  `sequence` selects the
    Philox stream of sample().  presence_penalty / frequency_penalty (keywords,
    each in [-2, 2]) act on sample(), from the tokens accept() recorded;
    repetition_penalty (keyword, [0.1, 10], 1 = off) from those and the ones
    add_context() recorded; decide() sees the raw logits."""

    _free = "reset_policy_free"
    _noun = "policy"

    def __init__(self, t_high=1.0, t_low=None, tau0=None, window=32, nl_ids=(), dnl_ids=(), *, kind="reset",
                 temperature=0.6, top_k=0, top_p=1.0, min_p=0.0, seed=0, preset=None, sequence=0, model=None,
                 presence_penalty=0.0, frequency_penalty=0.0, repetition_penalty=1.0):
        # The positional order is the bindings issue's API shape:
        #   reset.Policy(t_high, t_low, tau0, window, nl_ids, dnl_ids)
        self._handle = None
        params = policy_params(kind, temperature, top_k, top_p, min_p, seed, t_high, t_low, tau0, window, preset, False,
                               presence_penalty, frequency_penalty, repetition_penalty)
        options = _Options()
        lib.reset_policy_options_init_sized(ctypes.byref(options), ctypes.sizeof(options))
        # reset_policy_create rejects a bad delimiter id with RESET_ERR_INVALID_ARGUMENT.
        _keep_nl, options.newline_ids, options.n_newline_ids = int32_array(nl_ids, "nl_ids", RESET_ERR_INVALID_ARGUMENT)
        _keep_dnl, options.double_newline_ids, options.n_double_newline_ids = int32_array(
            dnl_ids, "dnl_ids", RESET_ERR_INVALID_ARGUMENT)
        options.sequence = int32(sequence, "sequence")
        handle = _c_policy_p()
        if model is None:
            check(lib.reset_policy_create(ctypes.byref(params), ctypes.byref(options), ctypes.byref(handle)))
        else:
            check(lib.reset_policy_create_for_model(model.handle, ctypes.byref(params), ctypes.byref(options),
                                                    ctypes.byref(handle)))
        self._handle = handle

    def set_params(self, kind="reset", *, temperature=0.6, top_k=0, top_p=1.0, min_p=0.0, seed=0, t_high=1.0,
                   t_low=None, tau0=None, window=32, preset=None, reset_state=False, presence_penalty=0.0,
                   frequency_penalty=0.0, repetition_penalty=1.0):
        """Replace the parameters; the step state and the penalties' token counts are kept unless reset_state
        (the context tokens are kept either way)."""
        params = policy_params(kind, temperature, top_k, top_p, min_p, seed, t_high, t_low, tau0, window, preset,
                               reset_state, presence_penalty, frequency_penalty, repetition_penalty)
        check(lib.reset_policy_set_params(self.handle, ctypes.byref(params)))

    @staticmethod
    def _decision(d):
        return Decision(d.temperature, d.entropy, d.step_entropy, d.global_mean, d.threshold, d.step_index,
                        bool(d.boundary), bool(d.uncertain), d.logprob)

    def decide(self, logits):
        """The temperature for the next token from its raw logits, and the signals behind it."""
        _keep, pointer, n = _logits(logits)
        d = _Decision()
        lib.reset_decision_init_sized(ctypes.byref(d), ctypes.sizeof(d))
        check(lib.reset_policy_decide(self.handle, pointer, n, ctypes.byref(d)))
        return self._decision(d)

    def sample(self, logits):
        """decide(), then draw the token as a session would: (token, Decision).  Not accepted."""
        _keep, pointer, n = _logits(logits)
        d = _Decision()
        lib.reset_decision_init_sized(ctypes.byref(d), ctypes.sizeof(d))
        token = ctypes.c_int32()
        check(lib.reset_policy_sample(self.handle, pointer, n, ctypes.byref(token), ctypes.byref(d)))
        return token.value, self._decision(d)

    def accept(self, token):
        """Record the token the sequence took."""
        check(lib.reset_policy_accept(self.handle, int32(int(token), "token", RESET_ERR_OUT_OF_RANGE)))

    def add_context(self, ids):
        """Record context tokens the policy did not accept itself (the prompt, a user's turn), as a session
        does at every prefill: only the repetition penalty lowers them.  ids: ints or a 1-D integer NumPy
        array; a negative id raises ResetError (RESET_ERR_OUT_OF_RANGE) and records nothing."""
        _keep, pointer, n = int32_array(ids, "ids")
        check(lib.reset_policy_add_context(self.handle, pointer, n))

    def reset(self):
        """Start a new sequence (forget the step state, the accepted tokens, the penalties' counts and the
        context tokens)."""
        check(lib.reset_policy_reset(self.handle))

    def set_logit_bias(self, bias):
        """Set the logit bias of sample() from its next call on (0.7; reset_policy_set_logit_bias), as
        Session.set_logit_bias does a session's: `bias` is a dict {token: bias} or (token, bias) pairs, at most
        1024, each finite in [-100, 100] or float("-inf") to ban the token; it replaces the bias in force, and an
        empty one removes it.  A listed token's logit z becomes z + bias after the penalties and before the
        temperature, the truncation and the draw, greedy included; decide(), the entropy, the ReSET decision and
        Decision.logprob still see the raw logits.  The bias stays through set_params() and reset().  A policy
        made with `model` checks the tokens against its vocabulary now (RESET_ERR_OUT_OF_RANGE); one without
        knows no vocabulary, so sample() raises ResetError RESET_ERR_OUT_OF_RANGE for logits too short to hold a
        listed token, and RESET_ERR_INVALID_ARGUMENT for logits whose every unbanned entry is -inf.  Refused
        biases raise Session.set_logit_bias's errors and leave the bias in force as it was."""
        entries, count = logit_bias_entries(bias)
        check(lib.reset_policy_set_logit_bias(self.handle, entries, count))

    def clear_logit_bias(self):
        """Remove the logit bias (reset_policy_set_logit_bias with count 0): sample() biases no logit."""
        check(lib.reset_policy_set_logit_bias(self.handle, None, 0))

    @staticmethod
    def trace_line(decision, sequence=0, token=-1):
        """The decision as one JSON line (with its '\\n'), for a JSONL trace."""
        d = _Decision()
        lib.reset_decision_init_sized(ctypes.byref(d), ctypes.sizeof(d))
        for name in Decision._fields:
            value = getattr(decision, name)
            setattr(d, name, int32(int(value), name) if name in ("step_index", "boundary", "uncertain") else value)
        sequence, token = int32(sequence, "sequence"), int32(token, "token")
        length = ctypes.c_size_t()
        buffer = ctypes.create_string_buffer(512)
        status = _decision_to_json(ctypes.byref(d), sequence, token, buffer, len(buffer), ctypes.byref(length))
        if status != 0:
            buffer = ctypes.create_string_buffer(length.value + 1)
            status = _decision_to_json(ctypes.byref(d), sequence, token, buffer, len(buffer), ctypes.byref(length))
        check(status)
        return buffer.value.decode()

