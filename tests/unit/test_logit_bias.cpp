// The logit bias (reset_set_logit_bias): added to the listed logits after the
// penalties, before the draw; -inf bans a token.
//
// The reference is written here from reset.h's words, not from the library's
// sampler: each step's raw logits (reset_session_logits), the penalties'
// formula over the prompt and the tokens generated so far, plus the bias, and
// the argmax (the lowest id among equals) for greedy.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <vector>

#include "reset.h"
#include "test_support.h"

using namespace test_support;

namespace {

constexpr int32_t kVocab = 512;  // tests/fixtures/chat-model
const int32_t kPrompt[] = {10, 11, 12, 13};
constexpr int32_t kPromptLength = 4;

// The tests' policy: temperature 1 where it samples, seed 21, the penalties given.
reset_policy_params params_of(reset_policy_kind kind, float repetition, float presence) {
    reset_policy_params p;
    reset_policy_params_init(&p);
    p.kind = kind;
    p.temperature = 1.0f;
    p.seed = 21;
    p.repetition_penalty = repetition;
    p.presence_penalty = presence;
    return p;
}

reset_session *new_session(reset_model *model, int32_t sequences, reset_policy_kind kind, float repetition = 1.0f,
                           float presence = 0.0f) {
    reset_session *session = create_session(model, sequences, 512);
    const reset_policy_params p = params_of(kind, repetition, presence);
    REQUIRE(reset_set_policy(session, &p) == RESET_OK);
    reset_stop_options stop;
    reset_stop_options_init(&stop);
    stop.ignore_eos = 1;  // every step draws a token
    REQUIRE(reset_set_stop(session, &stop) == RESET_OK);
    return session;
}

std::vector<float> logits_of(reset_session *s, int32_t sequence) {
    std::vector<float> z(kVocab);
    REQUIRE(reset_session_logits(s, sequence, z.data(), z.size()) == RESET_OK);
    return z;
}

reset_step step_one(reset_session *s) {
    reset_step r;
    reset_step_init(&r, 1);
    const reset_status status = reset_decode_step(s, &r, 1, nullptr);
    INFO(reset_last_error());
    REQUIRE(status == RESET_OK);
    return r;
}

// reset.h's order: the repetition penalty over every token of the context, then the presence
// penalty over the tokens generated, then the bias; greedy takes the first maximum.
int32_t expected_greedy(std::vector<float> z, const std::vector<int32_t> &context, const std::vector<int32_t> &generated,
                        float repetition, float presence, const std::map<int32_t, float> &bias) {
    std::vector<bool> seen(kVocab, false), drawn(kVocab, false);
    for (int32_t t : context) seen[size_t(t)] = true;
    for (int32_t t : generated) seen[size_t(t)] = drawn[size_t(t)] = true;
    for (int32_t t = 0; t < kVocab; ++t) {
        float &v = z[size_t(t)];
        if (seen[size_t(t)] && repetition != 1.0f) v = v > 0.0f ? v / repetition : v * repetition;
        if (drawn[size_t(t)]) v = v - presence;
        const auto b = bias.find(t);
        if (b != bias.end()) v = v + b->second;
    }
    int32_t best = -1;
    for (int32_t t = 0; t < kVocab; ++t)
        if (z[size_t(t)] != -INFINITY && (best < 0 || z[size_t(t)] > z[size_t(best)])) best = t;
    return best;
}

// Sets a bias with reset_set_logit_bias (a session) or reset_policy_set_logit_bias (a policy).
template <typename Handle, typename Setter>
void set_bias_with(Setter setter, Handle *handle, const std::map<int32_t, float> &bias) {
    std::vector<reset_logit_bias> entries;
    for (const auto &[token, value] : bias) entries.push_back({token, value});
    const reset_status status = setter(handle, entries.data(), entries.size());
    INFO(reset_last_error());
    REQUIRE(status == RESET_OK);
}

void set_bias(reset_session *s, const std::map<int32_t, float> &bias) { set_bias_with(reset_set_logit_bias, s, bias); }

}  // namespace

