"""The Python binding's part of the cross-language binding tests (tests/bindings/): the same greedy
continuation as C, the missing-model status, the version check, cancellation from a thread and
1,000 create/free cycles with flat memory."""
import ctypes
import json
import math
import os
import pathlib
import struct

import numpy as np
import pytest

import reset
from reset import _lib
from conftest import FIXTURES, ROOT, cancel_while_busy

MODEL = FIXTURES / "qwen3-tied"
TOKENIZER = ROOT / "models" / "reset-arith-4m"  # the fixture models carry no tokenizer


def fixture_i32(name):
    """An I32 tensor of reference.safetensors, read with the standard library only."""
    data = (MODEL / "reference.safetensors").read_bytes()
    (header_len,) = struct.unpack("<Q", data[:8])
    entry = json.loads(data[8:8 + header_len])[name]
    assert entry["dtype"] == "I32"
    begin, end = entry["data_offsets"]
    return list(struct.unpack(f"<{(end - begin) // 4}i", data[8 + header_len + begin:8 + header_len + end]))


def greedy(model, prompt, n):
    with model.session(max_context=128) as session:
        session.set_policy(kind="greedy")  # generation_config.json asks for sampling
        session.prefill(prompt)
        return [step.token for step in session.generate(n)]


def test_greedy_continuation_is_the_one_c_decodes():
    prompt, expected = fixture_i32("input_ids"), fixture_i32("greedy_bf16")
    shared = os.environ.get("RESET_BINDING_IDS")
    if shared:  # ctest's binding_ids step wrote what the C program decoded
        prompt = [int(x) for x in pathlib.Path(shared, "prompt.txt").read_text().split()]
        expected = [int(x) for x in pathlib.Path(shared, "expected.txt").read_text().split()]
    with reset.Model(MODEL, weights="bf16", backend="cpu") as model:
        assert greedy(model, prompt, len(expected)) == expected


def test_steps_carry_the_sampler_signals():
    with reset.Model(MODEL, weights="bf16", backend="cpu") as model, model.session() as session:
        session.set_policy(kind="reset", t_high=1.0, t_low=0.3, tau0=0.6, window=8, seed=3)
        session.prefill(fixture_i32("input_ids"))
        steps = list(session.generate(8))
        assert len(steps) == 8
        assert all(s.entropy > 0 and s.temperature in (pytest.approx(1.0), pytest.approx(0.3)) for s in steps)
        assert all(s.threshold > 0 for s in steps)


def test_session_options_reach_the_library():
    with reset.Model(MODEL, weights="bf16", backend="cpu") as model:
        # kv_cache and eager matter to the CUDA backend; the CPU accepts and ignores them.
        with model.session(max_context=32, sequences=2, kv_cache="fp8", eager=True) as session:
            session.prefill(fixture_i32("input_ids")[:4])
            assert len(session.step()) == 2
            assert session.device_bytes() == 0
        with pytest.raises(ValueError):
            model.session(kv_cache="fp4")
        # The CUDA-only launch options pass through too; the library validates them on every backend.
        with model.session(max_context=32, prefill_gemm_tokens=-1, programmatic_launch=False) as session:
            session.prefill(fixture_i32("input_ids")[:4])
            assert session.step().token >= 0
        with pytest.raises(reset.ResetError) as failure:
            model.session(prefill_gemm_tokens=-2)
        assert failure.value.name == "RESET_ERR_INVALID_ARGUMENT"
        assert "prefill_gemm_tokens" in str(failure.value)


def test_quantize_lm_head_reaches_the_library():
    # The tied model's lm_head is its embedding table: quantized on load with NVFP4 weights.
    with reset.Model(MODEL, weights="nvfp4-w4a16", backend="cpu", quantize_lm_head=True) as model:
        info = model.info()
        assert info["lm_head_nvfp4"] == 1 and info["n_bf16_linears"] == 0
        assert len(greedy(model, fixture_i32("input_ids"), 4)) == 4
    with reset.Model(MODEL, weights="nvfp4-w4a16", backend="cpu") as model:
        assert model.info()["lm_head_nvfp4"] == 0
    with pytest.raises(reset.ResetError) as failure:
        reset.Model(MODEL, weights="bf16", backend="cpu", quantize_lm_head=True)
    assert failure.value.name == "RESET_ERR_INVALID_ARGUMENT"
    assert "quantize_lm_head" in str(failure.value)


def test_a_model_read_into_memory_decodes_as_the_mapped_one(monkeypatch):
    # 0.12: file_access="read" copies the same bytes the default mapping reads in place, so the logits are equal
    # bit for bit and greedy decoding draws the same tokens.
    prompt = fixture_i32("input_ids")

    def decode(file_access):
        with reset.Model(MODEL, weights="bf16", backend="cpu", file_access=file_access) as model, \
                model.session(max_context=64) as session:
            session.set_policy(kind="greedy")
            session.prefill(prompt)
            logits = session.logits()
            return logits, [step.token for step in session.generate(8)]

    mapped_logits, mapped_tokens = decode("map")
    read_logits, read_tokens = decode("read")
    assert np.array_equal(read_logits, mapped_logits)
    assert read_tokens == mapped_tokens and len(read_tokens) == 8
    with pytest.raises(ValueError, match="file_access must be one of map, read; got 'mmap'"):
        reset.Model(MODEL, backend="cpu", file_access="mmap")
    # A value outside reset_file_access that reaches the library is refused there, naming the field.
    monkeypatch.setattr(reset.model, "FILE_ACCESSES", {"map": 0, "read": 1, "seven": 7})
    with pytest.raises(reset.ResetError) as failure:
        reset.Model(MODEL, backend="cpu", file_access="seven")
    assert failure.value.name == "RESET_ERR_INVALID_ARGUMENT"
    assert "file_access" in str(failure.value)


def test_info_names_the_checkpoint_format():
    # 0.10: where the NVFP4 weights come from, one fixture of each reset_checkpoint_format, as they load by default,
    # and whether the checkpoint carries calibrated FP8 KV-cache scales (only ct-nvfp4a16-head-qwen3's K/V scales).
    expected = {"qwen3-tied": ("unquantized", "bf16", False), "modelopt-qwen3": ("modelopt", "nvfp4-w4a16", False),
                "ct-nvfp4-qwen3": ("compressed-tensors", "nvfp4-w4a16", False),
                "ct-nvfp4a16-head-qwen3": ("compressed-tensors", "nvfp4-w4a16", True)}
    for name, (checkpoint_format, weights, kv_cache_scales) in expected.items():
        with reset.Model(FIXTURES / name, backend="cpu") as model:
            info = model.info()
            assert (info["checkpoint_format"], info["weights"]) == (checkpoint_format, weights), name
            assert info["from_modelopt"] == (checkpoint_format == "modelopt"), name
            assert info["kv_cache_scales"] is kv_cache_scales, name
    # An unquantized checkpoint quantized on load is still one: the field names the checkpoint, not the weights.
    with reset.Model(MODEL, weights="nvfp4-w4a16", backend="cpu") as model:
        assert model.info()["checkpoint_format"] == "unquantized"
        assert model.info()["kv_cache_scales"] is False
    assert _lib.enum_name(_lib.CHECKPOINT_FORMATS, 3) == "unknown-3"  # a format a newer library adds


def test_cuda_backend_without_a_device_is_status_backend():
    if os.path.exists("/dev/nvidia0"):
        pytest.skip("a GPU is present: tests/gpu/test_cuda_engine covers the CUDA backend")
    with pytest.raises(reset.ResetError) as error:
        reset.Model(MODEL, backend="cuda")
    assert error.value.status == 14  # RESET_ERR_BACKEND
    assert "RESET_BACKEND_CUDA" in str(error.value)


def test_missing_model_is_status_io():
    with pytest.raises(reset.ResetError) as error:
        reset.Model("/nonexistent/model")
    assert error.value.status == 3
    assert error.value.name == "RESET_ERR_IO"


def test_a_library_of_another_abi_major_is_refused_clearly():
    _lib.check_abi(_lib.ABI_MAJOR * 10000 + _lib.ABI_MINOR * 100 + 99)
    with pytest.raises(ImportError, match="has ABI major 7, but these bindings need 0"):
        _lib.check_abi(70102)


def test_a_library_older_than_the_bindings_minor_is_refused_clearly():
    # A pure function of the version number: reloading the module against an old library is not needed.
    assert (_lib.ABI_MAJOR, _lib.ABI_MINOR) == (0, 12)
    _lib.check_abi(_lib.lib.reset_version())
    for newer_or_same in (1200, 1201, 1299, 1300, 9900):
        _lib.check_abi(newer_or_same)
    with pytest.raises(ImportError) as error:
        _lib.check_abi(1100)  # 0.11's reset_model_load knows no file_access
    assert str(error.value) == ("libreset 0.11.0 is older than these bindings need (0.12 or newer): "
                                "it lacks functions or fields they use")
    with pytest.raises(ImportError, match="libreset 0.11.99 is older"):
        _lib.check_abi(1199)
    with pytest.raises(ImportError, match="libreset 0.10.0 is older"):
        _lib.check_abi(1000)
    with pytest.raises(ImportError, match="libreset 0.9.0 is older"):
        _lib.check_abi(900)
    with pytest.raises(ImportError, match="libreset 0.8.0 is older"):
        _lib.check_abi(800)
    with pytest.raises(ImportError, match="libreset 0.7.0 is older"):
        _lib.check_abi(700)
    with pytest.raises(ImportError, match="libreset 0.6.0 is older"):
        _lib.check_abi(600)
    with pytest.raises(ImportError, match="libreset 0.5.0 is older"):
        _lib.check_abi(500)
    with pytest.raises(ImportError, match="libreset 0.4.0 is older"):
        _lib.check_abi(400)
    with pytest.raises(ImportError, match="libreset 0.3.0 is older"):
        _lib.check_abi(300)
    with pytest.raises(ImportError, match="libreset 0.2.0 is older"):
        _lib.check_abi(200)
    with pytest.raises(ImportError, match="libreset 0.1.0 is older"):
        _lib.check_abi(100)
    with pytest.raises(ImportError, match="libreset 0.0.7 is older"):
        _lib.check_abi(7)
    with pytest.raises(ImportError, match="has ABI major 1"):  # the major is judged first
        _lib.check_abi(10100)


def test_cancel_from_another_thread_stops_decoding():
    with reset.Model(MODEL) as model, model.session(max_context=512) as session:
        session.set_policy(kind="greedy")
        session.prefill([3] * 8)
        error = cancel_while_busy(session, refill=lambda: session.prefill([3] * 8), work=session.step)
        assert error is not None, "no cancel within 30 s"
        assert error.name == "RESET_ERR_CANCELLED"


def rss_kib():
    for line in pathlib.Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    pytest.skip("no /proc/self/status")


def test_a_thousand_create_free_cycles_keep_memory_flat():
    def cycle(model):
        with model.session(max_context=64) as session:
            session.prefill([1, 2, 3])
        with reset.Policy(t_low=0.3, tau0=0.6, nl_ids=[5], dnl_ids=[6]):
            pass
        with pytest.raises(reset.ResetError):
            reset.Model("/nonexistent/model")

    with reset.Model(MODEL) as model:
        for _ in range(100):  # warm up allocator pools before measuring
            cycle(model)
        before = rss_kib()
        for _ in range(1000):
            cycle(model)
        grown = rss_kib() - before
    # A session holds a KV cache of tens of KiB: leaking it, or a model's state, grows RSS far past
    # 4 MiB here.  Small leaks are the C test's job (the same cycles under valgrind).
    assert grown < 4096, f"RSS grew by {grown} KiB over 1,000 cycles"


# --- int32 arguments: ctypes wraps them modulo 2**32 unless the binding checks --------------------

