"""The Python binding end to end on the fixture models: the same greedy
continuation as transformers, errors as exceptions, cancellation from a thread."""
import ctypes
import json
import os
import subprocess
import sys

import numpy as np
import pytest
from safetensors.numpy import load_file

import reset
from conftest import FIXTURES, cancel_while_busy

MODEL = FIXTURES / "qwen3-tied"


@pytest.fixture(scope="module")
def reference():
    if not (MODEL / "reference.safetensors").exists():
        pytest.skip("fixture models missing: run tests/fixtures/make_fixtures.py")
    return load_file(str(MODEL / "reference.safetensors"))


def test_greedy_continuation_matches_transformers(reference):
    with reset.Model(MODEL, weights="bf16", backend="cpu") as model:
        session = model.session(max_context=128)
        session.set_policy(kind="greedy")
        session.prefill(reference["input_ids"].tolist())
        tokens = []
        for step in session.generate(len(reference["greedy_bf16"])):
            tokens.append(step.token)
        expected = reference["greedy_bf16"].tolist()[:len(tokens)]
        assert tokens == expected
        assert len(tokens) > 0


def test_logits_match_transformers_at_the_last_position(reference):
    with reset.Model(MODEL, weights="bf16") as model:
        session = model.session(kv_cache="fp32")  # transformers keeps its cache in FP32 too
        session.prefill(reference["input_ids"].tolist())
        logits = session.logits()
        expected = reference["logits_bf16"][-1]
        assert logits.shape == expected.shape
        # FP32 on both sides, different summation order: far below 1e-3.
        assert np.linalg.norm(logits - expected) / np.linalg.norm(expected) < 1e-3


def test_kv_cache_type_rounds_the_cached_keys_and_values(reference):
    """The default BF16 cache and the FP8 cache round K/V as the CUDA backend does: the
    logits move away from the FP32 cache's, FP8 (3 mantissa bits) further than BF16 (8)."""
    ids = reference["input_ids"].tolist()
    last = {}
    with reset.Model(MODEL, weights="bf16") as model:
        for kind in ("fp32", "bf16", "fp8"):
            with model.session(kv_cache=kind) as session:
                session.prefill(ids)
                last[kind] = session.logits()
        with model.session() as session:  # the default is BF16
            session.prefill(ids)
            assert np.array_equal(session.logits(), last["bf16"])
    norm = np.linalg.norm(last["fp32"])
    bf16 = np.linalg.norm(last["bf16"] - last["fp32"]) / norm
    fp8 = np.linalg.norm(last["fp8"] - last["fp32"]) / norm
    # BF16 rounding is 2^-9 relative per element, E4M3's 2^-4: both show, neither breaks the model.
    assert 1e-5 < bf16 < 1e-2
    assert bf16 < fp8 < 1e-1


def test_w4a16_activations_fp16_by_default_fp32_on_request(reference):
    """W4A16 multiplies FP16-rounded activations by default, as the CUDA GEMV does; "fp32" is the
    unrounded reference the PyTorch NVFP4 logits were computed with."""
    options = reset._lib.ModelOptions()
    reset._lib.lib.reset_model_options_init_sized(ctypes.byref(options), ctypes.sizeof(options))
    assert options.struct_size == ctypes.sizeof(options)  # the ctypes mirror matches reset.h
    assert options.w4a16_activations == 0  # RESET_ACTIVATIONS_FP16
    ids = reference["input_ids"].tolist()
    last = {}
    for activations in ("fp16", "fp32"):
        with reset.Model(MODEL, weights="nvfp4-w4a16", backend="cpu", activations=activations) as model:
            with model.session(kv_cache="fp32") as session:
                session.prefill(ids)
                last[activations] = session.logits()
    expected = reference["logits_w4a16"][-1]

    def error(logits):
        return np.linalg.norm(logits - expected) / np.linalg.norm(expected)

    # FP32 on both sides: summation order only.  FP16 rounds each activation by up to 2^-11.
    assert error(last["fp32"]) < 1e-4
    gap = np.linalg.norm(last["fp16"] - last["fp32"]) / np.linalg.norm(last["fp32"])
    assert 0 < gap < 1e-2
    with pytest.raises(ValueError):
        reset.Model(MODEL, activations="bf16")
    with pytest.raises(reset.ResetError) as error_info:  # refused before any device is looked for
        reset.Model(MODEL, backend="cuda", activations="fp32")
    assert error_info.value.name == "RESET_ERR_UNSUPPORTED"


