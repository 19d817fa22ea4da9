// sampler.h — the sampler takes one sequence's raw logits and returns a
// token: entropy → ReSET temperature → truncation → Philox draw.
//
// One SequenceSampler per sequence.  It holds the ReSET step state
// (rules/reset_rule.h), the last two accepted tokens for the boundary test,
// and the count of accepted tokens that keys the draws.  Sessions and the
// standalone reset_policy both use it, so they behave identically.
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "rules/reset_rule.h"
#include "sampling/entropy.h"
#include "sampling/logit_bias.h"
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
    // log p(token) under softmax(raw logits) (rules/logprob.h); set by
    // sample() for the token it returns, NaN from decide(), which returns none.
    float logprob = NAN;
    // The two numbers logprob came from (rules/logprob.h), so that
    // reset_step.top_logprobs uses the same ones; set by sample().
    float raw_max = 0.0f;
    double log_sum_exp = 0.0;
};

// An append-only list of tokens that copies of a sampler share: sessions
// copy their samplers at every call (a snapshot to roll back to), so copying
// must not copy a 32k-token context.  Each copy sees its first size()
// entries; a copy that appends where another already has takes its own list
// first.
class SharedTokens {
public:
    void append(const int32_t *ids, size_t n);
    void append(const SharedTokens &other) {
        if (other.length_ > 0) append(other.list_->data(), static_cast<size_t>(other.length_));
    }
    void clear();
    // Keep the first n (<= size()) entries.  Copies that see more keep them:
    // the next append takes a list of its own, as after another copy's append.
    void truncate(int64_t n) { length_ = n < length_ ? n : length_; }
    int64_t size() const { return length_; }
    int32_t operator[](int64_t i) const { return (*list_)[static_cast<size_t>(i)]; }

private:
    std::shared_ptr<std::vector<int32_t>> list_;
    int64_t length_ = 0;
};

class SequenceSampler {
public:
    explicit SequenceSampler(DelimiterSets delimiters = {});

    // Apply a policy.  The step state (S, W, sum, n, step index) and the
    // generation's tokens (the penalties' counts) survive, so a policy may
    // change between steps, unless reset_state is true; the last accepted
    // tokens and the draw counter always survive.  A new window size
    // keeps the most recent min(|W|, new w) entropies.  A decision not yet
    // accepted stays counted.
    void set_policy(const Policy &policy, bool reset_state);
    const Policy &policy() const { return policy_; }

    // reset_set_logit_bias: added to the listed logits after the penalties
    // (null or empty: none).  Shared, not copied, by the sampler's copies.
    void set_logit_bias(std::shared_ptr<const LogitBias> bias);
    bool biased() const { return bias_ && !bias_->empty(); }

    // Spec steps 1-7: the temperature for the next token from its raw logits
    // (not modified), with the state updated by H_t.  Deciding again before
    // accept() first undoes the previous decision's update, so a decision may
    // be repeated (e.g. a retried decode step) without counting H_t twice.
    // Throws reset::Error(RESET_ERR_INVALID_ARGUMENT) for vocab < 1, a NaN or
    // +inf logit, or logits that are all -inf.
    SamplerSignals decide(const float *logits, int32_t vocab);

    // decide(), then spec step 8: the token drawn under the policy's
    // truncation with Philox keyed by (policy seed, sequence, accepted-token
    // count), from the logits lowered by the policy's penalties
    // (rules/penalty.h) for the tokens of the current generation; greedy
    // takes the argmax of those, plus the logit bias.  Fills *signals (may be
    // null).  Throws as decide() does, and also RESET_ERR_OUT_OF_RANGE when
    // the logits do not reach a token the bias lists and
    // RESET_ERR_INVALID_ARGUMENT when the bias leaves nothing to draw; a
    // failing call changes nothing.
    int32_t sample(const float *logits, int32_t vocab, int32_t sequence, SamplerSignals *signals);

    // Record the token the sequence actually took (normally the sampled one;
    // a caller may force another).  It feeds the boundary test, the draw
    // counter and the generation's tokens, and commits the last decision.
    void accept(int32_t token);