def test_token_ids_outside_int32_are_out_of_range_not_wrapped():
    with reset.Tokenizer(TOKENIZER) as tokenizer:
        assert tokenizer.decode([72]) != ""
        with pytest.raises(reset.ResetError) as library:  # the library's own answer to a bad id
            tokenizer.decode([tokenizer.vocab_size])
        for ids in ([2**32 + 72], [72, -2**32 + 72], np.array([2**32 + 72]), np.array([2**31], dtype=np.uint64),
                    [2**70]):
            with pytest.raises(reset.ResetError) as error:
                tokenizer.decode(ids)
            assert error.value.name == library.value.name == "RESET_ERR_OUT_OF_RANGE"
        with pytest.raises(reset.ResetError, match="RESET_ERR_OUT_OF_RANGE"):
            tokenizer.token_bytes(2**32 + 72)
        assert tokenizer.decode(np.array([72, 72], dtype=np.int32)) == tokenizer.decode([72, 72])


def test_prefill_ids_outside_int32_are_rejected():
    with reset.Model(MODEL, weights="bf16", backend="cpu") as model, model.session(max_context=64) as session:
        for ids in ([2**32 + 5, 2**32 + 6], np.array([5, 2**32 + 6]), [5, -2**31 - 1]):
            with pytest.raises(reset.ResetError) as error:
                session.prefill(ids)
            assert error.value.name == "RESET_ERR_OUT_OF_RANGE"
            assert session.length() == 0
        session.prefill(np.array([5, 6], dtype=np.int64))
        session.prefill(np.array([7], dtype=np.int32))
        assert session.length() == 3


def test_a_sequence_outside_int32_is_a_bad_sequence_not_sequence_0():
    with reset.Model(MODEL, weights="bf16", backend="cpu") as model, model.session(max_context=64) as session:
        session.prefill([1, 2, 3])
        assert session.length(0) == 3
        assert session.length(2**32) == session.length(1) == -1  # reset_session_length's bad argument
        with pytest.raises(reset.ResetError) as error:
            session.logits(2**32)
        assert error.value.name == "RESET_ERR_OUT_OF_RANGE"


def test_options_outside_int32_are_invalid_arguments():
    def invalid(call, field):
        with pytest.raises(reset.ResetError) as error:
            call()
        assert error.value.name == "RESET_ERR_INVALID_ARGUMENT" and field in str(error.value)

    invalid(lambda: reset.Model(MODEL, backend="cpu", threads=2**32), "threads")
    with reset.Model(MODEL, weights="bf16", backend="cpu") as model:
        invalid(lambda: model.session(max_context=2**32 + 16), "max_context")
        invalid(lambda: model.session(prefill_gemm_tokens=2**32 - 1), "prefill_gemm_tokens")  # not -1: "never"
        invalid(lambda: model.session(top_logprobs=2**32 + 5), "top_logprobs")  # not 5
        with model.session(max_context=16) as session:
            invalid(lambda: session.set_policy(kind="reset", t_low=0.3, tau0=0.6, window=2**32 + 8), "window")
    invalid(lambda: reset.Policy(t_low=0.3, tau0=0.6, window=2**32 + 8), "window")
    invalid(lambda: reset.Policy(t_low=0.3, tau0=0.6, kind="fixed", top_k=2**32 + 1), "top_k")
    invalid(lambda: reset.Policy(t_low=0.3, tau0=0.6, seed=2**64), "seed")
    invalid(lambda: reset.Policy(t_low=0.3, tau0=0.6, sequence=2**32), "sequence")
    invalid(lambda: reset.Policy(t_low=0.3, tau0=0.6, nl_ids=[2**32 + 5]), "nl_ids")
    invalid(lambda: reset.Policy(t_low=0.3, tau0=0.6, dnl_ids=np.array([2**32 + 6])), "dnl_ids")
    decision = reset.Policy(t_low=0.3, tau0=0.6).decide([0.0, 1.0])
    invalid(lambda: reset.Policy.trace_line(decision, sequence=2**32), "sequence")
    invalid(lambda: reset.Policy.trace_line(decision, token=2**32 + 7), "token")


def test_policy_accept_outside_int32_is_out_of_range():
    with reset.Policy(t_low=0.3, tau0=0.6, nl_ids=np.array([5]), dnl_ids=[6]) as policy:
        policy.decide([0.0, 1.0])
        with pytest.raises(reset.ResetError) as error:
            policy.accept(2**32 + 1)
        assert error.value.name == "RESET_ERR_OUT_OF_RANGE"
        policy.accept(1)


# --- repetition penalties (0.2) --------------------------------------------------------------------

def test_penalties_round_trip_through_the_session_policy():
    with reset.Model(MODEL, weights="bf16", backend="cpu") as model, model.session(max_context=16) as session:
        assert session.policy()["presence_penalty"] == 0.0 and session.policy()["frequency_penalty"] == 0.0
        session.set_policy(kind="fixed", temperature=0.7, top_k=5, presence_penalty=1.5, frequency_penalty=0.5)
        policy = session.policy()
        assert (policy["presence_penalty"], policy["frequency_penalty"]) == (1.5, 0.5)  # exact in float32
        assert policy["kind"] == "fixed" and policy["top_k"] == 5
        session.set_policy(**policy)
        assert session.policy() == policy
        # The ends of the range are inside it.
        session.set_policy(presence_penalty=-2.0, frequency_penalty=2.0)
        assert (session.policy()["presence_penalty"], session.policy()["frequency_penalty"]) == (-2.0, 2.0)


def test_the_repetition_penalty_round_trips_through_the_session_policy():
    # The ctypes struct matches the library's: its size, and repetition_penalty's default read at its offset.
    params = _lib.PolicyParams()
    _lib.lib.reset_policy_params_init_sized(ctypes.byref(params), ctypes.sizeof(params))
    assert params.struct_size == ctypes.sizeof(_lib.PolicyParams) and params.repetition_penalty == 1.0
    with reset.Model(MODEL, weights="bf16", backend="cpu") as model, model.session(max_context=16) as session:
        assert session.policy()["repetition_penalty"] == 1.0  # the fixture's generation_config.json sets none
        session.set_policy(kind="fixed", temperature=0.7, presence_penalty=0.5, repetition_penalty=1.5)
        policy = session.policy()
        assert (policy["repetition_penalty"], policy["presence_penalty"]) == (1.5, 0.5)  # exact in float32
        session.set_policy(**policy)
        assert session.policy() == policy
        session.set_policy()  # the keyword's default is the library's: off
        assert session.policy()["repetition_penalty"] == 1.0
        for end in (0.1, 10.0):  # the ends of the range are inside it
            session.set_policy(repetition_penalty=end)
            assert session.policy()["repetition_penalty"] == np.float32(end)


def test_penalties_outside_their_range_are_invalid_arguments_naming_the_field():
    def invalid(call, field):
        with pytest.raises(reset.ResetError) as error:
            call()
        assert error.value.name == "RESET_ERR_INVALID_ARGUMENT", error.value
        assert field in error.value.message, error.value

    with reset.Model(MODEL, weights="bf16", backend="cpu") as model, model.session(max_context=16) as session:
        session.set_policy(presence_penalty=1.5, frequency_penalty=0.5)
        before = session.policy()
        invalid(lambda: session.set_policy(presence_penalty=2.5), "presence_penalty")
        invalid(lambda: session.set_policy(frequency_penalty=2.5), "frequency_penalty")
        invalid(lambda: session.set_policy(frequency_penalty=-2.5), "frequency_penalty")
        invalid(lambda: session.set_policy(presence_penalty=float("nan")), "presence_penalty")
        for bad in (0.05, 11.0, float("nan"), float("inf"), 0.0, -1.5):
            invalid(lambda: session.set_policy(repetition_penalty=bad), "repetition_penalty")
        assert session.policy() == before  # a refused policy changes nothing
    invalid(lambda: reset.Policy(t_low=0.3, tau0=0.6, presence_penalty=2.5), "presence_penalty")
    invalid(lambda: reset.Policy(t_low=0.3, tau0=0.6, repetition_penalty=0.05), "repetition_penalty")
    with reset.Policy(t_low=0.3, tau0=0.6, presence_penalty=1.5, frequency_penalty=0.5) as policy:
        invalid(lambda: policy.set_params(t_low=0.3, tau0=0.6, frequency_penalty=2.5), "frequency_penalty")
        invalid(lambda: policy.set_params(t_low=0.3, tau0=0.6, repetition_penalty=11.0), "repetition_penalty")
        invalid(lambda: policy.set_params(t_low=0.3, tau0=0.6, repetition_penalty=float("nan")),
                "repetition_penalty")


def test_a_standalone_policy_draws_with_the_penalties_of_the_tokens_it_accepted():
    # Greedy: the argmax of z - frequency_penalty * c - presence_penalty (c > 0), c counted from accept().
    logits = [0.0, 1.0, 0.5]
    with reset.Policy(kind="greedy", t_low=0.3, tau0=0.6, frequency_penalty=0.3) as policy:
        assert policy.sample(logits)[0] == 1
        policy.accept(1)
        assert policy.sample(logits)[0] == 1  # 1 - 0.3 = 0.7 still leads
        policy.accept(1)
        token, decision = policy.sample(logits)
        assert token == 2  # 1 - 0.6 = 0.4 < 0.5
        assert decision.entropy == policy.decide(logits).entropy  # the decision sees the raw logits
        policy.set_params("greedy", t_low=0.3, tau0=0.6, presence_penalty=0.55)
        assert policy.sample(logits)[0] == 2  # the counts were kept: 1 - 0.55 = 0.45 < 0.5
        policy.reset()
        assert policy.sample(logits)[0] == 1  # a new generation counts afresh


def test_greedy_decoding_lowers_each_generated_tokens_logit_by_its_penalties():
    # Every step's token is the argmax of the raw logits (session.logits(), read before the step) less the
    # penalties of the tokens generated so far; prompt tokens are not counted.
    frequency, presence, n = 2.0, 0.25, 20
    with reset.Model(MODEL, weights="bf16", backend="cpu") as model, model.session(max_context=128) as session:
        prompt = fixture_i32("input_ids")
        plain = greedy(model, prompt, n)
        session.set_policy(kind="greedy", frequency_penalty=frequency, presence_penalty=presence)
        session.prefill(prompt)
        counts = np.zeros(session.vocab_size, dtype=np.float32)
        tokens = []
        for _ in range(n):
            logits = session.logits()
            penalised = (logits - np.float32(frequency) * counts) - np.where(counts > 0, np.float32(presence),
                                                                            np.float32(0))
            step = session.step()
            if step.token < 0:
                break
            top2 = np.sort(penalised)[-2:]
            if top2[1] - top2[0] > 1e-4:  # a near-tie may round either way
                assert step.token == int(np.argmax(penalised)), (len(tokens), tokens)
            counts[step.token] += 1
            tokens.append(step.token)
            if step.end:
                break
        assert len(tokens) == len(plain)
        assert tokens != plain, "the penalties changed nothing: the fixture no longer repeats a token"
        assert max(np.bincount(tokens)) < max(np.bincount(plain))


# --- the repetition penalty (0.3) ------------------------------------------------------------------

def repetition_penalized(logits, context, r):
    """Hugging Face's RepetitionPenaltyLogitsProcessor, written here: each token of the context, once,
    has z > 0 divided by r and z <= 0 multiplied by r."""
    z = np.array(logits, dtype=np.float32)
    seen = np.unique(np.asarray(list(context), dtype=np.int64))
    z[seen] = np.where(z[seen] > 0, z[seen] / np.float32(r), z[seen] * np.float32(r))
    return z