TEST_CASE("greedy draws the argmax of the biased (and penalized) logits; bans are never drawn") {
    ModelGuard m{load_chat_model()};
    for (const bool penalties : {false, true}) {
        CAPTURE(penalties);
        const float repetition = penalties ? 1.3f : 1.0f, presence = penalties ? 0.5f : 0.0f;
        SessionGuard s{new_session(m.model, 1, RESET_POLICY_GREEDY, repetition, presence)};
        REQUIRE(reset_prefill(s.session, kPrompt, kPromptLength) == RESET_OK);
        // Ban the first raw argmax and the token after it, push one token up and one down.
        const std::vector<float> first = logits_of(s.session, 0);
        const int32_t top = int32_t(std::max_element(first.begin(), first.end()) - first.begin());
        std::map<int32_t, float> bias = {{top, -INFINITY}, {(top + 1) % kVocab, -INFINITY}, {77, 4.5f}, {200, -2.0f}};
        set_bias(s.session, bias);
        std::vector<int32_t> context(kPrompt, kPrompt + kPromptLength), generated;
        int moved = 0;  // steps where the bias chose another token than the raw argmax
        for (int j = 0; j < 40; ++j) {
            const std::vector<float> z = logits_of(s.session, 0);
            const int32_t want = expected_greedy(z, context, generated, repetition, presence, bias);
            const int32_t raw = int32_t(std::max_element(z.begin(), z.end()) - z.begin());
            const reset_step r = step_one(s.session);
            CAPTURE(j);
            CHECK(r.token == want);
            CHECK((r.token != top && r.token != (top + 1) % kVocab));
            moved += r.token != raw;
            // The signals still see the raw logits: the logprob of the token under softmax(z).
            double sum = 0;
            const float zmax = *std::max_element(z.begin(), z.end());
            for (float v : z) sum += std::exp(double(v) - zmax);
            CHECK(r.logprob == doctest::Approx(double(z[size_t(r.token)]) - zmax - std::log(sum)).epsilon(1e-5));
            generated.push_back(r.token);
        }
        CHECK(moved > 0);
    }
}

TEST_CASE("the bias comes after the repetition penalty") {
    ModelGuard m{load_chat_model()};
    constexpr float kRepetition = 2.0f;
    SessionGuard s{new_session(m.model, 1, RESET_POLICY_GREEDY, kRepetition)};
    REQUIRE(reset_prefill(s.session, kPrompt, kPromptLength) == RESET_OK);
    const std::vector<float> z = logits_of(s.session, 0);
    auto penalized = [&](int32_t t, float v) {
        const bool in_prompt = std::find(kPrompt, kPrompt + kPromptLength, t) != kPrompt + kPromptLength;
        return in_prompt ? (v > 0.0f ? v / kRepetition : v * kRepetition) : v;
    };
    float best_other = -INFINITY;
    for (int32_t t = 0; t < kVocab; ++t)
        if (t != kPrompt[0]) best_other = std::max(best_other, penalized(t, z[size_t(t)]));
    // A bias that makes the prompt token 10 the argmax by 0.5 when added after its penalty; added
    // before it, the penalty would halve it (or double the shortfall) and leave 10 below.
    const float bias = best_other + 0.5f - penalized(kPrompt[0], z[size_t(kPrompt[0])]);
    REQUIRE(std::fabs(bias) <= 100.0f);
    REQUIRE(penalized(kPrompt[0], z[size_t(kPrompt[0])] + bias) < best_other);
    set_bias(s.session, {{kPrompt[0], bias}});
    CHECK(step_one(s.session).token == kPrompt[0]);
}

