// test_sampler.cpp — the draw matches the truncated softmax (chi-square over
// 100,000 draws for top-k, top-p and min-p at several temperatures), the
// standalone C API, traces and percentile tables.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "reset.h"
#include "sampling/calibration.h"
#include "sampling/policy.h"
#include "sampling/sampler.h"
#include "sampling/top_logprobs.h"
#include "sampling/trace.h"
#include "rules/penalty.h"
#include "rules/philox.h"

using namespace reset;

namespace {

// Regularised upper incomplete gamma Q(a, x): a series for x < a + 1, a
// continued fraction (modified Lentz) otherwise.  Q(df/2, chi2/2) is the
// chi-square p-value.
double gamma_q(double a, double x) {
    if (x <= 0.0) return 1.0;
    const double log_prefix = a * std::log(x) - x - std::lgamma(a);
    if (x < a + 1.0) {
        double term = 1.0 / a, sum = term;
        for (int n = 1; n < 10000; ++n) {
            term *= x / (a + n);
            sum += term;
            if (std::fabs(term) < std::fabs(sum) * 1e-15) break;
        }
        return 1.0 - sum * std::exp(log_prefix);
    }
    const double tiny = 1e-300;
    double b = x + 1.0 - a, c = 1.0 / tiny, d = 1.0 / b, h = d;
    for (int i = 1; i < 10000; ++i) {
        const double an = -i * (i - a);
        b += 2.0;
        d = an * d + b;
        if (std::fabs(d) < tiny) d = tiny;
        c = b + an / c;
        if (std::fabs(c) < tiny) c = tiny;
        d = 1.0 / d;
        const double delta = d * c;
        h *= delta;
        if (std::fabs(delta - 1.0) < 1e-15) break;
    }
    return std::exp(log_prefix) * h;
}

// The truncated softmax written out directly (double precision), the
// expectation the draws are tested against.
std::vector<double> expected_distribution(const std::vector<float> &z, double t, int top_k, double top_p,
                                          double min_p) {
    const size_t n = z.size();
    std::vector<size_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return z[a] > z[b]; });
    const double zmax = z[order[0]];
    std::vector<double> p(n, 0.0);
    size_t keep = (top_k > 0 && static_cast<size_t>(top_k) < n) ? static_cast<size_t>(top_k) : n;
    double total = 0.0;
    for (size_t i = 0; i < keep; ++i) total += std::exp((z[order[i]] - zmax) / t);
    if (top_p < 1.0) {
        double mass = 0.0;
        size_t i = 0;
        while (i < keep) {
            mass += std::exp((z[order[i]] - zmax) / t) / total;
            ++i;
            if (mass >= top_p) break;
        }
        keep = i;
    }
    double kept_total = 0.0;
    for (size_t i = 0; i < keep; ++i) {
        const double w = std::exp((z[order[i]] - zmax) / t);
        if (w < min_p) continue;  // p / p_max = w (the top token has w = 1)
        p[order[i]] = w;
        kept_total += w;
    }
    for (double &v : p) v /= kept_total;
    return p;
}

struct ChiSquare {
    double statistic = 0.0;
    int df = 0;
    double p_value = 1.0;
    long impossible = 0;  // draws of a token the truncation removes
};

ChiSquare chi_square(const std::vector<long> &counts, const std::vector<double> &p, long draws) {
    ChiSquare r;
    // Pool categories with small expectations so the chi-square
    // approximation holds (every cell >= 5 expected).
    double pooled_obs = 0.0, pooled_exp = 0.0;
    int cells = 0;
    for (size_t i = 0; i < p.size(); ++i) {
        if (p[i] == 0.0) {
            r.impossible += counts[i];
            continue;
        }
        const double e = p[i] * static_cast<double>(draws);
        if (e < 5.0) {
            pooled_obs += static_cast<double>(counts[i]);
            pooled_exp += e;
            continue;
        }
        r.statistic += (counts[i] - e) * (counts[i] - e) / e;
        ++cells;
    }
    if (pooled_exp > 0.0) {
        r.statistic += (pooled_obs - pooled_exp) * (pooled_obs - pooled_exp) / pooled_exp;
        ++cells;
    }
    r.df = cells - 1;
    r.p_value = r.df > 0 ? gamma_q(r.df / 2.0, r.statistic / 2.0) : 1.0;
    return r;
}

Policy fixed(float t, int top_k, float top_p, float min_p, uint64_t seed) {
    reset_policy_params p;
    reset_policy_params_init(&p);
    p.kind = RESET_POLICY_FIXED;
    p.temperature = t;
    p.top_k = top_k;
    p.top_p = top_p;
    p.min_p = min_p;
    p.seed = seed;
    return validate_policy(p, nullptr);
}

std::string last_error() { return reset_last_error(); }

}  // namespace

TEST_CASE("chi-square helper: known p-values") {
    CHECK(gamma_q(0.5, 3.841458820694124 / 2) == doctest::Approx(0.05).epsilon(1e-6));  // df 1
    CHECK(gamma_q(5.0, 18.307038053275146 / 2) == doctest::Approx(0.05).epsilon(1e-6));  // df 10
    CHECK(gamma_q(50.0, 50.0) == doctest::Approx(0.4812).epsilon(1e-3));  // df 100 at 100
}

TEST_CASE("100,000 draws match the truncated softmax: top-k, top-p, min-p at several temperatures") {
    std::mt19937 rng(1234);
    std::normal_distribution<float> normal(0.0f, 2.0f);
    const int vocab = 40;
    std::vector<float> z(vocab);
    for (float &v : z) v = normal(rng);
    z[7] = -std::numeric_limits<float>::infinity();  // a masked token is never drawn

    struct Case {
        float t;
        int top_k;
        float top_p;
        float min_p;
    };
    const Case cases[] = {
        {1.0f, 0, 1.0f, 0.0f},  {0.5f, 10, 1.0f, 0.0f}, {1.0f, 5, 1.0f, 0.0f},  {1.7f, 20, 1.0f, 0.0f},
        {0.6f, 0, 0.95f, 0.0f}, {1.0f, 0, 0.8f, 0.0f},  {1.7f, 0, 0.5f, 0.0f},  {0.6f, 0, 1.0f, 0.05f},
        {1.0f, 0, 1.0f, 0.2f},  {1.7f, 0, 1.0f, 0.1f},  {1.0f, 12, 0.9f, 0.05f}, {1.0f, 0, 0.7f, 0.1f},
        {2.0f, 0, 0.3f, 0.0f},  // top-p's first draw rejected most of the time: the second one must make up for it
    };
    const long draws = 100000;
    uint64_t seed = 99;
    for (const Case &c : cases) {
        SequenceSampler s;
        s.set_policy(fixed(c.t, c.top_k, c.top_p, c.min_p, seed++), true);
        std::vector<long> counts(vocab, 0);
        for (long i = 0; i < draws; ++i) {
            const int32_t token = s.sample(z.data(), vocab, 3, nullptr);
            REQUIRE(token >= 0);
            REQUIRE(token < vocab);
            ++counts[static_cast<size_t>(token)];
            s.accept(token);
        }
        const std::vector<double> p = expected_distribution(z, c.t, c.top_k, c.top_p, c.min_p);
        const ChiSquare r = chi_square(counts, p, draws);
        INFO("T=", c.t, " top_k=", c.top_k, " top_p=", c.top_p, " min_p=", c.min_p, " chi2=", r.statistic,
             " df=", r.df, " p=", r.p_value);
        CHECK(r.impossible == 0);
        CHECK(r.df >= 1);
        CHECK(r.p_value > 0.001);
    }
}