def test_model_info_reports_the_weight_format():
    with reset.Model(MODEL, weights="nvfp4-w4a4") as model:
        info = model.info()
        assert info["architecture"] == "qwen3"
        assert info["weights"] == "nvfp4-w4a4"
        assert info["backend"] == "cpu"
        assert info["tied_embeddings"] == 1


def test_missing_model_raises_io_error():
    with pytest.raises(reset.ResetError) as error:
        reset.Model("/nonexistent/model")
    assert error.value.name == "RESET_ERR_IO"
    assert "does not exist" in error.value.message


def test_out_of_range_ids_and_bad_policy_raise():
    with reset.Model(MODEL) as model:
        session = model.session()
        with pytest.raises(reset.ResetError) as error:
            session.prefill([0, 10**6])
        assert error.value.name == "RESET_ERR_OUT_OF_RANGE"
        with pytest.raises(reset.ResetError) as error:
            session.set_policy(kind="fixed", temperature=-1.0)
        assert error.value.name == "RESET_ERR_INVALID_ARGUMENT"
        assert "temperature" in error.value.message
        with pytest.raises(ValueError):
            session.set_policy(kind="nonsense")


def test_cancel_before_a_call_stops_that_call():
    with reset.Model(MODEL) as model:
        session = model.session()
        session.cancel()
        with pytest.raises(reset.ResetError) as error:
            session.prefill([1, 2])
        assert error.value.name == "RESET_ERR_CANCELLED"
        assert session.length() == 0
        session.prefill([1, 2])  # the cancel was consumed
        assert session.length() == 2


def test_cancel_from_another_thread_stops_running_work():
    with reset.Model(MODEL) as model:
        session = model.session(max_context=512)
        # Refill above 490, not 500: once the cancel is sent the loop stops resetting, and one more
        # 10-token prefill (the one that takes the cancel) must still fit in 512.
        error = cancel_while_busy(session, refill=lambda: None, work=lambda: session.prefill([3] * 10),
                                  refill_above=490)
        assert error is not None, "no cancel within 30 s"
        assert error.name == "RESET_ERR_CANCELLED"


def test_policy_reads_back_the_models_sampling_then_what_was_set():
    # qwen3-tied's generation_config.json: do_sample, temperature 0.6, top_k 20, top_p 0.95.
    with reset.Model(MODEL) as model, model.session() as session:
        policy = session.policy()
        assert policy["kind"] == "fixed" and policy["top_k"] == 20
        assert policy["temperature"] == pytest.approx(0.6) and policy["top_p"] == pytest.approx(0.95)
        session.set_policy(**dict(policy, top_p=0.5))  # get, change one field, set
        assert session.policy() == dict(policy, top_p=0.5)
        session.set_policy(kind="reset", preset="Qwen3-8B")
        resolved = session.policy()  # the paper's table: Qwen3-8B is T_low 0.1, tau0 0.5505
        assert resolved["kind"] == "reset"
        assert resolved["t_low"] == pytest.approx(0.1) and resolved["tau0"] == pytest.approx(0.5505)
        session.set_policy(**resolved)
        assert session.policy() == resolved


def test_prefill_sequence_continues_one_sequence_only():
    with reset.Model(MODEL, weights="bf16", backend="cpu") as model:
        session = model.session(max_context=64, sequences=2)
        with pytest.raises(reset.ResetError) as error:
            session.prefill_sequence(1, [7])  # nothing to continue yet
        assert error.value.name == "RESET_ERR_STATE"
        session.prefill([3, 4, 5])
        before = session.logits(0)
        session.prefill_sequence(1, np.array([7, 8], dtype=np.int32))
        assert (session.length(0), session.length(1)) == (3, 5)
        assert np.array_equal(session.logits(0), before)
        assert not np.array_equal(session.logits(1), before)
        with pytest.raises(reset.ResetError) as error:
            session.prefill_sequence(2, [7])
        assert error.value.name == "RESET_ERR_OUT_OF_RANGE"