TEST_CASE("sampled draws: a banned token never, a +100 token always; no bias draws as before") {
    ModelGuard m{load_chat_model()};
    SessionGuard plain{new_session(m.model, 4, RESET_POLICY_FIXED)};
    SessionGuard cleared{new_session(m.model, 4, RESET_POLICY_FIXED)};
    set_bias(cleared.session, {{5, 3.0f}});
    REQUIRE(reset_set_logit_bias(cleared.session, nullptr, 0) == RESET_OK);  // removed again
    SessionGuard banned{new_session(m.model, 4, RESET_POLICY_FIXED)};
    for (reset_session *s : {plain.session, cleared.session, banned.session})
        REQUIRE(reset_prefill(s, kPrompt, kPromptLength) == RESET_OK);
    // Ban the tokens the unbiased run draws most: none of them may appear.
    std::vector<reset_step> a(4), b(4), c(4);
    std::vector<int32_t> drawn;
    std::map<int32_t, int> frequency;
    for (int j = 0; j < 30; ++j) {
        reset_step_init(a.data(), 4);
        reset_step_init(b.data(), 4);
        REQUIRE(reset_decode_step(plain.session, a.data(), 4, nullptr) == RESET_OK);
        REQUIRE(reset_decode_step(cleared.session, b.data(), 4, nullptr) == RESET_OK);
        for (int k = 0; k < 4; ++k) {
            CHECK(a[size_t(k)].token == b[size_t(k)].token);
            ++frequency[a[size_t(k)].token];
        }
    }
    std::map<int32_t, float> bans;
    for (const auto &[token, n] : frequency)
        if (n >= 2) bans[token] = -INFINITY;
    REQUIRE(bans.size() >= 2);
    set_bias(banned.session, bans);
    for (int j = 0; j < 60; ++j) {
        reset_step_init(c.data(), 4);
        REQUIRE(reset_decode_step(banned.session, c.data(), 4, nullptr) == RESET_OK);
        for (int k = 0; k < 4; ++k) CHECK(bans.count(c[size_t(k)].token) == 0);
    }
    // +100 on one token: drawn at every step of every sequence (its probability is 1 - e^-90 or so).
    set_bias(banned.session, {{300, 100.0f}});
    for (int j = 0; j < 20; ++j) {
        reset_step_init(c.data(), 4);
        REQUIRE(reset_decode_step(banned.session, c.data(), 4, nullptr) == RESET_OK);
        for (int k = 0; k < 4; ++k) CHECK(c[size_t(k)].token == 300);
    }
}

TEST_CASE("reset_set_logit_bias refuses bad entries and keeps the bias in force; it outlives reset and set_policy") {
    ModelGuard m{load_chat_model()};
    SessionGuard s{new_session(m.model, 1, RESET_POLICY_GREEDY)};
    set_bias(s.session, {{42, 100.0f}});
    auto refused = [&](std::vector<reset_logit_bias> entries, reset_status want, const char *words) {
        CAPTURE(words);
        CHECK(reset_set_logit_bias(s.session, entries.data(), entries.size()) == want);
        CHECK(last_error().find(words) != std::string::npos);
    };
    refused({{1, NAN}}, RESET_ERR_INVALID_ARGUMENT, "entries[0].bias");
    refused({{1, 0.5f}, {2, INFINITY}}, RESET_ERR_INVALID_ARGUMENT, "entries[1].bias");
    refused({{1, 100.5f}}, RESET_ERR_INVALID_ARGUMENT, "outside [-100, 100]");
    refused({{1, -101.0f}}, RESET_ERR_INVALID_ARGUMENT, "outside [-100, 100]");
    refused({{7, 1.0f}, {3, 1.0f}, {7, -1.0f}}, RESET_ERR_INVALID_ARGUMENT, "token 7 is listed twice");
    refused({{kVocab, 1.0f}}, RESET_ERR_OUT_OF_RANGE, "outside the vocabulary");
    refused({{-1, 1.0f}}, RESET_ERR_OUT_OF_RANGE, "entries[0].token = -1 is outside the vocabulary [0, 512)");
    std::vector<reset_logit_bias> all;
    for (int32_t t = 0; t < kVocab; ++t) all.push_back({t, -INFINITY});
    refused(all, RESET_ERR_INVALID_ARGUMENT, "every token of the vocabulary is banned");
    std::vector<reset_logit_bias> many(RESET_MAX_LOGIT_BIAS + 1, {1, 1.0f});
    refused(many, RESET_ERR_INVALID_ARGUMENT, "RESET_MAX_LOGIT_BIAS");
    CHECK(reset_set_logit_bias(s.session, nullptr, 2) == RESET_ERR_INVALID_ARGUMENT);
    CHECK(reset_set_logit_bias(nullptr, nullptr, 0) == RESET_ERR_INVALID_ARGUMENT);
    // All but one banned is fine: that one is drawn.
    all.pop_back();
    REQUIRE(reset_set_logit_bias(s.session, all.data(), all.size()) == RESET_OK);
    REQUIRE(reset_prefill(s.session, kPrompt, kPromptLength) == RESET_OK);
    CHECK(step_one(s.session).token == kVocab - 1);

    set_bias(s.session, {{42, 100.0f}});
    for (const bool through_reset : {false, true}) {
        if (through_reset) REQUIRE(reset_session_reset(s.session) == RESET_OK);
        reset_policy_params p;
        reset_policy_params_init(&p);
        p.kind = RESET_POLICY_FIXED;
        p.temperature = 0.7f;
        REQUIRE(reset_set_policy(s.session, &p) == RESET_OK);
        REQUIRE(reset_prefill(s.session, kPrompt, kPromptLength) == RESET_OK);
        for (int j = 0; j < 5; ++j) CHECK(step_one(s.session).token == 42);  // the refusals kept it
    }
}

