"""libreset's standalone ReSET policy against the independent Python
reference (reset_reference.py) on >= 1,000 random logit sequences with
vocabularies up to 151,936 tokens and random delimiter tokens.

Driven through a small ctypes wrapper of its own (this test does not need the
Python bindings).  Required: identical temperatures on every token except
near-ties (H_t within 1e-5 relative of the threshold, or Ĥ within 1e-6
relative of H̄ where rounding decides the gate), which are counted and
reported; entropies within 1e-5 relative.
"""
import ctypes
import os
import sys
import time

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))
from reset_reference import ReferencePolicy  # noqa: E402

LIBRARY = os.environ.get("RESET_LIBRARY")

RESET_POLICY_RESET = 2
RESET_POLICY_ENTROPY = 3


class PolicyParams(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32), ("kind", ctypes.c_int), ("temperature", ctypes.c_float),
        ("top_k", ctypes.c_int32), ("top_p", ctypes.c_float), ("min_p", ctypes.c_float),
        ("seed", ctypes.c_uint64), ("t_high", ctypes.c_float), ("t_low", ctypes.c_float),
        ("tau0", ctypes.c_float), ("window", ctypes.c_int32), ("preset", ctypes.c_char_p),
        ("reset_state", ctypes.c_int32), ("presence_penalty", ctypes.c_float), ("frequency_penalty", ctypes.c_float),
        ("reserved", ctypes.c_int32), ("repetition_penalty", ctypes.c_float),
    ]


class PolicyOptions(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("newline_ids", ctypes.POINTER(ctypes.c_int32)), ("n_newline_ids", ctypes.c_size_t),
        ("double_newline_ids", ctypes.POINTER(ctypes.c_int32)), ("n_double_newline_ids", ctypes.c_size_t),
        ("sequence", ctypes.c_int32),
    ]


class Decision(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32), ("temperature", ctypes.c_float), ("entropy", ctypes.c_float),
        ("step_entropy", ctypes.c_float), ("global_mean", ctypes.c_float), ("threshold", ctypes.c_float),
        ("step_index", ctypes.c_int32), ("boundary", ctypes.c_int32), ("uncertain", ctypes.c_int32),
        ("logprob", ctypes.c_float),
    ]


@pytest.fixture(scope="module")
def lib():
    if not LIBRARY:
        pytest.skip("RESET_LIBRARY is not set")
    lib = ctypes.CDLL(LIBRARY)
    lib.reset_policy_params_init_sized.argtypes = [ctypes.POINTER(PolicyParams), ctypes.c_size_t]
    lib.reset_policy_params_init_sized.restype = None
    lib.reset_policy_options_init_sized.argtypes = [ctypes.POINTER(PolicyOptions), ctypes.c_size_t]
    lib.reset_policy_options_init_sized.restype = None
    lib.reset_decision_init_sized.argtypes = [ctypes.POINTER(Decision), ctypes.c_size_t]
    lib.reset_decision_init_sized.restype = None
    lib.reset_policy_create.argtypes = [ctypes.POINTER(PolicyParams), ctypes.POINTER(PolicyOptions),
                                        ctypes.POINTER(ctypes.c_void_p)]
    lib.reset_policy_create.restype = ctypes.c_int
    lib.reset_policy_decide.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_float), ctypes.c_size_t,
                                        ctypes.POINTER(Decision)]
    lib.reset_policy_decide.restype = ctypes.c_int
    lib.reset_policy_accept.argtypes = [ctypes.c_void_p, ctypes.c_int32]
    lib.reset_policy_accept.restype = ctypes.c_int
    lib.reset_policy_free.argtypes = [ctypes.c_void_p]
    lib.reset_policy_free.restype = None
    lib.reset_last_error.argtypes = []
    lib.reset_last_error.restype = ctypes.c_char_p
    # The structs above must match reset.h byte for byte.
    p = PolicyParams()
    lib.reset_policy_params_init_sized(ctypes.byref(p), ctypes.sizeof(p))
    assert p.struct_size == ctypes.sizeof(PolicyParams)
    assert p.repetition_penalty == 1.0  # at its offset: a misplaced field would read another default

    o = PolicyOptions()
    lib.reset_policy_options_init_sized(ctypes.byref(o), ctypes.sizeof(o))
    assert o.struct_size == ctypes.sizeof(PolicyOptions)
    d = Decision()
    lib.reset_decision_init_sized(ctypes.byref(d), ctypes.sizeof(d))
    assert d.struct_size == ctypes.sizeof(Decision)
    return lib


