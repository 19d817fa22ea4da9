// logit_order.h — a logit as an unsigned key that orders like the logit: the
// CUDA sampler's radix selects (kernels/sampling.cu) and reset_step.top_logprobs
// (rules/top_logprobs.h, on both backends) rank tokens by it, so "larger" means
// one thing everywhere.
#pragma once

#include <cstdint>
#include <cstring>

#include "rules/host_device.h"

namespace reset::rule {

// Monotone: a > b as floats iff key(a) > key(b).  -0 maps like +0, because
// the samplers' comparators see them equal (a tie, broken by id).  A NaN
// never reaches here (the samplers refuse the row first).
RESET_HD uint32_t logit_order_key(float z) {
    if (z == 0.0f) z = 0.0f;  // -0 -> +0
#if defined(__CUDA_ARCH__)
    const uint32_t bits = __float_as_uint(z);
#else
    uint32_t bits;
    std::memcpy(&bits, &z, sizeof bits);
#endif
    return (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u);
}

// The logit back from its key (+0 for a -0).
RESET_HD float logit_of_order_key(uint32_t key) {
    const uint32_t bits = (key & 0x80000000u) ? (key & 0x7FFFFFFFu) : ~key;
#if defined(__CUDA_ARCH__)
    return __uint_as_float(bits);
#else
    float z;
    std::memcpy(&z, &bits, sizeof z);
    return z;
#endif
}

}  // namespace reset::rule