// --- The standalone policy (reset_policy_set_logit_bias, 0.7) ---------------

namespace {

reset_policy *policy_for(reset_model *model, reset_policy_kind kind, float repetition, float presence) {
    const reset_policy_params p = params_of(kind, repetition, presence);
    reset_policy *policy = nullptr;
    const reset_status status = model ? reset_policy_create_for_model(model, &p, nullptr, &policy)
                                      : reset_policy_create(&p, nullptr, &policy);
    INFO(reset_last_error());
    REQUIRE(status == RESET_OK);
    return policy;
}

struct PolicyGuard {
    reset_policy *policy = nullptr;
    ~PolicyGuard() { reset_policy_free(policy); }
};

void set_policy_bias(reset_policy *policy, const std::map<int32_t, float> &bias) {
    set_bias_with(reset_policy_set_logit_bias, policy, bias);
}

}  // namespace

TEST_CASE("the standalone policy's logit bias draws what a session's does") {
    // The session is the reference here: the session tests above check it against reset.h's formula.
    ModelGuard m{load_chat_model()};
    SessionGuard s{new_session(m.model, 1, RESET_POLICY_FIXED, 1.3f, 0.5f)};
    PolicyGuard p{policy_for(m.model, RESET_POLICY_FIXED, 1.3f, 0.5f)};
    REQUIRE(reset_prefill(s.session, kPrompt, kPromptLength) == RESET_OK);
    REQUIRE(reset_policy_add_context(p.policy, kPrompt, kPromptLength) == RESET_OK);
    const std::vector<float> first = logits_of(s.session, 0);
    const int32_t top = int32_t(std::max_element(first.begin(), first.end()) - first.begin());
    const std::map<int32_t, float> bias = {{top, -INFINITY}, {77, 6.0f}, {200, -2.0f}, {301, 5.0f}};
    set_bias(s.session, bias);
    set_policy_bias(p.policy, bias);
    int biased = 0;  // draws of a raised token: the bias is in play
    for (int j = 0; j < 40; ++j) {
        const std::vector<float> z = logits_of(s.session, 0);
        int32_t token = -1;
        reset_decision d;
        reset_decision_init(&d);
        REQUIRE(reset_policy_sample(p.policy, z.data(), z.size(), &token, &d) == RESET_OK);
        const reset_step r = step_one(s.session);
        CAPTURE(j);
        CHECK(token == r.token);
        CHECK(token != top);
        CHECK(d.logprob == r.logprob);  // the raw logits' log-probability, as the session reports it
        CHECK(d.entropy == r.entropy);
        biased += token == 77 || token == 301;
        REQUIRE(reset_policy_accept(p.policy, token) == RESET_OK);
    }
    CHECK(biased > 0);
}

