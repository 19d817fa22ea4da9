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
#include "engine/device_engine.h"
#include "engine/loaded_model.h"
#include "engine/sequence_file.h"
#include "engine/stop_conditions.h"
#include "sampling/sampler.h"
#include "text/tokenizer.h"

namespace reset {

constexpr int32_t kMaxSequences = 8;
constexpr int32_t kDefaultMaxContext = 4096;

struct SessionOptions {
    int32_t max_context = kDefaultMaxContext;
    int32_t sequences = 1;
    reset_kv_cache kv_cache = RESET_KV_CACHE_BF16;  // FP32: CPU backend only
    bool cuda_graph = true;                         // CUDA backend: replay the step as a graph
    int32_t prefill_gemm_tokens = 0;                // CUDA backend: see reset_session_options
    bool programmatic_launch = true;                // CUDA backend, sm_90+: see reset_session_options
    int32_t top_logprobs = 0;                       // reset_step.top_logprobs per step, 0..kMaxTopLogprobs
};

class Session {
public:
    Session(std::shared_ptr<LoadedModel> model, const SessionOptions &options);
    ~Session();

    void reset();
    void request_cancel() { cancel_requested_.store(true, std::memory_order_relaxed); }
    // Append prompt tokens to every sequence (reset_prefill) or to one that
    // continues the shared prompt (reset_prefill_sequence).
    void prefill(const int32_t *ids, size_t n_ids);
    void prefill_sequence(int32_t sequence, const int32_t *ids, size_t n_ids);
    // reset_truncate / reset_truncate_sequence: keep the first `length`
    // tokens of every sequence / of one, as a new session given them as its
    // prompt would hold them, without logits until the next prefill.
    void truncate(int32_t length) { cut(-1, length); }
    void truncate_sequence(int32_t sequence, int32_t length);
    // reset_copy_sequence: `to` becomes what `from` is (context, KV cache,
    // logits, sampler state, text state); `from` is left as it was.
    void copy_sequence(int32_t from, int32_t to);
    // reset_save_sequence / reset_load_sequence: one sequence's state (what
    // copy_sequence copies) to and from a file (engine/sequence_file.h).
    void save_sequence(int32_t sequence, const std::string &path) const;
    void load_sequence(int32_t sequence, const std::string &path);
    // The same bytes in memory (reset_save_sequence_to_memory /
    // reset_load_sequence_from_memory): returns the size, writing only when
    // buffer is not null and capacity holds it.
    size_t save_sequence_to_memory(int32_t sequence, uint8_t *buffer, size_t capacity) const;
    void load_sequence_from_memory(int32_t sequence, const uint8_t *bytes, size_t size);
    // The tokens of a sequence's context, in order (reset_session_tokens).
    const SharedTokens &tokens(int32_t sequence) const;
    void copy_logits(int32_t sequence, float *out, size_t capacity) const;
    int32_t length(int32_t sequence) const;
    void set_policy(const reset_policy_params &params);
    // The policy in force (every sequence has the same).
    const Policy &policy() const { return sequences_.front().sampler.policy(); }
    // reset_set_stop: checked, then in force from the next step (NULL: none).
    void set_stop(const reset_stop_options *options);
    // reset_set_logit_bias: checked, then in force from the next step (count 0: none).
    void set_logit_bias(const reset_logit_bias *entries, size_t count);
    // reset_session_held_text: generated text no step has reported yet.
    const std::string &held_text(int32_t sequence) const;
    // Writes `sequences()` entries at the caller's stride; returns the active count.
    int32_t decode_step(reset_step *steps, size_t capacity);