def close(a, b, rel=1e-5, floor=1e-9):
    return abs(a - b) <= rel * abs(b) + floor


def random_case(rng):
    """One sequence: vocabulary, delimiters, policy and length."""
    r = rng.random()
    if r < 0.05:
        vocab = int(rng.choice([151936, 152064]))
    elif r < 0.20:
        vocab = int(rng.integers(4097, 50001))
    else:
        vocab = int(rng.integers(2, 4097))
    ids = rng.permutation(vocab)[: min(vocab, 6)]
    n_nl = int(rng.integers(1, 3)) if vocab >= 4 else 1
    nl = [int(i) for i in ids[:n_nl]]
    dnl = [int(i) for i in ids[n_nl: n_nl + int(rng.integers(1, 5))]]
    return {
        "vocab": vocab,
        "nl": nl,
        "dnl": dnl,
        "kind": RESET_POLICY_RESET if rng.random() < 0.8 else RESET_POLICY_ENTROPY,
        "window": int(rng.choice([1, 2, 3, 5, 8, 16, 32])),
        "t_high": float(np.float32(rng.choice([1.0, 0.8, 1.3]))),
        "t_low": float(np.float32(rng.choice([0.0, 1e-7, 0.1, 0.3, 0.6]))),
        "tau0": float(np.float32(rng.uniform(0.0, 2.5))),
        # Long sequences on small vocabularies, shorter ones on the large
        # (their cost is in the 152k-wide entropies), within ~60 s in all.
        "length": int(rng.integers(1, 121 if vocab <= 4096 else 49)),
    }


