// truncation.cpp — top-k, top-p, min-p and the inverse-CDF draw (spec step 8).
#include "sampling/truncation.h"

#include <algorithm>
#include <cmath>

#include "rules/top_p.h"

namespace reset {

namespace {

// Decreasing logit, then increasing id: the order top-k and top-p rank by.
struct ByLogitDescending {
    const float *logits;
    bool operator()(int32_t a, int32_t b) const {
        if (logits[a] != logits[b]) return logits[a] > logits[b];
        return a < b;
    }
};

}  // namespace

void truncate(const float *logits, int32_t vocab, float max_logit, float temperature, int32_t top_k, float top_p,
              float min_p, Candidates &out) {
    std::vector<int32_t> &ids = out.ids;
    std::vector<float> &weights = out.weights;
    ids.clear();
    weights.clear();
    const ByLogitDescending order{logits};

    // Every token with non-zero probability (masked -inf tokens never survive).
    ids.reserve(static_cast<size_t>(vocab));
    for (int32_t i = 0; i < vocab; ++i)
        if (logits[i] != -INFINITY) ids.push_back(i);

    // Top-k does not depend on the temperature: the k largest logits.
    if (top_k > 0 && static_cast<size_t>(top_k) < ids.size()) {
        std::nth_element(ids.begin(), ids.begin() + (top_k - 1), ids.end(), order);
        ids.resize(static_cast<size_t>(top_k));
    }

    // Weights of softmax(z / T), unnormalised: the largest is exp(0) = 1.
    const float inv_t = 1.0f / temperature;
    auto weight_of = [&](int32_t id) { return std::exp((logits[id] - max_logit) * inv_t); };

    if (top_p < 1.0f) {
        double total = 0.0;
        for (int32_t id : ids) total += static_cast<double>(weight_of(id));
        // Tokens lighter than (1 - p) * total / count are, all together, lighter
        // than the 1 - p tail the nucleus leaves out, so they cannot be in it:
        // dropping them before the sort changes nothing but the time it takes.
        const double floor = rule::top_p_weight_floor(top_p, total, static_cast<int64_t>(ids.size()));
        ids.erase(std::remove_if(ids.begin(), ids.end(),
                                 [&](int32_t id) { return static_cast<double>(weight_of(id)) < floor; }),
                  ids.end());
        std::sort(ids.begin(), ids.end(), order);
        const double target = static_cast<double>(top_p) * total;
        double mass = 0.0;
        size_t keep = 0;
        while (keep < ids.size()) {
            mass += static_cast<double>(weight_of(ids[keep]));
            ++keep;
            if (mass >= target) break;
        }
        ids.resize(std::max<size_t>(keep, 1));
    }

    // Min-p: p_i >= min_p * p_max, i.e. w_i >= min_p because the most probable
    // token (which every filter above keeps) has weight exactly 1.
    if (min_p > 0.0f) {
        ids.erase(std::remove_if(ids.begin(), ids.end(), [&](int32_t id) { return weight_of(id) < min_p; }),
                  ids.end());
    }

    // The draw walks the survivors in id order (as a GPU prefix sum would).
    std::sort(ids.begin(), ids.end());
    weights.resize(ids.size());
    double total = 0.0;
    for (size_t i = 0; i < ids.size(); ++i) {
        weights[i] = weight_of(ids[i]);
        total += static_cast<double>(weights[i]);
    }
    out.total = total;
}

int32_t draw(const Candidates &candidates, double u) {
    const double target = u * candidates.total;
    double running = 0.0;
    for (size_t i = 0; i < candidates.ids.size(); ++i) {
        running += static_cast<double>(candidates.weights[i]);
        if (running > target) return candidates.ids[i];
    }
    // u * total rounded up to the total itself: the last token owns the top.
    return candidates.ids.back();
}

int32_t draw_truncated(const float *logits, int32_t vocab, float max_logit, float temperature, int32_t top_k,
                       float top_p, float min_p, double u1, double u2, Candidates &out, bool *second_draw) {
    if (second_draw) *second_draw = false;
    if (top_p < 1.0f) {
        // The unmasked count decides only where top-k could cut (0 < top_k < vocab): a pass over
        // the row for those policies alone.
        int32_t unmasked = vocab;
        if (top_k > 0 && top_k < vocab) {
            unmasked = 0;
            for (int32_t i = 0; i < vocab; ++i) unmasked += logits[i] != -INFINITY ? 1 : 0;
        }
        if (rule::draws_rejection_first(top_k, top_p, unmasked)) {
            // The first draw, untruncated: every unmasked token is a candidate.
            truncate(logits, vocab, max_logit, temperature, 0, 1.0f, 0.0f, out);
            const int32_t first = draw(out, u1);
            truncate(logits, vocab, max_logit, temperature, top_k, top_p, min_p, out);
            if (std::binary_search(out.ids.begin(), out.ids.end(), first)) return first;
            if (second_draw) *second_draw = true;
            return draw(out, u2);
        }
    }
    truncate(logits, vocab, max_logit, temperature, top_k, top_p, min_p, out);
    return draw(out, u1);
}

}  // namespace reset
