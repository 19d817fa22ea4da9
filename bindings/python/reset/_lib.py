"""Loading libreset and the C structs the bindings share.

The library is found, in order, at $RESET_LIBRARY, in the build folder of the
source tree this package sits in (../../build/libreset.so), or through the
system's loader path (libreset.so.0).  Its ABI major version must match the
one these bindings were written for, and its minor must be at least theirs.
"""
import ctypes
import ctypes.util
import math
import operator
import os
import pathlib

try:
    import numpy as _np
except ImportError:  # numpy is optional: id lists are checked element by element without it
    _np = None

# The libreset these bindings were written for: any 0.M with M >= 12 (minors only append functions and
# struct fields; 0.2 appended the penalties to reset_policy_params, 0.3 logprob to reset_step and
# reset_decision, repetition_penalty to reset_policy_params and reset_policy_add_context, 0.4
# top_logprobs to reset_session_options and top_logprob_count / top_logprobs to reset_step, 0.5
# reset_stop_options (with ignore_eos) / reset_set_stop, reset_session_held_text, the end reasons STOP
# and LENGTH and stop_index to reset_step, 0.6 reset_truncate / reset_truncate_sequence,
# reset_session_tokens and reset_logit_bias / reset_set_logit_bias, 0.7 reset_copy_sequence and
# reset_policy_set_logit_bias, 0.8 reset_save_sequence / reset_load_sequence, 0.9
# reset_save_sequence_to_memory / reset_load_sequence_from_memory and reset_session_get_options, 0.10
# checkpoint_format and kv_cache_scales to reset_model_info, 0.11 tools_json and tool_calls_json to
# reset_chat_options, 0.12 file_access to reset_model_options).
ABI_MAJOR = 0
ABI_MINOR = 12


class ResetError(Exception):
    """A libreset call failed.  .status is the reset_status number, .name its
    constant (e.g. "RESET_ERR_FORMAT"), and str(error) the library's message.

    The binding raises it itself, before calling, for an integer argument that
    does not fit its C type (int32; uint64 for a seed): ctypes would wrap it
    modulo 2**32, so 2**32 + 5 would reach the library as 5.  The status is the
    one reset.h gives for a value outside the argument's range:
    RESET_ERR_OUT_OF_RANGE for token ids, sequence indices and truncation
    lengths, RESET_ERR_INVALID_ARGUMENT for options (Session.length() answers
    -1 instead, as reset_session_length does for any bad sequence).  So does a
    finite logit bias that float32 would round to an infinity
    (RESET_ERR_INVALID_ARGUMENT): -1e300 would reach the library as a ban."""

    def __init__(self, status, name, message):
        super().__init__(f"{name}: {message}")
        self.status = status
        self.name = name
        self.message = message


def _candidates():
    explicit = os.environ.get("RESET_LIBRARY")
    if explicit:
        yield explicit
        return
    here = pathlib.Path(__file__).resolve().parent
    for build in ("build", "build-release"):
        yield str(here.parents[2] / build / "libreset.so")
    found = ctypes.util.find_library("reset")
    if found:
        yield found
    yield "libreset.so.0"


def _load():
    errors = []
    for path in _candidates():
        try:
            return ctypes.CDLL(path)
        except OSError as error:
            errors.append(f"{path}: {error}")
    raise ImportError("libreset not found; set RESET_LIBRARY to the path of libreset.so. Tried:\n  "
                      + "\n  ".join(errors))


lib = _load()
lib.reset_version.restype = ctypes.c_uint32
lib.reset_version_string.restype = ctypes.c_char_p
lib.reset_last_error.restype = ctypes.c_char_p
lib.reset_status_name.restype = ctypes.c_char_p
lib.reset_status_name.argtypes = [ctypes.c_int]


