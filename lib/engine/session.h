// session.h — one conversation's state: up to 8 sequences sharing a prompt,
// their KV cache, logits, samplers and streaming detokenizers, and the decode
// loop that ties them together.  Backend-independent bookkeeping lives here;
// the arithmetic is in cpu_engine.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/cpu_engine.h"
#include "engine/loaded_model.h"
#include "sampling/sampler.h"
#include "text/tokenizer.h"

namespace reset {

constexpr int32_t kMaxSequences = 8;
constexpr int32_t kDefaultMaxContext = 4096;

class Session {
public:
    Session(std::shared_ptr<LoadedModel> model, int32_t max_context, int32_t sequences);

    void reset();
    void request_cancel() { cancel_requested_.store(true, std::memory_order_relaxed); }
    void prefill(const int32_t *ids, size_t n_ids);
    void copy_logits(int32_t sequence, float *out, size_t capacity) const;
    int32_t length(int32_t sequence) const;
    void set_policy(const reset_policy_params &params);
    // Writes `sequences()` entries at the caller's stride; returns the active count.
    int32_t decode_step(reset_step *steps, size_t capacity);

    int32_t sequences() const { return static_cast<int32_t>(sequences_.size()); }
    int32_t max_context() const { return max_context_; }
    const LoadedModel &model() const { return *model_; }

private:
    struct Sequence {
        int32_t length = 0;
        bool ended = false;
        std::vector<float> logits;
        SequenceSampler sampler;
        std::unique_ptr<StreamDecoder> stream;  // null without a tokenizer
        std::string text;                       // this step's text, handed out in reset_step
    };
    // What a failing call restores ("nothing is lost").
    struct Snapshot {
        std::vector<int32_t> lengths;
        std::vector<uint8_t> ended;
        std::vector<std::vector<float>> logits;
        std::vector<SequenceSampler> samplers;
        std::vector<StreamDecoder> streams;
        bool lockstep = true, has_logits = false;
    };
    Snapshot snapshot() const;
    void restore(const Snapshot &saved);
    void throw_if_cancelled();
    bool is_eos(int32_t token) const;

    std::shared_ptr<LoadedModel> model_;
    int32_t max_context_;
    KvCache cache_;
    ForwardScratch scratch_;
    std::vector<Sequence> sequences_;
    bool has_logits_ = false;  // a prefill happened since the last reset
    bool lockstep_ = true;     // every sequence holds the same tokens: compute once, copy
    int32_t tokenizer_vocab_ = 0;  // ids at or past it have no text
    std::atomic<bool> cancel_requested_{false};
};

}  // namespace reset
