// entropy.cpp — H_t over the whole vocabulary (spec "Signals").
#include "sampling/entropy.h"

#include <cmath>
#include <limits>

#include "api/errors.h"

namespace reset {

LogitStats logit_stats(const float *logits, int32_t n, float temperature) {
    if (n < 1) fail(RESET_ERR_INVALID_ARGUMENT, "the vocabulary size is ", n, " (must be >= 1)");
    LogitStats stats;
    // Pass 1: the maximum (the log-sum-exp shift), rejecting values no
    // distribution can come from.
    float max = -std::numeric_limits<float>::infinity();
    int32_t argmax = -1;
    for (int32_t i = 0; i < n; ++i) {
        const float z = logits[i];
        if (std::isnan(z) || z == std::numeric_limits<float>::infinity())
            fail(RESET_ERR_INVALID_ARGUMENT, "logits[", i, "] is ", std::isnan(z) ? "NaN" : "+inf",
                 " (logits must be finite, or -inf for a masked token)");
        if (argmax < 0 || z > max) {  // strict: ties keep the lowest index
            max = z;
            argmax = i;
        }
    }
    if (max == -std::numeric_limits<float>::infinity())
        fail(RESET_ERR_INVALID_ARGUMENT, "every logit is -inf: no token can be chosen");
    stats.max = max;
    stats.argmax = argmax;
    // Pass 2: with y = (z - max) / T <= 0, H = log Σe^y - Σ e^y y / Σe^y.
    // Every exponential is at most 1, so nothing overflows; masked tokens
    // (e^y = 0) are skipped rather than multiplied (0 * -inf would be NaN).
    const float inv_t = 1.0f / temperature;
    double sum = 0.0;
    double weighted = 0.0;
    for (int32_t i = 0; i < n; ++i) {
        const float y = (logits[i] - max) * inv_t;
        const float e = std::exp(y);
        if (e == 0.0f) continue;
        sum += static_cast<double>(e);
        weighted += static_cast<double>(e) * static_cast<double>(y);
    }
    stats.sum_exp = sum;
    const double h = std::log(sum) - weighted / sum;
    // Rounding can leave a one-hot distribution a hair below zero.
    stats.entropy = h > 0.0 ? static_cast<float>(h) : 0.0f;
    return stats;
}

}  // namespace reset