def check_abi(version):
    """Refuse a libreset whose ABI major (reset_version() // 10000) is not the one these bindings were
    written for: its structs and functions may differ, so calling it would corrupt memory silently.
    Refuse an older minor too: it lacks functions or fields these bindings use, and would fail their
    calls with errors that name no version (a reset_policy_params larger than it knows is a bad
    struct_size to it)."""
    major, minor, patch = version // 10000, version // 100 % 100, version % 100
    if major != ABI_MAJOR:
        raise ImportError(f"libreset {major}.{minor}.{patch} has ABI major {major}, but these bindings need "
                          f"{ABI_MAJOR}")
    if minor < ABI_MINOR:
        raise ImportError(f"libreset {major}.{minor}.{patch} is older than these bindings need "
                          f"({ABI_MAJOR}.{ABI_MINOR} or newer): it lacks functions or fields they use")


check_abi(lib.reset_version())

VERSION = lib.reset_version_string().decode()


class OwnedHandle:
    """A libreset handle this object owns.  close(), the end of a `with` block,
    or garbage collection frees it exactly once; afterwards `.handle` raises.
    Subclasses name their C free function (_free) and what they are (_noun)."""

    _free = None
    _noun = "handle"
    _handle = None

    @property
    def handle(self):
        if not self._handle:
            raise ValueError(f"the {self._noun} is closed")
        return self._handle

    def close(self):
        if self._handle:
            getattr(lib, self._free)(self._handle)
            self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()


def check(status):
    """Raise ResetError for a failing status; return None on RESET_OK."""
    if status != 0:
        raise ResetError(status, lib.reset_status_name(status).decode(),
                         lib.reset_last_error().decode("utf-8", "replace"))


RESET_ERR_INVALID_ARGUMENT = 1
RESET_ERR_OUT_OF_RANGE = 7
INT32_MIN, INT32_MAX = -2**31, 2**31 - 1


def local_error(status, message):
    """A ResetError raised by the binding itself, with the status the library would give."""
    return ResetError(status, lib.reset_status_name(status).decode(), message)


def int32(value, what, status=RESET_ERR_INVALID_ARGUMENT):
    """value as an int32 argument.  ctypes would wrap it modulo 2**32 (2**32 + 5 becoming 5), so a
    value outside int32 raises ResetError: `status` is what reset.h gives for a value out of the
    argument's range (RESET_ERR_OUT_OF_RANGE for token ids and sequence indices, else
    RESET_ERR_INVALID_ARGUMENT)."""
    value = operator.index(value)
    if not INT32_MIN <= value <= INT32_MAX:
        raise local_error(status, f"{what} {value} does not fit in int32")
    return value


def uint64(value, what):
    value = operator.index(value)
    if not 0 <= value < 2**64:
        raise local_error(RESET_ERR_INVALID_ARGUMENT, f"{what} {value} does not fit in uint64")
    return value


_int32_p = ctypes.POINTER(ctypes.c_int32)


def int32_array(values, what, status=RESET_ERR_OUT_OF_RANGE, convert=operator.index):
    """(keep_alive, int32 pointer, count) for a sequence of ids, range-checked as int32() does.
    NumPy integer arrays are checked vectorised and passed without a copy when already int32;
    anything else is converted element by element with `convert`."""
    if _np is not None:
        if not isinstance(values, _np.ndarray):
            values = list(values)  # also accepts generators
        try:
            a = _np.asarray(values)
        except (OverflowError, ValueError):
            a = None  # ints past int64/uint64, ragged input: the element path names the culprit
        if a is not None and a.ndim != 1:
            raise ValueError(f"{what} must be one-dimensional, not of shape {a.shape}")
        if a is not None and (a.dtype.kind in "iub" or a.size == 0):
            if a.dtype != _np.int32 and a.size and a.dtype.kind != "b":
                bad = (a < INT32_MIN) | (a > INT32_MAX)
                if bad.any():
                    i = int(_np.flatnonzero(bad)[0])
                    raise local_error(status, f"{what}[{i}] = {int(a[i])} does not fit in int32")
            a = _np.ascontiguousarray(a, dtype=_np.int32)
            return a, a.ctypes.data_as(_int32_p), a.size
    else:
        values = list(values)
    checked = [int32(convert(v), f"{what}[{i}] =", status) for i, v in enumerate(values)]
    array = (ctypes.c_int32 * max(len(checked), 1))(*checked)
    return array, ctypes.cast(array, _int32_p), len(checked)


