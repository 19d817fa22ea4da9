// penalty.h — the repetition penalties of reset_policy_params (reset.h), the
// one formula the CPU sampler (sampling/sampler.cpp) and the CUDA sampler
// (kernels/sampling.cu) both apply, so a penalized draw is the same token on
// either backend.
#pragma once

#include <cstdint>

#include "rules/host_device.h"

namespace reset::rule {

// The range of either penalty, OpenAI's and vLLM's: beyond it a penalty stops
// steering and starts erasing tokens.
constexpr float kMaxPenalty = 2.0f;

// Whether a policy lowers any logit at all (else the row is drawn from as it is).
RESET_HD bool penalties_on(float presence, float frequency) { return presence != 0.0f || frequency != 0.0f; }

// The logit of a token generated `count` times in the current generation,
// in vLLM's order: (z - frequency * count) - presence, each operation
// rounded to FP32 on its own.  No fused multiply-add: nvcc would contract
// the first two into one rounding, and a host compiler may where the target
// has FMA, so the two backends could differ by an ulp and draw differently.
// -inf (a masked token) stays -inf; a finite logit stays finite (|penalty|
// <= 2 * 2^31 + 2).
RESET_HD float penalized_logit(float z, int32_t count, float presence, float frequency) {
    if (count <= 0) return z;
#if defined(__CUDA_ARCH__)
    return __fsub_rn(__fsub_rn(z, __fmul_rn(frequency, static_cast<float>(count))), presence);
#else
    volatile float scaled = frequency * static_cast<float>(count);  // volatile: never fused into the subtraction
    const float lowered = z - scaled;
    return lowered - presence;
#endif
}

}  // namespace reset::rule
