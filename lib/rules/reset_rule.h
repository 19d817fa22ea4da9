// reset_rule.h — THE ReSET decision rule, as host/device functions, so the
// CPU engine, the standalone policy and the CUDA sampler run the same code.
//
// Specification: shared/docs/reset-algorithm.md ("Decision, for each
// generated token", steps 1-7).  This header holds only the rule: what the
// state is, when a step begins, the hybrid step-entropy estimator, the
// step-aware threshold and the temperature choice.  Computing H_t and drawing
// the token (step 8) live elsewhere (sampling/entropy.h, sampling/sampler.h
// and the CUDA sampling kernel).
//
// Storage.  The state is a plain struct plus a caller-owned ring of `w`
// floats (the window W), so it can live in device memory; nothing here
// allocates.
//
// Precision (the spec's "precision trap").  Every sum is accumulated in
// double.  The window mean is recomputed from the ring, oldest entropy first,
// starting from 0.0 — the same values in the same order as the running global
// sum — and, in addition, when the estimator's entropies are exactly the set
// of every entropy observed (|W| == n or |S| == n), the global mean *is* the
// estimate by definition and is taken from it.  So while the window holds all
// entropies (the first w tokens) Ĥ == H̄ bit for bit and the step is not
// uncertain, whatever rounding does.
#pragma once

#include <cstdint>

#include "rules/host_device.h"

namespace reset::rule {

// Temperatures at or below this mean greedy (spec step 8).
constexpr float kGreedyTemperature = 1e-6f;

RESET_HD bool is_greedy(float temperature) { return temperature <= kGreedyTemperature; }

// The per-sequence ReSET state of the spec ("State (per sequence)").
// S is represented by its sum and size: step 3 only ever needs mean(S).
struct StepState {
    double total_sum;      // sum of every entropy observed so far
    int64_t total_count;   // n
    double step_sum;       // sum over S, the entropies since the current step began
    int64_t step_count;    // |S|
    int32_t window_count;  // |W| (<= w)
    int32_t window_next;   // ring slot the next entropy goes to
    int32_t step_index;    // reasoning steps begun before the current one (observability)
    int32_t pad_;          // keeps the layout identical on host and device
};

RESET_HD void clear_state(StepState &s) {
    s.total_sum = 0.0;
    s.total_count = 0;
    s.step_sum = 0.0;
    s.step_count = 0;
    s.window_count = 0;
    s.window_next = 0;
    s.step_index = 0;
    s.pad_ = 0;
}

// "Step boundaries": before deciding token t, a new step begins if the
// previous generated token is in DNL, or the previous two are both in NL.
// `generated` is how many tokens this sequence has generated (prompt tokens
// are never observed); last_* describe token t-1 and prev_* token t-2.
RESET_HD bool crosses_boundary(int64_t generated, bool last_in_dnl, bool last_in_nl, bool prev_in_nl) {
    if (generated >= 1 && last_in_dnl) return true;
    return generated >= 2 && last_in_nl && prev_in_nl;
}

// Spec step 1: a boundary was just crossed, so S starts over.  The step index
// counts steps for the signals reported to the caller.
RESET_HD void begin_step(StepState &s) {
    s.step_sum = 0.0;
    s.step_count = 0;
    s.step_index += 1;
}

// mean(W), summed oldest first (see "Precision" above).  window_count > 0.
RESET_HD double window_mean(const StepState &s, const float *ring, int32_t w) {
    int32_t slot = s.window_next - s.window_count;
    if (slot < 0) slot += w;
    double sum = 0.0;
    for (int32_t i = 0; i < s.window_count; ++i) {
        sum += static_cast<double>(ring[slot]);
        slot = (slot + 1 == w) ? 0 : slot + 1;
    }
    return sum / static_cast<double>(s.window_count);
}

// What the rule decided for one token (spec steps 3-6).
struct Decision {
    double step_entropy;  // Ĥ
    double global_mean;   // H̄
    double threshold;     // τ
    float temperature;    // T_high or T_low
    bool uncertain;       // Ĥ > H̄ (always false when the step gate is off)
};

// Spec steps 3-6 for a token of entropy h_t, before the state is updated.
// step_gate = false is the paper's token-entropy-only ablation: τ = τ0 always
// (Ĥ and H̄ are still computed, for the caller's signals).
RESET_HD Decision decide(const StepState &s, const float *ring, int32_t w, float h_t, bool step_gate, float t_high,
                         float t_low, float tau0) {
    Decision d;
    // Step 3, the hybrid step-entropy estimator.  `covered` is how many
    // observed entropies the estimate averages; it equals n exactly when the
    // estimate's set is the set of all entropies.
    int64_t covered;
    if (s.step_count >= static_cast<int64_t>(w)) {
        d.step_entropy = s.step_sum / static_cast<double>(s.step_count);
        covered = s.step_count;
    } else if (s.window_count > 0) {
        d.step_entropy = window_mean(s, ring, w);
        covered = s.window_count;
    } else {
        d.step_entropy = static_cast<double>(h_t);
        covered = -1;
    }
    // Step 4, the global mean (Ĥ when nothing was observed yet).
    if (s.total_count == 0 || covered == s.total_count) {
        d.global_mean = d.step_entropy;
    } else {
        d.global_mean = s.total_sum / static_cast<double>(s.total_count);
    }
    // Step 5, the step-aware threshold.
    d.uncertain = step_gate && d.step_entropy > d.global_mean;
    d.threshold = d.uncertain ? d.step_entropy : static_cast<double>(tau0);
    // Step 6.  The comparison is made in double so that τ = Ĥ is not rounded.
    d.temperature = static_cast<double>(h_t) >= d.threshold ? t_high : t_low;
    return d;
}

// Spec step 7: H_t joins S, W (keeping the last w) and the global sum.
RESET_HD void observe(StepState &s, float *ring, int32_t w, float h_t) {
    const double h = static_cast<double>(h_t);
    s.total_sum += h;
    s.total_count += 1;
    s.step_sum += h;
    s.step_count += 1;
    ring[s.window_next] = h_t;
    s.window_next = (s.window_next + 1 == w) ? 0 : s.window_next + 1;
    if (s.window_count < w) s.window_count += 1;
}

}  // namespace reset::rule
