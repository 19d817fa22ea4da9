// sampler.cpp — one sequence's sampler: ReSET decision (rules/reset_rule.h)
// and the draw (spec step 8).
#include "sampling/sampler.h"

#include <algorithm>
#include <atomic>
#include <cmath>

#include "api/errors.h"
#include "rules/logprob.h"
#include "rules/penalty.h"
#include "rules/philox.h"
#include "sampling/entropy.h"

namespace reset {

namespace {

// Process-wide, so a version names one state of one sampler's generation:
// two samplers (or a sampler and its restored copy) never share one by accident.
uint64_t next_generation_version() {
    static std::atomic<uint64_t> next{1};
    return next.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

SequenceSampler::SequenceSampler(DelimiterSets delimiters) : delimiters_(std::move(delimiters)) {
    for (std::vector<int32_t> *set : {&delimiters_.newline, &delimiters_.double_newline}) {
        std::sort(set->begin(), set->end());
        set->erase(std::unique(set->begin(), set->end()), set->end());
    }
    rule::clear_state(state_);
    saved_state_ = state_;
    ring_.assign(static_cast<size_t>(policy_.window), 0.0f);
    generation_version_ = next_generation_version();
}

bool SequenceSampler::in_set(const std::vector<int32_t> &set, int32_t token) const {
    return std::binary_search(set.begin(), set.end(), token);
}

void SequenceSampler::set_policy(const Policy &policy, bool reset_state) {
    // A decision not yet accepted stays counted, once: the policy changes
    // between tokens, and the token that decision was for is on its way.  It
    // is taken back here and made again under the new policy (only its
    // entropy and the accepted tokens enter the state), so it stays pending:
    // deciding again before accepting still replaces it rather than counting
    // the entropy twice (reset.h, reset_policy_decide).
    const bool redo = pending_ && !reset_state;
    // observe() wrote the pending H_t into the slot undo_pending() restores.
    const float pending_entropy = pending_ ? ring_[static_cast<size_t>(saved_state_.window_next)] : 0.0f;
    undo_pending();
    if (reset_state) {
        rule::clear_state(state_);
        clear_generation();
    }
    resize_window(policy.window);
    policy_ = policy;
    if (redo) decide_entropy(pending_entropy);
}

void SequenceSampler::resize_window(int32_t new_w) {
    if (static_cast<size_t>(new_w) == ring_.size()) return;
    // Keep the most recent min(|W|, new w) entropies, oldest first.
    const int32_t old_w = static_cast<int32_t>(ring_.size());
    const int32_t keep = std::min(state_.window_count, new_w);
    std::vector<float> ring(static_cast<size_t>(new_w), 0.0f);
    int32_t slot = state_.window_next - keep;
    if (slot < 0) slot += old_w;
    for (int32_t i = 0; i < keep; ++i) {
        ring[static_cast<size_t>(i)] = ring_[static_cast<size_t>(slot)];
        slot = (slot + 1 == old_w) ? 0 : slot + 1;
    }
    ring_.swap(ring);
    state_.window_count = keep;
    state_.window_next = keep == new_w ? 0 : keep;
}

SequenceSampler::Saved SequenceSampler::saved() const {
    SequenceSampler committed = *this;
    committed.undo_pending();
    Saved s;
    s.carried = committed.carried();
    s.generation.resize(static_cast<size_t>(generation_.size()));
    for (size_t i = 0; i < s.generation.size(); ++i) s.generation[i] = generation_[static_cast<int64_t>(i)];
    s.context.resize(static_cast<size_t>(context_.size()));
    for (size_t i = 0; i < s.context.size(); ++i) s.context[i] = context_[static_cast<int64_t>(i)];
    return s;
}

void SequenceSampler::restore(const Saved &s) {
    pending_ = false;
    state_ = s.carried.state;
    ring_ = s.carried.ring;
    accepted_ = s.carried.accepted;
    last_token_ = s.carried.last_token;
    prev_token_ = s.carried.prev_token;
    generation_.clear();
    generation_.append(s.generation.data(), s.generation.size());
    context_.clear();
    context_.append(s.context.data(), s.context.size());
    resize_window(policy_.window);
    generation_version_ = next_generation_version();
}

SequenceSampler::Carried SequenceSampler::carried() const {
    Carried c;
    c.state = state_;
    c.ring = ring_;
    c.accepted = accepted_;
    c.last_token = last_token_;
    c.prev_token = prev_token_;
    return c;
}

void SequenceSampler::take_carried(const Carried &c) {
    if (c.ring.size() != ring_.size())
        fail(RESET_ERR_INTERNAL, "device sampler state has a window of ", c.ring.size(), " slots, the policy ",
             ring_.size());
    state_ = c.state;
    ring_ = c.ring;
    accepted_ = c.accepted;
    last_token_ = c.last_token;
    prev_token_ = c.prev_token;
    pending_ = false;
    append_generation(c.last_token);
}

void SharedTokens::append(const int32_t *ids, size_t n) {
    if (n == 0) return;
    if (!list_ || static_cast<int64_t>(list_->size()) != length_) {
        // Another copy has appended past our end (or there is no list yet): ours from here on.
        auto own = std::make_shared<std::vector<int32_t>>();
        if (list_) own->assign(list_->begin(), list_->begin() + length_);
        list_ = std::move(own);
    }
    list_->insert(list_->end(), ids, ids + n);
    length_ += static_cast<int64_t>(n);
}

void SharedTokens::clear() {
    list_.reset();
    length_ = 0;
}

void SequenceSampler::append_generation(int32_t token) {
    generation_.append(&token, 1);
    generation_version_ = next_generation_version();
}

void SequenceSampler::clear_generation() {
    // The generation's tokens stay in the sequence's context (the repetition penalty's).
    context_.append(generation_);
    generation_.clear();
    generation_version_ = next_generation_version();
}

void SequenceSampler::add_context(const int32_t *ids, size_t n) {
    context_.append(ids, n);
    generation_version_ = next_generation_version();
}

void SequenceSampler::add_penalty_counts(int32_t *counts, int32_t vocab) const {
    for (int64_t i = 0; i < generation_.size(); ++i) {
        const int32_t t = generation_[i];
        if (t >= 0 && t < vocab) counts[t] += 1;
    }
    for (int64_t i = 0; i < context_.size(); ++i) {
        const int32_t t = context_[i];
        if (t >= 0 && t < vocab) counts[t] |= rule::kInContext;
    }
}

void SequenceSampler::set_logit_bias(std::shared_ptr<const LogitBias> bias) { bias_ = std::move(bias); }

const float *SequenceSampler::penalize(const float *logits, int32_t vocab, bool penalties, float *max_logit,
                                       int32_t *argmax) {
    const size_t n = static_cast<size_t>(vocab);
    penalized_.assign(logits, logits + n);
    if (penalties) {
        if (counts_.size() < n) counts_.assign(n, 0);
        add_penalty_counts(counts_.data(), vocab);
        for (const SharedTokens *list : {&generation_, &context_}) {
            for (int64_t i = 0; i < list->size(); ++i) {
                const int32_t t = (*list)[i];
                if (t < 0 || t >= vocab) continue;
                const int32_t c = counts_[static_cast<size_t>(t)];
                if (c == 0) continue;  // done: each token once, and the scratch is zero again afterwards
                penalized_[static_cast<size_t>(t)] = rule::penalized_logit(
                    logits[t], c, policy_.repetition_penalty, policy_.presence_penalty, policy_.frequency_penalty);
                counts_[static_cast<size_t>(t)] = 0;
            }
        }
    }
    // The logit bias, after the penalties (reset.h): one FP32 addition, as the device makes it.
    if (bias_)  // sample() has checked that the row reaches every listed token
        for (size_t i = 0; i < bias_->tokens.size(); ++i) {
            float &z = penalized_[static_cast<size_t>(bias_->tokens[i])];
            z = z + bias_->biases[i];
        }
    // A penalty or a bias can move the maximum: the argmax again, the lowest
    // id among equal maxima, over the unmasked entries (logit_stats has
    // checked the row: finite or -inf, at least one finite, and penalties keep
    // that; a bias's bans may mask the rest, which the caller reports).
    float best = -INFINITY;
    int32_t best_id = -1;
    for (int32_t i = 0; i < vocab; ++i) {
        const float z = penalized_[static_cast<size_t>(i)];
        if (z != -INFINITY && (best_id < 0 || z > best)) {
            best = z;
            best_id = i;
        }
    }
    *max_logit = best;
    *argmax = best_id;
    return penalized_.data();
}

void SequenceSampler::undo_pending() {
    if (!pending_) return;
    // observe() wrote H_t into the slot saved_state_.window_next; put the old
    // value back so the ring is exactly as before.
    ring_[static_cast<size_t>(saved_state_.window_next)] = saved_slot_;
    state_ = saved_state_;
    pending_ = false;
}

SamplerSignals SequenceSampler::decide(const float *logits, int32_t vocab) {
    LogitStats stats;
    return decide_with_stats(logits, vocab, &stats);
}

SamplerSignals SequenceSampler::decide_with_stats(const float *logits, int32_t vocab, LogitStats *stats) {
    // Spec step 2 first: it is the only part that can fail (bad logits), and
    // it must fail before the state is touched.
    *stats = logit_stats(logits, vocab);
    return decide_entropy(stats->entropy);
}

SamplerSignals SequenceSampler::decide_entropy(float entropy) {
    undo_pending();
    saved_state_ = state_;
    saved_slot_ = ring_[static_cast<size_t>(state_.window_next)];
    pending_ = true;

    SamplerSignals signals;
    signals.entropy = entropy;
    // Step 1: the boundary test on the tokens accepted before this one.
    const bool in_nl_last = in_set(delimiters_.newline, last_token_);
    const bool in_dnl_last = in_set(delimiters_.double_newline, last_token_);
    const bool in_nl_prev = in_set(delimiters_.newline, prev_token_);
    signals.boundary = rule::crosses_boundary(accepted_, in_dnl_last, in_nl_last, in_nl_prev);
    if (signals.boundary) rule::begin_step(state_);
    signals.step_index = state_.step_index;

    // Steps 3-6.  They run for every kind, so the state stays current when
    // the caller switches policy between tokens.
    const int32_t w = static_cast<int32_t>(ring_.size());
    const bool gate = policy_.kind == RESET_POLICY_RESET;
    const rule::Decision d =
        rule::decide(state_, ring_.data(), w, entropy, gate, policy_.t_high, policy_.t_low, policy_.tau0);
    signals.global_mean = static_cast<float>(d.global_mean);
    float temperature = 0.0f;
    switch (policy_.kind) {
        case RESET_POLICY_GREEDY: temperature = 0.0f; break;
        case RESET_POLICY_FIXED: temperature = policy_.temperature; break;
        case RESET_POLICY_RESET:
        case RESET_POLICY_ENTROPY:
            temperature = d.temperature;
            signals.step_entropy = static_cast<float>(d.step_entropy);
            signals.threshold = static_cast<float>(d.threshold);
            signals.uncertain = d.uncertain;
            break;
    }
    // The temperature applied: greedy is reported as 0 (reset_step).
    signals.temperature = rule::is_greedy(temperature) ? 0.0f : temperature;

    // Step 7.
    rule::observe(state_, ring_.data(), w, entropy);
    return signals;
}

int32_t SequenceSampler::sample(const float *logits, int32_t vocab, int32_t sequence, SamplerSignals *signals) {
    if (sequence < 0) fail(RESET_ERR_OUT_OF_RANGE, "sequence index ", sequence, " is negative");
    // Every check comes before the state is touched, so a failing call leaves the sampler as it was, a
    // pending decision included: the bias against the row (a session's was checked against its
    // vocabulary; a standalone policy's knows none, reset.h), spec step 2 (bad logits), the row drawn from.
    if (biased() && bias_->tokens.back() >= vocab)
        fail(RESET_ERR_OUT_OF_RANGE, "the logit bias lists token ", bias_->tokens.back(), ", outside these ", vocab,
             " logits");
    const LogitStats stats = logit_stats(logits, vocab);
    float max_logit = stats.max;
    int32_t argmax = stats.argmax;
    // The penalties lower the logits that are drawn from, after H_t and the
    // decision saw the raw ones (reset-algorithm.md, "Signals").
    const bool any_seen = generation_.size() > 0 || context_.size() > 0;
    const bool penalties = policy_.penalized() && any_seen;
    const float *z = penalties || biased() ? penalize(logits, vocab, penalties, &max_logit, &argmax) : logits;
    // Bad logits, as logit_stats reports them (a session, whose logits are the model's, reports a backend failure).
    if (argmax < 0)
        fail(RESET_ERR_INVALID_ARGUMENT, "every token the logit bias does not ban has a logit of -inf: nothing to draw");
    const SamplerSignals s = decide_entropy(stats.entropy);
    // Step 8.  Greedy ignores the truncation: the argmax survives every filter.
    int32_t token = argmax;
    if (s.temperature != 0.0f) {
        const uint32_t seq = static_cast<uint32_t>(sequence);
        const uint64_t step = static_cast<uint64_t>(accepted_);
        token = draw_truncated(z, vocab, max_logit, s.temperature, policy_.top_k, policy_.top_p, policy_.min_p,
                               philox::uniform(policy_.seed, seq, step),
                               philox::second_uniform(policy_.seed, seq, step), candidates_);
    }
    if (signals) {
        *signals = s;
        // Of the raw row, as H_t: the model's probability, whatever lowered or truncated the draw's.
        signals->raw_max = stats.max;
        signals->log_sum_exp = std::log(stats.sum_exp);
        signals->logprob = rule::raw_logprob(logits[token], signals->raw_max, signals->log_sum_exp);
    }
    return token;
}

void SequenceSampler::accept(int32_t token) {
    pending_ = false;
    prev_token_ = last_token_;
    last_token_ = token;
    accepted_ += 1;
    append_generation(token);
}

void SequenceSampler::clear() {
    rule::clear_state(state_);
    saved_state_ = state_;
    pending_ = false;
    accepted_ = 0;
    last_token_ = -1;
    prev_token_ = -1;
    generation_.clear();
    context_.clear();
    generation_version_ = next_generation_version();
}

}  // namespace reset
