// sampling.h — the on-device sampler (kernels/sampling.cu): for each of up to
// 8 sequences, from the raw FP32 logits of one decode step, the entropy H_t,
// the ReSET decision (rules/reset_rule.h, with the per-sequence state in
// device memory), the penalties (rules/penalty.h, with the per-sequence
// token counts in device memory), top-k / top-p / min-p and the Philox draw, in ONE kernel
// launch with no host synchronisation, so it can sit in the decode step's
// CUDA graph.  It reproduces reset::SequenceSampler::sample followed by
// accept(chosen token) (sampling/sampler.h): same definitions, same order of
// the filters, same tie-breaking, same Philox key and uniform, same walk over
// the survivors in id order.  What can differ, and why, is in
// docs/cuda-engine.md ("Sampler").
//
// Only the chosen ids and the per-token signals are written for the host.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "rules/reset_rule.h"
#include "sampling/policy.h"

namespace reset {

// The numeric fields of a validated reset::Policy (sampling/policy.h), as the
// device reads them.  One per sequence, in device memory, so a captured graph
// picks up a policy change without being rebuilt.
struct SamplingPolicyDevice {
    int32_t kind = 0;           // reset_policy_kind (0 greedy, 1 fixed, 2 ReSET, 3 entropy-only)
    float temperature = 0.6f;   // FIXED
    int32_t top_k = 0;          // 0 = off
    float top_p = 1.0f;         // 1 = off
    float min_p = 0.0f;         // 0 = off
    float t_high = 1.0f;        // RESET / ENTROPY
    float t_low = 0.0f;
    float tau0 = 0.0f;
    int32_t window = 32;        // w, 1..SamplingArgs::ring_capacity
    float presence_penalty = 0.0f;   // rules/penalty.h; [-2, 2]
    float frequency_penalty = 0.0f;  // [-2, 2]
    float repetition_penalty = 1.0f; // [0.1, 10]
    // 1: add SamplingArgs::bias to the row after the penalties (reset_set_logit_bias).  It fills
    // what was padding before seed.
    int32_t logit_bias = 0;
    uint64_t seed = 0;
};

// The device form of a validated policy.
inline SamplingPolicyDevice sampling_policy_device(const Policy &p) {
    SamplingPolicyDevice d;
    d.kind = static_cast<int32_t>(p.kind);
    d.temperature = p.temperature;
    d.top_k = p.top_k;
    d.top_p = p.top_p;
    d.min_p = p.min_p;
    d.t_high = p.t_high;
    d.t_low = p.t_low;
    d.tau0 = p.tau0;
    d.window = p.window;
    d.presence_penalty = p.presence_penalty;
    d.frequency_penalty = p.frequency_penalty;
    d.repetition_penalty = p.repetition_penalty;
    d.seed = p.seed;
    return d;
}

// One sequence's sampler state in device memory: what SequenceSampler keeps
// between tokens.  The kernel accepts the token it draws (the state update of
// spec step 7, the last two ids for the boundary test, the draw counter);
// a caller that makes the sequence take another token writes last_token /
// prev_token itself before the next launch.
struct SamplingSequenceState {
    rule::StepState step;   // S, W bookkeeping, n, step index
    int64_t accepted = 0;   // tokens accepted so far: the Philox step and the boundary test's count
    int32_t last_token = -1;
    int32_t prev_token = -1;
    uint32_t sequence = 0;  // the Philox sequence index (SequenceSampler::sample's `sequence`)
    int32_t pad_ = 0;
};

// Per-token flags of the delimiter sets (spec "Step boundaries").
constexpr uint8_t kDelimiterNewline = 1;        // NL: the token's text is exactly "\n"
constexpr uint8_t kDelimiterDoubleNewline = 2;  // DNL: the token's text contains "\n\n"

enum SamplingStatus : int32_t {
    kSamplingOk = 0,
    kSamplingBadLogit = 1,    // a NaN or +inf logit (SequenceSampler throws); nothing changed
    kSamplingAllMasked = 2,   // every logit is -inf (SequenceSampler throws); nothing changed
    kSamplingBadPolicy = 3,   // the device policy or state is out of range; nothing changed
};

// reset::SamplerSignals plus a status, as written for the host.
struct SamplingSignalsDevice {
    float entropy;
    float step_entropy;
    float global_mean;
    float threshold;
    float temperature;
    int32_t step_index;
    int32_t boundary;
    int32_t uncertain;
    int32_t status;  // SamplingStatus; the token is -1 unless kSamplingOk
    float logprob;   // log p(token) under softmax(raw logits) (rules/logprob.h); 0 unless kSamplingOk
    // The two numbers logprob came from, for kernels/top_logprobs.h (so its entry for the token
    // equals logprob bit for bit); 0 unless kSamplingOk.
    float raw_max;
    int32_t unused_;  // no implicit padding: a skipped row's signals are compared byte for byte
    double log_sum_exp;
};

struct SamplingArgs {
    int batch = 0;                                  // 1..8
    int32_t vocab = 0;                              // >= 1
    const float *logits = nullptr;                  // [batch][ld_logits], raw (temperature 1)
    int64_t ld_logits = 0;                          // >= vocab
    const SamplingPolicyDevice *policies = nullptr; // [batch]
    SamplingSequenceState *states = nullptr;        // [batch]
    float *rings = nullptr;                         // [batch][ring_capacity]: the window W of each sequence
    int32_t ring_capacity = 0;                      // >= every policy's window
    const uint8_t *delimiter_flags = nullptr;       // [vocab] kDelimiter* bits, or null (no boundaries)
    // [batch][vocab]: how often each token was generated in the sequence's
    // current generation, plus rule::kInContext for a token of the rest of
    // its context (SequenceSampler::add_penalty_counts); the kernel adds the
    // token it accepts.  Null: a policy with a penalty is out of range
    // (kSamplingBadPolicy), and nothing is counted.
    int32_t *counts = nullptr;
    // [vocab]: added to every sequence's row whose policy has logit_bias 1,
    // after the penalties (sampling/logit_bias.h; -inf bans a token).  Null:
    // logit_bias is ignored.
    const float *bias = nullptr;
    float *workspace = nullptr;                     // sampling_workspace_bytes(batch, vocab)
    int32_t *tokens = nullptr;                      // [batch] out
    SamplingSignalsDevice *signals = nullptr;       // [batch] out, may be null
    // Optional, read on the device (a captured graph sees changes): 0 = skip
    // this sequence (token -1, no state change, signals.status kSamplingOk,
    // every other signal field 0); null = every sequence active.
    const int32_t *active = nullptr;                // device [batch]
    // Tests: CTAs per sequence (0 = automatic; > 1 needs thread-block
    // clusters, sm_90 and later; 9..16 a GPU that allows non-portable
    // cluster sizes, as the H100 does) and keeping the row out of shared memory.
    int team = 0;
    bool force_global_memory = false;
};

// Bytes of `workspace`: the survivors' weights and the penalized logits
// when a row does not fit in shared memory.
size_t sampling_workspace_bytes(int batch, int32_t vocab);

// How a launch is laid out (for tests and reports).
struct SamplingPlan {
    int team = 1;              // CTAs per sequence (one thread-block cluster)
    int per_thread = 1;        // vocabulary entries per thread
    bool shared_row = false;   // the row and its weights live in shared memory
    size_t shared_bytes = 0;   // dynamic shared memory per CTA
    int gather_capacity = 0;   // top-p's value bin at the cut is gathered up to this many members (2,048 or
                               // 4,096 where shared memory allows); a fuller bin takes the radix levels
};
SamplingPlan sampling_plan(const SamplingArgs &args);

// Enqueue on `stream`.  Throws reset::Error: RESET_ERR_INVALID_ARGUMENT for a
// bad shape or pointer (nothing launched), RESET_ERR_BACKEND if the launch
// fails.  Bad logits or a bad device policy are reported per sequence in
// signals[b].status (the kernel cannot throw).
void sample_tokens(const SamplingArgs &args, cudaStream_t stream);

}  // namespace reset
