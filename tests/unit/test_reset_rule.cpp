// test_reset_rule.cpp — the ReSET decision rule (rules/reset_rule.h) and the
// per-sequence sampler's use of it, on hand-computed values.  Every branch of
// reset-algorithm.md "Decision" steps 1-7 has a case here.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "api/errors.h"
#include "model/config.h"
#include "rules/philox.h"
#include "rules/reset_rule.h"
#include "sampling/entropy.h"
#include "sampling/policy.h"
#include "sampling/sampler.h"

using namespace reset;

namespace {

// A tiny harness over the raw rule: a state and a ring of w slots.
struct RuleHarness {
    rule::StepState state;
    std::vector<float> ring;
    int32_t w;
    explicit RuleHarness(int32_t window) : ring(static_cast<size_t>(window), 0.0f), w(window) {
        rule::clear_state(state);
    }
    void observe(float h) { rule::observe(state, ring.data(), w, h); }
    rule::Decision decide(float h, bool gate = true, float t_high = 1.0f, float t_low = 0.25f, float tau0 = 0.5f) {
        return rule::decide(state, ring.data(), w, h, gate, t_high, t_low, tau0);
    }
};

// Logits of a distribution uniform over the first k of n tokens: H = ln k.
std::vector<float> uniform_logits(int k, int n = 16) {
    std::vector<float> z(static_cast<size_t>(n), -std::numeric_limits<float>::infinity());
    for (int i = 0; i < k; ++i) z[static_cast<size_t>(i)] = 1.5f;
    return z;
}

Policy reset_policy_of(int32_t window, float t_low, float tau0, float t_high = 1.0f,
                       reset_policy_kind kind = RESET_POLICY_RESET) {
    reset_policy_params p;
    reset_policy_params_init(&p);
    p.kind = kind;
    p.window = window;
    p.t_low = t_low;
    p.tau0 = tau0;
    p.t_high = t_high;
    return validate_policy(p, nullptr);
}

std::string error_of(const reset_policy_params &p, const ModelConfig *config = nullptr,
                     reset_status *status = nullptr) {
    try {
        validate_policy(p, config);
    } catch (const Error &e) {
        if (status) *status = e.status();
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("boundary test: a DNL token, or two NL tokens in a row, begins a step") {
    CHECK_FALSE(rule::crosses_boundary(0, false, false, false));  // the first generated token
    CHECK(rule::crosses_boundary(1, true, false, false));         // previous token "\n\n"
    CHECK_FALSE(rule::crosses_boundary(1, false, true, false));   // one "\n" is not a blank line
    CHECK(rule::crosses_boundary(2, false, true, true));          // "\n" then "\n"
    CHECK_FALSE(rule::crosses_boundary(2, false, true, false));   // "x" then "\n"
    CHECK_FALSE(rule::crosses_boundary(2, false, false, true));   // "\n" then "x"
    // A lone NL with no token before it (generated == 1) cannot pair up.
    CHECK_FALSE(rule::crosses_boundary(1, false, true, true));
}

TEST_CASE("empty window: the estimate and the global mean are H_t itself") {
    RuleHarness h(4);
    rule::Decision d = h.decide(0.9f);
    CHECK(d.step_entropy == doctest::Approx(0.9f));
    CHECK(d.global_mean == d.step_entropy);
    CHECK_FALSE(d.uncertain);
    CHECK(d.threshold == doctest::Approx(0.5));  // τ0
    CHECK(d.temperature == 1.0f);                // 0.9 >= τ0: T_high
    d = h.decide(0.3f);
    CHECK(d.temperature == 0.25f);               // 0.3 < τ0: T_low
}

TEST_CASE("|S| < w with the window holding every entropy: confident, tau0 applies") {
    RuleHarness h(4);
    h.observe(0.2f);
    h.observe(0.4f);
    const rule::Decision d = h.decide(0.45f);
    CHECK(d.step_entropy == doctest::Approx(0.3));
    CHECK(d.global_mean == d.step_entropy);
    CHECK_FALSE(d.uncertain);
    CHECK(d.threshold == doctest::Approx(0.5));
    CHECK(d.temperature == 0.25f);
}

TEST_CASE("|S| < w after the window slid: mean(W) above the global mean makes the step uncertain") {
    RuleHarness h(3);
    for (float e : {0.1f, 0.1f, 0.1f}) h.observe(e);
    rule::begin_step(h.state);
    for (float e : {0.9f, 0.9f}) h.observe(e);
    // |S| = 2 < w = 3: Ĥ = mean(W) = mean{0.1, 0.9, 0.9} = 0.6333;
    // H̄ = 2.1 / 5 = 0.42.  Uncertain: τ = Ĥ.
    rule::Decision d = h.decide(0.65f);
    CHECK(d.step_entropy == doctest::Approx(1.9 / 3.0));
    CHECK(d.global_mean == doctest::Approx(0.42));
    CHECK(d.uncertain);
    CHECK(d.threshold == doctest::Approx(1.9 / 3.0));
    CHECK(d.temperature == 1.0f);
    // 0.6 is above τ0 = 0.5 but below τ = Ĥ: the step gate lowers the temperature.
    d = h.decide(0.6f);
    CHECK(d.temperature == 0.25f);
    // The ablation (gate off) compares with τ0 instead.
    d = h.decide(0.6f, false);
    CHECK_FALSE(d.uncertain);
    CHECK(d.threshold == doctest::Approx(0.5));
    CHECK(d.temperature == 1.0f);
}

TEST_CASE("|S| >= w: the estimate is mean(S), not mean(W)") {
    RuleHarness h(2);
    for (int i = 0; i < 4; ++i) h.observe(0.1f);
    rule::begin_step(h.state);  // step 1: S cleared, W and the global sum kept
    CHECK(h.state.step_count == 0);
    CHECK(h.state.window_count == 2);
    CHECK(h.state.step_index == 1);
    for (float e : {0.2f, 0.6f, 1.0f}) h.observe(e);
    // S = {0.2, 0.6, 1.0}: mean 0.6.  W = {0.6, 1.0}: mean 0.8 (not used).
    // H̄ = (0.4 + 1.8) / 7 = 0.3142857.  Uncertain, τ = 0.6.
    rule::Decision d = h.decide(0.65f);
    CHECK(d.step_entropy == doctest::Approx(0.6));
    CHECK(d.global_mean == doctest::Approx(2.2 / 7.0));
    CHECK(d.uncertain);
    CHECK(d.threshold == doctest::Approx(0.6));
    CHECK(d.temperature == 1.0f);
    CHECK(h.decide(0.55f).temperature == 0.25f);
}

TEST_CASE("|S| >= w in a confident step: mean(S) below the global mean keeps tau0") {
    RuleHarness h(2);
    for (int i = 0; i < 4; ++i) h.observe(2.0f);
    rule::begin_step(h.state);
    for (float e : {0.2f, 0.4f}) h.observe(e);
    // Ĥ = mean(S) = 0.3 < H̄ = 8.6 / 6: confident, τ = τ0 = 0.5.
    rule::Decision d = h.decide(0.45f);
    CHECK(d.step_entropy == doctest::Approx(0.3));
    CHECK(d.global_mean == doctest::Approx(8.6 / 6.0));
    CHECK_FALSE(d.uncertain);
    CHECK(d.threshold == doctest::Approx(0.5));
    CHECK(d.temperature == 0.25f);
    CHECK(h.decide(0.5f).temperature == 1.0f);  // at the threshold: T_high (H_t >= τ)
}

TEST_CASE("precision trap: while W holds every entropy, Ĥ equals H̄ bit for bit") {
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(0.0f, 5.0f);
    for (int trial = 0; trial < 200; ++trial) {
        RuleHarness h(32);
        for (int t = 0; t < 32; ++t) {
            const rule::Decision d = h.decide(u(rng));
            CHECK(d.step_entropy == d.global_mean);
            CHECK_FALSE(d.uncertain);
            h.observe(u(rng));
        }
    }
    // The same when S (no boundary yet, |S| >= w) holds every entropy.
    RuleHarness h(3);
    for (float e : {0.1f, 0.7f, 0.2f, 0.3f, 0.9f}) h.observe(e);
    rule::Decision d = h.decide(0.5f);
    CHECK(d.step_entropy == d.global_mean);
    CHECK_FALSE(d.uncertain);
}

TEST_CASE("observe keeps the last w entropies and double sums") {
    RuleHarness h(3);
    for (float e : {1.0f, 2.0f, 3.0f, 4.0f, 5.0f}) h.observe(e);
    CHECK(h.state.window_count == 3);
    CHECK(rule::window_mean(h.state, h.ring.data(), 3) == doctest::Approx(4.0));
    CHECK(h.state.total_count == 5);
    CHECK(h.state.total_sum == 15.0);
}

TEST_CASE("entropy: stable log-sum-exp over the whole vocabulary") {
    for (int k : {1, 2, 3, 7, 16}) {
        const std::vector<float> z = uniform_logits(k);
        CHECK(logit_stats(z.data(), 16).entropy == doctest::Approx(std::log(static_cast<double>(k))).epsilon(1e-6));
    }
    std::vector<float> big(151936, -3.0f);
    CHECK(logit_stats(big.data(), 151936).entropy == doctest::Approx(std::log(151936.0)).epsilon(1e-6));
    // Huge logits neither overflow nor lose the answer.
    const float huge[3] = {3e38f, 3e38f, -3e38f};
    CHECK(logit_stats(huge, 3).entropy == doctest::Approx(std::log(2.0)).epsilon(1e-6));
    // Two tokens with p = (1/(1+e^-1), e^-1/(1+e^-1)).
    const float two[2] = {1.0f, 0.0f};
    const double p = 1.0 / (1.0 + std::exp(-1.0));
    CHECK(logit_stats(two, 2).entropy == doctest::Approx(-(p * std::log(p) + (1 - p) * std::log(1 - p))));
    CHECK(logit_stats(two, 2).argmax == 0);
    const float nan[2] = {0.0f, std::numeric_limits<float>::quiet_NaN()};
    CHECK_THROWS_WITH_AS(logit_stats(nan, 2), "logits[1] is NaN (logits must be finite, or -inf for a masked token)",
                         Error);
    const float masked[2] = {-std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity()};
    CHECK_THROWS_AS(logit_stats(masked, 2), Error);
}

TEST_CASE("sampler: a boundary through a \"\\n\\n\" token clears S and starts step 1") {
    // NL = {10}, DNL = {20}; entropies: ln 2, ln 4, then after "\n\n": ln 8.
    SequenceSampler s(DelimiterSets{{10}, {20}});
    s.set_policy(reset_policy_of(1, 0.0f, 0.5f), true);
    SamplerSignals sig = s.decide(uniform_logits(2).data(), 16);
    CHECK_FALSE(sig.boundary);
    CHECK(sig.step_index == 0);
    s.accept(3);
    sig = s.decide(uniform_logits(4).data(), 16);
    // w = 1, |S| = 1 >= w: Ĥ = mean(S) = ln 2 = H̄: confident.
    CHECK(sig.step_entropy == doctest::Approx(std::log(2.0)));
    CHECK_FALSE(sig.uncertain);
    s.accept(20);
    sig = s.decide(uniform_logits(8).data(), 16);
    CHECK(sig.boundary);
    CHECK(sig.step_index == 1);
    // S is empty after the boundary, so Ĥ = mean(W) = ln 4 (w = 1);
    // H̄ = (ln 2 + ln 4) / 2 = 1.5 ln 2 < ln 4: uncertain, τ = ln 4.
    CHECK(sig.step_entropy == doctest::Approx(std::log(4.0)));
    CHECK(sig.global_mean == doctest::Approx(1.5 * std::log(2.0)));
    CHECK(sig.uncertain);
    CHECK(sig.threshold == doctest::Approx(std::log(4.0)));
    CHECK(sig.temperature == 1.0f);  // ln 8 >= ln 4
    CHECK(s.state().step_count == 1);
}

TEST_CASE("sampler: a boundary through two \"\\n\" tokens, not one") {
    SequenceSampler s(DelimiterSets{{10, 11}, {20}});
    s.set_policy(reset_policy_of(32, 0.1f, 0.5f), true);
    const std::vector<float> z = uniform_logits(2);
    const int32_t tokens[] = {5, 10, 6, 10, 11, 7, 20, 10};
    const bool boundary_before_next[] = {false, false, false, false, true, false, true, false};
    int expected_step = 0;
    for (size_t i = 0; i < sizeof tokens / sizeof tokens[0]; ++i) {
        s.accept(tokens[i]);
        const SamplerSignals sig = s.decide(z.data(), 16);
        CHECK_MESSAGE(sig.boundary == boundary_before_next[i], "after token ", i);
        if (sig.boundary) ++expected_step;
        CHECK(sig.step_index == expected_step);
    }
}

TEST_CASE("sampler: T_low <= 1e-6 is greedy, whatever the seed") {
    SequenceSampler s;
    // τ0 above every entropy: every token gets T_low.
    s.set_policy(reset_policy_of(32, 1e-7f, 100.0f), true);
    std::vector<float> z = {0.5f, 2.0f, 1.9f, 1.95f, -1.0f};
    for (int i = 0; i < 200; ++i) {
        SamplerSignals sig;
        CHECK(s.sample(z.data(), 5, 0, &sig) == 1);
        CHECK(sig.temperature == 0.0f);
        s.accept(1);
    }
    // The same policy with T_low = 1 draws other tokens too.
    s.set_policy(reset_policy_of(32, 1.0f, 100.0f), false);
    int others = 0;
    for (int i = 0; i < 200; ++i) {
        const int32_t t = s.sample(z.data(), 5, 0, nullptr);
        others += t != 1;
        s.accept(t);
    }
    CHECK(others > 50);
}

TEST_CASE("sampler: deciding twice before accept counts H_t once") {
    SequenceSampler a, b;
    a.set_policy(reset_policy_of(4, 0.2f, 0.5f), true);
    b.set_policy(reset_policy_of(4, 0.2f, 0.5f), true);
    for (int k = 1; k <= 9; ++k) {
        const std::vector<float> z = uniform_logits(k);
        a.decide(uniform_logits(16 - k).data(), 16);  // a decision then replaced
        const SamplerSignals sa = a.decide(z.data(), 16);
        const SamplerSignals sb = b.decide(z.data(), 16);
        CHECK(sa.step_entropy == sb.step_entropy);
        CHECK(sa.global_mean == sb.global_mean);
        CHECK(sa.temperature == sb.temperature);
        a.accept(k);
        b.accept(k);
    }
    CHECK(a.state().total_count == 9);
    CHECK(a.state().total_sum == b.state().total_sum);
}

TEST_CASE("sampler: a policy change between two decisions for one token still counts H_t once") {
    // a: decide, change the policy (same window, then a new one), decide again, accept.
    // b: the policy changes first, then one decision.  Both must end in the same state; before
    // session 24 the change committed a's first decision, so its entropy was counted twice and a
    // delimiter token began two steps.
    for (int32_t new_window : {4, 2, 7}) {
        SequenceSampler a(DelimiterSets{{}, {20}}), b(DelimiterSets{{}, {20}});
        a.set_policy(reset_policy_of(4, 0.2f, 0.5f), true);
        b.set_policy(reset_policy_of(4, 0.2f, 0.5f), true);
        for (int k : {2, 4, 8}) {
            a.decide(uniform_logits(k).data(), 16);
            b.decide(uniform_logits(k).data(), 16);
            a.accept(20);
            b.accept(20);
        }
        a.decide(uniform_logits(3).data(), 16);  // replaced below
        a.set_policy(reset_policy_of(new_window, 0.2f, 0.5f), false);
        b.set_policy(reset_policy_of(new_window, 0.2f, 0.5f), false);
        const SamplerSignals sa = a.decide(uniform_logits(5).data(), 16);
        const SamplerSignals sb = b.decide(uniform_logits(5).data(), 16);
        CHECK(sa.step_index == sb.step_index);
        CHECK(sa.step_entropy == sb.step_entropy);
        CHECK(sa.global_mean == sb.global_mean);
        a.accept(1);
        b.accept(1);
        CHECK(a.state().total_count == 4);
        CHECK(a.state().total_sum == b.state().total_sum);
        CHECK(a.state().step_index == b.state().step_index);
        CHECK(a.state().window_count == b.state().window_count);
        // A decision the policy change kept pending stays counted when it is accepted directly.
        a.decide(uniform_logits(6).data(), 16);
        b.decide(uniform_logits(6).data(), 16);
        a.set_policy(reset_policy_of(3, 0.2f, 0.5f), false);
        b.set_policy(reset_policy_of(3, 0.2f, 0.5f), false);
        a.accept(1);
        b.accept(1);
        CHECK(a.state().total_count == 5);
        CHECK(a.state().total_sum == b.state().total_sum);
        CHECK(a.state().window_count == b.state().window_count);
    }
}

TEST_CASE("sampler: a policy change keeps the step state unless asked to reset it") {
    SequenceSampler s(DelimiterSets{{}, {20}});
    s.set_policy(reset_policy_of(4, 0.2f, 0.5f), true);
    for (int k : {2, 4, 8, 3, 5}) {
        s.decide(uniform_logits(k).data(), 16);
        s.accept(20);  // every token ends a step: S stays below w
    }
    CHECK(s.state().total_count == 5);
    // Shrinking the window keeps the two most recent entropies (ln 3, ln 5),
    // and S is empty after the boundary, so Ĥ = mean(W).
    s.set_policy(reset_policy_of(2, 0.2f, 0.5f), false);
    CHECK(s.state().total_count == 5);
    CHECK(s.state().window_count == 2);
    const SamplerSignals sig = s.decide(uniform_logits(2).data(), 16);
    CHECK(sig.step_entropy == doctest::Approx(0.5 * (std::log(3.0) + std::log(5.0))));
    s.accept(1);
    s.set_policy(reset_policy_of(2, 0.2f, 0.5f), true);
    CHECK(s.state().total_count == 0);
    CHECK(s.accepted() == 6);  // the draw counter survives a state reset
    s.clear();
    CHECK(s.accepted() == 0);
}

TEST_CASE("sampler: the ENTROPY ablation never gates, GREEDY and FIXED report no threshold") {
    SequenceSampler s(DelimiterSets{{}, {20}});
    s.set_policy(reset_policy_of(1, 0.2f, 0.5f, 1.0f, RESET_POLICY_ENTROPY), true);
    s.decide(uniform_logits(1).data(), 16);
    s.accept(1);
    s.decide(uniform_logits(16).data(), 16);
    s.accept(20);
    // After the boundary S is empty: Ĥ = mean(W) = ln 16 (w = 1) > H̄ = ln 16 / 2.
    // RESET would call the step uncertain; the ablation keeps τ = τ0.
    const SamplerSignals e = s.decide(uniform_logits(2).data(), 16);
    CHECK(e.boundary);
    CHECK(e.step_entropy == doctest::Approx(std::log(16.0)));
    CHECK(e.global_mean == doctest::Approx(0.5 * std::log(16.0)));
    CHECK_FALSE(e.uncertain);
    CHECK(e.threshold == doctest::Approx(0.5));
    CHECK(e.temperature == 1.0f);  // ln 2 >= τ0
    s.accept(1);
    reset_policy_params p;
    reset_policy_params_init(&p);
    p.kind = RESET_POLICY_FIXED;
    p.temperature = 0.7f;
    s.set_policy(validate_policy(p, nullptr), false);
    const SamplerSignals f = s.decide(uniform_logits(3).data(), 16);
    CHECK(f.temperature == 0.7f);
    CHECK(f.threshold == 0.0f);
    CHECK(f.step_entropy == 0.0f);
    CHECK(f.entropy == doctest::Approx(std::log(3.0)));
    CHECK(s.state().total_count == 4);  // the state stays current under FIXED
}

TEST_CASE("philox4x32-10 known-answer vectors (Random123)") {
    philox::Block b = philox::philox4x32_10(0, 0, 0, 0, 0, 0);
    CHECK(b.v[0] == 0x6627e8d5u);
    CHECK(b.v[1] == 0xe169c58du);
    CHECK(b.v[2] == 0xbc57ac4cu);
    CHECK(b.v[3] == 0x9b00dbd8u);
    b = philox::philox4x32_10(0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu);
    CHECK(b.v[0] == 0x408f276du);
    CHECK(b.v[1] == 0x41c83b0eu);
    CHECK(b.v[2] == 0xa20bc7c6u);
    CHECK(b.v[3] == 0x6d5451fdu);
    b = philox::philox4x32_10(0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u, 0xa4093822u, 0x299f31d0u);
    CHECK(b.v[0] == 0xd16cfe09u);
    CHECK(b.v[1] == 0x94fdccebu);
    CHECK(b.v[2] == 0x5001e420u);
    CHECK(b.v[3] == 0x24126ea1u);
    // Uniforms are in [0, 1) and differ by sequence and step.
    const double u0 = philox::uniform(1, 0, 0), u1 = philox::uniform(1, 1, 0), u2 = philox::uniform(1, 0, 1);
    CHECK(u0 >= 0.0);
    CHECK(u0 < 1.0);
    CHECK(u0 != u1);
    CHECK(u0 != u2);
}

TEST_CASE("policy validation names the wrong field and its value") {
    reset_policy_params p;
    reset_policy_params_init(&p);
    reset_status st = RESET_OK;
    p.temperature = -0.5f;
    CHECK(error_of(p, nullptr, &st) == "policy parameter temperature is -0.5 (must be finite and >= 0)");
    CHECK(st == RESET_ERR_INVALID_ARGUMENT);
    reset_policy_params_init(&p);
    p.top_p = 0.0f;
    CHECK(error_of(p) == "policy parameter top_p is 0 (must be in (0, 1]; 1 = off)");
    p.top_p = 1.5f;
    CHECK(error_of(p).find("top_p is 1.5") != std::string::npos);
    reset_policy_params_init(&p);
    p.min_p = 1.0f;
    CHECK(error_of(p).find("min_p is 1 ") != std::string::npos);
    reset_policy_params_init(&p);
    p.top_k = -3;
    CHECK(error_of(p).find("top_k is -3") != std::string::npos);
    reset_policy_params_init(&p);
    p.window = 0;
    CHECK(error_of(p).find("window is 0") != std::string::npos);
    reset_policy_params_init(&p);
    p.t_high = std::numeric_limits<float>::quiet_NaN();
    CHECK(error_of(p).find("t_high is nan") != std::string::npos);
    reset_policy_params_init(&p);
    p.kind = static_cast<reset_policy_kind>(9);
    CHECK(error_of(p).find("kind is 9") != std::string::npos);
    reset_policy_params_init(&p);
    p.preset = "Qwen3-7B";
    CHECK(error_of(p).find("preset is \"Qwen3-7B\"") != std::string::npos);
    // ReSET without thresholds and nothing to take them from.
    reset_policy_params_init(&p);
    p.kind = RESET_POLICY_RESET;
    CHECK(error_of(p, nullptr, &st).find("set params.t_low and params.tau0") != std::string::npos);
    CHECK(st == RESET_ERR_UNSUPPORTED);
}

TEST_CASE("presets: by name, by the model's shapes, explicit values win") {
    reset_policy_params p;
    reset_policy_params_init(&p);
    p.kind = RESET_POLICY_RESET;
    p.preset = "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B";
    Policy pol = validate_policy(p, nullptr);
    CHECK(pol.t_low == 0.4f);
    CHECK(pol.tau0 == 0.6446f);
    CHECK(pol.preset == "DeepSeek-R1-Distill-Qwen-7B");
    p.preset = "qwen/qwen3-14b";
    p.t_low = 0.2f;  // explicit wins over the row
    pol = validate_policy(p, nullptr);
    CHECK(pol.t_low == 0.2f);
    CHECK(pol.tau0 == 0.4863f);

    ModelConfig c;
    c.architecture = "qwen3";
    c.n_layers = 64;
    c.hidden_size = 5120;
    c.n_heads = 64;
    c.n_kv_heads = 8;
    c.intermediate_size = 25600;
    reset_policy_params_init(&p);
    p.kind = RESET_POLICY_ENTROPY;
    pol = validate_policy(p, &c);
    CHECK(pol.preset == "Qwen3-32B");
    CHECK(pol.t_low == 0.1f);
    CHECK(pol.tau0 == 0.5363f);
    c.n_layers = 28;  // no such Qwen3
    reset_status st = RESET_OK;
    CHECK(error_of(p, &c, &st).find("not one of the paper's") != std::string::npos);
    CHECK(st == RESET_ERR_UNSUPPORTED);
    c.architecture = "qwen2";
    c.hidden_size = 3584;
    c.n_heads = 28;
    c.n_kv_heads = 4;
    c.intermediate_size = 18944;
    CHECK(validate_policy(p, &c).preset == "DeepSeek-R1-Distill-Qwen-7B");
}