    // Forget the ReSET state, the accepted tokens, their count, the
    // generation's tokens and the context's.
    void clear();

    // Tokens of the sequence's context the sampler did not accept itself
    // (a prompt, a user's turn): the repetition penalty lowers them too.
    void add_context(const int32_t *ids, size_t n);

    int64_t accepted() const { return accepted_; }
    const rule::StepState &state() const { return state_; }

    // The tokens accepted in the current generation, in order (the
    // penalties count them): since construction, clear() or a policy
    // applied with reset_state.
    int64_t generation_length() const { return generation_.size(); }
    // The rest of the sequence's context: add_context()'s tokens and those
    // accepted before the current generation began.
    int64_t context_length() const { return context_.size(); }
    // A value that changes whenever the generation's or the context's tokens
    // change by anything but take_carried(), unique over the process: a device
    // sampler that keeps its own counts (kernels/sampling.h) uploads them
    // again when this differs from the value it last saw.  Restoring a
    // copy of the sampler (a session's rollback) brings back that copy's
    // value, never the current one.
    uint64_t generation_version() const { return generation_version_; }
    // counts[t] = how often token t (< vocab) was generated in the current
    // generation, plus rule::kInContext if t is in the rest of the context
    // (rules/penalty.h); counts must have vocab zeroed entries.
    void add_penalty_counts(int32_t *counts, int32_t vocab) const;

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
    // Take back the state after the device accepted a token (carried's
    // last_token, which the device also counted for the penalties).
    // ring.size() must equal policy().window (throws RESET_ERR_INTERNAL
    // otherwise).  Gives the sampler a new generation_version(), which the
    // caller records as the device's.
    void take_carried(const Carried &carried);

    // A sequence's sampler state as a sequence file keeps it
    // (engine/sequence_file.h): what carried() gives, plus the generation's
    // and the rest of the context's tokens.  A decision not yet accepted is
    // left out (a session never leaves one pending between calls).
    struct Saved {
        Carried carried;  // carried.ring: the window of the policy it was saved under
        std::vector<int32_t> generation;
        std::vector<int32_t> context;
    };
    Saved saved() const;
    // Take a saved state under this sampler's policy, whose window may differ
    // from the saved one's: the most recent entropies are kept, as
    // set_policy does.  The caller has checked the state (window_count <=
    // ring size, window_next inside it); gives a new generation_version().
    void restore(const Saved &saved);

private:
    // Resize the window ring to new_w slots keeping the most recent
    // min(|W|, new_w) entropies, oldest first.
    void resize_window(int32_t new_w);
    bool in_set(const std::vector<int32_t> &set, int32_t token) const;
    void undo_pending();
    SamplerSignals decide_with_stats(const float *logits, int32_t vocab, LogitStats *stats);
    // Steps 1 and 3-7 for a token of entropy H_t, replacing a pending decision.
    SamplerSignals decide_entropy(float entropy);
    // The logits lowered by the penalties (when `penalties`) and moved by the
    // logit bias into penalized_, with their max and argmax (the lowest id
    // among equals, as logit_stats).
    const float *penalize(const float *logits, int32_t vocab, bool penalties, float *max_logit, int32_t *argmax);
    void append_generation(int32_t token);
    void clear_generation();

    DelimiterSets delimiters_;  // each sorted, for binary search
    Policy policy_;
    std::shared_ptr<const LogitBias> bias_;
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
    // The generation's tokens, and the rest of the context (the two never
    // share an occurrence: clearing the generation moves its tokens over).
    SharedTokens generation_;
    SharedTokens context_;
    uint64_t generation_version_ = 0;
    // Scratch of penalize(), a vocabulary each: a copy of the sampler (a
    // session's snapshot at every call) starts without it rather than
    // copying 1.2 MB it will never read.
    template <typename T>
    struct Scratch : std::vector<T> {
        Scratch() = default;
        Scratch(const Scratch &) : std::vector<T>() {}
        Scratch &operator=(const Scratch &) {
            this->clear();
            return *this;
        }
    };
    Scratch<float> penalized_;
    Scratch<int32_t> counts_;  // zero between calls
};

}  // namespace reset