    int32_t sequences() const { return static_cast<int32_t>(sequences_.size()); }
    int32_t max_context() const { return max_context_; }
    const LoadedModel &model() const { return *model_; }
    uint64_t device_bytes() const { return device_ ? device_->device_bytes() : 0; }

private:
    struct Sequence {
        int32_t length = 0;
        bool ended = false;
        // Current logits exist: a prefill ran since the last reset or truncation.
        bool has_logits = false;
        SharedTokens tokens;  // the context's `length` tokens, in order
        std::vector<float> logits;  // CPU backend (the CUDA backend keeps them on the device)
        SequenceSampler sampler;
        std::unique_ptr<StreamDecoder> stream;  // null without a tokenizer
        std::string text;                       // this step's text, handed out in reset_step
        std::string held;       // generated text not reported yet: it may begin a stop string
        int32_t generated = 0;  // tokens generated since the sequence's last prefill (max_tokens)
        std::vector<reset_token_logprob> top;   // this step's top_logprobs, handed out likewise
    };
    // What a failing call restores ("nothing is lost").
    struct Snapshot {
        std::vector<int32_t> lengths;
        std::vector<uint8_t> ended;
        std::vector<uint8_t> sequence_has_logits;
        std::vector<SharedTokens> tokens;
        std::vector<std::vector<float>> logits;
        std::vector<SequenceSampler> samplers;
        std::vector<StreamDecoder> streams;
        std::vector<std::string> held;
        std::vector<int32_t> generated;
        bool lockstep = true, has_logits = false;
    };
    Snapshot snapshot() const;
    void restore(const Snapshot &saved);
    void throw_if_cancelled();
    void throw_if_broken() const;
    bool is_eos(int32_t token) const;
    // RESET_ERR_OUT_OF_RANGE unless 0 <= sequence < sequences().
    void check_sequence(int32_t sequence) const;
    // The arithmetic of one step / prefill on each backend.
    // `only` < 0: every sequence.  The backends compute `computed` and, with
    // copy_to_all, copy sequence 0 onto the others.
    void append(const int32_t *ids, size_t n_ids, int32_t only);
    // truncate's work: every sequence (`only` < 0) or `only`.
    void cut(int32_t only, int32_t length);
    // Sequence `index` becomes `state` (a copy's or a file's, built whole beforehand, with no step's
    // text or top_logprobs); then sharing is re-derived.
    void replace_sequence(int32_t index, Sequence &&state);
    // What save_sequence writes of sequence `index` besides its KV cache, and what reads its cache.
    SequenceRecord sequence_record(int32_t index) const;
    LayerReader layer_reader(int32_t index) const;
    // A checked file's (or image's) sequence becomes sequence `index`.
    void install_sequence(int32_t index, SequenceFile file);
    // After a cut or a copy: whether sequences share their computation again
    // (lockstep_) and whether any holds a prompt (has_logits_).
    void rederive_sharing();
    void prefill_cpu(const int32_t *ids, size_t n_ids, const std::vector<int32_t> &computed, bool copy_to_all);
    template <typename Work>
    void breaking_on_failure(Work &&work);
    void prefill_device(const int32_t *ids, size_t n_ids, const std::vector<int32_t> &computed, bool copy_to_all);
    void sample_and_forward_cpu(std::vector<reset_step> &results);
    void sample_and_forward_device(std::vector<reset_step> &results);
    bool start_result(size_t s, reset_step &r) const;
    // Returns whether the token enters the context (is run through the model).
    bool finish_token(size_t s, int32_t token, const SamplerSignals &signals, reset_step &r);

    std::shared_ptr<LoadedModel> model_;
    int32_t max_context_;
    int32_t top_logprobs_;
    reset_kv_cache kv_cache_;
    std::unique_ptr<KvCache> cache_;          // CPU backend
    std::unique_ptr<ForwardScratch> scratch_; // CPU backend
    std::unique_ptr<DeviceSession> device_;   // CUDA backend
    // Set when the device failed mid-step: the device state no longer matches
    // this object, so every call but reset/free fails until a reset.
    std::string broken_;
    std::vector<Sequence> sequences_;
    bool has_logits_ = false;  // a reset_prefill happened since the last reset (a prompt to continue)
    bool lockstep_ = true;     // every sequence holds the same tokens: compute once, copy
    int32_t tokenizer_vocab_ = 0;  // ids at or past it have no text
    StopConditions stop_;
    std::atomic<bool> cancel_requested_{false};
};

}  // namespace reset
