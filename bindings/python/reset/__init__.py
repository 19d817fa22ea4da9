"""Python bindings of libreset (ctypes over the C ABI; no build step).

    import reset
    m = reset.Model(path, weights="nvfp4-w4a16")
    s = m.session(max_context=4096)
    s.set_policy(kind="reset")
    s.prefill(ids); step = s.step()
"""
from ._lib import VERSION, ResetError
from .model import Model, Session, StepResult, TokenLogprob
from .policy import Policy
from .tokenizer import Tokenizer

__all__ = ["VERSION", "ResetError", "Model", "Session", "StepResult", "TokenLogprob", "Tokenizer"]