def test_a_standalone_policy_lowers_the_context_it_was_given_by_the_repetition_penalty():
    r = 2.0
    logits = [0.0, 2.0, 1.5, -1.0]  # raw argmax 1, in the prompt; 2 / 2 = 1 < 1.5
    negative = [-1.0, -0.2, -0.3, -3.0]  # raw argmax 1 again; -0.2 * 2 = -0.4 < -0.3 (multiplied, not divided)
    with reset.Policy(kind="greedy", t_low=0.3, tau0=0.6, repetition_penalty=r) as policy:
        assert policy.sample(logits)[0] == int(np.argmax(logits)) == 1  # nothing seen yet
        prompt = [1, 3, 1]
        policy.add_context(np.array(prompt, dtype=np.int64))
        context = list(prompt)
        expected = int(np.argmax(repetition_penalized(logits, context, r)))
        assert expected != int(np.argmax(logits))
        token, decision = policy.sample(logits)
        assert token == expected == 2
        assert decision.entropy == policy.decide(logits).entropy  # the decision sees the raw logits
        # Accepted tokens join the context: with 2 lowered too (1.5 / 2 = 0.75), 1 leads again (at 1, once
        # although the prompt holds it twice).
        policy.accept(token)
        context.append(token)
        assert policy.sample(logits)[0] == int(np.argmax(repetition_penalized(logits, context, r))) == 1
        # A negative id is out of range, and records nothing; an empty list records nothing either.
        with pytest.raises(reset.ResetError) as error:
            policy.add_context([0, -1])
        assert error.value.name == "RESET_ERR_OUT_OF_RANGE", error.value
        policy.add_context([])
        assert policy.sample([3.0, 0.0, 0.0, 0.0, 2.0])[0] == 0  # 0 was not recorded: 3 leads, not 3 / 2 < 2
        # reset_state starts a new generation but keeps the context.
        policy.set_params("greedy", t_low=0.3, tau0=0.6, repetition_penalty=r, reset_state=True)
        assert policy.sample(logits)[0] == int(np.argmax(repetition_penalized(logits, context, r))) == 1
        # reset() forgets it: the raw argmax comes back.
        policy.reset()
        assert policy.sample(logits)[0] == int(np.argmax(logits)) == 1
        assert policy.sample(negative)[0] == int(np.argmax(negative)) == 1
        policy.add_context([1])
        expected = int(np.argmax(repetition_penalized(negative, [1], r)))
        assert policy.sample(negative)[0] == expected == 2


def test_greedy_decoding_with_a_repetition_penalty_lowers_the_prompts_and_the_generated_tokens():
    # Every step's token is the argmax of the raw logits with the prompt's and the generated tokens' divided
    # (z > 0) or multiplied (z <= 0) by r; the plain continuation repeats a prompt token, which r avoids.
    r, n = 1.5, 16
    with reset.Model(MODEL, weights="bf16", backend="cpu") as model, model.session(max_context=128) as session:
        prompt = fixture_i32("input_ids")
        plain = greedy(model, prompt, n)
        session.set_policy(kind="greedy", repetition_penalty=r)
        session.prefill(prompt)
        tokens = []
        for _ in range(n):
            penalised = repetition_penalized(session.logits(), prompt + tokens, r)
            step = session.step()
            top2 = np.sort(penalised)[-2:]
            if top2[1] - top2[0] > 1e-4:  # a near-tie may round either way
                assert step.token == int(np.argmax(penalised)), (len(tokens), tokens)
            tokens.append(step.token)
            if step.end:
                break
        assert len(tokens) == len(plain) == n
        assert tokens != plain, "the repetition penalty changed nothing"
        # The first token it changed is one the prompt holds and the plain continuation had not yet generated:
        # the prompt counts.
        first = next(i for i in range(n) if tokens[i] != plain[i])
        assert plain[first] in prompt and plain[first] not in plain[:first], (first, plain, tokens)
        assert max(np.bincount(tokens)) < max(np.bincount(plain))


# --- raw logprobs (0.3) ---------------------------------------------------------------------------

def raw_logprob(logits, token):
    """log softmax(logits)[token] in double precision, written independently of the library: the
    max-shifted sum of exp."""
    z = np.asarray(logits, dtype=np.float64)
    shift = z.max()
    return float(z[token] - shift - np.log(np.exp(z - shift).sum()))


# The library takes each exp(z - max) in FP32 (summed in double, in its own order), rounds z - max to
# FP32 and returns a float: each costs ~1e-6 at this vocabulary (512) and these magnitudes (|logprob| ~ 4).
# 1e-4 leaves margin, while a field left at 0 or read at the wrong offset is off by whole units.
LOGPROB_TOLERANCE = 1e-4


def test_step_structs_match_the_library_byte_for_byte():
    steps = (_lib.Step * 2)()
    _lib.lib.reset_step_init_sized(steps, 2, ctypes.sizeof(_lib.Step))
    assert steps[1].struct_size == ctypes.sizeof(_lib.Step)  # a field missing or misplaced changes the size
    assert steps[1].token == -1 and math.isnan(steps[1].logprob)  # reset_step_init_sized: no token, logprob NaN
    assert steps[1].top_logprob_count == 0 and not steps[1].top_logprobs  # and no top logprobs (NULL)
    assert steps[1].stop_index == -1 and steps[1].end_reason == 0  # 0.5: no stop string, RESET_END_NONE
    if ctypes.sizeof(ctypes.c_void_p) == 8:
        assert ctypes.sizeof(_lib.Step) == 96  # stop_index fills 0.4's tail padding (reset.h): the size is unchanged
        assert ctypes.sizeof(_lib.StopOptions) == 56  # ignore_eos (0.5) after include_stop_string, then padding
        assert ctypes.sizeof(_lib.ModelOptions) == 48  # file_access (0.12) fills 0.11's tail padding (reset.h)
    model_options = _lib.ModelOptions(file_access=1)
    _lib.lib.reset_model_options_init_sized(ctypes.byref(model_options), ctypes.sizeof(model_options))
    assert model_options.struct_size == ctypes.sizeof(_lib.ModelOptions)
    assert model_options.file_access == _lib.FILE_ACCESSES["map"]  # the library's default reaches the declared field
    stop = _lib.StopOptions(struct_size=1, string_count=3, id_count=4, max_tokens=5, include_stop_string=1,
                            ignore_eos=1)
    _lib.lib.reset_stop_options_init_sized(ctypes.byref(stop), ctypes.sizeof(stop))
    assert stop.struct_size == ctypes.sizeof(_lib.StopOptions)
    assert (stop.string_count, stop.id_count, stop.max_tokens, stop.include_stop_string, stop.ignore_eos) == \
        (0, 0, 0, 0, 0)  # the library's init zeroes the whole struct this binding declares, ignore_eos too
    assert ctypes.sizeof(_lib.TokenLogprobStruct) == 8  # reset_token_logprob: int32_t, float
    options = _lib.SessionOptions()
    options.top_logprobs = 7
    _lib.lib.reset_session_options_init_sized(ctypes.byref(options), ctypes.sizeof(options))
    assert options.struct_size == ctypes.sizeof(_lib.SessionOptions) and options.top_logprobs == 0  # the default
    decision = reset.policy._Decision()
    _lib.lib.reset_decision_init_sized(ctypes.byref(decision), ctypes.sizeof(decision))
    assert decision.struct_size == ctypes.sizeof(reset.policy._Decision) and math.isnan(decision.logprob)


def test_a_steps_logprob_is_log_softmax_of_the_raw_logits_at_its_token():
    with reset.Model(MODEL, weights="bf16", backend="cpu") as model, model.session(max_context=64) as session:
        session.set_policy(kind="greedy")
        session.prefill(fixture_i32("input_ids"))
        for _ in range(3):
            logits = session.logits()
            step = session.step()
            # Session.steps() inits its array with its own size: the unsized (0.2) init would give a struct_size
            # that ends before logprob, and the library would leave logprob unwritten.
            assert session._steps[0].struct_size == ctypes.sizeof(_lib.Step)
            expected = raw_logprob(logits, step.token)
            assert step.token == int(np.argmax(logits))
            assert expected < -1.0  # the fixture's tokens are far from certain: a logprob of 0 cannot pass
            assert step.logprob <= 0 and abs(step.logprob - expected) <= LOGPROB_TOLERANCE, (step, expected)
        # Sampled at T = 2 with top-k 3: the logprob is still that of the raw logits, not of what was drawn from.
        session.set_policy(kind="fixed", temperature=2.0, top_k=3, seed=5)
        logits = session.logits()
        step = session.step()
        assert abs(step.logprob - raw_logprob(logits, step.token)) <= LOGPROB_TOLERANCE, step


def test_a_standalone_policy_reports_the_drawn_tokens_logprob_and_nan_when_it_draws_nothing():
    with reset.Model(MODEL, weights="bf16", backend="cpu") as model, model.session(max_context=64) as session:
        session.prefill(fixture_i32("input_ids"))
        logits = session.logits()
    with reset.Policy(kind="greedy", t_low=0.3, tau0=0.6) as policy:
        assert math.isnan(policy.decide(logits).logprob)  # decide draws nothing
        token, decision = policy.sample(logits)
        expected = raw_logprob(logits, token)
        assert token == int(np.argmax(logits)) and expected < -1.0
        assert decision.logprob <= 0 and abs(decision.logprob - expected) <= LOGPROB_TOLERANCE, decision
        # The trace carries it right after the token; null for a decision without one.
        line = json.loads(reset.Policy.trace_line(decision, token=token))
        assert list(line)[:3] == ["sequence", "token", "logprob"]
        assert abs(line["logprob"] - expected) <= LOGPROB_TOLERANCE
        assert json.loads(reset.Policy.trace_line(policy.decide(logits)))["logprob"] is None


# --- top logprobs (0.4) ---------------------------------------------------------------------------

# Each entry's logprob is (z - max) - log sum exp(z - max) taken in FP32 and double by the library, in its own
# order, and rounded to a float: measured within 2e-7 of the double-precision reference here, where |logprob|
# is about 4-5 (a float's ulp there is 4.8e-7).  1e-5 leaves a wide margin yet is far below the gaps between
# neighbouring entries' logprobs and anything a field read at the wrong offset would give.
TOP_LOGPROB_TOLERANCE = 1e-5


def most_likely(logits, n):
    """The n most likely ids by the raw logits: value descending, ties by the lower id (reset.h)."""
    return sorted(range(len(logits)), key=lambda i: (-float(logits[i]), i))[:n]


def check_top_logprobs(logits, step, n):
    """step.top_logprobs against the logits read before the step; the index of the chosen token, or None."""
    top = step.top_logprobs
    assert len(top) == n, step
    assert all(isinstance(entry, reset.TokenLogprob) for entry in top)
    # The tokens, in order, are the top n of the logits (the library orders by logit, so two entries whose
    # logprobs round to one float still come in id order), and their logprobs never increase.
    assert [entry.token for entry in top] == most_likely(logits, n), (top, most_likely(logits, n))
    assert all(a.logprob >= b.logprob for a, b in zip(top, top[1:])), top
    for entry in top:
        assert abs(entry.logprob - raw_logprob(logits, entry.token)) <= TOP_LOGPROB_TOLERANCE, (entry, step)
    chosen = [i for i, entry in enumerate(top) if entry.token == step.token]
    if chosen:
        assert top[chosen[0]].logprob == step.logprob, (top, step)  # exactly: the same float (reset.h)
    return chosen[0] if chosen else None