TEST_CASE("a wrong distribution fails the chi-square test (the test has power)") {
    std::mt19937 rng(5);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> z(30);
    for (float &v : z) v = normal(rng);
    SequenceSampler s;
    s.set_policy(fixed(1.0f, 0, 1.0f, 0.0f, 1), true);
    std::vector<long> counts(z.size(), 0);
    for (long i = 0; i < 100000; ++i) {
        const int32_t t = s.sample(z.data(), 30, 0, nullptr);
        ++counts[static_cast<size_t>(t)];
        s.accept(t);
    }
    // Compared with the distribution at T = 1.1 it must be rejected.
    CHECK(chi_square(counts, expected_distribution(z, 1.1, 0, 1.0, 0.0), 100000).p_value < 0.001);
}

TEST_CASE("draws are a function of (seed, sequence, step)") {
    std::vector<float> z(1000);
    for (size_t i = 0; i < z.size(); ++i) z[i] = static_cast<float>(std::sin(i * 0.37) * 3.0);
    auto run = [&](uint64_t seed, int32_t seq) {
        SequenceSampler s;
        s.set_policy(fixed(1.0f, 0, 0.95f, 0.0f, seed), true);
        std::vector<int32_t> out;
        for (int i = 0; i < 64; ++i) {
            out.push_back(s.sample(z.data(), 1000, seq, nullptr));
            s.accept(out.back());
        }
        return out;
    };
    CHECK(run(1, 0) == run(1, 0));
    CHECK(run(1, 0) != run(2, 0));
    CHECK(run(1, 0) != run(1, 1));
}

TEST_CASE("top-p draws rejection-first: the untruncated draw with u1 if it survives, else the survivors' with u2") {
    // The contract the CUDA sampler implements too (sampling/truncation.h);
    // the chi-square cases above show the result is the truncated softmax.
    std::vector<float> z(3000);
    for (size_t i = 0; i < z.size(); ++i) z[i] = static_cast<float>(std::sin(i * 0.61) * 2.5 + std::cos(i * 0.07));
    z[17] = -std::numeric_limits<float>::infinity();
    const float max_logit = *std::max_element(z.begin(), z.end());
    int first_kept = 0, second = 0;
    for (uint64_t step = 0; step < 400; ++step) {
        const double u1 = philox::uniform(5, 2, step), u2 = philox::second_uniform(5, 2, step);
        Candidates all, kept;
        truncate(z.data(), 3000, max_logit, 0.8f, 0, 1.0f, 0.0f, all);
        truncate(z.data(), 3000, max_logit, 0.8f, 0, 0.9f, 0.0f, kept);
        const int32_t s = draw(all, u1);
        const bool in = std::binary_search(kept.ids.begin(), kept.ids.end(), s);
        const int32_t expected = in ? s : draw(kept, u2);
        (in ? first_kept : second) += 1;
        Candidates scratch;
        bool second_draw = in;  // the opposite of what it must become
        CHECK(draw_truncated(z.data(), 3000, max_logit, 0.8f, 0, 0.9f, 0.0f, u1, u2, scratch, &second_draw) ==
              expected);
        CHECK(second_draw == !in);
        // Top-k cutting draws once, with u1, as every other policy does.
        second_draw = true;
        const int32_t with_k =
            draw_truncated(z.data(), 3000, max_logit, 0.8f, 50, 0.9f, 0.0f, u1, u2, scratch, &second_draw);
        CHECK(with_k == draw(scratch, u1));
        CHECK_FALSE(second_draw);
    }
    // The first draw survives with probability >= top_p (0.9): both paths ran.
    CHECK(first_kept > 320);
    CHECK(second > 0);
}

TEST_CASE("truncation keeps at least the argmax, and top-k ties keep the lower ids") {
    const float z[5] = {1.0f, 3.0f, 3.0f, 3.0f, 0.0f};
    Candidates c;
    truncate(z, 5, 3.0f, 1.0f, 2, 1.0f, 0.0f, c);
    CHECK(c.ids == std::vector<int32_t>{1, 2});
    truncate(z, 5, 3.0f, 1.0f, 0, 1e-9f, 0.0f, c);
    CHECK(c.ids == std::vector<int32_t>{1});
    truncate(z, 5, 3.0f, 0.01f, 0, 1.0f, 0.5f, c);
    CHECK(c.ids == std::vector<int32_t>{1, 2, 3});
    CHECK(draw(c, 0.0) == 1);
    CHECK(draw(c, 0.999999) == 3);
}

// The penalties' formula written out again here (reset.h, reset_policy_params),
// in double: the test must not share rules/penalty.h with the code it checks.
// `context`: the other tokens of the sequence (the repetition penalty's too).
std::vector<float> penalized_by_hand(const std::vector<float> &z, const std::vector<int32_t> &generated,
                                     double presence, double frequency, double repetition = 1.0,
                                     const std::vector<int32_t> &context = {}) {
    std::vector<int> count(z.size(), 0);
    std::vector<bool> seen(z.size(), false);
    for (int32_t t : generated) ++count[static_cast<size_t>(t)], seen[static_cast<size_t>(t)] = true;
    for (int32_t t : context) seen[static_cast<size_t>(t)] = true;
    std::vector<float> out = z;
    for (size_t i = 0; i < z.size(); ++i) {
        double v = z[i];
        if (seen[i] && v != -INFINITY) v = v > 0 ? v / repetition : v * repetition;
        if (count[i] > 0) v = v - frequency * count[i] - presence;
        out[i] = static_cast<float>(v);
    }
    return out;
}

Policy penalized(float t, float presence, float frequency, uint64_t seed, float repetition = 1.0f) {
    reset_policy_params p;
    reset_policy_params_init(&p);
    p.kind = t == 0.0f ? RESET_POLICY_GREEDY : RESET_POLICY_FIXED;
    p.temperature = t;
    p.seed = seed;
    p.presence_penalty = presence;
    p.frequency_penalty = frequency;
    p.repetition_penalty = repetition;
    return validate_policy(p, nullptr);
}