def c_path(path, what="path"):
    """A filesystem path (str, bytes or os.PathLike) as the bytes the OS uses: os.fsencode keeps
    non-UTF-8 names (surrogateescape) intact.  An interior NUL would silently cut the path short
    at the C side, so it raises ValueError."""
    data = os.fsencode(os.fspath(path))
    if b"\0" in data:
        raise ValueError(f"{what} must not contain a NUL byte: {path!r}")
    return data


def c_string(data, what):
    """Bytes for a NUL-terminated C string: an interior NUL would truncate it, so it raises ValueError."""
    if b"\0" in data:
        raise ValueError(f"{what} must not contain a NUL byte: {data!r}")
    return data


def byte_buffer(data, what="data"):
    """(keep_alive, pointer, size) for a bytes-like object passed to C as `const void *` and its size, without a
    copy where ctypes allows one: bytes are passed as they are, a writable buffer (bytearray, a writable
    memoryview, a NumPy array, an mmap) through ctypes' from_buffer, a read-only one other than bytes (a
    memoryview of bytes, say) as a NumPy view when numpy is installed; only a read-only buffer without numpy and a
    non-contiguous one are copied.  Any element format counts as its bytes.  The pointer is never NULL, an empty
    buffer included.  Anything that is not bytes-like (a str, a list) raises TypeError."""
    if isinstance(data, bytes):
        return data, data, len(data)
    try:
        view = memoryview(data)
    except TypeError:
        raise TypeError(f"{what} must be a bytes-like object (bytes, bytearray, memoryview), not "
                        f"{type(data).__name__}") from None
    if view.nbytes == 0:
        return b"", b"", 0
    if not view.c_contiguous:
        copy = view.tobytes()
        return copy, copy, len(copy)
    if not view.readonly:
        array = (ctypes.c_char * view.nbytes).from_buffer(view)
        return array, array, view.nbytes
    if _np is not None:
        array = _np.frombuffer(view.cast("B"), dtype=_np.uint8)
        return array, array.ctypes.data, view.nbytes
    copy = view.tobytes()
    return copy, copy, len(copy)


def declare(name, restype, argtypes):
    function = getattr(lib, name)
    function.restype = restype
    function.argtypes = argtypes
    return function


# --- structs (mirrors of include/reset.h; fields only ever appended) --------

class ModelOptions(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("weights", ctypes.c_int), ("backend", ctypes.c_int),
                ("quantize_lm_head", ctypes.c_int32), ("device", ctypes.c_int32), ("threads", ctypes.c_int32),
                ("progress", ctypes.c_void_p), ("progress_user_data", ctypes.c_void_p),
                ("w4a16_activations", ctypes.c_int), ("file_access", ctypes.c_int)]

# int (*reset_progress_callback)(float fraction, void *user_data)
PROGRESS_CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_float, ctypes.c_void_p)


class ModelInfo(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("architecture", ctypes.c_char * 32),
                ("n_layers", ctypes.c_int32), ("hidden_size", ctypes.c_int32),
                ("intermediate_size", ctypes.c_int32), ("n_heads", ctypes.c_int32),
                ("n_kv_heads", ctypes.c_int32), ("head_dim", ctypes.c_int32), ("vocab_size", ctypes.c_int32),
                ("max_position_embeddings", ctypes.c_int32), ("tied_embeddings", ctypes.c_int32),
                ("weights", ctypes.c_int), ("backend", ctypes.c_int), ("lm_head_nvfp4", ctypes.c_int32),
                ("from_modelopt", ctypes.c_int32), ("dynamic_input_scale", ctypes.c_int32),
                ("n_bf16_linears", ctypes.c_int32), ("n_parameters", ctypes.c_uint64),
                ("weight_bytes", ctypes.c_uint64), ("host_bytes", ctypes.c_uint64),
                ("device_bytes", ctypes.c_uint64), ("n_eos", ctypes.c_int32), ("eos_ids", ctypes.c_int32 * 8),
                ("bos_id", ctypes.c_int32), ("checkpoint_format", ctypes.c_int),
                ("kv_cache_scales", ctypes.c_int32)]