def test_max_context_is_what_the_session_holds():
    with reset.Model(MODEL) as model:
        assert model.session(max_context=16).max_context == 16
        # 0 resolves to min(model maximum, 4096): qwen3-tied's max_position_embeddings is 512.
        session = model.session()
        assert session.max_context == 512
        session.prefill([3] * 512)  # exactly full: accepted
        with pytest.raises(reset.ResetError) as error:
            session.step()
        assert error.value.name == "RESET_ERR_CONTEXT_OVERFLOW"


def test_parallel_sequences_return_one_result_each():
    with reset.Model(MODEL) as model:
        session = model.session(sequences=3)
        session.set_policy(kind="fixed", temperature=1.0, seed=7)
        session.prefill([1, 2, 3])
        assert session.logits().shape == (3, model.info()["vocab_size"])
        results = session.step()
        assert [r.sequence for r in results] == [0, 1, 2]


def test_threads_one_keeps_loading_and_decoding_on_one_thread(tmp_path):
    """reset_model_options.threads = 1: quantizing a BF16 checkpoint to NVFP4 at load and the NVFP4
    matrix-vector products ran OpenMP teams of every core until session 25 (found by a ThreadSanitizer
    audit).  Linears of 1024 x 1024 pass the library's 2^20-element threshold for a team; the process
    must end with one thread (an OpenMP team's threads would stay, idle)."""
    if (os.cpu_count() or 1) < 2:
        pytest.skip("one CPU: OpenMP would use one thread either way, so this cannot tell")
    from safetensors.numpy import save_file
    hidden, inter, vocab = 1024, 1024, 64
    rng = np.random.default_rng(25)
    tensors = {"model.embed_tokens.weight": (vocab, hidden), "model.norm.weight": (hidden,),
               "model.layers.0.input_layernorm.weight": (hidden,),
               "model.layers.0.post_attention_layernorm.weight": (hidden,),
               "model.layers.0.self_attn.q_norm.weight": (128,), "model.layers.0.self_attn.k_norm.weight": (128,)}
    for name, shape in {"q_proj": (hidden, hidden), "k_proj": (128, hidden), "v_proj": (128, hidden),
                        "o_proj": (hidden, hidden)}.items():
        tensors[f"model.layers.0.self_attn.{name}.weight"] = shape
    for name, shape in {"gate_proj": (inter, hidden), "up_proj": (inter, hidden), "down_proj": (hidden, inter)}.items():
        tensors[f"model.layers.0.mlp.{name}.weight"] = shape
    save_file({name: (rng.standard_normal(shape) * 0.05 + (1.0 if name.endswith("norm.weight") else 0.0))
               .astype(np.float32) for name, shape in tensors.items()}, str(tmp_path / "model.safetensors"))
    (tmp_path / "config.json").write_text(json.dumps({
        "model_type": "qwen3", "vocab_size": vocab, "hidden_size": hidden, "intermediate_size": inter,
        "num_hidden_layers": 1, "num_attention_heads": 8, "num_key_value_heads": 1, "head_dim": 128,
        "max_position_embeddings": 64, "rms_norm_eps": 1e-6, "rope_theta": 10000.0, "tie_word_embeddings": True}))
    script = (
        "import os, sys, reset\n"
        "m = reset.Model(sys.argv[1], weights='nvfp4-w4a16', backend='cpu', threads=1)\n"
        "s = m.session(max_context=32)\n"
        "s.prefill([1, 2, 3])\n"
        "for _ in range(3): s.step()\n"
        "print(len(os.listdir('/proc/self/task')))\n")
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", PYTHONPATH=os.pathsep.join(sys.path))
    env.pop("OMP_NUM_THREADS", None)  # OpenMP's default: every core
    out = subprocess.run([sys.executable, "-c", script, str(tmp_path)], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "1", f"threads=1 left {out.stdout.strip()} threads: {out.stderr}"
