"""An independent reference of the ReSET policy, written from
shared/docs/reset-algorithm.md alone (not from libreset's C++).

It is deliberately plain: lists, float64, math.fsum.  The test
(test_reset_reference.py) feeds the same logits and tokens to it and to the
library's standalone reset_policy and compares every decision.
"""
import math

import numpy as np

GREEDY_TEMPERATURE = 1e-6  # "T <= 1e-6 means greedy" (spec, step 8)


def entropy(logits):
    """H_t in nats of softmax(logits) over the whole vocabulary (spec,
    "Signals"), in float64.  -inf entries are tokens of probability 0."""
    z = np.asarray(logits, dtype=np.float64)
    finite = z[np.isfinite(z)]
    m = finite.max()
    y = finite - m
    e = np.exp(y)
    s = e.sum()
    return float(math.log(s) - float((e * y).sum()) / s)


def mean(values):
    return math.fsum(values) / len(values)


class ReferencePolicy:
    """One sequence's ReSET state and decision, step by step as the spec
    lists them."""

    def __init__(self, newline_ids, double_newline_ids, window, t_high, t_low, tau0, step_gate=True):
        self.nl = set(newline_ids)
        self.dnl = set(double_newline_ids)
        self.w = window
        self.t_high = t_high
        self.t_low = t_low
        self.tau0 = tau0
        self.step_gate = step_gate  # False: the token-entropy-only ablation (tau = tau0)
        self.W = []        # the last w entropies
        self.S = []        # entropies since the current step began
        self.all = []      # every entropy observed: sum = fsum(all), n = len(all)
        self.generated = []  # tokens generated so far
        self.step_index = 0

    def decide(self, logits):
        # "Step boundaries": the previous token in DNL, or the previous two in NL.
        g = self.generated
        boundary = (len(g) >= 1 and g[-1] in self.dnl) or (len(g) >= 2 and g[-1] in self.nl and g[-2] in self.nl)
        # 1. A boundary was just crossed: clear S.
        if boundary:
            self.S = []
            self.step_index += 1
        # 2. H_t.
        h = entropy(logits)
        # 3. The hybrid step-entropy estimator.
        if len(self.S) >= self.w:
            source = self.S
        elif self.W:
            source = self.W
        else:
            source = None
        step = mean(source) if source is not None else h
        # 4. The global mean.  The precision trap, tested explicitly: when the
        # estimator averages every entropy observed, it *is* the global mean.
        n = len(self.all)
        if n == 0 or (source is not None and len(source) == n):
            bar = step
        else:
            bar = math.fsum(self.all) / n
        # 5. The step-aware threshold.
        uncertain = self.step_gate and step > bar
        tau = step if uncertain else self.tau0
        # 6. The temperature.
        t = self.t_high if h >= tau else self.t_low
        # 7. Update the state with H_t.
        self.S.append(h)
        self.W.append(h)
        if len(self.W) > self.w:
            self.W.pop(0)
        self.all.append(h)
        return {
            "entropy": h,
            "step_entropy": step,
            "global_mean": bar,
            "threshold": tau,
            "temperature": 0.0 if t <= GREEDY_TEMPERATURE else t,
            "uncertain": uncertain,
            "boundary": boundary,
            "step_index": self.step_index,
        }

    def accept(self, token):
        self.generated.append(token)