class PolicyParams(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("kind", ctypes.c_int), ("temperature", ctypes.c_float),
                ("top_k", ctypes.c_int32), ("top_p", ctypes.c_float), ("min_p", ctypes.c_float),
                ("seed", ctypes.c_uint64), ("t_high", ctypes.c_float), ("t_low", ctypes.c_float),
                ("tau0", ctypes.c_float), ("window", ctypes.c_int32), ("preset", ctypes.c_char_p),
                ("reset_state", ctypes.c_int32), ("presence_penalty", ctypes.c_float),
                ("frequency_penalty", ctypes.c_float), ("reserved", ctypes.c_int32),
                ("repetition_penalty", ctypes.c_float)]


class SessionOptions(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("max_context", ctypes.c_int32), ("sequences", ctypes.c_int32),
                ("kv_cache", ctypes.c_int), ("eager", ctypes.c_int32), ("prefill_gemm_tokens", ctypes.c_int32),
                ("programmatic_launch", ctypes.c_int32), ("top_logprobs", ctypes.c_int32)]


class TokenLogprobStruct(ctypes.Structure):
    """reset_token_logprob (0.4): one of a step's most likely tokens."""
    _fields_ = [("token", ctypes.c_int32), ("logprob", ctypes.c_float)]


class Step(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("sequence", ctypes.c_int32), ("token", ctypes.c_int32),
                ("end_of_generation", ctypes.c_int32), ("end_reason", ctypes.c_int),
                ("entropy", ctypes.c_float), ("step_entropy", ctypes.c_float), ("global_mean", ctypes.c_float),
                ("threshold", ctypes.c_float), ("temperature", ctypes.c_float), ("step_index", ctypes.c_int32),
                ("boundary", ctypes.c_int32), ("uncertain", ctypes.c_int32), ("text", ctypes.c_void_p),
                ("text_len", ctypes.c_size_t), ("logprob", ctypes.c_float),
                ("top_logprobs", ctypes.POINTER(TokenLogprobStruct)), ("top_logprob_count", ctypes.c_int32),
                ("stop_index", ctypes.c_int32)]


class StopOptions(ctypes.Structure):
    """reset_stop_options (0.5): a session's stop strings, stop ids and max_tokens, and ignore_eos."""
    _fields_ = [("struct_size", ctypes.c_uint32), ("strings", ctypes.POINTER(ctypes.c_char_p)),
                ("string_count", ctypes.c_size_t), ("ids", ctypes.POINTER(ctypes.c_int32)),
                ("id_count", ctypes.c_size_t), ("max_tokens", ctypes.c_int32),
                ("include_stop_string", ctypes.c_int32), ("ignore_eos", ctypes.c_int32)]


class LogitBiasStruct(ctypes.Structure):
    """reset_logit_bias (0.6): a bias added to one token's logit."""
    _fields_ = [("token", ctypes.c_int32), ("bias", ctypes.c_float)]


# The most entries one reset_set_logit_bias or reset_policy_set_logit_bias takes (RESET_MAX_LOGIT_BIAS).
MAX_LOGIT_BIAS = 1024


