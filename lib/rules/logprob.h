// logprob.h — reset_step.logprob (reset.h): log p(token) under softmax of the
// raw logits, from the two numbers the entropy pass already has (the row's
// maximum and log Σ e^(z - max) in double, sampling/entropy.h).  One formula for
// the CPU sampler (sampling/sampler.cpp) and the CUDA sampler
// (kernels/sampling.cu), so the backends differ only by the order in which
// they summed the row.
#pragma once

#include "rules/host_device.h"

namespace reset::rule {

// (z - max) rounded to FP32 as each of the entropy's terms is, minus
// log Σ e^(z - max) in double (>= 0: the maximum's own term is e^0), rounded
// once at the end.  z is the chosen token's raw logit (finite: a masked token
// is never chosen).
RESET_HD float raw_logprob(float z, float max_logit, double log_sum_exp) {
    const float shifted = z - max_logit;
    return static_cast<float>(static_cast<double>(shifted) - log_sum_exp);
}

}  // namespace reset::rule
