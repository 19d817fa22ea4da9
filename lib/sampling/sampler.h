// sampler.h — the sampler takes one sequence's raw logits and returns a
// token: entropy → ReSET temperature → truncation → Philox draw.
//
// One SequenceSampler per sequence.  It holds the ReSET step state
// (rules/reset_rule.h), the last two accepted tokens for the boundary test,
// and the count of accepted tokens that keys the draws.  Sessions and the
// standalone reset_policy both use it, so they behave identically.
#pragma once

#include <cstdint>
#include <vector>

#include "rules/reset_rule.h"
#include "sampling/policy.h"
#include "sampling/truncation.h"

namespace reset {

// The delimiter id sets of the spec's "Step boundaries": NL = ids whose text
// is exactly "\n", DNL = ids whose text contains "\n\n".
struct DelimiterSets {
    std::vector<int32_t> newline;
    std::vector<int32_t> double_newline;
};

// The signals behind one decision (reset_step / reset_decision fields).
struct SamplerSignals {
    float entropy = 0.0f;       // H_t, nats, of softmax(raw logits)
    float step_entropy = 0.0f;  // Ĥ (0 for GREEDY/FIXED)
    float global_mean = 0.0f;   // H̄
    float threshold = 0.0f;     // τ (0 for GREEDY/FIXED)
    float temperature = 0.0f;   // applied; 0 when the draw was greedy
    int32_t step_index = 0;     // reasoning step of this token, 0 first
    bool boundary = false;      // a step boundary was crossed just before this token
    bool uncertain = false;     // Ĥ > H̄ (RESET only)
};

class SequenceSampler {
public:
    explicit SequenceSampler(DelimiterSets delimiters = {});

    // Apply a policy.  The step state (S, W, sum, n, step index) survives, so
    // a policy may change between steps, unless reset_state is true; the
    // accepted tokens and the draw counter always survive.  A new window size
    // keeps the most recent min(|W|, new w) entropies.  A decision not yet
    // accepted stays counted.
    void set_policy(const Policy &policy, bool reset_state);
    const Policy &policy() const { return policy_; }

    // Spec steps 1-7: the temperature for the next token from its raw logits
    // (not modified), with the state updated by H_t.  Deciding again before
    // accept() first undoes the previous decision's update, so a decision may
    // be repeated (e.g. a retried decode step) without counting H_t twice.
    // Throws reset::Error(RESET_ERR_INVALID_ARGUMENT) for vocab < 1, a NaN or
    // +inf logit, or logits that are all -inf.
    SamplerSignals decide(const float *logits, int32_t vocab);

    // decide(), then spec step 8: the token drawn under the policy's
    // truncation with Philox keyed by (policy seed, sequence, accepted-token
    // count).  Fills *signals (may be null).
    int32_t sample(const float *logits, int32_t vocab, int32_t sequence, SamplerSignals *signals);

    // Record the token the sequence actually took (normally the sampled one;
    // a caller may force another).  It feeds the boundary test and the draw
    // counter, and commits the last decision.
    void accept(int32_t token);

    // Forget the ReSET state, the accepted tokens and their count.
    void clear();

    int64_t accepted() const { return accepted_; }
    const rule::StepState &state() const { return state_; }

    // What a device sampler (kernels/sampling.h) carries between tokens: the
    // CUDA engine hands it to the device before a step and takes it back
    // after, so this object stays the one place a session's sampler lives
    // (snapshots, policy changes and rollback work the same on every backend).
    struct Carried {
        rule::StepState state;
        std::vector<float> ring;  // policy().window slots, as rule::observe indexes them
        int64_t accepted = 0;
        int32_t last_token = -1;
        int32_t prev_token = -1;
    };
    Carried carried() const;
    // Take back the state after the device accepted a token.  ring.size()
    // must equal policy().window (throws RESET_ERR_INTERNAL otherwise).
    void take_carried(const Carried &carried);

private:
    bool in_set(const std::vector<int32_t> &set, int32_t token) const;
    void undo_pending();
    SamplerSignals decide_with_stats(const float *logits, int32_t vocab, float *max_logit, int32_t *argmax);
    // Steps 1 and 3-7 for a token of entropy H_t, replacing a pending decision.
    SamplerSignals decide_entropy(float entropy);

    DelimiterSets delimiters_;  // each sorted, for binary search
    Policy policy_;
    rule::StepState state_;
    std::vector<float> ring_;   // W, policy_.window slots
    int64_t accepted_ = 0;
    int32_t last_token_ = -1;
    int32_t prev_token_ = -1;
    // The state before the last decide(), while it is not yet accepted.
    bool pending_ = false;
    rule::StepState saved_state_;
    float saved_slot_ = 0.0f;
    Candidates candidates_;     // scratch of the draw, reused across tokens
};

}  // namespace reset