TEST_CASE("penalties: draws match the softmax of the penalized logits; the entropy stays the raw one's") {
    std::mt19937 rng(77);
    std::normal_distribution<float> normal(0.0f, 1.5f);
    const int vocab = 32;
    std::vector<float> z(vocab);
    for (float &v : z) v = normal(rng);
    z[5] = -std::numeric_limits<float>::infinity();
    // Tokens generated earlier: 3 twice, 9 once, the masked 5 once (stays masked), the argmax once.
    const int32_t top = static_cast<int32_t>(std::max_element(z.begin(), z.end()) - z.begin());
    const std::vector<int32_t> generated = {3, 9, 3, 5, top};
    // The prompt (the repetition penalty's alone): tokens of both signs, one also generated.
    std::vector<int32_t> prompt = {0, 1, 2, 9, 20, 21};
    struct Case {
        float presence, frequency, t, repetition;
    };
    const Case cases[] = {{1.5f, 0.0f, 1.0f, 1.0f}, {0.0f, 0.7f, 0.8f, 1.0f},  {0.5f, 1.0f, 1.3f, 1.0f},
                          {-1.0f, -0.5f, 1.0f, 1.0f}, {0.0f, 0.0f, 1.0f, 1.8f}, {0.5f, 0.3f, 0.7f, 1.3f},
                          {0.0f, 0.0f, 1.0f, 0.6f}};
    const long draws = 100000;
    for (const Case &c : cases) {
        SequenceSampler s;
        s.set_policy(penalized(c.t, c.presence, c.frequency, 11, c.repetition), true);
        s.add_context(prompt.data(), prompt.size());
        for (int32_t t : generated) s.accept(t);
        const std::vector<float> zp = penalized_by_hand(z, generated, c.presence, c.frequency, c.repetition, prompt);
        // Redraw at the same count of accepted tokens: sample() without accept() repeats the decision, and
        // the Philox step stays; so the draws differ only through the seed, set per draw.
        std::vector<long> counts(vocab, 0);
        SamplerSignals sig;
        for (long i = 0; i < draws; ++i) {
            s.set_policy(penalized(c.t, c.presence, c.frequency, 1000 + uint64_t(i), c.repetition), false);
            const int32_t token = s.sample(z.data(), vocab, 0, &sig);
            REQUIRE(token >= 0);
            ++counts[static_cast<size_t>(token)];
        }
        const ChiSquare r = chi_square(counts, expected_distribution(zp, c.t, 0, 1.0, 0.0), draws);
        INFO("presence ", c.presence, " frequency ", c.frequency, " repetition ", c.repetition, " T ", c.t, " chi2 ",
             r.statistic, " p ", r.p_value);
        CHECK(r.impossible == 0);
        CHECK(r.p_value > 0.001);
        // H_t is the raw row's (reset-algorithm.md): the same as an unpenalized sampler's.
        SequenceSampler plain;
        plain.set_policy(fixed(c.t, 0, 1.0f, 0.0f, 11), true);
        CHECK(plain.decide(z.data(), vocab).entropy == sig.entropy);
    }
    // The test has power: the unpenalized distribution fails it where the penalty is strong.
    SequenceSampler s;
    std::vector<long> counts(vocab, 0);
    for (long i = 0; i < draws; ++i) {
        s.clear();  // (reset_state alone would keep each draw's generation as context: 500,000 tokens by the end)
        s.set_policy(penalized(1.0f, 1.5f, 0.0f, 5000 + uint64_t(i)), true);
        for (int32_t t : generated) s.accept(t);
        ++counts[static_cast<size_t>(s.sample(z.data(), vocab, 0, nullptr))];
    }
    CHECK(chi_square(counts, expected_distribution(z, 1.0, 0, 1.0, 0.0), draws).p_value < 1e-6);
    // ... and a repetition penalty that forgot the prompt fails it too.
    std::fill(counts.begin(), counts.end(), 0);
    for (long i = 0; i < draws; ++i) {
        SequenceSampler r;
        r.set_policy(penalized(1.0f, 0.0f, 0.0f, 7000 + uint64_t(i), 1.8f), true);
        r.add_context(prompt.data(), prompt.size());
        for (int32_t t : generated) r.accept(t);
        ++counts[static_cast<size_t>(r.sample(z.data(), vocab, 0, nullptr))];
    }
    const std::vector<float> without_prompt = penalized_by_hand(z, generated, 0.0, 0.0, 1.8);
    const double forgotten = chi_square(counts, expected_distribution(without_prompt, 1.0, 0, 1.0, 0.0), draws).p_value;
    INFO("the prompt forgotten: p ", forgotten);
    CHECK(forgotten < 1e-6);
}

TEST_CASE("repetition penalty: over the prompt and every accepted token; reset_state keeps them, clear() not") {
    // The rule: a positive logit divided, a negative one multiplied, -inf kept, a product saturating.
    CHECK(rule::penalized_logit(3.0f, true, 0, 1.5f, 0.0f, 0.0f) == 2.0f);
    CHECK(rule::penalized_logit(-3.0f, true, 0, 1.5f, 0.0f, 0.0f) == -4.5f);
    CHECK(rule::penalized_logit(3.0f, false, 0, 1.5f, 0.0f, 0.0f) == 3.0f);
    CHECK(rule::penalized_logit(-INFINITY, true, 2, 1.5f, 1.0f, 1.0f) == -INFINITY);
    CHECK(rule::penalized_logit(3.0e38f, true, 0, 0.1f, 0.0f, 0.0f) == std::numeric_limits<float>::max());
    CHECK(rule::penalized_logit(-3.0e38f, true, 0, 10.0f, 0.0f, 0.0f) == -std::numeric_limits<float>::max());
    CHECK(rule::penalized_logit(3.0f, true, 2, 1.5f, 0.5f, 0.25f) == 1.0f);  // (3 / 1.5 - 0.25 * 2) - 0.5
    // Greedy on a row whose best tokens sit in the prompt.
    const std::vector<float> z = {4.0f, 3.0f, 2.5f, -1.0f, -0.5f};
    SequenceSampler s;
    s.set_policy(penalized(0.0f, 0.0f, 0.0f, 0, 2.0f), true);
    CHECK(s.sample(z.data(), 5, 0, nullptr) == 0);  // nothing seen yet
    const int32_t prompt[] = {0, 1};
    s.add_context(prompt, 2);
    CHECK(s.context_length() == 2);
    CHECK(s.generation_length() == 0);
    CHECK(s.sample(z.data(), 5, 0, nullptr) == 2);  // 4 / 2 = 2, 3 / 2 = 1.5 < 2.5
    s.accept(2);
    CHECK(s.sample(z.data(), 5, 0, nullptr) == 0);  // 4 / 2 = 2 beats 3 / 2 and 2.5 / 2
    // A new generation: the generation's tokens join the context, nothing is forgotten.
    s.set_policy(penalized(0.0f, 0.0f, 0.0f, 0, 2.0f), true);
    CHECK(s.generation_length() == 0);
    CHECK(s.context_length() == 3);
    std::vector<int32_t> counts(5, 0);
    s.add_penalty_counts(counts.data(), 5);
    CHECK(counts == std::vector<int32_t>{rule::kInContext, rule::kInContext, rule::kInContext, 0, 0});
    s.accept(0);
    std::fill(counts.begin(), counts.end(), 0);
    s.add_penalty_counts(counts.data(), 5);
    CHECK(counts[0] == (rule::kInContext | 1));
    // A negative logit in the context moves away from 0: -0.5 * 2 = -1 ties token 3.
    const std::vector<float> low = {-5.0f, -5.0f, -5.0f, -1.0f, -0.5f};
    const int32_t four = 4;
    s.add_context(&four, 1);
    CHECK(s.sample(low.data(), 5, 0, nullptr) == 3);
    // clear() (a session reset) forgets the context too.
    s.clear();
    CHECK(s.context_length() == 0);
    CHECK(s.sample(z.data(), 5, 0, nullptr) == 0);
}

// log softmax(z)[token] in double, written out independently of the sampler
// (max-shifted log-sum-exp over every finite entry).
double log_softmax_by_hand(const std::vector<float> &z, int32_t token) {
    double m = -INFINITY;
    for (float v : z) m = std::max(m, double(v));
    double sum = 0.0;
    for (float v : z)
        if (v != -INFINITY) sum += std::exp(double(v) - m);
    return double(z[size_t(token)]) - m - std::log(sum);
}