def logit_bias_entries(bias):
    """(entries, count) for reset_set_logit_bias and reset_policy_set_logit_bias from a dict {token: bias} or
    (token, bias) pairs.  A token outside int32 and a finite bias that float32 would round to an infinity raise
    ResetError here, with the library's status: ctypes would wrap the token and pass -1e300 on as a ban."""
    pairs = list(bias.items() if hasattr(bias, "items") else bias)
    entries = (LogitBiasStruct * max(len(pairs), 1))()  # the library copies them
    for i, (token, value) in enumerate(pairs):
        entries[i].token = int32(token, f"entries[{i}].token =", RESET_ERR_OUT_OF_RANGE)
        entries[i].bias = value
        if math.isinf(entries[i].bias) and not math.isinf(value):
            raise local_error(RESET_ERR_INVALID_ARGUMENT, f"entries[{i}].bias = {value!r} does not fit in float")
    return entries, len(pairs)


WEIGHTS = {"auto": 0, "bf16": 1, "nvfp4-w4a16": 2, "nvfp4-w4a4": 3}
BACKENDS = {"auto": 0, "cpu": 1, "cuda": 2}
# reset_checkpoint_format (0.10): where a model's NVFP4 weights come from, as Model.info() names it.
CHECKPOINT_FORMATS = {"unquantized": 0, "modelopt": 1, "compressed-tensors": 2}
# reset_activations ("fp32": the CPU backend's unrounded W4A16 reference).
ACTIVATIONS = {"fp16": 0, "fp32": 1}
# reset_file_access (0.12): how the safetensors files are brought into memory.
FILE_ACCESSES = {"map": 0, "read": 1}
POLICIES = {"greedy": 0, "fixed": 1, "reset": 2, "entropy": 3}
# reset_end_reason, by the names traces give them ("none": still generating; "stop" and "length": 0.5).
END_REASONS = {"none": 0, "eos": 1, "finished": 2, "stop": 3, "length": 4}


def enum_name(names, value):
    """The name of a C enum value the library returned (names: name -> value), or "unknown-N" for one
    a newer libreset of the same ABI major may add: reading it must not fail (a name that any call
    taking it refuses with a clear error)."""
    for name, known in names.items():
        if known == value:
            return name
    return f"unknown-{value}"

c_model_p = ctypes.c_void_p
c_session_p = ctypes.c_void_p

declare("reset_model_options_init_sized", None, [ctypes.POINTER(ModelOptions), ctypes.c_size_t])
declare("reset_model_load", ctypes.c_int, [ctypes.c_char_p, ctypes.POINTER(ModelOptions), ctypes.POINTER(c_model_p)])
declare("reset_model_free", None, [c_model_p])
declare("reset_model_info_init_sized", None, [ctypes.POINTER(ModelInfo), ctypes.c_size_t])
declare("reset_model_get_info", ctypes.c_int, [c_model_p, ctypes.POINTER(ModelInfo)])
declare("reset_session_options_init_sized", None, [ctypes.POINTER(SessionOptions), ctypes.c_size_t])
declare("reset_session_create", ctypes.c_int, [c_model_p, ctypes.POINTER(SessionOptions), ctypes.POINTER(c_session_p)])
declare("reset_session_free", None, [c_session_p])
declare("reset_session_reset", ctypes.c_int, [c_session_p])
declare("reset_session_cancel", ctypes.c_int, [c_session_p])
declare("reset_prefill", ctypes.c_int, [c_session_p, ctypes.POINTER(ctypes.c_int32), ctypes.c_size_t])
declare("reset_prefill_sequence", ctypes.c_int,
        [c_session_p, ctypes.c_int32, ctypes.POINTER(ctypes.c_int32), ctypes.c_size_t])
