// top_logprobs.h — the CPU side of reset_step.top_logprobs: the n most likely
// tokens of a raw logits row (rules/top_logprobs.h's order) with their
// log-probabilities.  The CUDA step computes the same with
// kernels/top_logprobs.cu.
#pragma once

#include <cstdint>

#include "reset.h"

namespace reset {

// Writes min(n, vocab) entries into out, most likely first (ties: lower id
// first).  raw_max and log_sum_exp are the sampler's (SamplerSignals), so the
// logprobs are rules/logprob.h's with the numbers reset_step.logprob used.
// Returns the count written.  n in 0..RESET_MAX_TOP_LOGPROBS.
int32_t top_logprobs(const float *logits, int32_t vocab, int32_t n, float raw_max, double log_sum_exp,
                     reset_token_logprob *out);

}  // namespace reset