TEST_CASE("logprob: the chosen token's log-probability under the raw logits, whatever lowered the draw's") {
    std::mt19937 rng(314);
    std::normal_distribution<float> normal(0.0f, 3.0f);
    const int vocab = 1000;
    std::vector<float> z(vocab);
    for (float &v : z) v = normal(rng);
    z[17] = -INFINITY;
    const std::vector<int32_t> generated = {4, 4, 99, 500};
    struct Case {
        const char *name;
        Policy policy;
    };
    const Case cases[] = {{"greedy", fixed(0.0f, 0, 1.0f, 0.0f, 1)},
                          {"T 1", fixed(1.0f, 0, 1.0f, 0.0f, 2)},
                          {"T 1.7 top-k 50", fixed(1.7f, 50, 1.0f, 0.0f, 3)},
                          {"T 0.6 top-p 0.9 min-p 0.05", fixed(0.6f, 0, 0.9f, 0.05f, 4)},
                          {"T 1 penalties", penalized(1.0f, 1.5f, 0.5f, 5)},
                          {"greedy penalties", penalized(0.0f, 2.0f, 2.0f, 6)}};
    for (const Case &c : cases) {
        SequenceSampler s;
        s.set_policy(c.policy, true);
        for (int32_t t : generated) s.accept(t);
        // decide() draws nothing, so it reports no logprob.
        CHECK(std::isnan(s.decide(z.data(), vocab).logprob));
        for (int i = 0; i < 200; ++i) {
            SamplerSignals sig;
            const int32_t token = s.sample(z.data(), vocab, i, &sig);
            INFO(c.name, " draw ", i, " token ", token);
            // Tolerance 1e-6 relative (plus 1e-6): the sampler sums in another order (double) and rounds
            // z - max and the result to FP32, an ulp below 4e-6 at |logprob| < 40; the processed
            // distribution's logprob (another temperature, truncation, penalties) is off by far more.
            CHECK(sig.logprob == doctest::Approx(log_softmax_by_hand(z, token)).epsilon(1e-6));
            CHECK(sig.logprob <= 0.0f);
        }
    }
    // The greedy draw under penalties moved off the raw argmax, and its logprob says how unlikely the model
    // found it.
    SequenceSampler g;
    g.set_policy(penalized(0.0f, 2.0f, 2.0f, 6), true);
    const int32_t top = static_cast<int32_t>(std::max_element(z.begin(), z.end()) - z.begin());
    g.accept(top);
    SamplerSignals sig;
    const int32_t token = g.sample(z.data(), vocab, 0, &sig);
    CHECK(token != top);
    CHECK(sig.logprob < log_softmax_by_hand(z, top));
    CHECK(sig.logprob == doctest::Approx(log_softmax_by_hand(z, token)).epsilon(1e-6));

    // The C API: reset_policy_sample fills it, reset_policy_decide reports NaN, and the trace writes
    // "logprob" after "token" (null for NaN; absent for a caller's struct from before 0.3).
    reset_policy_params p;
    reset_policy_params_init(&p);
    p.kind = RESET_POLICY_FIXED;
    p.temperature = 1.0f;
    reset_policy *policy = nullptr;
    REQUIRE(reset_policy_create(&p, nullptr, &policy) == RESET_OK);
    reset_decision d;
    reset_decision_init(&d);
    CHECK(std::isnan(d.logprob));
    d.logprob = 0.0f;
    REQUIRE(reset_policy_decide(policy, z.data(), z.size(), &d) == RESET_OK);
    CHECK(std::isnan(d.logprob));
    int32_t drawn = -1;
    REQUIRE(reset_policy_sample(policy, z.data(), z.size(), &drawn, &d) == RESET_OK);
    CHECK(d.logprob == doctest::Approx(log_softmax_by_hand(z, drawn)).epsilon(1e-6));
    char line[512];
    size_t length = 0;
    REQUIRE(reset_decision_to_json(&d, 0, drawn, line, sizeof line, &length) == RESET_OK);
    const std::string with = line;
    const std::string prefix = "{\"sequence\":0,\"token\":" + std::to_string(drawn) + ",\"logprob\":";
    CHECK(with.compare(0, prefix.size(), prefix) == 0);
    CHECK(std::stod(with.substr(prefix.size())) == doctest::Approx(d.logprob).epsilon(1e-8));
    d.logprob = NAN;
    REQUIRE(reset_decision_to_json(&d, 0, -1, line, sizeof line, &length) == RESET_OK);
    CHECK(std::string(line).find("\"token\":-1,\"logprob\":null,") != std::string::npos);
    d.struct_size = offsetof(reset_decision, logprob);  // a 0.2 caller's struct
    REQUIRE(reset_decision_to_json(&d, 0, drawn, line, sizeof line, &length) == RESET_OK);
    CHECK(std::string(line).find("logprob") == std::string::npos);
    reset_step step;
    reset_step_init(&step, 1);
    CHECK(std::isnan(step.logprob));
    step.token = 3;
    step.logprob = -0.25f;
    REQUIRE(reset_step_to_json(&step, line, sizeof line, &length) == RESET_OK);
    CHECK(std::string(line).find("\"token\":3,\"logprob\":-0.25,") != std::string::npos);
    step.struct_size = offsetof(reset_step, logprob);
    REQUIRE(reset_step_to_json(&step, line, sizeof line, &length) == RESET_OK);
    CHECK(std::string(line).find("logprob") == std::string::npos);
    reset_policy_free(policy);
}

TEST_CASE("penalties: greedy takes the penalized argmax, the lowest id among equals") {
    std::vector<float> z = {1.0f, 5.0f, 4.5f, 4.5f, -std::numeric_limits<float>::infinity()};
    SequenceSampler s;
    s.set_policy(penalized(0.0f, 0.5f, 0.0f, 0), true);
    CHECK(s.sample(z.data(), 5, 0, nullptr) == 1);
    s.accept(1);  // 5 - 0.5 = 4.5 ties 2 and 3: the lowest id wins
    CHECK(s.sample(z.data(), 5, 0, nullptr) == 1);
    s.set_policy(penalized(0.0f, 0.5f, 0.25f, 0), false);  // 5 - 0.25 - 0.5 = 4.25 < 4.5
    CHECK(s.sample(z.data(), 5, 0, nullptr) == 2);
    s.accept(2);
    s.accept(4);  // a masked token generated (forced by the caller) stays masked
    CHECK(s.sample(z.data(), 5, 0, nullptr) == 3);
    CHECK(s.generation_length() == 3);
    // reset_state starts a new generation: nothing penalized.
    s.set_policy(penalized(0.0f, 0.5f, 0.25f, 0), true);
    CHECK(s.generation_length() == 0);
    CHECK(s.sample(z.data(), 5, 0, nullptr) == 1);
    // Penalties off: the raw argmax even with a generation behind.
    s.accept(1);
    s.set_policy(penalized(0.0f, 0.0f, 0.0f, 0), false);
    CHECK(s.sample(z.data(), 5, 0, nullptr) == 1);
}