def random_logits(rng, vocab):
    scale = np.exp(rng.uniform(np.log(0.3), np.log(30.0)))
    z = rng.standard_normal(vocab, dtype=np.float32) * np.float32(scale)
    if rng.random() < 0.1 and vocab > 2:
        masked = rng.integers(0, vocab, size=max(1, vocab // 10))
        z[masked] = -np.inf
        if not np.isfinite(z).any():
            z[0] = 0.0
    return z


def next_token(rng, case):
    r = rng.random()
    if r < 0.25:
        return int(rng.choice(case["nl"]))
    if r < 0.40 and case["dnl"]:
        return int(rng.choice(case["dnl"]))
    return int(rng.integers(0, case["vocab"]))


def test_policy_matches_reference(lib):
    rng = np.random.default_rng(20240607)
    n_sequences = 1000
    stats = {"tokens": 0, "entropy_ties": 0, "gate_ties": 0, "max_entropy_rel": 0.0, "largest_vocab": 0,
             "greedy": 0, "boundaries": 0, "uncertain": 0}
    start = time.time()
    for seq in range(n_sequences):
        case = random_case(rng)
        stats["largest_vocab"] = max(stats["largest_vocab"], case["vocab"])
        params = PolicyParams()
        lib.reset_policy_params_init_sized(ctypes.byref(params), ctypes.sizeof(params))
        params.kind = case["kind"]
        params.window = case["window"]
        params.t_high = case["t_high"]
        params.t_low = case["t_low"]
        params.tau0 = case["tau0"]
        nl = (ctypes.c_int32 * len(case["nl"]))(*case["nl"])
        dnl = (ctypes.c_int32 * len(case["dnl"]))(*case["dnl"])
        options = PolicyOptions()
        lib.reset_policy_options_init_sized(ctypes.byref(options), ctypes.sizeof(options))
        options.newline_ids = nl
        options.n_newline_ids = len(case["nl"])
        options.double_newline_ids = dnl
        options.n_double_newline_ids = len(case["dnl"])
        handle = ctypes.c_void_p()
        status = lib.reset_policy_create(ctypes.byref(params), ctypes.byref(options), ctypes.byref(handle))
        assert status == 0, lib.reset_last_error()
        ref = ReferencePolicy(case["nl"], case["dnl"], case["window"], case["t_high"], case["t_low"],
                              case["tau0"], step_gate=case["kind"] == RESET_POLICY_RESET)
        try:
            for t in range(case["length"]):
                z = random_logits(rng, case["vocab"])
                d = Decision()
                lib.reset_decision_init_sized(ctypes.byref(d), ctypes.sizeof(d))
                status = lib.reset_policy_decide(handle, z.ctypes.data_as(ctypes.POINTER(ctypes.c_float)),
                                                 z.size, ctypes.byref(d))
                assert status == 0, lib.reset_last_error()
                r = ref.decide(z)
                where = f"sequence {seq} token {t} case {case}"
                stats["tokens"] += 1
                rel = abs(d.entropy - r["entropy"]) / max(abs(r["entropy"]), 1e-30)
                if abs(d.entropy - r["entropy"]) > 1e-9:
                    stats["max_entropy_rel"] = max(stats["max_entropy_rel"], rel)
                assert close(d.entropy, r["entropy"]), f"entropy {d.entropy} vs {r['entropy']} at {where}"
                assert bool(d.boundary) == r["boundary"], where
                assert d.step_index == r["step_index"], where
                assert close(d.step_entropy, r["step_entropy"]), where
                assert close(d.global_mean, r["global_mean"]), where
                stats["boundaries"] += r["boundary"]
                stats["uncertain"] += r["uncertain"]
                stats["greedy"] += r["temperature"] == 0.0
                # A gate near-tie: Ĥ and H̄ differ by rounding only (the exact
                # equality of the precision trap is not a tie: both must agree).
                gate_tie = (r["step_entropy"] != r["global_mean"]
                            and abs(r["step_entropy"] - r["global_mean"]) <= 1e-6 * abs(r["global_mean"]))
                if gate_tie and bool(d.uncertain) != r["uncertain"]:
                    # The state does not depend on the decision, so the two
                    # stay in step: only this token's comparison is skipped.
                    stats["gate_ties"] += 1
                else:
                    assert bool(d.uncertain) == r["uncertain"], where
                    assert close(d.threshold, r["threshold"]), where
                    # An entropy near-tie: H_t within 1e-5 relative of τ.
                    if abs(r["entropy"] - r["threshold"]) <= 1e-5 * abs(r["threshold"]):
                        stats["entropy_ties"] += 1
                    else:
                        assert d.temperature == np.float32(r["temperature"]), \
                            f"temperature {d.temperature} vs {r['temperature']} at {where}"
                token = next_token(rng, case)
                assert lib.reset_policy_accept(handle, token) == 0
                ref.accept(token)
        finally:
            lib.reset_policy_free(handle)
    elapsed = time.time() - start
    print(f"\nReSET reference: {n_sequences} sequences, {stats['tokens']} tokens, largest vocabulary "
          f"{stats['largest_vocab']}, {stats['boundaries']} boundaries, {stats['uncertain']} uncertain, "
          f"{stats['greedy']} greedy; near-ties: {stats['entropy_ties']} entropy/threshold, "
          f"{stats['gate_ties']} gate; max entropy relative error {stats['max_entropy_rel']:.2e}; {elapsed:.1f} s")
    assert stats["largest_vocab"] >= 151936
    assert stats["boundaries"] > 0 and stats["uncertain"] > 0 and stats["greedy"] > 0


def test_python_policy_binding(lib):
    """reset.Policy (bindings/python) makes the reference's decisions and reports errors clearly."""
    try:
        import json

        import reset
    except ImportError as error:
        pytest.skip(f"the Python bindings are not importable: {error}")
    rng = np.random.default_rng(3)
    policy = reset.Policy(1.0, 0.2, 0.7, 4, [1], [2])  # the API shape: (t_high, t_low, tau0, window, nl, dnl)
    ref = ReferencePolicy([1], [2], 4, 1.0, np.float32(0.2), np.float32(0.7))
    for t in range(300):
        z = rng.standard_normal(1000, dtype=np.float32) * np.float32(rng.uniform(0.5, 8.0))
        d = policy.decide(z)
        r = ref.decide(z)
        assert close(d.entropy, r["entropy"])
        assert d.boundary == r["boundary"] and d.step_index == r["step_index"]
        if abs(r["entropy"] - r["threshold"]) > 1e-5 * r["threshold"]:
            assert d.temperature == np.float32(r["temperature"])
        token = int(rng.choice([1, 2, 5, 6, 7]))
        policy.accept(token)
        ref.accept(token)
    line = reset.Policy.trace_line(d, sequence=0, token=5)
    assert line.endswith("\n") and json.loads(line)["token"] == 5
    token, d = policy.sample(z)
    assert 0 <= token < 1000
    policy.reset()
    with pytest.raises(reset.ResetError) as error:
        policy.set_params("fixed", top_p=0.0)
    assert error.value.name == "RESET_ERR_INVALID_ARGUMENT" and "top_p is 0" in error.value.message
    with pytest.raises(reset.ResetError) as error:
        reset.Policy()
    assert error.value.name == "RESET_ERR_UNSUPPORTED"
    with pytest.raises(reset.ResetError):
        policy.decide(np.array([0.0, np.nan], dtype=np.float32))
    policy.close()
    with pytest.raises(ValueError):
        policy.accept(1)
