// calibration.cpp — percentile tables of entropies and the processed-score
// entropy (reset-algorithm.md, "Calibrating τ0").
#include "sampling/calibration.h"

#include <algorithm>
#include <cmath>

#include "api/errors.h"
#include "rules/reset_rule.h"
#include "sampling/entropy.h"
#include "sampling/truncation.h"

namespace reset {

namespace {

float percentile_of_sorted(const std::vector<float> &x, double p) {
    const double position = p / 100.0 * static_cast<double>(x.size() - 1);
    const size_t k = static_cast<size_t>(std::floor(position));
    if (k + 1 >= x.size()) return x.back();
    const double f = position - static_cast<double>(k);
    return static_cast<float>(static_cast<double>(x[k]) + f * (static_cast<double>(x[k + 1]) - x[k]));
}

}  // namespace

PercentileTable percentile_table(std::vector<float> &entropies, float percentile) {
    if (entropies.empty()) fail(RESET_ERR_INVALID_ARGUMENT, "no entropies to take percentiles of");
    if (!(percentile >= 0.0f && percentile <= 100.0f))
        fail(RESET_ERR_INVALID_ARGUMENT, "percentile is ", percentile, " (must be in [0, 100])");
    double sum = 0.0;
    for (size_t i = 0; i < entropies.size(); ++i) {
        if (!std::isfinite(entropies[i]))
            fail(RESET_ERR_INVALID_ARGUMENT, "entropy ", i, " is not finite");
        sum += static_cast<double>(entropies[i]);
    }
    std::sort(entropies.begin(), entropies.end());
    PercentileTable table;
    for (int p = 0; p <= 100; ++p) table.percentiles[p] = percentile_of_sorted(entropies, p);
    table.value = percentile_of_sorted(entropies, percentile);
    table.mean = sum / static_cast<double>(entropies.size());
    return table;
}

float processed_entropy(const float *logits, int32_t vocab, float temperature, int32_t top_k, float top_p,
                        float min_p) {
    const LogitStats stats = logit_stats(logits, vocab);
    if (rule::is_greedy(temperature)) return 0.0f;
    Candidates c;
    truncate(logits, vocab, stats.max, temperature, top_k, top_p, min_p, c);
    // H = log Σw - Σ w log w / Σw with log w_i = (z_i - max) / T.
    const float inv_t = 1.0f / temperature;
    double weighted = 0.0;
    for (size_t i = 0; i < c.ids.size(); ++i) {
        const double y = static_cast<double>((logits[c.ids[i]] - stats.max) * inv_t);
        weighted += static_cast<double>(c.weights[i]) * y;
    }
    const double h = std::log(c.total) - weighted / c.total;
    return h > 0.0 ? static_cast<float>(h) : 0.0f;
}

}  // namespace reset