TEST_CASE("penalties: copies of a sampler (a session's snapshots) keep their own generation") {
    std::vector<float> z = {3.0f, 2.9f, 2.8f, 0.0f};
    SequenceSampler live;
    live.set_policy(penalized(0.0f, 0.0f, 0.2f, 0), true);
    live.accept(0);
    const SequenceSampler saved = live;  // the snapshot
    const uint64_t saved_version = saved.generation_version();
    live.accept(0);
    live.accept(1);
    CHECK(live.generation_version() != saved_version);
    CHECK(live.generation_length() == 3);
    live = saved;  // the rollback
    CHECK(live.generation_length() == 1);
    CHECK(live.generation_version() == saved_version);
    CHECK(live.sample(z.data(), 4, 0, nullptr) == 1);  // only one 0 counted: 2.8 < 2.9
    live.accept(2);
    SequenceSampler twin = saved;  // a second continuation of the same snapshot
    twin.accept(1);
    std::vector<int32_t> a(4, 0), b(4, 0);
    live.add_penalty_counts(a.data(), 4);
    twin.add_penalty_counts(b.data(), 4);
    CHECK(a == std::vector<int32_t>{1, 0, 1, 0});
    CHECK(b == std::vector<int32_t>{1, 1, 0, 0});
    CHECK(live.generation_version() != twin.generation_version());
}