def test_top_logprobs_are_the_most_likely_tokens_of_the_logits_each_token_was_drawn_from():
    with reset.Model(MODEL, weights="bf16", backend="cpu") as model, \
            model.session(max_context=64, top_logprobs=5) as session:
        session.set_policy(kind="greedy")
        session.prefill(fixture_i32("input_ids"))
        for _ in range(3):
            logits = session.logits()  # before the step: the distribution its token is drawn from
            step = session.step()
            assert check_top_logprobs(logits, step, 5) == 0, step  # greedy: the first entry is the token
            assert step.top_logprobs[0] == (step.token, step.logprob)
        # Sampled at T = 2 from the top 3: the chosen token is always among the top 5, not always first, and
        # the entries are still those of the raw logits.
        session.set_policy(kind="fixed", temperature=2.0, top_k=3, seed=5)
        places = []
        for _ in range(8):
            logits = session.logits()
            step = session.step()
            places.append(check_top_logprobs(logits, step, 5))
        assert None not in places and any(place > 0 for place in places), places


def test_no_top_logprobs_unless_asked_and_more_than_twenty_is_refused():
    with reset.Model(MODEL, weights="bf16", backend="cpu") as model:
        for options in ({}, {"top_logprobs": 0}):  # the default is none
            with model.session(max_context=16, **options) as session:
                session.prefill(fixture_i32("input_ids")[:4])
                step = session.step()
                assert step.token >= 0 and step.top_logprobs == [], step
        with model.session(max_context=16, top_logprobs=20) as session:  # RESET_MAX_TOP_LOGPROBS
            session.set_policy(kind="greedy")
            session.prefill(fixture_i32("input_ids")[:4])
            logits = session.logits()
            check_top_logprobs(logits, session.step(), 20)
        for bad in (21, -1):
            with pytest.raises(reset.ResetError) as error:
                model.session(top_logprobs=bad)
            assert error.value.name == "RESET_ERR_INVALID_ARGUMENT" and "top_logprobs" in error.value.message


def test_a_sequence_that_has_ended_reports_no_top_logprobs():
    # Sequence 0 holds only EOS; a repetition penalty of 0.1 multiplies the logit of every token of a sequence's
    # context by 10 (z > 0), which makes the fixture's EOS (z ~ 1.04 after it) its greedy choice.  Sequence 1
    # gets the prompt too, whose tokens' logits lead once multiplied, so it goes on.
    with reset.Model(MODEL, weights="bf16", backend="cpu") as model, \
            model.session(max_context=64, sequences=2, top_logprobs=5) as session:
        eos = model.info()["eos_ids"][0]
        session.set_policy(kind="greedy", repetition_penalty=0.1)
        session.prefill([eos])
        session.prefill_sequence(1, fixture_i32("input_ids"))
        logits = session.logits()
        first = session.step()
        assert first[0].token == eos and first[0].end, "the fixture's sequence 0 no longer ends at once"
        assert not first[1].end
        # The EOS was drawn, so its step has them; its raw logit is far from the top five.
        assert check_top_logprobs(logits[0], first[0], 5) is None
        check_top_logprobs(logits[1], first[1], 5)
        later = session.step()
        assert later[0].token == -1 and later[0].end and math.isnan(later[0].logprob), later[0]
        assert later[0].top_logprobs == []
        assert len(later[1].top_logprobs) == 5


# --- stop conditions (0.5) -----------------------------------------------------------------------

CHAT = ROOT / "tests" / "fixtures" / "chat-model"  # the fixture with a tokenizer: stop strings need one
STOP_PROMPT = [10, 11, 12, 13]
# A stop string the chat fixture's generations do not contain (tests/unit/test_stop.cpp's).
NEVER_GENERATED = "\x7f\x01\x7f\x02\x7f\x03\x7f\x04"
REFERENCE_TOKENS = 60


def chat_model():
    return reset.Model(CHAT, weights="bf16", backend="cpu")


def sampling_session(model, seed=3):
    # T = 2 over every token: varied text from the random weights, an end-of-generation id rarely (seed 3 draws
    # none in its first REFERENCE_TOKENS; seed 7 does).  The draws are keyed by seed, sequence and step, so after
    # reset() a generation repeats exactly, whatever the stops.
    session = model.session(max_context=512)
    session.set_policy(kind="fixed", temperature=2.0, seed=seed)
    return session


def run(session, limit=400):
    """Reset, prefill STOP_PROMPT and step sequence 0 until it ends: its StepResults, the ending one last."""
    session.reset()
    session.prefill(STOP_PROMPT)
    steps = []
    for _ in range(limit):
        step = session.step()
        steps.append(step)
        assert step.token >= 0, step
        if step.end_reason != "stop":
            assert step.stop_index == -1, step
        if not step.end:
            assert step.end_reason == "none", step
            continue
        assert step.end_reason in ("eos", "stop", "length"), step
        with pytest.raises(reset.ResetError) as error:  # every sequence has ended
            session.step()
        assert error.value.name == "RESET_ERR_STATE"
        return steps
    raise AssertionError(f"no end within {limit} steps")


def reference(session):
    """The generation bounded by max_tokens only: what the stops are cut from and checked against."""
    session.set_stop(max_tokens=REFERENCE_TOKENS)
    steps = run(session)
    assert len(steps) == REFERENCE_TOKENS and steps[-1].end_reason == "length", "the reference met an EOS"
    return steps


def text_of(steps):
    return "".join(step.text for step in steps)


def test_max_tokens_ends_a_generation_with_length_after_exactly_that_many_tokens():
    with chat_model() as model, sampling_session(model) as session:
        want = reference(session)
        assert len(text_of(want)) > 40
        for n in (1, 10):
            session.set_stop(max_tokens=n)
            got = run(session)
            assert len(got) == n and got[-1].end and got[-1].end_reason == "length", got[-1]
            assert [s.token for s in got] == [s.token for s in want[:n]]
            assert text_of(got) == text_of(want[:n])
            assert session.length() == len(STOP_PROMPT) + n  # the max_tokens-th token stays in the context
        # A new turn counts afresh: the same budget again after prefilling more.
        session.prefill([20, 21])
        steps = [session.step() for _ in range(10)]
        assert [s.end for s in steps] == [False] * 9 + [True] and steps[-1].end_reason == "length"


