// logit_bias.h — reset_set_logit_bias: a bias added to listed tokens' logits
// after the penalties, before the temperature, the truncation and the draw.
// The CPU sampler (sampling/sampler.cpp) adds it to its copy of the row, the
// CUDA sampler (kernels/sampling.cu) to the row it loads, each as one FP32
// addition, so a biased draw is the same token on either backend.
#pragma once

#include <cstddef>
#include <climits>
#include <cstdint>
#include <vector>

#include "reset.h"

namespace reset {

struct LogitBias {
    std::vector<int32_t> tokens;  // sorted, unique
    std::vector<float> biases;    // biases[i] for tokens[i]: finite in [-100, 100], or -inf

    bool empty() const { return tokens.empty(); }
    // The dense form, vocab entries (0 where nothing is listed): what the device reads.
    std::vector<float> dense(int32_t vocab) const;
};

// A standalone policy's vocabulary (reset_policy_create): each reset_policy_sample row's own.
constexpr int32_t kUnknownVocabulary = INT32_MAX;

// The bias a caller's entries describe, checked as reset_set_logit_bias
// documents (throws reset::Error; nothing is kept on error); with
// kUnknownVocabulary only negative ids are out of range.
LogitBias make_logit_bias(const reset_logit_bias *entries, size_t count, int32_t vocab);

}  // namespace reset