TEST_CASE("penalties: the C API validates them, keeps them, and clears the counts on reset") {
    reset_policy_params p;
    reset_policy_params_init(&p);
    CHECK(p.presence_penalty == 0.0f);
    CHECK(p.frequency_penalty == 0.0f);
    reset_policy *policy = nullptr;
    for (float bad : {2.5f, -2.01f, std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
        p.presence_penalty = bad;
        CHECK(reset_policy_create(&p, nullptr, &policy) == RESET_ERR_INVALID_ARGUMENT);
        CHECK(last_error().find("policy parameter presence_penalty is") == 0);
        CHECK(policy == nullptr);
    }
    p.presence_penalty = 0.0f;
    p.frequency_penalty = -3.0f;
    CHECK(reset_policy_create(&p, nullptr, &policy) == RESET_ERR_INVALID_ARGUMENT);
    CHECK(last_error() == "policy parameter frequency_penalty is -3 (must be in [-2, 2]; 0 = off)");
    p.frequency_penalty = 0.0f;
    CHECK(p.repetition_penalty == 1.0f);
    for (float bad : {0.09f, 10.5f, 0.0f, -1.0f, std::numeric_limits<float>::quiet_NaN()}) {
        p.repetition_penalty = bad;
        CHECK(reset_policy_create(&p, nullptr, &policy) == RESET_ERR_INVALID_ARGUMENT);
        CHECK(last_error().find("policy parameter repetition_penalty is") == 0);
        CHECK(last_error().find("[0.1, 10]; 1 = off") != std::string::npos);
    }
    p.repetition_penalty = 0.1f;  // the bounds are allowed
    REQUIRE(reset_policy_create(&p, nullptr, &policy) == RESET_OK);
    reset_policy_free(policy);
    p.repetition_penalty = 10.0f;
    p.presence_penalty = 2.0f;  // the bounds are allowed
    p.frequency_penalty = -2.0f;
    REQUIRE(reset_policy_create(&p, nullptr, &policy) == RESET_OK);
    // reset_policy_add_context: bad arguments are refused (an id past a vocabulary only counts for nothing).
    const int32_t bad_ids[] = {3, -1};
    CHECK(reset_policy_add_context(policy, bad_ids, 2) == RESET_ERR_OUT_OF_RANGE);
    CHECK(reset_policy_add_context(policy, nullptr, 1) == RESET_ERR_INVALID_ARGUMENT);
    CHECK(reset_policy_add_context(policy, nullptr, 0) == RESET_OK);
    CHECK(reset_policy_add_context(nullptr, bad_ids, 1) == RESET_ERR_INVALID_ARGUMENT);
    {
        // With a repetition penalty of 10 the context's token 0 falls behind: 2 / 10 < 1.5; then a
        // reset forgets it.
        reset_policy_params q = p;
        q.presence_penalty = q.frequency_penalty = 0.0f;
        reset_policy *r = nullptr;
        REQUIRE(reset_policy_create(&q, nullptr, &r) == RESET_OK);
        const std::vector<float> row = {2.0f, 1.5f, 0.0f};
        const int32_t zero = 0;
        int32_t drawn = -1;
        REQUIRE(reset_policy_add_context(r, &zero, 1) == RESET_OK);
        REQUIRE(reset_policy_sample(r, row.data(), row.size(), &drawn, nullptr) == RESET_OK);
        CHECK(drawn == 1);
        q.reset_state = 1;  // a new generation keeps the context
        REQUIRE(reset_policy_set_params(r, &q) == RESET_OK);
        REQUIRE(reset_policy_sample(r, row.data(), row.size(), &drawn, nullptr) == RESET_OK);
        CHECK(drawn == 1);
        REQUIRE(reset_policy_reset(r) == RESET_OK);
        REQUIRE(reset_policy_sample(r, row.data(), row.size(), &drawn, nullptr) == RESET_OK);
        CHECK(drawn == 0);
        reset_policy_free(r);
    }
    p.repetition_penalty = 1.0f;  // below: the presence penalty alone
    p.presence_penalty = 1.0f;
    p.frequency_penalty = 0.0f;
    REQUIRE(reset_policy_set_params(policy, &p) == RESET_OK);
    const std::vector<float> z = {2.0f, 1.5f, 0.0f};
    int32_t token = -1;
    REQUIRE(reset_policy_sample(policy, z.data(), z.size(), &token, nullptr) == RESET_OK);
    CHECK(token == 0);
    REQUIRE(reset_policy_accept(policy, 0) == RESET_OK);
    REQUIRE(reset_policy_sample(policy, z.data(), z.size(), &token, nullptr) == RESET_OK);
    CHECK(token == 1);  // 2 - 1 < 1.5
    REQUIRE(reset_policy_set_params(policy, &p) == RESET_OK);  // reset_state 0: the count stays
    REQUIRE(reset_policy_sample(policy, z.data(), z.size(), &token, nullptr) == RESET_OK);
    CHECK(token == 1);
    REQUIRE(reset_policy_reset(policy) == RESET_OK);
    REQUIRE(reset_policy_sample(policy, z.data(), z.size(), &token, nullptr) == RESET_OK);
    CHECK(token == 0);
    REQUIRE(reset_policy_accept(policy, 0) == RESET_OK);
    p.reset_state = 1;
    REQUIRE(reset_policy_set_params(policy, &p) == RESET_OK);
    REQUIRE(reset_policy_sample(policy, z.data(), z.size(), &token, nullptr) == RESET_OK);
    CHECK(token == 0);
    reset_policy_free(policy);
}

TEST_CASE("C API: the standalone policy decides, samples, accepts and resets") {
    reset_policy_params p;
    reset_policy_params_init(&p);
    p.kind = RESET_POLICY_RESET;
    p.preset = "Qwen3-8B";
    p.window = 2;
    const int32_t nl[] = {10};
    const int32_t dnl[] = {20, 21};
    reset_policy_options o;
    reset_policy_options_init(&o);
    o.newline_ids = nl;
    o.n_newline_ids = 1;
    o.double_newline_ids = dnl;
    o.n_double_newline_ids = 2;
    reset_policy *policy = nullptr;
    REQUIRE(reset_policy_create(&p, &o, &policy) == RESET_OK);
    std::vector<float> z(64, -std::numeric_limits<float>::infinity());
    z[0] = z[1] = 0.0f;  // H = ln 2 > τ0 = 0.5505: T_high
    reset_decision d;
    reset_decision_init(&d);
    REQUIRE(reset_policy_decide(policy, z.data(), z.size(), &d) == RESET_OK);
    CHECK(d.entropy == doctest::Approx(std::log(2.0)));
    CHECK(d.temperature == 1.0f);
    CHECK(d.threshold == doctest::Approx(0.5505f));
    CHECK(reset_policy_accept(policy, 21) == RESET_OK);
    z[1] = -std::numeric_limits<float>::infinity();  // H = 0 < τ0: T_low = 0.1
    int32_t token = -1;
    REQUIRE(reset_policy_sample(policy, z.data(), z.size(), &token, &d) == RESET_OK);
    CHECK(token == 0);
    CHECK(d.boundary == 1);
    CHECK(d.step_index == 1);
    CHECK(d.temperature == doctest::Approx(0.1f));
    CHECK(reset_policy_accept(policy, token) == RESET_OK);
    CHECK(reset_policy_reset(policy) == RESET_OK);
    REQUIRE(reset_policy_decide(policy, z.data(), z.size(), &d) == RESET_OK);
    CHECK(d.step_index == 0);

    // Parameters change without losing the state; errors leave it as it was.
    p.temperature = -1.0f;
    CHECK(reset_policy_set_params(policy, &p) == RESET_ERR_INVALID_ARGUMENT);
    CHECK(last_error() == "policy parameter temperature is -1 (must be finite and >= 0)");
    z[3] = std::numeric_limits<float>::quiet_NaN();
    CHECK(reset_policy_decide(policy, z.data(), z.size(), &d) == RESET_ERR_INVALID_ARGUMENT);
    CHECK(last_error() == "logits[3] is NaN (logits must be finite, or -inf for a masked token)");
    CHECK(reset_policy_decide(policy, z.data(), 0, &d) == RESET_ERR_INVALID_ARGUMENT);
    CHECK(reset_policy_accept(policy, -2) == RESET_ERR_OUT_OF_RANGE);
    reset_decision bad;
    std::memset(&bad, 0, sizeof bad);
    CHECK(reset_policy_decide(policy, z.data(), 3, &bad) == RESET_ERR_INVALID_ARGUMENT);
    CHECK(last_error().find("reset_decision_init") != std::string::npos);

    reset_policy_free(policy);
    CHECK(reset_policy_accept(policy, 1) == RESET_ERR_INVALID_HANDLE);
    CHECK(reset_policy_accept(nullptr, 1) == RESET_ERR_INVALID_ARGUMENT);
    reset_policy_free(nullptr);
}

TEST_CASE("C API: creation errors are clear and leave *out NULL") {
    reset_policy_params p;
    reset_policy_params_init(&p);
    reset_policy *policy = reinterpret_cast<reset_policy *>(0x1);
    p.kind = RESET_POLICY_RESET;
    CHECK(reset_policy_create(&p, nullptr, &policy) == RESET_ERR_UNSUPPORTED);
    CHECK(policy == nullptr);
    CHECK(last_error().find("params.preset") != std::string::npos);
    p.kind = RESET_POLICY_FIXED;
    p.top_p = 2.0f;
    CHECK(reset_policy_create(&p, nullptr, &policy) == RESET_ERR_INVALID_ARGUMENT);
    CHECK(last_error() == "policy parameter top_p is 2 (must be in (0, 1]; 1 = off)");
    reset_policy_params_init(&p);
    reset_policy_options o;
    reset_policy_options_init(&o);
    o.n_newline_ids = 3;
    CHECK(reset_policy_create(&p, &o, &policy) == RESET_ERR_INVALID_ARGUMENT);
    CHECK(last_error() == "options->newline_ids is NULL but its count is 3");
    p.struct_size = 0;
    CHECK(reset_policy_create(&p, nullptr, &policy) == RESET_ERR_INVALID_ARGUMENT);
    CHECK(last_error().find("params->struct_size is 0") != std::string::npos);
    CHECK(reset_policy_create(nullptr, nullptr, &policy) == RESET_ERR_INVALID_ARGUMENT);
}

TEST_CASE("a struct_size ending inside a pointer field is refused, not read as half a pointer") {
    // fuzz_policy found this: 52 of reset_policy_params' 64 bytes copied half of
    // the caller's preset pointer over the default NULL, and the library
    // strlen'ed the result (SIGSEGV).  Sizes at field ends stay readable.
    static const char name[] = "Qwen3-8B";
    reset_policy_params p;
    reset_policy_params_init(&p);
    p.kind = RESET_POLICY_RESET;
    p.preset = name;
    reset_policy *policy = nullptr;
    const uint32_t preset_at = offsetof(reset_policy_params, preset);
    for (uint32_t size = preset_at + 1; size < preset_at + sizeof(void *); ++size) {
        p.struct_size = size;
        CHECK(reset_policy_create(&p, nullptr, &policy) == RESET_ERR_INVALID_ARGUMENT);
        CHECK(policy == nullptr);
        CHECK(last_error().find("ends inside a pointer field") != std::string::npos);
    }
    p.struct_size = preset_at + sizeof(void *);  // an older layout that ended with preset: read
    REQUIRE(reset_policy_create(&p, nullptr, &policy) == RESET_OK);
    reset_policy_free(policy);

    reset_policy_options o;
    reset_policy_options_init(&o);
    o.struct_size = offsetof(reset_policy_options, double_newline_ids) + 4;
    CHECK(reset_policy_create(&p, &o, &policy) == RESET_ERR_INVALID_ARGUMENT);

    reset_step step;
    reset_step_init(&step, 1);
    step.text = "x";
    step.text_len = 1;
    step.struct_size = offsetof(reset_step, text) + 4;
    size_t length = 0;
    char line[512];
    CHECK(reset_step_to_json(&step, line, sizeof line, &length) == RESET_ERR_INVALID_ARGUMENT);
    step.struct_size = sizeof step + 16;  // a newer header's step: read up to what the library knows
    CHECK(reset_step_to_json(&step, line, sizeof line, &length) == RESET_OK);

    reset_model_options m;
    reset_model_options_init(&m);
    m.struct_size = offsetof(reset_model_options, progress) + 2;
    reset_model *model = nullptr;
    CHECK(reset_model_load("/nonexistent", &m, &model) == RESET_ERR_INVALID_ARGUMENT);
}

TEST_CASE("_init_sized fills exactly the caller's struct; the unsized symbols fill 0.2's") {
    // A newer caller's larger struct: the library's defaults, then zeros, struct_size = the caller's size.
    std::vector<unsigned char> bigger(sizeof(reset_policy_params) + 24 + 16, 0xA5);
    reset_policy_params_init_sized(reinterpret_cast<reset_policy_params *>(bigger.data()), bigger.size() - 16);
    reset_policy_params expected;
    reset_policy_params_init(&expected);
    reset_policy_params got;
    std::memcpy(&got, bigger.data(), sizeof got);
    CHECK(got.struct_size == bigger.size() - 16);
    CHECK(got.temperature == expected.temperature);
    CHECK(got.window == expected.window);
    CHECK(std::all_of(bigger.begin() + sizeof got, bigger.end() - 16, [](unsigned char b) { return b == 0; }));
    CHECK(std::all_of(bigger.end() - 16, bigger.end(), [](unsigned char b) { return b == 0xA5; }));
    // Too small to hold struct_size: nothing written.
    unsigned char tiny[4] = {1, 2, 3, 4};
    reset_decision_init_sized(reinterpret_cast<reset_decision *>(tiny), 3);
    CHECK((tiny[0] == 1 && tiny[3] == 4));
    // A step array at the caller's stride; the legacy symbol (parenthesised: not the header's macro)
    // gives each entry 0.2's size, which reset_decode_step then keeps to (tests/abi/older_header.c runs
    // a real 0.2 program).
    constexpr size_t kOld = offsetof(reset_step, logprob);
    std::vector<unsigned char> old_steps(3 * kOld + 16, 0xA5);
    (reset_step_init)(reinterpret_cast<reset_step *>(old_steps.data()), 3);
    for (size_t i = 0; i < 3; ++i) {
        reset_step entry;
        std::memcpy(&entry, old_steps.data() + i * kOld, kOld);
        CHECK(entry.struct_size == kOld);
        CHECK(entry.token == -1);
    }
    CHECK(std::all_of(old_steps.end() - 16, old_steps.end(), [](unsigned char b) { return b == 0xA5; }));
    unsigned char old_decision[offsetof(reset_decision, logprob) + 8];
    std::memset(old_decision, 0xA5, sizeof old_decision);
    (reset_decision_init)(reinterpret_cast<reset_decision *>(old_decision));
    CHECK(old_decision[offsetof(reset_decision, logprob)] == 0xA5);
    // The header's macro passes the full size.
    reset_decision now;
    reset_decision_init(&now);
    CHECK(now.struct_size == sizeof now);
    CHECK(std::isnan(now.logprob));
}

TEST_CASE("traces: one JSON line per token, escaped, snprintf idiom") {
    TraceRecord r;
    r.sequence = 1;
    r.token = 271;
    r.entropy = 0.5f;
    r.temperature = 1.0f;
    r.step_index = 3;
    r.boundary = true;
    r.has_end = true;
    r.text = "a\"\n\xff";
    r.text_len = 4;
    CHECK(trace_line(r) ==
          "{\"sequence\":1,\"token\":271,\"entropy\":0.5,\"step_entropy\":0,\"global_mean\":0,\"threshold\":0,"
          "\"temperature\":1,\"step_index\":3,\"boundary\":true,\"uncertain\":false,\"end\":false,"
          "\"text\":\"a\\\"\\n\xEF\xBF\xBD\"}\n");
    reset_decision d;
    reset_decision_init(&d);
    d.entropy = std::numeric_limits<float>::infinity();
    size_t length = 0;
    char small[8];
    CHECK(reset_decision_to_json(&d, 0, 5, small, sizeof small, &length) == RESET_ERR_BUFFER_TOO_SMALL);
    std::vector<char> buffer(length + 1);
    REQUIRE(reset_decision_to_json(&d, 0, 5, buffer.data(), buffer.size(), &length) == RESET_OK);
    CHECK(std::string(buffer.data()).find("\"entropy\":null") != std::string::npos);
    CHECK(std::strlen(buffer.data()) == length);
}

TEST_CASE("percentile tables interpolate linearly between order statistics") {
    std::vector<float> e = {5.0f, 1.0f, 4.0f, 2.0f, 3.0f};
    const PercentileTable t = percentile_table(e, 80.0f);
    CHECK(t.value == doctest::Approx(4.2));  // position 0.8 * 4 = 3.2
    CHECK(t.percentiles[0] == 1.0f);
    CHECK(t.percentiles[50] == 3.0f);
    CHECK(t.percentiles[100] == 5.0f);
    CHECK(t.mean == doctest::Approx(3.0));
    reset_calibration_result out;
    reset_calibration_result_init(&out);
    const float values[] = {0.1f, 0.2f};
    REQUIRE(reset_entropy_percentiles(values, 2, 50.0f, &out) == RESET_OK);
    CHECK(out.tau0 == doctest::Approx(0.15));
    CHECK(out.n_tokens == 2);
    CHECK(reset_entropy_percentiles(values, 2, 101.0f, &out) == RESET_ERR_INVALID_ARGUMENT);
    CHECK(reset_entropy_percentiles(values, 0, 80.0f, &out) == RESET_ERR_INVALID_ARGUMENT);
}

TEST_CASE("processed-score entropy is that of the tempered, truncated distribution") {
    const float z[4] = {0.0f, 0.0f, -100.0f, -100.0f};
    CHECK(processed_entropy(z, 4, 0.6f, 0, 1.0f, 0.0f) == doctest::Approx(std::log(2.0)).epsilon(1e-6));
    CHECK(processed_entropy(z, 4, 0.6f, 1, 1.0f, 0.0f) == 0.0f);
    CHECK(processed_entropy(z, 4, 0.0f, 0, 1.0f, 0.0f) == 0.0f);
    const float y[3] = {1.0f, 0.0f, -1.0f};
    // T = 2, no truncation: softmax(0.5, 0, -0.5).
    double w[3] = {std::exp(0.0), std::exp(-0.5), std::exp(-1.0)}, s = w[0] + w[1] + w[2], h = 0.0;
    for (double v : w) h -= v / s * std::log(v / s);
    CHECK(processed_entropy(y, 3, 2.0f, 0, 1.0f, 0.0f) == doctest::Approx(h).epsilon(1e-6));
}

TEST_CASE("calibration and the model-aware policy on a fixture model") {
    const std::string path = std::string(RESET_SOURCE_DIR) + "/tests/fixtures/models/llama3-scaled";
    reset_model *model = nullptr;
    if (reset_model_load(path.c_str(), nullptr, &model) != RESET_OK) {
        MESSAGE("fixture model not loadable (", last_error(), "): calibration test not run");
        return;
    }
    reset_model_info info;
    reset_model_info_init(&info);
    REQUIRE(reset_model_get_info(model, &info) == RESET_OK);
    const int32_t a[] = {1, 2, 3}, b[] = {4, 5};
    const int32_t *prompts[] = {a, b};
    const size_t lengths[] = {3, 2};
    reset_calibration_options o;
    reset_calibration_options_init(&o);
    o.max_new_tokens = 6;
    reset_calibration_result r1, r2, processed;
    reset_calibration_result_init(&r1);
    reset_calibration_result_init(&r2);
    reset_calibration_result_init(&processed);
    REQUIRE_MESSAGE(reset_calibrate(model, prompts, lengths, 2, &o, &r1) == RESET_OK, last_error());
    REQUIRE(reset_calibrate(model, prompts, lengths, 2, &o, &r2) == RESET_OK);
    CHECK(r1.n_prompts == 2);
    CHECK(r1.n_tokens >= 2);
    CHECK(r1.n_tokens <= 12);
    CHECK(r1.tau0 == r2.tau0);  // seeded: the same run twice
    CHECK(r1.tau0 == r1.percentiles[80]);
    for (int p = 1; p <= 100; ++p) CHECK(r1.percentiles[p] >= r1.percentiles[p - 1]);
    o.processed_scores = 1;
    REQUIRE(reset_calibrate(model, prompts, lengths, 2, &o, &processed) == RESET_OK);
    CHECK(processed.n_tokens == r1.n_tokens);
    CHECK(processed.mean != r1.mean);  // T = 0.6 and top-p 0.95 sharpen the distribution
    o.temperature = 0.0f;
    CHECK(reset_calibrate(model, prompts, lengths, 2, &o, &r1) == RESET_ERR_INVALID_ARGUMENT);
    CHECK(last_error().find("options->temperature is 0") != std::string::npos);

    // The model-aware policy: ReSET needs thresholds this fixture's shapes do not give.
    reset_policy_params p;
    reset_policy_params_init(&p);
    p.kind = RESET_POLICY_RESET;
    reset_policy *policy = nullptr;
    CHECK(reset_policy_create_for_model(model, &p, nullptr, &policy) == RESET_ERR_UNSUPPORTED);
    p.t_low = 0.1f;
    p.tau0 = 0.5f;
    const int32_t nl[] = {10};
    reset_policy_options po;
    reset_policy_options_init(&po);
    po.newline_ids = nl;
    po.n_newline_ids = 1;
    REQUIRE(reset_policy_create_for_model(model, &p, &po, &policy) == RESET_OK);
    reset_policy_free(policy);
    reset_model_free(model);
}

TEST_CASE("top_logprobs: the n most likely tokens of the raw row in the rule's order, logprobs as the sampler's") {
    // A row with ties (equal logits must come in id order), -0 beside +0 (equal logits), -inf entries and
    // a spread of values; the reference sorts the whole row by (logit descending, id ascending) with
    // std::sort, independently of the heap under test.
    std::mt19937 rng(2027);
    std::normal_distribution<float> normal(0.0f, 2.0f);
    const int32_t vocab = 3000;
    std::vector<float> z(static_cast<size_t>(vocab));
    for (float &v : z) v = std::round(normal(rng) * 4.0f) / 4.0f;  // quarter steps: many ties
    z[7] = -0.0f;
    z[3] = 0.0f;
    z[11] = 9.0f;
    z[2999] = 9.0f;  // tied with 11 at the top: 11 first
    for (int32_t i = 100; i < 110; ++i) z[size_t(i)] = -INFINITY;
    std::vector<int32_t> order(static_cast<size_t>(vocab));
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
        const float za = z[size_t(a)], zb = z[size_t(b)];
        return za != zb ? za > zb : a < b;
    });
    SequenceSampler s;
    s.set_policy(fixed(1.0f, 0, 1.0f, 0.0f, 9), true);
    SamplerSignals sig;
    const int32_t token = s.sample(z.data(), vocab, 0, &sig);
    for (int32_t n : {0, 1, 5, 20}) {
        std::vector<reset_token_logprob> out(size_t(std::max(n, 1)), reset_token_logprob{-7, 1.0f});
        REQUIRE(top_logprobs(z.data(), vocab, n, sig.raw_max, sig.log_sum_exp, out.data()) == n);
        for (int32_t i = 0; i < n; ++i) {
            INFO("n ", n, " entry ", i);
            CHECK(out[size_t(i)].token == order[size_t(i)]);
            // Tolerance: the by-hand log-softmax sums in another order in double; the entry is rounded to FP32.
            CHECK(out[size_t(i)].logprob ==
                  doctest::Approx(log_softmax_by_hand(z, out[size_t(i)].token)).epsilon(1e-6));
            if (out[size_t(i)].token == token) CHECK(out[size_t(i)].logprob == sig.logprob);  // bit for bit
        }
        if (n == 0) CHECK(out[0].token == -7);  // nothing written
    }
    // The chosen token, forced into the top: its entry is the step's logprob exactly.
    SequenceSampler g;
    g.set_policy(fixed(0.0f, 0, 1.0f, 0.0f, 1), true);
    const int32_t argmax = g.sample(z.data(), vocab, 0, &sig);
    CHECK(argmax == 11);
    reset_token_logprob first{};
    REQUIRE(top_logprobs(z.data(), vocab, 1, sig.raw_max, sig.log_sum_exp, &first) == 1);
    CHECK(first.token == 11);
    CHECK(first.logprob == sig.logprob);
    // -0 and +0 are one logit: id 3 before id 7 wherever they fall.
    const auto pos3 = std::find(order.begin(), order.end(), 3), pos7 = std::find(order.begin(), order.end(), 7);
    CHECK(pos3 < pos7);
    // More than the vocabulary: every token once, the -inf ones last with logprob -inf, in id order.
    const std::vector<float> tiny = {1.0f, -INFINITY, 1.0f, 0.5f};
    std::vector<reset_token_logprob> all(20);
    REQUIRE(top_logprobs(tiny.data(), 4, 20, 1.0f, std::log(2.0 + std::exp(-0.5)), all.data()) == 4);
    CHECK(all[0].token == 0);
    CHECK(all[1].token == 2);
    CHECK(all[2].token == 3);
    CHECK(all[3].token == 1);
    CHECK(all[3].logprob == -INFINITY);
    CHECK(all[0].logprob == doctest::Approx(log_softmax_by_hand(tiny, 0)).epsilon(1e-6));

    // The trace writes them after "logprob" (-inf as null), and refuses a count out of range.
    reset_step step;
    reset_step_init(&step, 1);
    step.token = 0;
    step.logprob = all[0].logprob;
    step.top_logprob_count = 4;
    step.top_logprobs = all.data();
    char line[1024];
    size_t length = 0;
    REQUIRE(reset_step_to_json(&step, line, sizeof line, &length) == RESET_OK);
    const std::string json = line;
    CHECK(json.find(",\"top_logprobs\":[{\"token\":0,\"logprob\":") != std::string::npos);
    CHECK(json.find("{\"token\":1,\"logprob\":null}],\"entropy\":") != std::string::npos);
    step.top_logprob_count = 21;
    CHECK(reset_step_to_json(&step, line, sizeof line, &length) == RESET_ERR_INVALID_ARGUMENT);
    step.top_logprob_count = 2;
    step.top_logprobs = nullptr;
    CHECK(reset_step_to_json(&step, line, sizeof line, &length) == RESET_ERR_INVALID_ARGUMENT);
    step.top_logprob_count = 0;
    REQUIRE(reset_step_to_json(&step, line, sizeof line, &length) == RESET_OK);
    CHECK(std::string(line).find("top_logprobs") == std::string::npos);
    // A 0.3 caller's struct (80 bytes on LP64, where 0.4's fields begin) has no such fields: they are not
    // read.
    if (sizeof(void *) == 8) CHECK(offsetof(reset_step, top_logprobs) == 80);  // 0.3's sizeof(reset_step)
    step.top_logprob_count = 99;
    step.struct_size = offsetof(reset_step, top_logprobs);
    REQUIRE(reset_step_to_json(&step, line, sizeof line, &length) == RESET_OK);
    CHECK(std::string(line).find("top_logprobs") == std::string::npos);
    // One that ends inside the pointer is refused (it cannot have initialised it).
    step.struct_size = offsetof(reset_step, top_logprobs) + 4;
    CHECK(reset_step_to_json(&step, line, sizeof line, &length) == RESET_ERR_INVALID_ARGUMENT);
}