def test_a_stop_string_ends_the_text_where_the_reference_first_contains_it():
    with chat_model() as model, sampling_session(model) as session:
        want = reference(session)
        text = text_of(want)
        # Cut from the middle of the reference's text, so they end mid-generation: one across the start of the
        # middle token's text (so across tokens), one from the middle character on.
        boundary = len(text_of(want[:len(want) // 2]))
        middle = len(text) // 2
        across, second = text[boundary - 3:boundary + 3], text[middle:middle + 5]
        for strings, include, index in (([across], False, 0), ([NEVER_GENERATED, second], True, 1)):
            stop = strings[index]
            start = text.find(stop)  # its first occurrence, maybe earlier than where it was cut
            assert 0 < start and start + len(stop) < len(text)
            session.set_stop(strings=strings, max_tokens=REFERENCE_TOKENS, include_stop_string=include)
            got = run(session)
            assert got[-1].end_reason == "stop" and got[-1].stop_index == index, got[-1]
            assert text_of(got) == text[:start + len(stop) if include else start], (stop, include)
            assert [s.token for s in got] == [s.token for s in want[:len(got)]]
            # It stopped at the token whose text completed the string, which is not in the context.
            assert len(text_of(want[:len(got) - 1])) < start + len(stop) <= len(text_of(want[:len(got)]))
            assert session.length() == len(STOP_PROMPT) + len(got) - 1
        # A single str is one stop string, not its characters.
        session.set_stop(strings=across)
        got = run(session)
        assert got[-1].end_reason == "stop" and got[-1].stop_index == 0 and text_of(got) == text[:text.find(across)]


def test_held_text_is_what_a_stop_string_held_back_and_the_reference_had():
    with chat_model() as model, sampling_session(model) as session:
        want = reference(session)
        assert session.held_text() == ""  # no stop strings: nothing is held back
        text = text_of(want)
        # The stop strings of the test above: one across the start of the middle token's text, so the tokens
        # before it end with its beginning, which is held back; one from the middle character on.
        boundary = len(text_of(want[:len(want) // 2]))
        middle = len(text) // 2
        across, second = text[boundary - 3:boundary + 3], text[middle:middle + 5]
        held_steps = 0
        for strings, include in (([across], False), ([NEVER_GENERATED, second], True)):
            session.set_stop(strings=strings, max_tokens=REFERENCE_TOKENS, include_stop_string=include)
            session.reset()
            session.prefill(STOP_PROMPT)
            reported = ""
            for n in range(1, REFERENCE_TOKENS + 1):
                step = session.step()
                reported += step.text
                held = session.held_text()
                if step.end:
                    break
                # Still generating: what was reported plus what is held is all the reference had after n steps.
                assert reported + held == text_of(want[:n]), (strings, n, reported, held)
                held_steps += held != ""
            assert step.end and step.end_reason == "stop", step
            assert held == "" and session.held_text(0) == "", held  # an ended sequence holds nothing
        assert held_steps > 0, "no step held text back, so reported + held checked nothing held"
        # The next prefill forgets held text, as reset() does.
        session.set_stop(strings=[across])
        for forget in (lambda: session.prefill([20, 21]), session.reset):
            session.reset()
            session.prefill(STOP_PROMPT)
            while session.held_text() == "":
                assert not session.step().end
            forget()
            assert session.held_text() == ""
        # A sequence outside the session's is the library's RESET_ERR_OUT_OF_RANGE, one outside int32 too
        # (ctypes would wrap 2**32 to sequence 0).
        for sequence, message in ((1, "sequence 1 is outside [0, 1)"), (-1, "sequence -1 is outside [0, 1)"),
                                  (2**32, "sequence 4294967296 does not fit in int32")):
            with pytest.raises(reset.ResetError) as error:
                session.held_text(sequence)
            assert (error.value.status, error.value.name) == (7, "RESET_ERR_OUT_OF_RANGE"), error.value
            assert message in error.value.message, error.value


def test_a_stop_id_ends_the_generation_at_its_first_draw():
    with chat_model() as model, sampling_session(model) as session:
        want = reference(session)
        tokens = [s.token for s in want]
        stop_id = tokens[12]
        first = tokens.index(stop_id)
        never = next(i for i in range(4, 512) if i not in tokens)  # a second id, which is never drawn
        session.set_stop(ids=[never, stop_id], max_tokens=REFERENCE_TOKENS)
        got = run(session)
        assert len(got) == first + 1, (first, tokens)
        assert got[-1].token == stop_id and got[-1].end_reason == "stop" and got[-1].stop_index == -1, got[-1]
        assert [s.token for s in got] == tokens[:first + 1]
        assert text_of(got) == text_of(want[:first + 1])  # the stop id's text is reported
        assert session.length() == len(STOP_PROMPT) + first  # the stop id is not in the context
        # NumPy ids are taken too.
        session.set_stop(ids=np.array([stop_id], dtype=np.int64))
        assert len(run(session)) == first + 1


# Seed 7 draws an end-of-generation id at its 59th token (tests/unit/test_stop.cpp's ignore_eos test).
EOS_SEED = 7
IGNORE_EOS_TOKENS = 100


def test_ignore_eos_generates_past_an_end_of_generation_id_until_max_tokens():
    with chat_model() as model, sampling_session(model, seed=EOS_SEED) as session:
        session.set_stop(max_tokens=IGNORE_EOS_TOKENS)
        ended = run(session)
        assert ended[-1].end_reason == "eos" and len(ended) < IGNORE_EOS_TOKENS, ended[-1]
        eos = len(ended) - 1  # the end-of-generation id's step
        assert session.length() == len(STOP_PROMPT) + eos  # which left it out of the context
        session.set_stop(max_tokens=IGNORE_EOS_TOKENS, ignore_eos=True)
        got = run(session)
        assert len(got) == IGNORE_EOS_TOKENS and got[-1].end_reason == "length", got[-1]
        assert [s.token for s in got[:eos + 1]] == [s.token for s in ended]  # the same draws, the id included
        assert not got[eos].end and got[eos].end_reason == "none", got[eos]  # it is one more token
        assert text_of(got[:eos]) == text_of(ended[:eos])
        assert session.length() == len(STOP_PROMPT) + IGNORE_EOS_TOKENS  # the id entered the context
        # Options without it end at the id again.
        session.set_stop(max_tokens=IGNORE_EOS_TOKENS)
        assert [s.token for s in run(session)] == [s.token for s in ended]


def test_bad_stop_conditions_raise_the_librarys_error_and_keep_the_conditions_in_force():
    with chat_model() as model, sampling_session(model) as session:
        session.set_stop(max_tokens=4)

        def refused(status, name, message, **options):
            with pytest.raises(reset.ResetError) as error:
                session.set_stop(**options)
            assert (error.value.status, error.value.name) == (status, name), error.value
            assert message in error.value.message, error.value

        refused(1, "RESET_ERR_INVALID_ARGUMENT", "options->strings[0] is empty", strings=[""])
        refused(1, "RESET_ERR_INVALID_ARGUMENT", "options->strings[1] is empty", strings=["ok", b""])
        refused(7, "RESET_ERR_OUT_OF_RANGE", "options->ids[1] = 512 is outside the vocabulary [0, 512)",
                ids=[1, 512])
        refused(7, "RESET_ERR_OUT_OF_RANGE", "options->ids[0] = -1", ids=[-1])
        refused(10, "RESET_ERR_BAD_UTF8", "options->strings[1] is not valid UTF-8", strings=["ok", b"\xc3\x28"])
        refused(1, "RESET_ERR_INVALID_ARGUMENT", "options->strings[0] is longer than 256 bytes", strings=["a" * 257])
        refused(1, "RESET_ERR_INVALID_ARGUMENT", "options->string_count = 17 is above 16", strings=["x"] * 17)
        refused(1, "RESET_ERR_INVALID_ARGUMENT", "options->id_count = 257 is above 256", ids=[1] * 257)
        refused(1, "RESET_ERR_INVALID_ARGUMENT", "options->max_tokens = -1 is negative", max_tokens=-1)
        # Values ctypes would wrap are refused by the binding with the library's status, never passed on.
        refused(1, "RESET_ERR_INVALID_ARGUMENT", "max_tokens", max_tokens=2**32 + 2)  # not 2
        refused(7, "RESET_ERR_OUT_OF_RANGE", "ids[0]", ids=[2**32 + 5])  # not 5
        with pytest.raises(ValueError, match=r"strings\[1\]"):  # C would cut "b\0c" to "b"
            session.set_stop(strings=["a", "b\0c"])
        with pytest.raises(TypeError, match=r"strings\[0\]"):
            session.set_stop(strings=[5])
        # None of those changed the conditions: max_tokens 4 still ends the generation, also after set_policy.
        steps = run(session)
        assert len(steps) == 4 and steps[-1].end_reason == "length"
        session.set_policy(**session.policy())
        assert len(run(session)) == 4
        # The longest string is taken, and so is valid UTF-8 given as bytes.
        session.set_stop(strings=["a" * 256, "é".encode()], max_tokens=5)
        assert len(run(session)) == 5


def test_clearing_the_stop_conditions_lets_the_generation_run_on():
    with chat_model() as model, sampling_session(model) as session:
        want = [s.token for s in reference(session)]
        for clear in (session.clear_stop, session.set_stop):  # NULL options, and options that set none
            session.set_stop(strings=[NEVER_GENERATED], ids=[want[5]], max_tokens=3)
            assert len(run(session)) == 3
            clear()
            session.reset()
            session.prefill(STOP_PROMPT)
            steps = [session.step() for _ in range(REFERENCE_TOKENS + 5)]
            assert [s.token for s in steps[:REFERENCE_TOKENS]] == want  # past the stop id and max_tokens
            assert not any(s.end for s in steps) and all(s.end_reason == "none" for s in steps)


def test_stop_strings_need_a_tokenizer():
    with reset.Model(MODEL, weights="bf16", backend="cpu") as model, model.session(max_context=64) as session:
        with pytest.raises(reset.ResetError) as error:
            session.set_stop(strings=["a"])
        assert error.value.name == "RESET_ERR_UNSUPPORTED" and "tokenizer" in error.value.message
        assert not _lib.lib.reset_model_tokenizer(model.handle)  # qwen3-tied carries none
        session.set_stop(max_tokens=2)  # max_tokens (and ids) do not
        session.set_policy(kind="greedy")
        session.prefill(fixture_i32("input_ids"))
        steps = [session.step(), session.step()]
        assert [(s.end, s.end_reason) for s in steps] == [(False, "none"), (True, "length")]
        assert steps[1].text == ""  # no tokenizer, no text


# --- truncation (0.6) ------------------------------------------------------------------------------

TRUNCATE_STEPS = 10


def two_sequence_session(model, seed=5):
    # T = 1.5 over every token, seeded: the draws are keyed by seed, sequence and the count of tokens the sequence
    # drew, so its two sequences draw different tokens from one prompt, and a sequence cut back draws as a new
    # session's does.
    session = model.session(max_context=512, sequences=2)
    session.set_policy(kind="fixed", temperature=1.5, seed=seed)
    return session


def decode_both(session, steps=TRUNCATE_STEPS):
    """`steps` decode steps of both sequences: the tokens each drew (none of them ended)."""
    drawn = [[], []]
    for _ in range(steps):
        for step in session.step():
            assert step.token >= 0 and not step.end, step
            drawn[step.sequence].append(step.token)
    return drawn


def test_a_prompt_cut_back_one_token_and_prefilled_again_draws_the_same_tokens():
    with chat_model() as model, two_sequence_session(model) as session:
        assert session.tokens(0) == session.tokens(1) == []  # nothing prefilled yet
        session.prefill(STOP_PROMPT)
        first = decode_both(session)
        assert first[0] != first[1], first  # the sequences drew apart, so the checks below tell them apart
        for s in (0, 1):
            assert session.tokens(s) == STOP_PROMPT + first[s], s  # the prompt, then every token drawn
            assert session.length(s) == len(STOP_PROMPT) + TRUNCATE_STEPS
        session.truncate(len(STOP_PROMPT) - 1)
        assert session.tokens(0) == session.tokens(1) == STOP_PROMPT[:-1]
        assert (session.length(0), session.length(1)) == (len(STOP_PROMPT) - 1, len(STOP_PROMPT) - 1)
        session.prefill(STOP_PROMPT[-1:])  # the prompt's last token again, as tokens() gives it
        again = decode_both(session)
        assert again == first  # each sequence's own tokens, as the first time
        for s in (0, 1):
            assert session.tokens(s) == STOP_PROMPT + first[s], s
        # A sequence that holds exactly `length` tokens is unchanged, its logits too.
        logits = session.logits()
        session.truncate(session.length(0))
        assert session.tokens(0) == STOP_PROMPT + first[0]
        assert np.array_equal(session.logits(), logits)
        decode_both(session, 1)  # and it decodes on
        # One sequence cut back to its prompt and prefilled again draws its own tokens again; the other goes on.
        held = session.length(0)
        session.truncate_sequence(1, len(STOP_PROMPT) - 1)
        assert session.tokens(1) == STOP_PROMPT[:-1] and session.length(0) == held
        session.prefill_sequence(1, STOP_PROMPT[-1:])
        assert decode_both(session)[1] == first[1]


def test_tokens_reads_a_context_longer_than_the_first_buffer():
    # 300 ids: past the 256 the binding asks with first, so it asks again with the size the library reported.
    prompt = [(7 * i) % 500 + 3 for i in range(300)]
    with chat_model() as model, two_sequence_session(model) as session:
        session.prefill(prompt)
        assert session.tokens(0) == session.tokens(1) == prompt
        session.truncate(0)  # every sequence to nothing: reset() but for a pending cancel
        assert session.tokens(0) == [] and session.length(0) == 0


def test_truncation_errors_are_the_librarys_and_leave_the_session_as_it_was():
    with chat_model() as model, two_sequence_session(model) as session:
        session.prefill(STOP_PROMPT)
        decode_both(session, 3)
        held = len(STOP_PROMPT) + 3
        before = [session.tokens(0), session.tokens(1)]
        # More tokens than a sequence holds, or fewer than none (or outside int32: ctypes would wrap 2**32 + 1 to 1).
        for length in (held + 1, -1, 2**31 - 1, 2**32 + 1):
            for cut in (lambda: session.truncate(length), lambda: session.truncate_sequence(1, length)):
                with pytest.raises(reset.ResetError) as error:
                    cut()
                assert (error.value.status, error.value.name) == (7, "RESET_ERR_OUT_OF_RANGE"), error.value
        # A sequence outside the session's, in every call that takes one.
        for sequence in (2, -1, 2**32):
            for call in (lambda: session.truncate_sequence(sequence, 1), lambda: session.tokens(sequence)):
                with pytest.raises(reset.ResetError) as error:
                    call()
                assert (error.value.status, error.value.name) == (7, "RESET_ERR_OUT_OF_RANGE"), error.value
        assert [session.tokens(0), session.tokens(1)] == before  # every refusal left the session as it was
        # Cut back and not prefilled since: nothing to draw from, no logits.
        session.truncate(held - 1)
        assert (session.length(0), session.length(1)) == (held - 1, held - 1)
        for call in (session.step, lambda: session.logits(0), lambda: session.logits(1)):
            with pytest.raises(reset.ResetError) as error:
                call()
            assert (error.value.status, error.value.name) == (13, "RESET_ERR_STATE"), error.value
        session.prefill([20])
        decode_both(session, 1)
        # One sequence cut back: the session cannot step until it is prefilled, and the other keeps its tokens
        # and its logits.
        held = session.length(0)
        kept, logits = session.tokens(0), session.logits(0)
        session.truncate_sequence(1, 2)
        assert session.length(1) == 2 and session.length(0) == held and session.tokens(0) == kept
        with pytest.raises(reset.ResetError) as error:
            session.step()
        assert error.value.name == "RESET_ERR_STATE" and "sequence 1" in error.value.message, error.value
        assert np.array_equal(session.logits(0), logits)
        session.prefill_sequence(1, [20, 21])
        assert session.tokens(1) == STOP_PROMPT[:2] + [20, 21] and session.length(0) == held
        decode_both(session, 1)
        # Cut to 0, a sequence is prefilled with prefill_sequence like any other.
        session.truncate_sequence(1, 0)
        assert session.tokens(1) == [] and session.length(0) == held + 1
        session.prefill_sequence(1, [22])
        assert session.tokens(1) == [22]
        decode_both(session, 1)


# --- logit bias (0.6) -----------------------------------------------------------------------------

BIASED_TOKEN = 300  # +100 makes every draw this token (not an end-of-generation id of the chat fixture: 1, 3)
BIAS_STEPS = 20


def biased(logits, bias):
    """The raw logits with `bias` ({token: bias}) added as reset.h says: one float32 addition each."""
    z = np.array(logits, dtype=np.float32)
    for token, value in bias.items():
        z[token] += np.float32(value)
    return z


def test_greedy_draws_the_argmax_of_the_biased_logits_and_logprob_stays_raw():
    with chat_model() as model, model.session(max_context=64, top_logprobs=1) as session:
        session.set_policy(kind="greedy")
        session.prefill(STOP_PROMPT)
        raw = session.logits()
        order = np.argsort(-raw, kind="stable")
        banned, lifted = int(order[0]), int(order[2])
        # Ban the argmax and lift the third most likely token by 5: it wins, where a binding that dropped the
        # values would draw the argmax, and one that dropped the +5 only the second.
        bias = {banned: float("-inf"), lifted: 5.0}
        assert int(np.argmax(biased(raw, bias))) == lifted, raw[order[:4]]
        session.set_logit_bias(bias)
        for n in range(5):  # the bias stays in force step after step
            logits = session.logits()  # raw: the bias is not in them
            want = biased(logits, bias)
            step = session.step()
            top2 = np.sort(want)[-2:]
            if top2[1] - top2[0] > 1e-4:  # a near-tie may round either way
                assert step.token == int(np.argmax(want)), (n, step)
            assert step.token != banned and not step.end, (n, step)
            # logprob and top_logprobs are of the raw softmax (the banned argmax still leads there), not of the
            # biased one, which differs by far more than the tolerance at the first step.
            assert abs(step.logprob - raw_logprob(logits, step.token)) <= LOGPROB_TOLERANCE, (n, step)
            assert step.top_logprobs[0].token == int(np.argmax(logits)), (n, step)
            if n == 0:
                assert step.token == lifted, step
                assert abs(step.logprob - raw_logprob(want, step.token)) > 100 * LOGPROB_TOLERANCE, step


def biased_sampling_session(model):
    # T = 1 over every token, seeded: two sequences that draw apart, as two_sequence_session's.
    session = model.session(max_context=512, sequences=2)
    session.set_policy(kind="fixed", temperature=1.0, seed=9)
    return session


def test_a_large_bias_draws_its_token_at_every_step_until_cleared():
    with chat_model() as model:
        with biased_sampling_session(model) as plain:
            plain.prefill(STOP_PROMPT)
            want = decode_both(plain, 15)
        assert want[0] != want[1] and BIASED_TOKEN not in want[0] + want[1], want
        for clear in ("clear_logit_bias", "empty"):
            with biased_sampling_session(model) as session:
                session.set_logit_bias({BIASED_TOKEN: 100.0})
                session.prefill(STOP_PROMPT)
                assert decode_both(session, BIAS_STEPS) == [[BIASED_TOKEN] * BIAS_STEPS] * 2
                # It stays through reset() and set_policy.
                session.reset()
                session.set_policy(**session.policy())
                session.prefill(STOP_PROMPT)
                assert decode_both(session, 3) == [[BIASED_TOKEN] * 3] * 2
                # Cleared, the draws are a session's that never had a bias (keyed by seed, sequence and count).
                session.clear_logit_bias() if clear == "clear_logit_bias" else session.set_logit_bias({})
                session.reset()
                session.prefill(STOP_PROMPT)
                assert decode_both(session, 15) == want, clear
            # Set and cleared before the prefill: nothing of it is left either (pairs are taken as a dict is).
            with biased_sampling_session(model) as session:
                session.set_logit_bias([(BIASED_TOKEN, 100.0), (7, float("-inf"))])
                session.clear_logit_bias() if clear == "clear_logit_bias" else session.set_logit_bias([])
                session.prefill(STOP_PROMPT)
                assert decode_both(session, 15) == want, clear


def test_bad_logit_biases_raise_the_librarys_error_and_keep_the_bias_in_force():
    with chat_model() as model, model.session(max_context=64) as session:
        session.set_policy(kind="greedy")
        session.prefill(STOP_PROMPT)
        assert int(np.argmax(session.logits())) != 42
        session.set_logit_bias({42: 100.0})

        def refused(status, name, message, bias):
            with pytest.raises(reset.ResetError) as error:
                session.set_logit_bias(bias)
            assert (error.value.status, error.value.name) == (status, name), error.value
            assert message in error.value.message, error.value

        invalid, out_of_range = (1, "RESET_ERR_INVALID_ARGUMENT"), (7, "RESET_ERR_OUT_OF_RANGE")
        refused(*invalid, "entries[1].bias = nan is outside [-100, 100]", {5: 1.0, 6: float("nan")})
        refused(*invalid, "entries[0].bias = inf is outside [-100, 100]", {5: float("inf")})
        refused(*invalid, "entries[0].bias = 150.000000 is outside [-100, 100]", {5: 150.0})
        refused(*invalid, "entries[0].bias = -100.500000 is outside [-100, 100]", {5: -100.5})
        refused(*invalid, "token 6 is listed twice", [(6, 1.0), (5, 2.0), (6, 1.0)])
        refused(*out_of_range, "entries[1].token = 512 is outside the vocabulary [0, 512)", {5: 1.0, 512: 1.0})
        refused(*out_of_range, "entries[0].token = -1 is outside the vocabulary", {-1: 1.0})
        too_many = [(t % 512, 1.0) for t in range(_lib.MAX_LOGIT_BIAS + 1)]
        refused(*invalid, "count 1025 is above RESET_MAX_LOGIT_BIAS (1024)", too_many)
        refused(*invalid, "every token of the vocabulary is banned", {t: float("-inf") for t in range(512)})
        # Values ctypes would wrap or round are refused by the binding with the library's status, never passed
        # on: token 2**32 + 5 would be 5, a bias of -1e300 would be float32's -inf, a ban.
        refused(*out_of_range, "entries[0].token = 4294967301 does not fit in int32", {2**32 + 5: 1.0})
        refused(*invalid, "entries[0].bias = -1e+300 does not fit in float", {5: -1e300})
        with pytest.raises(TypeError):
            session.set_logit_bias({5: "1.0"})
        # None of those changed the bias: +100 on 42 still draws 42, also after set_policy and reset().
        assert session.step().token == 42
        session.set_policy(kind="greedy")
        assert session.step().token == 42
        session.reset()
        session.prefill(STOP_PROMPT)
        assert session.step().token == 42
        # The ends of the range are taken, and so is a ban of every token but one (NumPy values too).
        session.set_logit_bias({42: -100.0, 43: np.float32(100.0)})
        assert session.step().token == 43
        session.set_logit_bias({np.int64(t): float("-inf") for t in range(512) if t != 77})
        assert session.step().token == 77


# --- copying a sequence (0.7) ---------------------------------------------------------------------

FORCED_STEPS = 6


def test_a_copy_holds_the_sources_tokens_and_logits_and_continues_as_it_does():
    with chat_model() as model, two_sequence_session(model) as session:
        session.prefill(STOP_PROMPT)
        first = decode_both(session)
        assert first[0] != first[1], first
        # Sequence 1 goes further its own way: cut back to the prompt and given other tokens.
        session.truncate_sequence(1, len(STOP_PROMPT))
        session.prefill_sequence(1, [20, 21])
        source, logits = session.tokens(0), session.logits(0)
        assert source == STOP_PROMPT + first[0]
        assert session.tokens(1) == STOP_PROMPT + [20, 21] and not np.array_equal(session.logits(1), logits)
        session.copy_sequence(0, 1)
        # The target holds the source's tokens and logits, bit for bit; the source is left as it was.
        assert session.tokens(1) == session.tokens(0) == source
        assert session.length(1) == session.length(0) == len(source)
        assert np.array_equal(session.logits(1), logits) and np.array_equal(session.logits(0), logits)
        # top_k = 1 draws the argmax whatever the key: the copy continues exactly as its source does.
        session.set_policy(kind="fixed", temperature=1.5, seed=5, top_k=1)
        drawn = decode_both(session)
        assert drawn[0] == drawn[1], drawn
        assert session.tokens(0) == session.tokens(1) == source + drawn[0]
        assert np.array_equal(session.logits(0), session.logits(1))


def forced_session(model):
    """two_sequence_session whose sequences both drew BIASED_TOKEN (+100 forces it) FORCED_STEPS times after
    STOP_PROMPT: one state reached in lockstep, FORCED_STEPS draws counted in each.  The bias is cleared after."""
    session = two_sequence_session(model)
    session.set_logit_bias({BIASED_TOKEN: 100.0})
    session.prefill(STOP_PROMPT)
    assert decode_both(session, FORCED_STEPS) == [[BIASED_TOKEN] * FORCED_STEPS] * 2
    session.clear_logit_bias()
    return session


def test_a_copy_draws_with_its_own_key_from_the_sources_count_of_draws():
    with chat_model() as model:
        # The reference: two sequences in one state, drawing on from it each with its own key.
        with forced_session(model) as lockstep:
            want = decode_both(lockstep)
        assert want[0] != want[1], want
        with forced_session(model) as session:
            # Sequence 1 cut back and given the forced tokens as prompt: the same context, but no draw counted, so
            # it would draw as a new sequence does.  The copy brings the source's count of draws.
            session.truncate_sequence(1, len(STOP_PROMPT))
            session.prefill_sequence(1, [BIASED_TOKEN] * FORCED_STEPS)
            assert session.tokens(1) == session.tokens(0)
            session.copy_sequence(0, 1)
            assert decode_both(session) == want


def test_copy_refusals_raise_and_a_copy_onto_itself_changes_nothing():
    with chat_model() as model, two_sequence_session(model) as session, two_sequence_session(model) as twin:
        for s in (session, twin):
            s.prefill(STOP_PROMPT)
            decode_both(s, 3)
        before, logits = [session.tokens(0), session.tokens(1)], session.logits()
        assert before[0] != before[1], before
        session.copy_sequence(1, 1)
        session.copy_sequence(0, 0)
        # A sequence outside the session's, on either side (or outside int32: ctypes would wrap 2**32 + 1 to 1).
        for source, target in ((0, 2), (2, 0), (-1, 1), (1, -1), (2**32, 1), (0, 2**32 + 1)):
            with pytest.raises(reset.ResetError) as error:
                session.copy_sequence(source, target)
            assert (error.value.status, error.value.name) == (7, "RESET_ERR_OUT_OF_RANGE"), error.value
        assert [session.tokens(0), session.tokens(1)] == before and np.array_equal(session.logits(), logits)
        # Nothing else moved either: both sequences draw on as the twin's, which was never asked.
        assert decode_both(session) == decode_both(twin)


# --- saving and loading a sequence (0.8) -----------------------------------------------------------

def same_bits(a, b):
    """Logits equal bit for bit: == would take -0.0 for 0.0."""
    return a.shape == b.shape and a.tobytes() == b.tobytes()


def test_sequences_saved_and_loaded_into_a_new_session_hold_their_state_and_draw_on_as_before(tmp_path):
    with chat_model() as model, two_sequence_session(model) as session:
        session.prefill(STOP_PROMPT)
        first = decode_both(session)
        assert first[0] != first[1], first
        # One file per sequence, named as str, bytes and os.PathLike; a name that is not UTF-8 reaches the OS as is.
        paths = [str(tmp_path / "sequence-0.safetensors"), tmp_path / os.fsdecode(b"sequence-\xff.safetensors")]
        session.save_sequence(0, paths[0])
        session.save_sequence(1, os.fsencode(paths[1]))
        assert os.path.isfile(paths[0]) and os.path.isfile(paths[1])
        tokens, logits = [session.tokens(0), session.tokens(1)], session.logits()
        with two_sequence_session(model) as restored:
            restored.load_sequence(0, pathlib.Path(paths[0]))
            restored.load_sequence(1, paths[1])
            # Each sequence holds what was saved, bit for bit, and the saving session is left as it was.
            assert tokens == [STOP_PROMPT + first[0], STOP_PROMPT + first[1]]
            assert [restored.tokens(0), restored.tokens(1)] == tokens
            assert (restored.length(0), restored.length(1)) == (len(tokens[0]), len(tokens[1]))
            assert same_bits(restored.logits(), logits) and same_bits(session.logits(), logits)
            # Same seed, same sequence indices, and the saved counts of draws: both sequences draw on, sampled,
            # exactly as the saving session's do.
            assert decode_both(restored) == decode_both(session)


def test_a_sequence_loaded_into_another_holds_the_saved_tokens_and_logits_and_continues_as_it_does(tmp_path):
    path = tmp_path / "sequence.safetensors"
    with chat_model() as model, two_sequence_session(model) as session:
        session.prefill(STOP_PROMPT)
        first = decode_both(session)
        assert first[0] != first[1], first
        # Sequence 1 goes further its own way: cut back to the prompt and given other tokens.
        session.truncate_sequence(1, len(STOP_PROMPT))
        session.prefill_sequence(1, [20, 21])
        source, logits = session.tokens(0), session.logits(0)
        session.save_sequence(0, path)
        assert session.tokens(1) == STOP_PROMPT + [20, 21] and not np.array_equal(session.logits(1), logits)
        session.load_sequence(1, path)
        # The target holds the saved tokens and logits, bit for bit; the saved sequence is left as it was.
        assert session.tokens(1) == session.tokens(0) == source
        assert session.length(1) == session.length(0) == len(source)
        assert same_bits(session.logits(1), logits) and same_bits(session.logits(0), logits)
        # top_k = 1 draws the argmax whatever the key: the loaded sequence continues exactly as the saved one does.
        session.set_policy(kind="fixed", temperature=1.5, seed=5, top_k=1)
        drawn = decode_both(session)
        assert drawn[0] == drawn[1], drawn
        assert session.tokens(0) == session.tokens(1) == source + drawn[0]
        assert same_bits(session.logits(0), session.logits(1))


def test_a_loaded_sequence_draws_with_its_own_key_from_the_saved_count_of_draws(tmp_path):
    path = tmp_path / "sequence.safetensors"
    with chat_model() as model:
        # The reference: two sequences in one state, drawing on from it each with its own key.
        with forced_session(model) as lockstep:
            want = decode_both(lockstep)
        assert want[0] != want[1], want
        with forced_session(model) as session:
            # Sequence 1 cut back and given the forced tokens as prompt: the same context, but no draw counted, so
            # it would draw as a new sequence does.  The file brings the saved sequence's count of draws.
            session.truncate_sequence(1, len(STOP_PROMPT))
            session.prefill_sequence(1, [BIASED_TOKEN] * FORCED_STEPS)
            assert session.tokens(1) == session.tokens(0)
            session.save_sequence(0, path)
            session.load_sequence(1, path)
            assert decode_both(session) == want


def test_load_refusals_raise_the_librarys_error_and_leave_the_sequence_as_it_was(tmp_path):
    saved, other_cache = tmp_path / "saved.safetensors", tmp_path / "fp32-cache.safetensors"
    with chat_model() as model, two_sequence_session(model) as session, two_sequence_session(model) as twin:
        for s in (session, twin):
            s.prefill(STOP_PROMPT)
            decode_both(s, 3)
        session.save_sequence(0, saved)
        with model.session(max_context=512, sequences=2, kv_cache="fp32") as fp32:
            fp32.prefill(STOP_PROMPT)
            fp32.save_sequence(0, other_cache)
            # The other way round too: a BF16 cache's file does not load into an FP32 cache.
            with pytest.raises(reset.ResetError) as error:
                fp32.load_sequence(1, saved)
            assert (error.value.status, error.value.name) == (6, "RESET_ERR_SHAPE"), error.value
        with model.session(max_context=len(STOP_PROMPT) + 2) as short:  # the saved sequence holds 3 more
            with pytest.raises(reset.ResetError) as error:
                short.load_sequence(0, saved)
            assert (error.value.status, error.value.name) == (8, "RESET_ERR_CONTEXT_OVERFLOW"), error.value
        data = saved.read_bytes()
        (header_len,) = struct.unpack("<Q", data[:8])
        # Cut in the length, in the header, and before the last byte of the tensors.
        truncated = []
        for i, size in enumerate((4, 8 + header_len // 2, len(data) - 1)):
            truncated.append(tmp_path / f"truncated-{i}.safetensors")
            truncated[-1].write_bytes(data[:size])
        not_a_sequence = MODEL / "reference.safetensors"  # a safetensors file, but no libreset sequence file
        before, logits = [session.tokens(0), session.tokens(1)], session.logits()
        assert before[0] != before[1], before
        io, shape, fmt = (3, "RESET_ERR_IO"), (6, "RESET_ERR_SHAPE"), (4, "RESET_ERR_FORMAT")
        out_of_range = (7, "RESET_ERR_OUT_OF_RANGE")
        refusals = [(io, 1, tmp_path / "missing.safetensors", "missing.safetensors"),
                    (io, 1, tmp_path, str(tmp_path)),  # a directory
                    (shape, 1, other_cache, "KV cache"),
                    (fmt, 1, not_a_sequence, "not a valid libreset sequence file")]
        refusals += [(fmt, 1, path, "truncated") for path in truncated]
        # A sequence outside the session's (or outside int32: ctypes would wrap 2**32 + 1 to 1).
        refusals += [(out_of_range, sequence, saved, "") for sequence in (2, -1, 2**31, 2**32 + 1)]
        for (status, name), sequence, path, message in refusals:
            with pytest.raises(reset.ResetError) as error:
                session.load_sequence(sequence, path)
            assert (error.value.status, error.value.name) == (status, name), (path, error.value)
            assert message in error.value.message, error.value
        for sequence in (2, -1, 2**32):
            with pytest.raises(reset.ResetError) as error:
                session.save_sequence(sequence, tmp_path / "never-written.safetensors")
            assert (error.value.status, error.value.name) == out_of_range, error.value
        assert not (tmp_path / "never-written.safetensors").exists()
        with pytest.raises(reset.ResetError) as error:  # its folder does not exist
            session.save_sequence(0, tmp_path / "no-such-folder" / "sequence.safetensors")
        assert (error.value.status, error.value.name) == io, error.value
        assert "no-such-folder" in error.value.message, error.value
        # C would read the path up to its NUL: refused here, not cut short to the file saved above.
        with pytest.raises(ValueError, match="path"):
            session.load_sequence(1, os.fsencode(saved) + b"\0ignored")
        with pytest.raises(ValueError, match="path"):
            session.save_sequence(1, f"{saved}\0ignored")
        assert saved.read_bytes() == data
        # Every refusal left both sequences as they were, bit for bit, and they draw on as the twin's.
        assert [session.tokens(0), session.tokens(1)] == before and same_bits(session.logits(), logits)
        assert decode_both(session) == decode_both(twin)


# --- a sequence's state in memory and the session's options (0.9) -------------------------------------

def test_a_sequences_bytes_are_its_file_and_load_into_a_new_session_to_draw_on_as_before(tmp_path):
    with chat_model() as model, two_sequence_session(model) as session:
        session.prefill(STOP_PROMPT)
        first = decode_both(session)
        assert first[0] != first[1], first
        tokens, logits = [session.tokens(0), session.tokens(1)], session.logits()
        states = []
        for sequence in (0, 1):
            state = session.save_sequence_bytes(sequence)
            path = tmp_path / f"sequence-{sequence}.safetensors"
            session.save_sequence(sequence, path)
            # The bytes the file holds, byte for byte; filled in place, so a bytearray.
            assert isinstance(state, bytearray) and len(state) > 8
            assert state == path.read_bytes(), sequence
            states.append(state)
        assert states[0] != states[1]
        # Asking again changes nothing, in the saving session or in the bytes.
        assert session.save_sequence_bytes(0) == states[0]
        with two_sequence_session(model) as restored:
            restored.load_sequence_bytes(0, bytes(states[0]))
            restored.load_sequence_bytes(1, states[1])
            # Each sequence holds what was saved, bit for bit, and the saving session is left as it was.
            assert tokens == [STOP_PROMPT + first[0], STOP_PROMPT + first[1]]
            assert [restored.tokens(0), restored.tokens(1)] == tokens
            assert (restored.length(0), restored.length(1)) == (len(tokens[0]), len(tokens[1]))
            assert same_bits(restored.logits(), logits) and same_bits(session.logits(), logits)
            # The restored session's bytes are the saved ones: the whole state came across.
            assert [restored.save_sequence_bytes(0), restored.save_sequence_bytes(1)] == states
            # Same seed, same sequence indices, and the saved counts of draws: both sequences draw on, sampled,
            # exactly as the saving session's do.
            assert decode_both(restored) == decode_both(session)


def test_any_bytes_like_state_loads_into_another_sequence_which_continues_as_the_saved_one():
    with chat_model() as model, two_sequence_session(model) as session:
        session.prefill(STOP_PROMPT)
        first = decode_both(session)
        assert first[0] != first[1], first
        source, logits = session.tokens(0), session.logits(0)
        state = session.save_sequence_bytes(0)
        frozen = bytes(state)
        shifted = b"\x00" * 3 + frozen  # a view that starts 3 bytes in: the pointer must honour the offset
        forms = {"bytes": frozen, "bytearray": bytearray(frozen), "memoryview of bytes": memoryview(shifted)[3:],
                 "memoryview of bytearray": memoryview(bytearray(shifted))[3:],
                 "numpy": np.frombuffer(shifted, dtype=np.uint8)[3:],
                 "non-contiguous": np.repeat(np.frombuffer(frozen, dtype=np.uint8), 2)[::2]}
        for name, data in forms.items():
            # Sequence 1 goes its own way first: cut back to the prompt and given other tokens.
            session.truncate_sequence(1, len(STOP_PROMPT))
            session.prefill_sequence(1, [20, 21])
            assert session.tokens(1) == STOP_PROMPT + [20, 21] and not np.array_equal(session.logits(1), logits)
            session.load_sequence_bytes(1, data)
            assert session.tokens(1) == session.tokens(0) == source, name
            assert same_bits(session.logits(1), logits) and same_bits(session.logits(0), logits), name
        assert bytes(state) == frozen  # only read
        # top_k = 1 draws the argmax whatever the key: the loaded sequence continues exactly as the saved one does.
        session.set_policy(kind="fixed", temperature=1.5, seed=5, top_k=1)
        drawn = decode_both(session)
        assert drawn[0] == drawn[1], drawn
        assert session.tokens(0) == session.tokens(1) == source + drawn[0]
        assert same_bits(session.logits(0), session.logits(1))


def test_bad_bytes_raise_the_librarys_error_and_leave_the_sequences_as_they_were(tmp_path):
    with chat_model() as model, two_sequence_session(model) as session, two_sequence_session(model) as twin:
        for s in (session, twin):
            s.prefill(STOP_PROMPT)
            decode_both(s, 3)
        data = bytes(session.save_sequence_bytes(0))
        with model.session(max_context=512, sequences=2, kv_cache="fp32") as fp32:
            fp32.prefill(STOP_PROMPT)
            other_cache = fp32.save_sequence_bytes(0)
            with pytest.raises(reset.ResetError) as error:  # the other way round too
                fp32.load_sequence_bytes(1, data)
            assert (error.value.status, error.value.name) == (6, "RESET_ERR_SHAPE"), error.value
        with model.session(max_context=len(STOP_PROMPT) + 2) as short:  # the saved sequence holds 3 more
            with pytest.raises(reset.ResetError) as error:
                short.load_sequence_bytes(0, data)
            assert (error.value.status, error.value.name) == (8, "RESET_ERR_CONTEXT_OVERFLOW"), error.value
        (header_len,) = struct.unpack("<Q", data[:8])
        before, logits = [session.tokens(0), session.tokens(1)], session.logits()
        assert before[0] != before[1], before
        shape, fmt, out_of_range = (6, "RESET_ERR_SHAPE"), (4, "RESET_ERR_FORMAT"), (7, "RESET_ERR_OUT_OF_RANGE")
        # Cut in the length (nothing at all included), in the header, and before the last byte of the tensors.
        refusals = [(fmt, 1, data[:size], "truncated") for size in (0, 4, 8 + header_len // 2, len(data) - 1)]
        refusals += [(fmt, 1, bytearray(data[:-1]), "'<memory>'"),
                     (fmt, 1, (MODEL / "reference.safetensors").read_bytes(), "not a valid libreset sequence file"),
                     (shape, 1, other_cache, "KV cache")]
        # A sequence outside the session's (or outside int32: ctypes would wrap 2**32 + 1 to 1).
        refusals += [(out_of_range, sequence, data, "") for sequence in (2, -1, 2**31, 2**32 + 1)]
        for (status, name), sequence, bad, message in refusals:
            with pytest.raises(reset.ResetError) as error:
                session.load_sequence_bytes(sequence, bad)
            assert (error.value.status, error.value.name) == (status, name), (len(bad), error.value)
            assert message in error.value.message, error.value
        for sequence in (2, -1, 2**32):
            with pytest.raises(reset.ResetError) as error:
                session.save_sequence_bytes(sequence)
            assert (error.value.status, error.value.name) == out_of_range, error.value
        # Not bytes-like: refused here, before any pointer is made of it.
        for bad in (data.decode("latin-1"), list(data[:16]), None):
            with pytest.raises(TypeError, match="bytes-like"):
                session.load_sequence_bytes(1, bad)
        # Every refusal left both sequences as they were, bit for bit, and they draw on as the twin's.
        assert [session.tokens(0), session.tokens(1)] == before and same_bits(session.logits(), logits)
        assert bytes(session.save_sequence_bytes(0)) == data
        assert decode_both(session) == decode_both(twin)


def test_options_are_what_the_session_was_created_with_max_context_resolved():
    with reset.Model(MODEL, weights="bf16", backend="cpu") as model, chat_model() as chat:
        defaults = {"sequences": 1, "kv_cache": "bf16", "eager": False, "prefill_gemm_tokens": 0,
                    "programmatic_launch": True, "top_logprobs": 0}
        # max_context 0 is min(the model's maximum, 4096): 512 for the tied fixture, 4096 for the chat one.
        assert model.info()["max_position_embeddings"] == 512
        for m, resolved in ((model, 512), (chat, 4096)):
            with m.session() as session:
                assert session.options() == {"max_context": resolved, **defaults}
                assert session.max_context == resolved
        given = {"max_context": 32, "sequences": 3, "kv_cache": "fp8", "eager": True, "prefill_gemm_tokens": -1,
                 "programmatic_launch": False, "top_logprobs": 5}
        with model.session(**given) as session:
            assert session.options() == given
            # Nothing a session does changes them.
            session.prefill(fixture_i32("input_ids")[:4])
            session.step()
            session.set_policy(kind="fixed", temperature=1.0, seed=1)
            session.reset()
            assert session.options() == given
            # As Model.session's keywords, they make a session like this one.
            with model.session(**session.options()) as again:
                assert again.options() == given
        others = {"max_context": 512, "sequences": 8, "kv_cache": "fp32", "eager": False, "prefill_gemm_tokens": 300,
                  "programmatic_launch": True, "top_logprobs": 20}
        with model.session(**others) as session:
            assert session.options() == others
        session = model.session(max_context=16, sequences=2)
        assert session.options()["sequences"] == 2
        session.close()
        with pytest.raises(ValueError, match="session is closed"):
            session.options()


# --- the standalone policy's logit bias (0.7) ------------------------------------------------------

def policy_logits(n=64):
    """A row of n standard normal float32 logits: no ties."""
    return np.random.default_rng(0).standard_normal(n).astype(np.float32)


def test_a_policys_bias_bans_and_lifts_until_cleared_and_decide_sees_the_raw_logits():
    logits = policy_logits()
    order = np.argsort(-logits, kind="stable")
    banned, lifted = int(order[0]), int(order[2])
    # Ban the argmax and lift the third most likely token by 5: it wins, where a binding that dropped the values
    # would draw the argmax, and one that dropped the +5 only the second.
    bias = {banned: float("-inf"), lifted: 5.0}
    assert int(np.argmax(biased(logits, bias))) == lifted
    with reset.Policy(kind="greedy", t_low=0.3, tau0=0.6) as policy:
        raw = policy.decide(logits)
        policy.set_logit_bias(bias)
        token, decision = policy.sample(logits)
        assert token == lifted
        # The entropy, decide() and the logprob are of the raw logits, not of the biased ones.
        assert decision.entropy == policy.decide(logits).entropy == raw.entropy
        assert abs(decision.logprob - raw_logprob(logits, lifted)) <= LOGPROB_TOLERANCE, decision
        assert abs(decision.logprob - raw_logprob(biased(logits, bias), lifted)) > 100 * LOGPROB_TOLERANCE
        # It stays through set_params() and reset().
        policy.set_params("greedy", t_low=0.3, tau0=0.6)
        assert policy.sample(logits)[0] == lifted
        policy.reset()
        assert policy.sample(logits)[0] == lifted
        # Cleared, by clear_logit_bias() or an empty bias, the raw argmax is drawn again.
        policy.clear_logit_bias()
        assert policy.sample(logits)[0] == banned
        policy.set_logit_bias(bias)
        policy.set_logit_bias({})
        assert policy.sample(logits)[0] == banned


def test_a_large_bias_makes_every_policy_draw_its_token_and_cleared_the_draws_are_a_plain_policys():
    logits = policy_logits()
    forced = int(np.argmin(logits))

    def draws(policy, n=BIAS_STEPS):
        out = []
        for _ in range(n):
            token, _ = policy.sample(logits)
            policy.accept(token)
            out.append(token)
        return out

    def sampling_policy():  # T = 1 over every token, seeded: the draws are keyed by seed and count
        return reset.Policy(kind="fixed", temperature=1.0, seed=9, t_low=0.3, tau0=0.6)

    with sampling_policy() as plain:
        want = draws(plain)
    assert len(set(want)) > 1 and forced not in want, want
    with sampling_policy() as policy:
        policy.set_logit_bias([(forced, 100.0)])  # pairs are taken as a dict is
        assert draws(policy) == [forced] * BIAS_STEPS
        policy.clear_logit_bias()
        policy.reset()
        assert draws(policy) == want


def test_a_plain_policy_checks_the_bias_against_each_row_and_a_models_policy_when_it_is_set():
    invalid, out_of_range = (1, "RESET_ERR_INVALID_ARGUMENT"), (7, "RESET_ERR_OUT_OF_RANGE")

    def raises(status, name, message, call):
        with pytest.raises(reset.ResetError) as error:
            call()
        assert (error.value.status, error.value.name) == (status, name), error.value
        assert message in error.value.message, error.value

    logits = policy_logits()
    with reset.Policy(kind="greedy", t_low=0.3, tau0=0.6) as policy:
        policy.set_logit_bias({63: 100.0})  # no vocabulary to check it against yet
        raises(*out_of_range, "lists token 63, outside these 63 logits", lambda: policy.sample(logits[:63]))
        assert policy.sample(logits)[0] == 63
        # A row whose every entry the bias does not ban is -inf: nothing to draw.
        policy.set_logit_bias({0: float("-inf")})
        raises(*invalid, "nothing to draw", lambda: policy.sample([0.0, float("-inf"), float("-inf")]))
        # Refused biases, the library's and the binding's (which ctypes would wrap or round), keep the bias.
        policy.set_logit_bias({5: 100.0})
        raises(*invalid, "entries[0].bias = nan is outside [-100, 100]", lambda: policy.set_logit_bias({5: math.nan}))
        raises(*invalid, "token 6 is listed twice", lambda: policy.set_logit_bias([(6, 1.0), (6, 2.0)]))
        raises(*out_of_range, "entries[0].token = -1 is outside the vocabulary", lambda: policy.set_logit_bias({-1: 1}))
        raises(*out_of_range, "does not fit in int32", lambda: policy.set_logit_bias({2**32 + 5: 1.0}))
        raises(*invalid, "does not fit in float", lambda: policy.set_logit_bias({5: -1e300}))
        assert policy.sample(logits)[0] == 5
    with chat_model() as model, reset.Policy(model=model, kind="greedy", t_low=0.3, tau0=0.6) as policy:
        message = "entries[0].token = 512 is outside the vocabulary [0, 512)"
        raises(*out_of_range, message, lambda: policy.set_logit_bias({512: 1.0}))
        policy.set_logit_bias({511: 100.0})
        assert policy.sample(policy_logits(512))[0] == 511


# --- paths and C strings --------------------------------------------------------------------------

def test_paths_may_be_str_bytes_pathlike_or_not_utf8(tmp_path):
    link = tmp_path / os.fsdecode(b"model-\xff")  # not UTF-8: str(path).encode() cannot spell it
    link.symlink_to(MODEL.resolve(), target_is_directory=True)
    tokenizer_link = tmp_path / os.fsdecode(b"tokenizer-\xfe")
    tokenizer_link.symlink_to(TOKENIZER.resolve(), target_is_directory=True)
    for path in (MODEL, str(MODEL), os.fsencode(MODEL), link, str(link), os.fsencode(link)):
        with reset.Model(path, weights="bf16", backend="cpu") as model:
            assert model.info()["architecture"] == "qwen3"
    for path in (os.fsencode(TOKENIZER), tokenizer_link, os.fsencode(tokenizer_link)):
        with reset.Tokenizer(path) as tokenizer:
            assert tokenizer.vocab_size > 0
    with pytest.raises(TypeError):
        reset.Model(1234)


def test_nul_in_paths_roles_and_presets_is_refused_not_truncated():
    # C reads each of these up to its first NUL: the rest would be dropped silently.
    for path in (f"{MODEL}\0/does/not/exist", os.fsencode(MODEL) + b"\0/does/not/exist"):
        with pytest.raises(ValueError, match="path"):
            reset.Model(path, backend="cpu")
    with pytest.raises(ValueError, match="path"):
        reset.Tokenizer(f"{TOKENIZER}\0/does/not/exist")
    with reset.Tokenizer(TOKENIZER) as tokenizer:
        with pytest.raises(ValueError, match="role"):
            tokenizer.chat_format([{"role": "user\0ignored", "content": "hi"}], chat_template="qwen3")
        assert "a\0b" in tokenizer.chat_format([{"role": "user", "content": "a\0b"}], chat_template="qwen3")
    with pytest.raises(ValueError, match="preset"):
        reset.Policy(preset="Qwen3-8B\0junk")
    reset.Policy(preset="Qwen3-8B").close()
    with reset.Model(MODEL, weights="bf16", backend="cpu") as model, model.session(max_context=16) as session:
        with pytest.raises(ValueError, match="preset"):
            session.set_policy(kind="reset", preset="Qwen3-8B\0junk")


# --- enum values of a newer library ---------------------------------------------------------------

def test_enum_values_the_binding_does_not_know_read_as_unknown_and_are_refused(monkeypatch):
    # A newer libreset of the same ABI major may report a value this binding does not know: reading
    # it must not raise (Model.info() raised KeyError before session 27).
    assert _lib.enum_name(_lib.WEIGHTS, 99) == "unknown-99"
    assert _lib.enum_name(_lib.WEIGHTS, _lib.WEIGHTS["bf16"]) == "bf16"
    # The library itself reports one: info() of a model whose reported weights code is unknown.
    monkeypatch.setattr(_lib, "WEIGHTS", {"auto": 0})
    monkeypatch.setattr(reset.model, "WEIGHTS", {"auto": 0})
    with reset.Model(MODEL, weights="auto") as model:
        assert model.info()["weights"] == "unknown-1"  # qwen3-tied loads in BF16 (1)
    monkeypatch.undo()
    with pytest.raises(ValueError):
        reset.Model(MODEL, weights="unknown-1")  # and the name is refused where a weight format is taken