declare("reset_truncate", ctypes.c_int, [c_session_p, ctypes.c_int32])
declare("reset_truncate_sequence", ctypes.c_int, [c_session_p, ctypes.c_int32, ctypes.c_int32])
declare("reset_copy_sequence", ctypes.c_int, [c_session_p, ctypes.c_int32, ctypes.c_int32])
declare("reset_save_sequence", ctypes.c_int, [c_session_p, ctypes.c_int32, ctypes.c_char_p])
declare("reset_load_sequence", ctypes.c_int, [c_session_p, ctypes.c_int32, ctypes.c_char_p])
declare("reset_save_sequence_to_memory", ctypes.c_int,
        [c_session_p, ctypes.c_int32, ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t)])
declare("reset_load_sequence_from_memory", ctypes.c_int,
        [c_session_p, ctypes.c_int32, ctypes.c_void_p, ctypes.c_size_t])
declare("reset_session_get_options", ctypes.c_int, [c_session_p, ctypes.POINTER(SessionOptions)])
declare("reset_session_tokens", ctypes.c_int,
        [c_session_p, ctypes.c_int32, ctypes.POINTER(ctypes.c_int32), ctypes.c_size_t,
         ctypes.POINTER(ctypes.c_size_t)])
declare("reset_session_logits", ctypes.c_int,
        [c_session_p, ctypes.c_int32, ctypes.POINTER(ctypes.c_float), ctypes.c_size_t])
declare("reset_session_length", ctypes.c_int32, [c_session_p, ctypes.c_int32])
declare("reset_session_max_context", ctypes.c_int32, [c_session_p])
declare("reset_session_device_bytes", ctypes.c_uint64, [c_session_p])
declare("reset_policy_params_init_sized", None, [ctypes.POINTER(PolicyParams), ctypes.c_size_t])
declare("reset_set_policy", ctypes.c_int, [c_session_p, ctypes.POINTER(PolicyParams)])
declare("reset_session_get_policy", ctypes.c_int, [c_session_p, ctypes.POINTER(PolicyParams)])
declare("reset_stop_options_init_sized", None, [ctypes.POINTER(StopOptions), ctypes.c_size_t])
declare("reset_set_stop", ctypes.c_int, [c_session_p, ctypes.POINTER(StopOptions)])
declare("reset_set_logit_bias", ctypes.c_int, [c_session_p, ctypes.POINTER(LogitBiasStruct), ctypes.c_size_t])
# The held text is not NUL-terminated: a c_void_p read with its length (c_char_p would read to a NUL).
declare("reset_session_held_text", ctypes.c_int,
        [c_session_p, ctypes.c_int32, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_size_t)])
declare("reset_step_init_sized", None, [ctypes.POINTER(Step), ctypes.c_size_t, ctypes.c_size_t])
declare("reset_decode_step", ctypes.c_int,
        [c_session_p, ctypes.POINTER(Step), ctypes.c_size_t, ctypes.POINTER(ctypes.c_int32)])


def policy_params(kind, temperature, top_k, top_p, min_p, seed, t_high, t_low, tau0, window, preset, reset_state,
                  presence_penalty=0.0, frequency_penalty=0.0, repetition_penalty=1.0):
    """A reset_policy_params filled from keyword values (t_low/tau0 None or < 0: from the preset or model)."""
    if kind not in POLICIES:
        raise ValueError(f"kind must be one of {sorted(POLICIES)}, not {kind!r}")
    p = PolicyParams()
    lib.reset_policy_params_init_sized(ctypes.byref(p), ctypes.sizeof(p))
    p.kind = POLICIES[kind]
    p.temperature = temperature
    p.top_k = int32(top_k, "top_k")
    p.top_p = top_p
    p.min_p = min_p
    p.seed = uint64(seed, "seed")
    p.t_high = t_high
    p.t_low = -1.0 if t_low is None else t_low  # None: from the preset / the model
    p.tau0 = -1.0 if tau0 is None else tau0
    p.window = int32(window, "window")
    p.preset = c_string(preset.encode(), "preset") if preset else None
    p.reset_state = int(bool(reset_state))
    p.presence_penalty = presence_penalty
    p.frequency_penalty = frequency_penalty
    p.repetition_penalty = repetition_penalty
    return p
