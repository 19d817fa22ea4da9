// entropy.h — H_t, the Shannon entropy (nats) of softmax over the whole
// vocabulary, computed with a numerically stable log-sum-exp.
#pragma once

#include <cstdint>

namespace reset {

struct LogitStats {
    float max = 0.0f;       // largest logit
    int32_t argmax = 0;     // its lowest index
    double sum_exp = 0.0;   // Σ exp(z_i - max)
    float entropy = 0.0f;   // H = log Σ e^(z-m) - Σ e^(z-m)(z-m) / Σ e^(z-m)
};

// Entropy of softmax(logits / temperature) (temperature 1 for the policy's
// H_t, spec "Signals").  Each term is computed in FP32 (expf of z - max);
// the two sums are accumulated in double, so the result does not depend on
// the vocabulary size's rounding.  Entries of -inf are masked tokens (p = 0,
// contributing nothing).  Throws reset::Error(RESET_ERR_INVALID_ARGUMENT) for
// n < 1, a NaN or +inf logit, or every logit -inf.
LogitStats logit_stats(const float *logits, int32_t n, float temperature = 1.0f);

}  // namespace reset
