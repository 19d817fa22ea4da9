// top_logprobs.h — reset_step.top_logprobs (reset.h): which tokens are "the
// most likely" and in what order, as one key per token, so the CPU session
// (sampling/top_logprobs.cpp) and the CUDA step (kernels/top_logprobs.cu)
// pick the same tokens in the same order, ties included.  Their logprobs come
// from rules/logprob.h with the sampler's own maximum and log Σe, so an entry
// for the chosen token equals reset_step.logprob bit for bit.
#pragma once

#include <cstdint>

#include "rules/host_device.h"
#include "rules/logit_order.h"

namespace reset::rule {

// reset.h's RESET_MAX_TOP_LOGPROBS (OpenAI's and vLLM's limit).
constexpr int kMaxTopLogprobs = 20;

// A token's rank as one unsigned number: larger is more likely.  The high
// half orders the logits (rules/logit_order.h), the low half breaks ties
// toward the lower id, so every token of a row has a distinct key and "the
// top n" is one set with one order.  0 is no token: every real key is above
// it (even -inf's high half is not 0).
RESET_HD uint64_t top_logprob_key(float z, int32_t id) {
    return (static_cast<uint64_t>(logit_order_key(z)) << 32) | (0xFFFFFFFFu - static_cast<uint32_t>(id));
}

RESET_HD int32_t top_logprob_id(uint64_t key) { return static_cast<int32_t>(0xFFFFFFFFu - static_cast<uint32_t>(key)); }

RESET_HD float top_logprob_logit(uint64_t key) { return logit_of_order_key(static_cast<uint32_t>(key >> 32)); }

}  // namespace reset::rule
