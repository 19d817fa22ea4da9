// session_steps.h — what the tests of sequence editing (test_truncate.cpp,
// test_copy_sequence.cpp) share: a session whose sampler uses every piece of
// its state, and decode steps recorded as far as they must match bit for bit.
#pragma once

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "reset.h"
#include "test_support.h"

namespace session_steps {

using namespace test_support;

constexpr int32_t kVocab = 512;  // tests/fixtures/chat-model
const int32_t kPrompt[] = {10, 11, 12, 13, 14, 15};
constexpr int32_t kPromptLength = 6;

// ReSET with every piece of sampler state in play: the step estimator's
// window, the repetition penalty's context and the presence penalty's
// generation counts.  ignore_eos keeps every generation at its full length.
inline reset_session *reset_session_for(reset_model *model, int32_t sequences, uint64_t seed) {
    reset_session *session = create_session(model, sequences, 256);
    reset_policy_params p;
    reset_policy_params_init(&p);
    p.kind = RESET_POLICY_RESET;
    p.t_high = 1.5f;
    p.t_low = 0.5f;
    p.tau0 = 5.5f;  // near the fixture's token entropies (ln 512 = 6.2 at most): both temperatures occur
    p.window = 4;
    p.seed = seed;
    p.repetition_penalty = 1.3f;
    p.presence_penalty = 0.4f;
    REQUIRE(reset_set_policy(session, &p) == RESET_OK);
    reset_stop_options stop;
    reset_stop_options_init(&stop);
    stop.ignore_eos = 1;
    REQUIRE(reset_set_stop(session, &stop) == RESET_OK);
    return session;
}

// One step of one sequence, as much of it as must match bit for bit.
struct Step {
    int32_t token = -1;
    std::string text;
    float entropy = 0, step_entropy = 0, global_mean = 0, temperature = 0, logprob = 0;
    int32_t step_index = 0, boundary = 0;
    std::vector<float> logits;  // the sequence's logits after the step

    bool operator==(const Step &o) const {
        auto same = [](float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; };
        return token == o.token && text == o.text && same(entropy, o.entropy) &&
               same(step_entropy, o.step_entropy) && same(global_mean, o.global_mean) &&
               same(temperature, o.temperature) && same(logprob, o.logprob) && step_index == o.step_index &&
               boundary == o.boundary && logits.size() == o.logits.size() &&
               std::memcmp(logits.data(), o.logits.data(), logits.size() * sizeof(float)) == 0;
    }
};

// `steps` decode steps of every sequence: result[s][j] is sequence s's step j.
inline std::vector<std::vector<Step>> decode(reset_session *session, int32_t sequences, int steps) {
    std::vector<std::vector<Step>> out(static_cast<size_t>(sequences));
    for (int j = 0; j < steps; ++j) {
        std::vector<reset_step> r(static_cast<size_t>(sequences));
        reset_step_init(r.data(), r.size());
        const reset_status status = reset_decode_step(session, r.data(), r.size(), nullptr);
        INFO(reset_last_error());
        REQUIRE(status == RESET_OK);
        for (int32_t s = 0; s < sequences; ++s) {
            const reset_step &x = r[size_t(s)];
            REQUIRE(x.end_of_generation == 0);
            Step step;
            step.token = x.token;
            step.text.assign(x.text, x.text_len);
            step.entropy = x.entropy;
            step.step_entropy = x.step_entropy;
            step.global_mean = x.global_mean;
            step.temperature = x.temperature;
            step.logprob = x.logprob;
            step.step_index = x.step_index;
            step.boundary = x.boundary;
            step.logits.resize(kVocab);
            REQUIRE(reset_session_logits(session, s, step.logits.data(), kVocab) == RESET_OK);
            out[size_t(s)].push_back(std::move(step));
        }
    }
    return out;
}

// Sequence s's steps in `got` equal those of sequence want_of(s) in `want`, one by one.
template <typename WantOf>
void check_same_steps(const std::vector<std::vector<Step>> &got, const std::vector<std::vector<Step>> &want,
                      WantOf want_of) {
    for (size_t s = 0; s < got.size(); ++s) {
        const std::vector<Step> &reference = want[want_of(s)];
        REQUIRE(got[s].size() == reference.size());
        for (size_t j = 0; j < got[s].size(); ++j) {
            CAPTURE(s);
            CAPTURE(j);
            CHECK(got[s][j] == reference[j]);
        }
    }
}
inline void check_same_steps(const std::vector<std::vector<Step>> &got, const std::vector<std::vector<Step>> &want) {
    check_same_steps(got, want, [](size_t s) { return s; });
}

inline std::vector<int32_t> tokens_of(const reset_session *session, int32_t sequence) {
    size_t n = 0;
    const reset_status asked = reset_session_tokens(session, sequence, nullptr, 0, &n);
    REQUIRE((asked == RESET_OK || asked == RESET_ERR_BUFFER_TOO_SMALL));
    std::vector<int32_t> ids(n);
    size_t written = 0;
    REQUIRE(reset_session_tokens(session, sequence, ids.data(), ids.size(), &written) == RESET_OK);
    REQUIRE(written == n);
    CHECK(int32_t(n) == reset_session_length(session, sequence));
    return ids;
}

inline std::vector<int32_t> generated_tokens(const std::vector<Step> &steps) {
    std::vector<int32_t> ids;
    for (const Step &s : steps) ids.push_back(s.token);
    return ids;
}

inline std::vector<int32_t> concat(std::vector<int32_t> a, const std::vector<int32_t> &b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

}  // namespace session_steps