TEST_CASE("reset_policy_set_logit_bias: checks, rows that do not reach it, and what it outlives") {
    ModelGuard m{load_chat_model()};
    // A policy without a model checks tokens against each row.
    // The twin receives only the calls that succeed: a refused one must leave no trace.
    PolicyGuard plain{policy_for(nullptr, RESET_POLICY_GREEDY, 1.0f, 0.0f)}, twin{policy_for(nullptr,
                                                                                            RESET_POLICY_GREEDY,
                                                                                            1.0f, 0.0f)};
    std::vector<float> row = {0.5f, 3.0f, 1.0f, -1.0f};
    int32_t token = -1;
    for (reset_policy *p : {plain.policy, twin.policy})
        set_policy_bias(p, {{1, -INFINITY}, {6, 1.0f}});  // no vocabulary to check 6 against yet
    CHECK(reset_policy_sample(plain.policy, row.data(), row.size(), &token, nullptr) == RESET_ERR_OUT_OF_RANGE);
    CHECK(last_error().find("token 6") != std::string::npos);
    row.resize(7, -2.0f);  // now the row reaches token 6 (-2 + 1 = -1)
    for (reset_policy *p : {plain.policy, twin.policy}) {
        REQUIRE(reset_policy_sample(p, row.data(), row.size(), &token, nullptr) == RESET_OK);
        CHECK(token == 2);  // 1 is banned: 2 (1.0) is the largest left
    }
    // Every entry that is not -inf banned: the caller's logits leave nothing to draw.
    std::vector<float> masked = {-INFINITY, 3.0f, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY};
    CHECK(reset_policy_sample(plain.policy, masked.data(), masked.size(), &token, nullptr) ==
          RESET_ERR_INVALID_ARGUMENT);
    // ... and leaves the policy as it was, the decision still pending included: the twin decides the same
    // afterwards (fuzz_policy found the refused row's entropy counted when the next token was accepted).
    for (reset_policy *p : {plain.policy, twin.policy}) {
        REQUIRE(reset_policy_accept(p, 3) == RESET_OK);
        REQUIRE(reset_policy_sample(p, row.data(), row.size(), &token, nullptr) == RESET_OK);
        REQUIRE(reset_policy_accept(p, token) == RESET_OK);
    }
    reset_decision after, twin_after;
    reset_decision_init(&after);
    reset_decision_init(&twin_after);
    REQUIRE(reset_policy_decide(plain.policy, row.data(), row.size(), &after) == RESET_OK);
    REQUIRE(reset_policy_decide(twin.policy, row.data(), row.size(), &twin_after) == RESET_OK);
    CHECK(std::memcmp(&after, &twin_after, sizeof after) == 0);
    // Refusals keep the bias in force.
    const reset_logit_bias nan_entry = {2, NAN}, negative = {-1, 1.0f};
    CHECK(reset_policy_set_logit_bias(plain.policy, &nan_entry, 1) == RESET_ERR_INVALID_ARGUMENT);
    CHECK(reset_policy_set_logit_bias(plain.policy, &negative, 1) == RESET_ERR_OUT_OF_RANGE);
    CHECK(last_error().find("entries[0].token = -1 is outside the vocabulary (a negative id)") != std::string::npos);
    CHECK(reset_policy_set_logit_bias(plain.policy, nullptr, 1) == RESET_ERR_INVALID_ARGUMENT);
    CHECK(reset_policy_set_logit_bias(nullptr, nullptr, 0) == RESET_ERR_INVALID_ARGUMENT);
    REQUIRE(reset_policy_sample(plain.policy, row.data(), row.size(), &token, nullptr) == RESET_OK);
    CHECK(token == 2);
    // It outlives reset_policy_reset and reset_policy_set_params; count 0 removes it.
    REQUIRE(reset_policy_reset(plain.policy) == RESET_OK);
    reset_policy_params params;
    reset_policy_params_init(&params);
    params.kind = RESET_POLICY_GREEDY;
    REQUIRE(reset_policy_set_params(plain.policy, &params) == RESET_OK);
    REQUIRE(reset_policy_sample(plain.policy, row.data(), row.size(), &token, nullptr) == RESET_OK);
    CHECK(token == 2);
    REQUIRE(reset_policy_set_logit_bias(plain.policy, nullptr, 0) == RESET_OK);
    REQUIRE(reset_policy_sample(plain.policy, row.data(), row.size(), &token, nullptr) == RESET_OK);
    CHECK(token == 1);

    // A model's policy checks tokens against the model's vocabulary at once.
    PolicyGuard model_policy{policy_for(m.model, RESET_POLICY_GREEDY, 1.0f, 0.0f)};
    const reset_logit_bias outside = {kVocab, 1.0f};
    CHECK(reset_policy_set_logit_bias(model_policy.policy, &outside, 1) == RESET_ERR_OUT_OF_RANGE);
    CHECK(last_error().find("outside the vocabulary [0, 512)") != std::string::npos);
    std::vector<reset_logit_bias> all;
    for (int32_t t = 0; t < kVocab; ++t) all.push_back({t, -INFINITY});
    CHECK(reset_policy_set_logit_bias(model_policy.policy, all.data(), all.size()) == RESET_ERR_INVALID_ARGUMENT);
}
