// penalty.h — the repetition penalties of reset_policy_params (reset.h), the
// one formula the CPU sampler (sampling/sampler.cpp) and the CUDA sampler
// (kernels/sampling.cu) both apply, so a penalized draw is the same token on
// either backend.
#pragma once

#include <cmath>
#include <cstdint>

#include "rules/host_device.h"

namespace reset::rule {

// The range of the presence and frequency penalties, OpenAI's and vLLM's:
// beyond it a penalty stops steering and starts erasing tokens.
constexpr float kMaxPenalty = 2.0f;

// The range of the repetition penalty (Hugging Face's and vLLM's
// multiplicative one, 1 = off).  Both accept any positive value; the usual
// ones lie in 1..1.3.  A bound keeps z * r and z / r finite for every logit a
// model can produce, and beyond 10 (or under 0.1) a penalty only erases (or
// pins) the tokens of the context.
constexpr float kMinRepetitionPenalty = 0.1f;
constexpr float kMaxRepetitionPenalty = 10.0f;

// The device's count of a token (kernels/sampling.h, SamplingArgs::counts):
// how often the current generation produced it, plus kInContext when it is
// also in the sequence's context (its prompt, or a token accepted before the
// generation started).  A count never reaches the flag (2^30 tokens).
constexpr int32_t kInContext = 1 << 30;
constexpr int32_t kCountMask = kInContext - 1;

// Whether a policy lowers any logit at all (else the row is drawn from as it is).
RESET_HD bool penalties_on(float presence, float frequency, float repetition) {
    return presence != 0.0f || frequency != 0.0f || repetition != 1.0f;
}

// The logit of a token, in vLLM's order:
//  1. a token of the context or of the generation (`seen`) is divided by the
//     repetition penalty r when positive, multiplied by it otherwise (Hugging
//     Face's RepetitionPenaltyLogitsProcessor);
//  2. a token generated `count` > 0 times in the current generation becomes
//     (z - frequency * count) - presence.
// Each operation is rounded to FP32 on its own.  No fused multiply-add: nvcc
// would contract a product into the subtraction, and a host compiler may
// where the target has FMA, so the two backends could differ by an ulp and
// draw differently.  -inf (a masked token) stays -inf; a finite logit stays
// finite (r in [0.1, 10] and |z| below 3.4e37; beyond, a product saturates at
// the largest float rather than becoming infinite).
RESET_HD float penalized_logit(float z, bool seen, int32_t count, float repetition, float presence, float frequency) {
    constexpr float kLargest = 3.40282347e38f;
    if (seen && repetition != 1.0f && z != -INFINITY) {
#if defined(__CUDA_ARCH__)
        z = z > 0.0f ? __fdiv_rn(z, repetition) : __fmul_rn(z, repetition);
#else
        volatile float scaled = z > 0.0f ? z / repetition : z * repetition;  // volatile: as below
        z = scaled;
#endif
        z = z > kLargest ? kLargest : z < -kLargest ? -kLargest : z;
    }
    if (count <= 0) return z;
#if defined(__CUDA_ARCH__)
    return __fsub_rn(__fsub_rn(z, __fmul_rn(frequency, static_cast<float>(count))), presence);
#else
    volatile float scaled = frequency * static_cast<float>(count);  // volatile: never fused into the subtraction
    const float lowered = z - scaled;
    return lowered - presence;
#endif
}

// The same from a token's entry of a counts row (SamplingArgs::counts,
// SequenceSampler::add_penalty_counts): seen when the entry is non-zero,
// generated (entry & kCountMask) times.
RESET_HD float penalized_logit(float z, int32_t entry, float repetition, float presence, float frequency) {
    return penalized_logit(z, entry != 0, entry & kCountMask, repetition, presence, frequency);
}

}  // namespace reset::rule
