// calibration.h — τ0 from measured entropies (reset-algorithm.md,
// "Calibrating τ0"), and the "processed-score" entropy of the authors' script.
#pragma once

#include <cstdint>
#include <vector>

namespace reset {

struct PercentileTable {
    float value = 0.0f;          // the requested percentile
    float percentiles[101] = {};  // 0th..100th
    double mean = 0.0;
};

// Percentiles by linear interpolation between order statistics (numpy's
// default): position p/100 * (n - 1).  `entropies` is sorted in place.
// Throws reset::Error(RESET_ERR_INVALID_ARGUMENT) for no values, a
// non-finite value, or a percentile outside [0, 100].
PercentileTable percentile_table(std::vector<float> &entropies, float percentile);

// The entropy of the distribution actually sampled: softmax(z / T) truncated
// by top-k, top-p, min-p (the "processed scores" the authors' script reads).
// 0 when T <= 1e-6 (greedy: one token).
float processed_entropy(const float *logits, int32_t vocab, float temperature, int32_t top_k, float top_p,
                        float min_p);

}  // namespace reset
