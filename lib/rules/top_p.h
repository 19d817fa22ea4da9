// top_p.h — top-p's two rules that the CPU sampler (sampling/truncation.cpp)
// and the CUDA sampler (kernels/sampling.cu) must apply identically.
#pragma once

#include <cstdint>

#include "rules/host_device.h"

namespace reset::rule {

// Tokens lighter than this cannot be in the nucleus: together they weigh
// less than the (1 - top_p) tail it leaves out, so truncate() drops them
// before its sort.  `total` is the weight of the `count` tokens top-p ranks
// (the top-k survivors, or every unmasked token).
RESET_HD double top_p_weight_floor(float top_p, double total, int64_t count) {
    return (1.0 - static_cast<double>(top_p)) * total / static_cast<double>(count);
}

// Whether a draw is rejection-first (sampling/truncation.h, draw_truncated):
// top-p is on and top-k cuts nothing among the `unmasked` tokens.
RESET_HD bool draws_rejection_first(int32_t top_k, float top_p, int64_t unmasked) {
    return top_p < 1.0f && !(top_k > 0 && top_k < unmasked);
}

}  // namespace reset::rule
