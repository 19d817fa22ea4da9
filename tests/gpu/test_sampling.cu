// test_sampling.cu — the device sampler (kernels/sampling.cu) against the CPU
// sampler it must reproduce, reset::SequenceSampler (sampling/sampler.cpp):
// the same token and the same signals for the same logits, seed and state.
//
// Fresh random logits every step (seed printed, argv[1] repeats it): normal
// logits of random spread, some rows peaked, exact ties (also at the
// maximum), masked (-inf) entries, finite logits out to +-FLT_MAX and
// denormal ones, and for the ReSET runs delimiter tokens
// pushed to the top so boundaries are crossed.  Vocabularies 151,936 and
// small ones (1, 2, 7, 1000, 32,005), 1..8 sequences with a mix of policies
// in one launch, each team layout (16- and 8-CTA clusters with the row in
// shared memory, the row in global memory, one CTA), a CUDA graph replayed over
// the steps, and the error statuses.  Tokens must be identical; signals
// within 1e-5 relative (1e-9 absolute); a temperature (or step gate) may
// differ only where the entropy sits within rounding of the threshold, and a
// token only where rounding_near_tie() shows the CPU itself picks the
// device's token once one weight moves by the 3 ulp that CUDA's expf and the
// C library's may differ by — such near-ties are counted and printed.
// Top-p draws rejection-first (sampling/truncation.h): most of its tokens
// are the kept first draw, so the cases that test the nucleus' cut rotate
// their rows until the first draw is rejected (rotate_to_second_draw), and
// the run says how many tokens took each path.  Then
// the kernel's time at vocab 151,936, batch 1 and 8 (CUDA events, median).
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>
#include <utility>

#include "api/errors.h"
#include "gpu_test_util.h"
#include "kernels/sampling.h"
#include "reset.h"
#include "rules/penalty.h"
#include "rules/philox.h"
#include "rules/top_p.h"
#include "sampling/entropy.h"
#include "sampling/sampler.h"
#include "sampling/truncation.h"

using namespace gpu_test;

#ifdef RESET_SAMPLING_TRACE
namespace reset {
int sampling_trace_read(unsigned long long *host, int max_pairs);
void sampling_trace_clear();
}  // namespace reset
#endif

namespace {

bool g_quick = false;
int64_t g_compared_tokens = 0;
int64_t g_sampled_tokens = 0;  // compared tokens drawn at a temperature > 0
int64_t g_near_ties = 0;
int64_t g_draw_near_ties = 0;
int64_t g_rotated_rows = 0;  // rows rotated so that top-p's first draw is rejected (rotate_to_second_draw)
int64_t g_second_draws = 0;  // top-p tokens whose first draw fell outside the nucleus (second_draw_taken)
int64_t g_boundaries = 0;
int64_t g_state_checks = 0;
int64_t g_logprob_checks = 0;       // device logprobs compared with the CPU sampler's
int64_t g_logprob_independent = 0;  // ... and with log_softmax_at

constexpr int32_t kRingCapacity = 64;

// Relative agreement, with an absolute floor of 1e-9 nats: an entropy of a
// near-one-hot row (1e-13 nats, say) is the difference log Σ − Σey/Σ of two
// nearly equal doubles, so its relative rounding is large on both sides.
bool close_rel(double a, double b, double rel) {
    return std::fabs(a - b) <= rel * std::max(std::fabs(a), std::fabs(b)) + 1e-9;
}

// log softmax(row)[token] in double, independent of both samplers: the
// reference for the device's reset_step.logprob.
double log_softmax_at(const float *row, int32_t vocab, int32_t token) {
    double m = -INFINITY;
    for (int32_t i = 0; i < vocab; ++i) m = std::max(m, double(row[i]));
    double sum = 0.0;
    for (int32_t i = 0; i < vocab; ++i)
        if (row[i] != -INFINITY) sum += std::exp(double(row[i]) - m);
    return double(row[token]) - m - std::log(sum);
}

reset::Policy fixed(float t, int32_t k = 0, float top_p = 1.0f, float min_p = 0.0f) {
    reset::Policy p;
    p.kind = RESET_POLICY_FIXED;
    p.temperature = t;
    p.top_k = k;
    p.top_p = top_p;
    p.min_p = min_p;
    return p;
}

reset::Policy reset_policy(reset_policy_kind kind, float t_low, float tau0, int32_t window, int32_t k, float top_p,
                           float min_p) {
    reset::Policy p;
    p.kind = kind;
    p.t_high = 1.0f;
    p.t_low = t_low;
    p.tau0 = tau0;
    p.window = window;
    p.top_k = k;
    p.top_p = top_p;
    p.min_p = min_p;
    return p;
}

// A token mismatch at the same temperature: is it a rounding near-tie?  The
// device's weights come from CUDA's expf (at most 2 ulp from exact), the
// CPU's from the C library's (under 1 ulp), so a weight may differ by up to
// 3 ulp of FP32 (3.6e-7 relative), and so may every sum of weights.  Three
// places turn that into a different token, each on a measure-zero slice of
// inputs: a weight within that of min_p or of top-p's floor (the token is in
// on one side, out on the other), top-p's running mass within that of its
// target (the nucleus ends one token earlier or later), and the draw's target
// within that of a slot edge.  For each such token this replays the CPU draw
// with the token toggled (or the draw's neighbour taken); if that gives the
// device's token, the mismatch is a near-tie, counted; anything else fails.
constexpr double kRel = 3.6e-7;

// The truncated draw with uniform u (the draw after top-p's rejected first
// draw, or the only one).
bool truncated_near_tie(const float *row, int32_t vocab, const reset::Policy &p, float temperature, double u,
                        int32_t cpu_token, int32_t gpu_token, std::string *why) {
    const reset::LogitStats stats = reset::logit_stats(row, vocab);
    reset::Candidates c;
    reset::truncate(row, vocab, stats.max, temperature, p.top_k, p.top_p, p.min_p, c);
    const float inv_t = 1.0f / temperature;
    auto weight = [&](int32_t id) { return std::exp((row[id] - stats.max) * inv_t); };
    // The CPU's draw over its survivors with `toggle` added or removed.
    auto draw_with = [&](int32_t toggle) {
        std::vector<int32_t> ids = c.ids;
        const auto it = std::lower_bound(ids.begin(), ids.end(), toggle);
        if (it != ids.end() && *it == toggle) ids.erase(it);
        else ids.insert(it, toggle);
        double total = 0.0;
        for (int32_t id : ids) total += double(weight(id));
        const double target = u * total;
        double run = 0.0;
        for (int32_t id : ids) {
            run += double(weight(id));
            if (run > target) return id;
        }
        return ids.back();
    };
    // 1. The draw's target at an edge of the CPU token's slot.
    const double target = u * c.total;
    double before = 0.0, after = 0.0;
    for (size_t i = 0; i < c.ids.size(); ++i) {
        before = after;
        after += double(c.weights[i]);
        if (c.ids[i] != cpu_token) continue;
        const bool next = i + 1 < c.ids.size() && c.ids[i + 1] == gpu_token && after - target <= kRel * c.total;
        const bool prev = i > 0 && c.ids[i - 1] == gpu_token && target - before <= kRel * c.total;
        if (next || prev) {
            *why = "draw target at a slot edge";
            return true;
        }
        break;
    }
    // The filters' inputs, as truncate() computes them.
    std::vector<int32_t> ids;
    for (int32_t i = 0; i < vocab; ++i)
        if (row[i] != -INFINITY) ids.push_back(i);
    auto by_logit = [&](int32_t a, int32_t b) { return row[a] != row[b] ? row[a] > row[b] : a < b; };
    if (p.top_k > 0 && size_t(p.top_k) < ids.size()) {
        std::sort(ids.begin(), ids.end(), by_logit);
        ids.resize(size_t(p.top_k));
    }
    // 2. A weight at min_p.
    if (p.min_p > 0.0f)
        for (int32_t id : ids)
            if (std::fabs(double(weight(id)) - p.min_p) <= kRel * p.min_p && draw_with(id) == gpu_token) {
                *why = "a weight at min_p";
                return true;
            }
    if (p.top_p < 1.0f) {
        double total = 0.0;
        for (int32_t id : ids) total += double(weight(id));
        const double floor = reset::rule::top_p_weight_floor(p.top_p, total, int64_t(ids.size()));
        // 3. A weight at top-p's floor.
        for (int32_t id : ids)
            if (std::fabs(double(weight(id)) - floor) <= kRel * floor && draw_with(id) == gpu_token) {
                *why = "a weight at top-p's floor";
                return true;
            }
        // 4. The nucleus' running mass at its target: the last token kept or
        // the first one left out may go the other way.
        std::vector<int32_t> heavy;
        for (int32_t id : ids)
            if (double(weight(id)) >= floor) heavy.push_back(id);
        std::sort(heavy.begin(), heavy.end(), by_logit);
        const double goal = double(p.top_p) * total;
        double mass = 0.0;
        for (size_t i = 0; i < heavy.size(); ++i) {
            const double prior = mass;
            mass += double(weight(heavy[i]));
            if (mass < goal) continue;
            const bool last_in = goal - prior <= kRel * goal && i > 0;
            const bool next_in = mass - goal <= kRel * goal && i + 1 < heavy.size();
            if ((last_in && draw_with(heavy[i]) == gpu_token) || (next_in && draw_with(heavy[i + 1]) == gpu_token)) {
                *why = "top-p's mass at its target";
                return true;
            }
            break;
        }
    }
    return false;
}

// Top-p without a top-k cut draws rejection-first (sampling/truncation.h,
// draw_truncated): the untruncated draw with u1, kept if inside the
// survivors, else the truncated draw with u2.  Besides the truncated draw's
// near-ties (after a rejection on both sides), the first draw has two: its
// target at an edge of its token's slot (the neighbour drawn instead), and
// its token at the edge of the nucleus (a weight within rounding of top-p's
// floor or of min_p, or the mass ranked before it within rounding of
// top_p·total): kept on one side, rejected on the other.
bool rounding_near_tie(const float *row, int32_t vocab, const reset::Policy &p, float temperature, uint32_t sequence,
                       int64_t accepted, int32_t cpu_token, int32_t gpu_token, std::string *why) {
    const double u1 = reset::philox::uniform(p.seed, sequence, static_cast<uint64_t>(accepted));
    const double u2 = reset::philox::second_uniform(p.seed, sequence, static_cast<uint64_t>(accepted));
    std::vector<int32_t> unmasked;
    for (int32_t i = 0; i < vocab; ++i)
        if (row[i] != -INFINITY) unmasked.push_back(i);
    if (!reset::rule::draws_rejection_first(p.top_k, p.top_p, int64_t(unmasked.size())))
        return truncated_near_tie(row, vocab, p, temperature, u1, cpu_token, gpu_token, why);

    const reset::LogitStats stats = reset::logit_stats(row, vocab);
    reset::Candidates kept;
    reset::truncate(row, vocab, stats.max, temperature, p.top_k, p.top_p, p.min_p, kept);
    const float inv_t = 1.0f / temperature;
    auto weight = [&](int32_t id) { return std::exp((row[id] - stats.max) * inv_t); };
    auto is_kept = [&](int32_t id) { return std::binary_search(kept.ids.begin(), kept.ids.end(), id); };
    // What the CPU returns when its first draw gives `first`, kept or not.
    auto token_after = [&](int32_t first, bool in) { return in ? first : reset::draw(kept, u2); };
    double total = 0.0;
    for (int32_t id : unmasked) total += double(weight(id));
    const double target = u1 * total;
    // The first draw's token and its slot's neighbours (positive weights).
    double run = 0.0;
    size_t at = unmasked.size() - 1;
    for (size_t i = 0; i < unmasked.size(); ++i) {
        run += double(weight(unmasked[i]));
        if (run > target) {
            at = i;
            break;
        }
    }
    const int32_t first = unmasked[at];
    const double slot_end = run, slot_begin = run - double(weight(first));
    int32_t prev = -1, next = -1;
    for (size_t i = at; i-- > 0;)
        if (weight(unmasked[i]) > 0.0f) {
            prev = unmasked[i];
            break;
        }
    for (size_t i = at + 1; i < unmasked.size(); ++i)
        if (weight(unmasked[i]) > 0.0f) {
            next = unmasked[i];
            break;
        }
    // 1. The first draw's target at a slot edge.
    if ((next >= 0 && slot_end - target <= kRel * total && token_after(next, is_kept(next)) == gpu_token) ||
        (prev >= 0 && target - slot_begin <= kRel * total && token_after(prev, is_kept(prev)) == gpu_token)) {
        *why = "first draw's target at a slot edge";
        return true;
    }
    // 2. The first draw's token at the edge of the nucleus.
    const double w = double(weight(first));
    const double floor = reset::rule::top_p_weight_floor(p.top_p, total, int64_t(unmasked.size()));
    double before = 0.0;
    for (int32_t id : unmasked)
        if (row[id] > row[first] || (row[id] == row[first] && id < first)) before += double(weight(id));
    const double goal = double(p.top_p) * total;
    const bool at_edge = std::fabs(w - floor) <= kRel * floor ||
                         (p.min_p > 0.0f && std::fabs(w - p.min_p) <= kRel * p.min_p) ||
                         std::fabs(before - goal) <= kRel * goal;
    if (at_edge && token_after(first, !is_kept(first)) == gpu_token) {
        *why = "first draw's token at the nucleus' edge";
        return true;
    }
    // 3. Both rejected their first draw: the truncated draw with u2.
    return !is_kept(first) && truncated_near_tie(row, vocab, p, temperature, u2, cpu_token, gpu_token, why);
}

// Rotates a row (a circular shift of its ids: the same logits, so the same
// total and the same nucleus up to tie order) until the CPU's first top-p
// draw falls outside the nucleus, so the token comes from the second draw
// and the device must find the nucleus' cut.  Without this, a flat row at
// top_p 0.999 would reach the cut once in a thousand tokens.  Returns
// whether it found such a rotation (an all-tied row has none when u1 < p).
bool second_draw_taken(const float *row, int32_t vocab, const reset::Policy &p, float temperature, uint32_t sequence,
                       int64_t accepted);
bool rotate_to_second_draw(float *row, int32_t vocab, const reset::Policy &p, float temperature, uint32_t sequence,
                           int64_t accepted) {
    const reset::LogitStats stats = reset::logit_stats(row, vocab);
    reset::Candidates kept;
    reset::truncate(row, vocab, stats.max, temperature, p.top_k, p.top_p, p.min_p, kept);
    std::vector<char> in(size_t(vocab), 0);
    for (int32_t id : kept.ids) in[size_t(id)] = 1;
    // prefix[k]: the weight of ids below k (as the CPU's running sum, up to rounding).
    std::vector<double> prefix(size_t(vocab) + 1, 0.0);
    const float inv_t = 1.0f / temperature;
    for (int32_t i = 0; i < vocab; ++i)
        prefix[size_t(i) + 1] =
            prefix[size_t(i)] + (row[i] == -INFINITY ? 0.0 : double(std::exp((row[i] - stats.max) * inv_t)));
    const double total = prefix[size_t(vocab)];
    const double target = reset::philox::uniform(p.seed, sequence, static_cast<uint64_t>(accepted)) * total;
    std::uniform_int_distribution<int32_t> offset(0, vocab - 1);
    for (int attempt = 0; attempt < 64; ++attempt) {
        // Rotated by r, the row runs ids r..vocab-1, then 0..r-1.
        const int32_t r = offset(g_rng);
        const double head = total - prefix[size_t(r)];
        const double goal = target < head ? prefix[size_t(r)] + target : target - head;
        const auto it = std::upper_bound(prefix.begin() + 1, prefix.end(), goal);
        if (it == prefix.end()) continue;
        const int32_t first = static_cast<int32_t>(it - prefix.begin()) - 1;
        if (in[size_t(first)]) continue;
        std::vector<float> rotated(row, row + vocab);
        std::rotate(rotated.begin(), rotated.begin() + r, rotated.end());
        if (!second_draw_taken(rotated.data(), vocab, p, temperature, sequence, accepted)) continue;
        std::copy(rotated.begin(), rotated.end(), row);
        return true;
    }
    return false;
}

// Whether the CPU rejected top-p's first draw for this token (so the device
// found the nucleus' cut too): counted, so the tests can say that path ran.
bool second_draw_taken(const float *row, int32_t vocab, const reset::Policy &p, float temperature, uint32_t sequence,
                       int64_t accepted) {
    if (temperature <= 0.0f) return false;
    const auto step = static_cast<uint64_t>(accepted);
    reset::Candidates scratch;
    bool second_draw = false;
    reset::draw_truncated(row, vocab, reset::logit_stats(row, vocab).max, temperature, p.top_k, p.top_p, p.min_p,
                          reset::philox::uniform(p.seed, sequence, step),
                          reset::philox::second_uniform(p.seed, sequence, step), scratch, &second_draw);
    return second_draw;
}

// A delimiter vocabulary for the boundary test: two NL ids and two DNL ids.
struct Delimiters {
    reset::DelimiterSets sets;
    std::vector<uint8_t> flags;
};

Delimiters make_delimiters(int32_t vocab) {
    Delimiters d;
    d.flags.assign(static_cast<size_t>(vocab), 0);
    if (vocab < 8) return d;
    const int32_t nl[2] = {vocab / 7, vocab - 3};
    const int32_t dnl[2] = {vocab / 3, 5};
    for (int32_t id : nl) {
        d.sets.newline.push_back(id);
        d.flags[size_t(id)] |= reset::kDelimiterNewline;
    }
    for (int32_t id : dnl) {
        d.sets.double_newline.push_back(id);
        d.flags[size_t(id)] |= reset::kDelimiterDoubleNewline;
    }
    return d;
}

// One row of logits, never zeros: normal of random spread, plus (at random)
// a peak, masked entries, exact ties, a tie at the maximum, and a delimiter
// pushed to the top.
void fill_row(float *z, int32_t vocab, const Delimiters &delims, bool push_delimiters) {
    std::uniform_int_distribution<int32_t> pick(0, vocab - 1);
    const float sigma = uniform(0.3f, 5.0f);
    const float shift = uniform(-20.0f, 20.0f);
    for (int32_t i = 0; i < vocab; ++i) z[i] = shift + normal(sigma);
    if (vocab == 1) return;
    if (uniform(0.0f, 1.0f) < 0.3f) z[pick(g_rng)] += uniform(3.0f, 12.0f);
    if (uniform(0.0f, 1.0f) < 0.5f) {
        const int32_t masked = std::max<int32_t>(1, vocab / 100);
        for (int32_t j = 0; j < masked; ++j) z[pick(g_rng)] = -INFINITY;
    }
    if (uniform(0.0f, 1.0f) < 0.6f) {
        // Exact ties among ordinary tokens and around the top: the order
        // breaks them by id, so top-k and top-p cut through tie groups.
        const int32_t pairs = std::min<int32_t>(200, vocab);
        for (int32_t j = 0; j < pairs; ++j) z[pick(g_rng)] = z[pick(g_rng)];
        const int32_t top = static_cast<int32_t>(std::max_element(z, z + vocab) - z);
        const int32_t copies = 1 + static_cast<int32_t>(uniform(0.0f, 4.0f));
        for (int32_t j = 0; j < copies; ++j) z[pick(g_rng)] = z[top];
    }
    if (push_delimiters && !delims.sets.newline.empty()) {
        const float r = uniform(0.0f, 1.0f);
        const float top = *std::max_element(z, z + vocab);
        if (r < 0.12f) z[delims.sets.double_newline[size_t(r * 100) % 2]] = top + 40.0f;
        else if (r < 0.35f) z[delims.sets.newline[size_t(r * 100) % 2]] = top + 40.0f;
    }
    // At least one finite logit (the masking above may have hit them all in tiny vocabularies).
    bool any = false;
    for (int32_t i = 0; i < vocab; ++i) any = any || z[i] != -INFINITY;
    if (!any) z[0] = shift;
}

// Rows for the candidate-list edge cases of the device's truncation.
enum RowShape {
    kRowRandom = 0,  // fill_row
    kRowAllTied,     // every logit equal (one tie group: top-k and top-p cut through it)
    kRowFlat,        // N(0, 0.5): tens of thousands of survivors under top-p / min-p
    kRowCoarse,      // N(0, 2) rounded to 1/8: large tie groups in every bin
    kRowWideBin,     // N(0, 0.3) + 24: most of the row inside one radix bin of the first level
    kRowFlat75,      // N(0, 0.75): the random-weight Qwen3-8B checkpoint's logits (see test_timing)
    kRowHuge,        // finite logits out to +-FLT_MAX: max - min overflows float, and so does z - max
    kRowDenormal,    // multiples of the smallest denormal: distinct logits, every weight rounds to 1
};

void fill_shaped(float *z, int32_t vocab, RowShape shape, const Delimiters &delims, bool push_delimiters) {
    switch (shape) {
        case kRowRandom: fill_row(z, vocab, delims, push_delimiters); return;
        case kRowAllTied: {
            const float v = uniform(-5.0f, 5.0f);
            for (int32_t i = 0; i < vocab; ++i) z[i] = v;
            return;
        }
        case kRowFlat:
            for (int32_t i = 0; i < vocab; ++i) z[i] = normal(0.5f);
            return;
        case kRowFlat75:
            for (int32_t i = 0; i < vocab; ++i) z[i] = normal(0.75f);
            return;
        case kRowCoarse:
            for (int32_t i = 0; i < vocab; ++i) z[i] = std::round(normal(2.0f) * 8.0f) / 8.0f;
            return;
        case kRowWideBin:
            for (int32_t i = 0; i < vocab; ++i) z[i] = 24.0f + normal(0.3f);
            return;
        case kRowHuge: {
            // What a broken checkpoint's FP32 accumulation can produce: the value
            // bins' range (max - min) is +inf, and z - max is -inf for the low ones.
            std::uniform_int_distribution<int32_t> pick(0, vocab - 1);
            for (int32_t i = 0; i < vocab; ++i) z[i] = normal(1.0f) * 1e37f;
            for (int32_t j = 0; j < std::max<int32_t>(1, vocab / 500); ++j) {
                z[pick(g_rng)] = -3.0e38f;
                // Clamped: a draw past 4 sigma would round to +inf, which no model row may hold.
                z[pick(g_rng)] = std::min(3.0e38f + normal(1.0f) * 1e37f, std::numeric_limits<float>::max());
            }
            // A tie group at FLT_MAX (the only weights that do not round to 0): top-k and top-p cut through it.
            const int32_t copies = 1 + static_cast<int32_t>(uniform(0.0f, 4.0f));
            for (int32_t j = 0; j < copies; ++j) z[pick(g_rng)] = std::numeric_limits<float>::max();
            if (vocab > 2) z[pick(g_rng)] = -INFINITY;
            return;
        }
        case kRowDenormal:
            // max - min is a few denormals: 256 bins over it need a scale past FLT_MAX.
            for (int32_t i = 0; i < vocab; ++i)
                z[i] = static_cast<float>(static_cast<int32_t>(uniform(-3.0f, 4.0f))) *
                       std::numeric_limits<float>::denorm_min();
            return;
    }
}

// Members of the value bin where top-p's nucleus ends (kernels/sampling.cu,
// ValueBins: 256 bins over [min, max] of the finite logits, in float as the
// device computes them), for a row sampled at temperature T: which of the
// device's two top-p paths a row takes (gathered up to
// SamplingPlan::gather_capacity members, else the radix levels over the row).
// An independent count (a sort), not the device's; the floor pre-filter drops
// only tokens below the cut, so it does not move it.
int cut_bin_members(const float *z, int32_t vocab, float temperature, float top_p) {
    float lo = INFINITY, hi = -INFINITY;
    std::vector<int32_t> order;
    for (int32_t i = 0; i < vocab; ++i) {
        if (!std::isfinite(z[i])) continue;
        lo = std::min(lo, z[i]);
        hi = std::max(hi, z[i]);
        order.push_back(i);
    }
    if (order.empty() || !(hi > lo)) return 0;
    const float scale = 256.0f / (hi - lo);
    auto bin = [&](float v) { return std::min(std::max(static_cast<int>((v - lo) * scale), 0), 255); };
    std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return z[a] > z[b] || (z[a] == z[b] && a < b); });
    double total = 0.0;
    for (int32_t i : order) total += std::exp((static_cast<double>(z[i]) - hi) / temperature);
    double sum = 0.0;
    int32_t cut = order.back();
    for (int32_t i : order) {
        sum += std::exp((static_cast<double>(z[i]) - hi) / temperature);
        if (sum >= static_cast<double>(top_p) * total) {
            cut = i;
            break;
        }
    }
    int members = 0;
    for (int32_t i : order) members += bin(z[i]) == bin(z[cut]) ? 1 : 0;
    return members;
}
// The members the histograms' own space gathers (kernels/sampling.cu,
// kMinGatherCapacity); plans with more shared memory gather more.
constexpr int kHistogramGatherCapacity = 2048;
// Rows whose cut bin held more than kHistogramGatherCapacity members and at
// most the plan's gather capacity, and more than that: counted by run_case
// for cases that ask (Case::census), read by test_wide_cut_bin.
int64_t g_cut_bins_grown = 0, g_cut_bins_past = 0;

struct Case {
    std::string name;
    int32_t vocab = 0;
    int team = 0;
    bool force_global = false;
    bool push_delimiters = false;
    bool use_graph = false;
    bool mask = false;  // a random per-sequence active mask each step (SamplingArgs::active)
    RowShape shape = kRowRandom;
    int steps = 1;
    std::vector<reset::Policy> policies;  // one per sequence (batch = size)
    bool census = false;  // count each top-p row's cut-bin members (cut_bin_members)
    bool force_second_draw = false;  // rotate top-p rows so the first draw is rejected (rotate_to_second_draw)
    bool counts = false;    // pass SamplingArgs::counts (the penalties' token counts: a prompt for the
                            // repetition penalty, then what the device accepts)
    bool same_row = false;  // every step samples step 0's rows again, so tokens repeat and penalties bite
    bool bias = false;      // a logit bias (SamplingArgs::bias) for the even sequences, made at step 0:
                            // row 0's 4 best tokens banned, row 1's 4 best raised, 40 random ones moved
};

// Runs one case: the device sampler and one SequenceSampler per sequence
// over `steps` decode steps, the device state evolving on its own and the
// CPU sampler accepting the device's token (so a counted near-tie does not
// make the two diverge).
void run_case(const Case &c) {
    const int batch = static_cast<int>(c.policies.size());
    const int32_t V = c.vocab;
    const Delimiters delims = make_delimiters(V);
    std::vector<reset::SequenceSampler> cpu;
    std::vector<reset::SamplingPolicyDevice> dev_policies;
    std::vector<reset::SamplingSequenceState> dev_states(static_cast<size_t>(batch));
    std::vector<uint32_t> sequence_ids;
    std::vector<reset::Policy> seeded;
    for (int b = 0; b < batch; ++b) {
        reset::Policy p = c.policies[size_t(b)];
        p.seed = g_rng();
        seeded.push_back(p);
        cpu.emplace_back(delims.sets);
        cpu.back().set_policy(p, true);
        dev_policies.push_back(reset::sampling_policy_device(p));
        reset::SamplingSequenceState &s = dev_states[size_t(b)];
        reset::rule::clear_state(s.step);
        s.accepted = 0;
        s.last_token = -1;
        s.prev_token = -1;
        s.sequence = static_cast<uint32_t>(g_rng() % 1000);
        sequence_ids.push_back(s.sequence);
    }
    DeviceBuffer d_logits(size_t(batch) * size_t(V) * 4), d_policies(dev_policies.size() * sizeof(dev_policies[0])),
        d_states(dev_states.size() * sizeof(dev_states[0])), d_rings(size_t(batch) * kRingCapacity * 4),
        d_flags(static_cast<size_t>(V)), d_workspace(reset::sampling_workspace_bytes(batch, V)), d_tokens(size_t(batch) * 4),
        d_signals(size_t(batch) * sizeof(reset::SamplingSignalsDevice)), d_active(size_t(batch) * 4),
        d_counts(c.counts ? size_t(batch) * size_t(V) * 4 : 4), d_bias(size_t(V) * 4);
    if (c.counts) d_counts.upload(std::vector<int32_t>(size_t(batch) * size_t(V), 0));
    d_policies.upload(dev_policies);
    d_states.upload(dev_states);
    d_rings.poison();  // the window ring is only ever read where it was written
    d_flags.upload(delims.flags);

    reset::SamplingArgs args;
    args.batch = batch;
    args.vocab = V;
    args.logits = d_logits.as<float>();
    args.ld_logits = V;
    args.policies = d_policies.as<reset::SamplingPolicyDevice>();
    args.states = d_states.as<reset::SamplingSequenceState>();
    args.rings = d_rings.as<float>();
    args.ring_capacity = kRingCapacity;
    args.delimiter_flags = d_flags.as<uint8_t>();
    args.workspace = d_workspace.as<float>();
    args.tokens = d_tokens.as<int32_t>();
    args.signals = d_signals.as<reset::SamplingSignalsDevice>();
    args.team = c.team;
    args.force_global_memory = c.force_global;
    if (c.counts) args.counts = d_counts.as<int32_t>();
    if (c.bias) args.bias = d_bias.as<float>();
    std::vector<int32_t> active(static_cast<size_t>(batch), 1);
    if (c.mask) {
        d_active.upload(active);
        args.active = d_active.as<int32_t>();
    }
    int64_t skipped = 0;
    const reset::SamplingPlan plan = reset::sampling_plan(args);

    cudaStream_t stream;
    CUDA_OK(cudaStreamCreate(&stream));
    cudaGraphExec_t graph_exec = nullptr;
    if (c.use_graph) {
        cudaGraph_t graph;
        CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
        reset::sample_tokens(args, stream);
        CUDA_OK(cudaStreamEndCapture(stream, &graph));
        CUDA_OK(cudaGraphInstantiate(&graph_exec, graph, 0));
        CUDA_OK(cudaGraphDestroy(graph));
    }

    std::vector<float> logits(size_t(batch) * size_t(V));
    int case_failures_before = g_failures;
    int64_t near_ties = 0, sampled = 0;
    for (int step = 0; step < c.steps; ++step) {
        for (int b = 0; b < batch; ++b) {
            float *row = &logits[size_t(b) * size_t(V)];
            if (c.same_row && step > 0) continue;
            fill_shaped(row, V, c.shape, delims, c.push_delimiters);
            if (c.force_second_draw && seeded[size_t(b)].top_p < 1.0f) {
                reset::SequenceSampler probe = cpu[size_t(b)];  // the temperature this token will get
                const float t = probe.decide(row, V).temperature;
                const int64_t accepted = cpu[size_t(b)].accepted();
                if (t > 0.0f && rotate_to_second_draw(row, V, seeded[size_t(b)], t, sequence_ids[size_t(b)], accepted))
                    ++g_rotated_rows;
            }
        }
        if (c.counts && step == 0) {
            // A prompt for the repetition penalty: each row's 6 best tokens (so the penalty moves the draw)
            // and 26 random ones, uploaded as the engine uploads them (rule::kInContext).
            std::vector<int32_t> counts(size_t(batch) * size_t(V), 0);
            for (int b = 0; b < batch; ++b) {
                const float *row = &logits[size_t(b) * size_t(V)];
                std::vector<int32_t> ids(static_cast<size_t>(V));
                std::iota(ids.begin(), ids.end(), 0);
                const size_t best = std::min<size_t>(6, ids.size());
                std::partial_sort(ids.begin(), ids.begin() + long(best), ids.end(),
                                  [&](int32_t x, int32_t y) { return row[x] > row[y]; });
                std::vector<int32_t> prompt(ids.begin(), ids.begin() + long(best));
                for (int i = 0; i < 26; ++i) prompt.push_back(static_cast<int32_t>(g_rng() % uint32_t(V)));
                cpu[size_t(b)].add_context(prompt.data(), prompt.size());
                cpu[size_t(b)].add_penalty_counts(&counts[size_t(b) * size_t(V)], V);
            }
            d_counts.upload(counts);
        }
        if (c.bias && step == 0) {
            std::vector<reset_logit_bias> entries;
            std::vector<bool> listed(static_cast<size_t>(V), false);
            auto add = [&](int32_t token, float value) {
                if (listed[size_t(token)]) return;
                listed[size_t(token)] = true;
                entries.push_back({token, value});
            };
            for (int b = 0; b < std::min(batch, 2); ++b) {
                const float *row = &logits[size_t(b) * size_t(V)];
                std::vector<int32_t> ids(static_cast<size_t>(V));
                std::iota(ids.begin(), ids.end(), 0);
                const size_t best = std::min<size_t>(4, ids.size() - 1);  // never every token banned
                std::partial_sort(ids.begin(), ids.begin() + long(best), ids.end(),
                                  [&](int32_t x, int32_t y) { return row[x] > row[y]; });
                for (size_t i = 0; i < best; ++i) add(ids[i], b == 0 ? -INFINITY : uniform(2.0f, 6.0f));
            }
            for (int i = 0; i < 40; ++i) add(static_cast<int32_t>(g_rng() % uint32_t(V)), uniform(-10.0f, 10.0f));
            auto bias = std::make_shared<const reset::LogitBias>(reset::make_logit_bias(entries.data(), entries.size(), V));
            d_bias.upload(bias->dense(V));
            for (int b = 0; b < batch; b += 2) {
                cpu[size_t(b)].set_logit_bias(bias);
                dev_policies[size_t(b)].logit_bias = 1;
            }
            d_policies.upload(dev_policies);
        }
        d_logits.upload(logits);
        d_tokens.poison();
        d_signals.poison();
        std::vector<reset::SamplingSequenceState> states_before;
        std::vector<float> rings_before;
        if (c.mask) {
            // About a third skipped, sometimes all or none.
            const float r = uniform(0.0f, 1.0f);
            for (int b = 0; b < batch; ++b)
                active[size_t(b)] = r < 0.1f ? 0 : r < 0.2f ? 1 : (uniform(0.0f, 1.0f) < 0.35f ? 0 : 1);
            d_active.upload(active);
            states_before = d_states.download<reset::SamplingSequenceState>(size_t(batch));
            rings_before = d_rings.download<float>(size_t(batch) * kRingCapacity);
        }
        if (c.use_graph) CUDA_OK(cudaGraphLaunch(graph_exec, stream));
        else reset::sample_tokens(args, stream);
        CUDA_OK(cudaGetLastError());
        CUDA_OK(cudaStreamSynchronize(stream));
        const auto tokens = d_tokens.download<int32_t>(size_t(batch));
        const auto signals = d_signals.download<reset::SamplingSignalsDevice>(size_t(batch));
        const auto states = d_states.download<reset::SamplingSequenceState>(size_t(batch));
        std::vector<float> rings_after;
        if (c.mask) rings_after = d_rings.download<float>(size_t(batch) * kRingCapacity);
        for (int b = 0; b < batch; ++b) {
            const float *row = &logits[size_t(b) * size_t(V)];
            if (c.mask) {
                // Every sequence's ring: a skipped one is untouched, an active
                // one changes in one slot at most.
                const float *before = &rings_before[size_t(b) * kRingCapacity];
                const float *after = &rings_after[size_t(b) * kRingCapacity];
                int changed = 0;
                for (int j = 0; j < kRingCapacity; ++j) changed += std::memcmp(&before[j], &after[j], 4) != 0 ? 1 : 0;
                if (active[size_t(b)] == 0) {
                    const reset::SamplingSignalsDevice &got = signals[size_t(b)];
                    reset::SamplingSignalsDevice zero = {};
                    zero.status = reset::kSamplingOk;
                    EXPECT(tokens[size_t(b)] == -1, "%s step %d seq %d (skipped): token %d", c.name.c_str(), step, b,
                           tokens[size_t(b)]);
                    EXPECT(std::memcmp(&got, &zero, sizeof(zero)) == 0,
                           "%s step %d seq %d (skipped): signals not zero / status %d", c.name.c_str(), step, b,
                           got.status);
                    EXPECT(std::memcmp(&states[size_t(b)], &states_before[size_t(b)], sizeof(states[0])) == 0,
                           "%s step %d seq %d (skipped): state changed", c.name.c_str(), step, b);
                    EXPECT(changed == 0, "%s step %d seq %d (skipped): %d ring slots changed", c.name.c_str(), step, b,
                           changed);
                    ++skipped;
                    continue;
                }
                EXPECT(changed <= 1, "%s step %d seq %d: %d ring slots changed", c.name.c_str(), step, b, changed);
            }
            reset::SamplerSignals ref;
            const int64_t accepted_before = cpu[size_t(b)].accepted();
            const int32_t want = cpu[size_t(b)].sample(row, V, static_cast<int32_t>(sequence_ids[size_t(b)]), &ref);
            // The near-tie replays below draw from the row the samplers drew from: with penalties, the lowered one.
            std::vector<float> lowered;
            if (seeded[size_t(b)].penalized()) {
                std::vector<int32_t> counts(static_cast<size_t>(V), 0);
                cpu[size_t(b)].add_penalty_counts(counts.data(), V);
                lowered.assign(row, row + V);
                const reset::Policy &q = seeded[size_t(b)];
                for (int32_t i = 0; i < V; ++i)
                    lowered[size_t(i)] = reset::rule::penalized_logit(row[i], counts[size_t(i)], q.repetition_penalty,
                                                                      q.presence_penalty, q.frequency_penalty);
                row = lowered.data();
            }
            const bool second_draw = second_draw_taken(row, V, seeded[size_t(b)], ref.temperature,
                                                       sequence_ids[size_t(b)], accepted_before);
            g_second_draws += second_draw ? 1 : 0;
            // Only a second draw takes the device through the nucleus' cut.
            if (c.census && second_draw) {
                const int members = cut_bin_members(row, V, ref.temperature, seeded[size_t(b)].top_p);
                if (members > kHistogramGatherCapacity && members <= plan.gather_capacity) ++g_cut_bins_grown;
                if (members > plan.gather_capacity) ++g_cut_bins_past;
            }
            const reset::SamplingSignalsDevice &got = signals[size_t(b)];
            const char *what = c.name.c_str();
            EXPECT(got.status == reset::kSamplingOk, "%s step %d seq %d: status %d", what, step, b, got.status);
            // The device token's log-probability under the raw row (whatever penalties lowered the draw's),
            // to 1e-6 relative: a float ulp of the result plus another summation order of the same doubles.
            // Against the CPU sampler's where both drew the same token, and, every 8th check (a pass over
            // the row in double costs as much as the CPU sampler), against log_softmax_at.
            if (tokens[size_t(b)] == want) {
                EXPECT(close_rel(got.logprob, ref.logprob, 1e-6), "%s step %d seq %d: logprob %.9g vs CPU %.9g", what,
                       step, b, got.logprob, ref.logprob);
                ++g_logprob_checks;
            }
            if (g_state_checks % 8 == 0 && tokens[size_t(b)] >= 0 && tokens[size_t(b)] < V) {
                const double lp = log_softmax_at(&logits[size_t(b) * size_t(V)], V, tokens[size_t(b)]);
                EXPECT(close_rel(got.logprob, lp, 1e-6), "%s step %d seq %d: logprob %.9g vs %.9g (token %d)", what,
                       step, b, got.logprob, lp, tokens[size_t(b)]);
                ++g_logprob_independent;
            }
            // The two numbers the logprob came from, which top_logprobs reuses: the maximum is exact; log Σe
            // sums CUDA's expf terms (<= 2 ulp from the CPU's, 2.4e-7 relative) in another order, so the
            // sum agrees to ~2.4e-7 relative and its log to ~2.4e-7 absolute: 1e-6.
            EXPECT(got.raw_max == ref.raw_max, "%s step %d seq %d: raw max %.9g vs CPU %.9g", what, step, b,
                   got.raw_max, ref.raw_max);
            EXPECT(std::fabs(got.log_sum_exp - ref.log_sum_exp) <= 1e-6,
                   "%s step %d seq %d: log sum exp %.17g vs CPU %.17g", what, step, b, got.log_sum_exp,
                   ref.log_sum_exp);
            EXPECT(close_rel(got.entropy, ref.entropy, 1e-5), "%s step %d seq %d: entropy %.9g vs CPU %.9g", what,
                   step, b, got.entropy, ref.entropy);
            EXPECT(close_rel(got.step_entropy, ref.step_entropy, 1e-5), "%s step %d seq %d: step entropy %.9g vs %.9g",
                   what, step, b, got.step_entropy, ref.step_entropy);
            EXPECT(close_rel(got.global_mean, ref.global_mean, 1e-5), "%s step %d seq %d: global mean %.9g vs %.9g",
                   what, step, b, got.global_mean, ref.global_mean);
            EXPECT(close_rel(got.threshold, ref.threshold, 1e-5), "%s step %d seq %d: threshold %.9g vs %.9g", what,
                   step, b, got.threshold, ref.threshold);
            EXPECT(got.step_index == ref.step_index, "%s step %d seq %d: step index %d vs %d", what, step, b,
                   got.step_index, ref.step_index);
            EXPECT((got.boundary != 0) == ref.boundary, "%s step %d seq %d: boundary %d vs %d", what, step, b,
                   got.boundary, int(ref.boundary));
            g_boundaries += ref.boundary ? 1 : 0;
            // A near-tie: H_t within rounding of τ (the temperature), or Ĥ
            // within rounding of H̄ (the step gate).  Either may then go the
            // other way on the device; nothing else may.
            const bool tie_t = close_rel(ref.entropy, ref.threshold, 2e-6) && ref.threshold != 0.0f;
            const bool tie_gate = close_rel(ref.step_entropy, ref.global_mean, 2e-6) && ref.step_entropy != ref.global_mean;
            const bool same_decision = got.temperature == ref.temperature && (got.uncertain != 0) == ref.uncertain;
            if (!same_decision && (tie_t || tie_gate)) {
                ++near_ties;
                std::printf("  near-tie %s step %d seq %d: H %.9g tau %.9g Hstep %.9g Hbar %.9g (T %g vs %g)\n", what,
                            step, b, ref.entropy, ref.threshold, ref.step_entropy, ref.global_mean, got.temperature,
                            ref.temperature);
            } else {
                EXPECT(got.temperature == ref.temperature, "%s step %d seq %d: temperature %.9g vs %.9g", what, step,
                       b, got.temperature, ref.temperature);
                EXPECT((got.uncertain != 0) == ref.uncertain, "%s step %d seq %d: uncertain %d vs %d", what, step, b,
                       got.uncertain, int(ref.uncertain));
                std::string why;
                if (tokens[size_t(b)] != want && got.temperature == ref.temperature && ref.temperature > 0.0f &&
                    rounding_near_tie(row, V, seeded[size_t(b)], ref.temperature, sequence_ids[size_t(b)],
                                      cpu[size_t(b)].accepted(), want, tokens[size_t(b)], &why)) {
                    ++g_draw_near_ties;
                    std::printf("  truncation/draw near-tie %s step %d seq %d: token %d vs CPU %d (%s)\n", what, step,
                                b, tokens[size_t(b)], want, why.c_str());
                } else {
                    EXPECT(tokens[size_t(b)] == want,
                           "%s step %d seq %d: token %d vs CPU %d (T %g, logits %.9g vs %.9g)", what, step, b,
                           tokens[size_t(b)], want, ref.temperature,
                           tokens[size_t(b)] >= 0 && tokens[size_t(b)] < V ? row[tokens[size_t(b)]] : 0.0f, row[want]);
                }
                ++g_compared_tokens;
                if (ref.temperature > 0.0f) ++sampled;
            }
            // The device accepted its own token; the CPU accepts the same.
            cpu[size_t(b)].accept(tokens[size_t(b)] >= 0 ? tokens[size_t(b)] : want);
            const reset::SamplingSequenceState &ds = states[size_t(b)];
            const reset::rule::StepState &cs = cpu[size_t(b)].state();
            EXPECT(ds.accepted == cpu[size_t(b)].accepted() && ds.last_token == tokens[size_t(b)] &&
                       ds.step.total_count == cs.total_count && ds.step.step_count == cs.step_count &&
                       ds.step.window_count == cs.window_count && ds.step.window_next == cs.window_next &&
                       ds.step.step_index == cs.step_index,
                   "%s step %d seq %d: device state counts differ from the CPU's", what, step, b);
            EXPECT(close_rel(ds.step.total_sum, cs.total_sum, 1e-5) && close_rel(ds.step.step_sum, cs.step_sum, 1e-5),
                   "%s step %d seq %d: state sums %.12g/%.12g vs %.12g/%.12g", what, step, b, ds.step.total_sum,
                   ds.step.step_sum, cs.total_sum, cs.step_sum);
            ++g_state_checks;
        }
        if (g_failures > case_failures_before + 20) {
            std::printf("  (stopping %s after 20 failures)\n", c.name.c_str());
            break;
        }
    }
    if (c.counts) {
        // The device's counts are the CPU samplers' generations (the device counts what it accepts).
        const auto counts = d_counts.download<int32_t>(size_t(batch) * size_t(V));
        for (int b = 0; b < batch; ++b) {
            std::vector<int32_t> want(static_cast<size_t>(V), 0);
            cpu[size_t(b)].add_penalty_counts(want.data(), V);
            EXPECT(std::equal(want.begin(), want.end(), counts.begin() + long(b) * V),
                   "%s seq %d: the device's token counts differ from the CPU sampler's (prompt and generation)",
                   c.name.c_str(), b);
        }
    }
    g_near_ties += near_ties;
    g_sampled_tokens += sampled;
    std::printf("  %-34s vocab %6d batch %d team %d %s%s, %d steps: %s (near-ties %lld", c.name.c_str(), V, batch,
                plan.team, plan.shared_row ? "shared row" : "global row", c.use_graph ? ", graph" : "", c.steps,
                g_failures == case_failures_before ? "ok" : "FAILED", static_cast<long long>(near_ties));
    if (c.mask) std::printf(", %lld skipped", static_cast<long long>(skipped));
    std::printf(")\n");
    if (graph_exec) CUDA_OK(cudaGraphExecDestroy(graph_exec));
    CUDA_OK(cudaStreamDestroy(stream));
}

std::vector<reset::Policy> truncation_policies() {
    std::vector<reset::Policy> v = {
        fixed(0.7f),
        fixed(1.0f, 1),
        fixed(0.8f, 20),
        fixed(1.3f, 1000),
        fixed(0.7f, 0, 0.9f),
        fixed(1.0f, 0, 0.5f),
        fixed(1.2f, 0, 0.999f),
        fixed(0.7f, 0, 1.0f, 0.05f),
        fixed(1.0f, 0, 1.0f, 0.3f),
        fixed(0.9f, 50, 0.9f, 0.02f),
        fixed(1.5f, 200, 0.95f),
        fixed(0.6f, 0, 0.95f, 0.1f),
        fixed(1e-7f, 5),  // a FIXED temperature at the greedy limit: argmax
        fixed(2.0f, 1 << 30),  // top_k above the vocabulary: off
        fixed(0.2f, 0, 0.8f),
        fixed(4.0f, 7, 0.3f, 0.5f),
    };
    reset::Policy greedy;
    greedy.kind = RESET_POLICY_GREEDY;
    v.push_back(greedy);
    return v;
}

std::vector<reset::Policy> pick(const std::vector<reset::Policy> &from, int batch) {
    std::vector<reset::Policy> out;
    std::uniform_int_distribution<size_t> index(0, from.size() - 1);
    for (int b = 0; b < batch; ++b) out.push_back(from[index(g_rng)]);
    return out;
}

void test_truncation() {
    std::printf("== greedy / FIXED with top-k, top-p, min-p (mixed policies per launch)\n");
    const auto policies = truncation_policies();
    const int32_t vocabs[] = {151936, 1, 2, 7, 1000, 32005};
    for (int32_t V : vocabs) {
        for (int batch : {1, 3, 8}) {
            Case c;
            c.name = "truncation";
            c.vocab = V;
            c.steps = g_quick ? 1 : (V > 100000 ? 6 : 10);
            c.policies = pick(policies, batch);
            run_case(c);
        }
    }
    // Every policy at the large vocabulary, in each team layout.
    struct Layout {
        int team;
        bool force_global;
    };
    // 0 is automatic: a 16-CTA team on GPUs that hold one per sequence (H100), else 8.
    const Layout layouts[] = {{0, false}, {8, false}, {1, false}, {8, true}, {4, false}, {2, false}};
    for (const Layout &l : layouts) {
        Case c;
        c.name = "truncation, every policy";
        c.vocab = 151936;
        c.team = l.team;
        c.force_global = l.force_global;
        c.steps = g_quick ? 1 : 3;
        std::vector<reset::Policy> all = policies;
        for (size_t first = 0; first < all.size(); first += 8) {
            c.policies.assign(all.begin() + long(first), all.begin() + long(std::min(all.size(), first + 8)));
            run_case(c);
        }
    }
    // Small vocabularies on an 8-CTA team (CTAs with no entries).
    for (int32_t V : {7, 1000}) {
        Case c;
        c.name = "truncation, team 8, small vocab";
        c.vocab = V;
        c.team = 8;
        c.steps = g_quick ? 1 : 5;
        c.policies = pick(policies, 8);
        run_case(c);
    }
}

// The device's truncation moves the candidates of a select (the ids from the
// chosen first-level radix bin up) to a per-CTA list when the team's count
// fits (6,144) and keeps working on the row otherwise: rows and policies on
// both sides of that, and through tie groups, in every layout; greedy alone
// (argmax + entropy only) on the same rows.
void test_candidate_list() {
    std::printf("== candidate list / row fallback edge cases, fast greedy\n");
    reset::Policy greedy;
    greedy.kind = RESET_POLICY_GREEDY;
    const std::vector<reset::Policy> policies = {
        fixed(1.0f, 20, 0.95f),
        fixed(0.7f, 5000),            // more candidates than the first bin's usual few hundred
        fixed(1.0f, 6144, 0.99f),     // at the list's capacity
        fixed(1.0f, 7000, 0.9f, 0.01f),
        fixed(1.0f, 60000),           // far past it: the row path
        fixed(1.0f, 0, 0.999f),       // top-p alone: tens of thousands of survivors on flat rows
        fixed(1.0f, 0, 0.5f),
        fixed(1.0f, 0, 1.0f, 0.05f),  // min-p alone
        fixed(0.6f, 100, 1.0f, 0.2f),
        fixed(1.0f, 1),
        reset_policy(RESET_POLICY_RESET, 0.1f, 5.0f, 32, 20, 0.95f, 0.0f),
        greedy,
    };
    const RowShape shapes[] = {kRowAllTied, kRowFlat, kRowCoarse, kRowWideBin, kRowRandom, kRowHuge, kRowDenormal};
    const char *names[] = {"list, all tied", "list, flat", "list, coarse ties", "list, one wide bin", "list, random",
                           "list, logits to FLT_MAX", "list, denormal logits"};
    constexpr int kShapes = 7;
    for (int si = 0; si < kShapes; ++si) {
        for (size_t first = 0; first < policies.size(); first += 8) {
            Case c;
            c.name = names[si];
            c.vocab = 151936;
            c.shape = shapes[si];
            c.steps = g_quick ? 1 : 3;
            c.policies.assign(policies.begin() + long(first), policies.begin() + long(std::min(policies.size(), first + 8)));
            run_case(c);
        }
    }
    // Top-p alone finds the nucleus' cut only after a rejected first draw:
    // the same shapes, rotated so that every such token gets there.
    const std::vector<reset::Policy> top_p_alone = {
        fixed(1.0f, 0, 0.999f), fixed(1.0f, 0, 0.5f), fixed(0.7f, 0, 0.95f), fixed(1.0f, 0, 0.9f, 0.01f),
        reset_policy(RESET_POLICY_RESET, 0.1f, 5.0f, 32, 0, 0.95f, 0.0f),
    };
    for (int si = 0; si < kShapes; ++si) {
        Case c;
        c.name = std::string(names[si]) + ", second draw";
        c.vocab = 151936;
        c.shape = shapes[si];
        c.steps = g_quick ? 1 : 3;
        c.policies = top_p_alone;
        c.force_second_draw = true;
        run_case(c);
    }
    // The same in the other layouts (row in global memory, one CTA).
    for (int layout = 0; layout < 2; ++layout) {
        for (RowShape shape : {kRowFlat, kRowCoarse}) {
            Case c;
            c.name = layout == 0 ? "list, global row, team 8" : "list, one CTA";
            c.vocab = 151936;
            c.shape = shape;
            c.team = layout == 0 ? 8 : 1;
            c.force_global = layout == 0;
            c.steps = g_quick ? 1 : 2;
            c.policies = pick(policies, 8);
            run_case(c);
            c.name += ", second draw";
            c.policies = top_p_alone;
            c.force_second_draw = true;
            run_case(c);
        }
    }
    // Tiny vocabularies: every shape, all policies mixed, batch 8.
    for (int32_t V : {1, 2, 7}) {
        for (RowShape shape : {kRowAllTied, kRowCoarse, kRowRandom, kRowHuge, kRowDenormal}) {
            Case c;
            c.name = "list, tiny vocab";
            c.vocab = V;
            c.shape = shape;
            c.steps = g_quick ? 1 : 4;
            c.policies = pick(policies, 8);
            run_case(c);
        }
    }
    // Fast greedy: a whole batch of greedy sequences, each layout.
    for (int team : {0, 1, 8}) {
        Case c;
        c.name = "greedy batch";
        c.vocab = 151936;
        c.team = team;
        c.steps = g_quick ? 2 : 8;
        c.policies.assign(8, greedy);
        run_case(c);
    }
}

// Top-p's cut in a dense value bin: flat rows like the random Qwen3-8B's at the
// temperatures ReSET gives them (T_low 0.6, T_high 1) put ~1,900-2,300 tokens
// in the bin where the nucleus ends, past the 2,048 that the histograms'
// space holds (kernels/sampling.cu, kMaxGatherCapacity); the grown lists
// must give the CPU's tokens there, in every layout.  The census says the
// rows reached that range (on the H100's plan: 4,096) and how many went past.
void test_wide_cut_bin() {
    std::printf("== top-p cut in a dense value bin\n");
    const std::vector<reset::Policy> policies = {
        fixed(0.6f, 0, 0.95f),
        fixed(0.6f, 0, 0.95f, 0.001f),
        fixed(0.7f, 0, 0.95f),
        fixed(1.0f, 0, 0.5f),
        fixed(1.0f, 0, 0.6f),
        fixed(0.8f, 0, 0.9f),
        reset_policy(RESET_POLICY_RESET, 0.6f, 1.2f, 32, 0, 0.95f, 0.0f),
        fixed(1.0f, 0, 0.95f),
    };
    const int64_t grown_before = g_cut_bins_grown;
    for (int layout = 0; layout < 3; ++layout) {
        for (RowShape shape : {kRowFlat75, kRowFlat}) {
            Case c;
            c.name = layout == 0 ? "dense cut bin" : layout == 1 ? "dense cut bin, team 8" : "dense cut bin, one CTA";
            c.vocab = 151936;
            c.shape = shape;
            c.team = layout == 0 ? 0 : layout == 1 ? 8 : 1;
            c.steps = g_quick ? 1 : (layout == 0 ? 6 : 2);
            c.policies = policies;
            c.census = true;
            c.force_second_draw = true;
            run_case(c);
        }
    }
    std::printf("  cut bins of 2,049..capacity members: %lld, past the capacity: %lld\n",
                static_cast<long long>(g_cut_bins_grown - grown_before), static_cast<long long>(g_cut_bins_past));
    reset::SamplingArgs probe;
    probe.vocab = 151936;
    const int capacity = reset::sampling_plan(probe).gather_capacity;
    // A coverage check, so the full run only: ~2.5% of these rows reach that
    // range (4 of 160 with seed 20261127, session 19), and the quick run's
    // one step per layout (48 rows) misses it about a third of the time.
    if (capacity > kHistogramGatherCapacity && !g_quick)
        EXPECT(g_cut_bins_grown > grown_before, "dense cut bin: no row's cut bin held %d..%d members",
               kHistogramGatherCapacity + 1, capacity);
}

// SamplingArgs::active: a skipped sequence gets token -1, status ok, zero
// signals, and its state and ring stay bit-identical; the others are sampled
// as usual (compared with the CPU, which skips the same steps).
void test_active_mask() {
    std::printf("== active mask\n");
    reset::Policy greedy;
    greedy.kind = RESET_POLICY_GREEDY;
    struct Run {
        int32_t vocab;
        bool graph;
        int team;
    };
    for (const Run &r : {Run{151936, true, 0}, Run{151936, false, 1}, Run{1000, false, 0}, Run{7, true, 8}}) {
        Case c;
        c.name = "active mask";
        c.vocab = r.vocab;
        c.use_graph = r.graph;
        c.team = r.team;
        c.mask = true;
        c.push_delimiters = true;
        c.steps = g_quick ? 6 : 40;
        const float tau0 = 0.6f * std::log(float(r.vocab > 1 ? r.vocab : 2));
        c.policies = {reset_policy(RESET_POLICY_RESET, 0.1f, tau0, 32, 20, 0.95f, 0.0f),
                      greedy,
                      fixed(0.7f, 0, 0.95f),
                      reset_policy(RESET_POLICY_RESET, 0.0f, tau0, 5, 0, 1.0f, 0.0f),
                      fixed(1.0f, 50, 1.0f, 0.05f),
                      reset_policy(RESET_POLICY_ENTROPY, 0.3f, tau0, 7, 0, 0.9f, 0.0f),
                      fixed(1.2f),
                      reset_policy(RESET_POLICY_RESET, 0.2f, tau0, 64, 100, 0.8f, 0.01f)};
        run_case(c);
    }
}

void test_reset_runs() {
    std::printf("== ReSET / entropy-only over many steps (boundaries, window, state on the device)\n");
    struct Run {
        int32_t vocab;
        int batch;
        int team;
        bool graph;
    };
    const Run runs[] = {{151936, 8, 0, true}, {151936, 3, 1, false}, {151936, 1, 0, false},
                        {1000, 8, 0, false},  {50, 5, 0, true},      {32005, 2, 8, false}};
    for (const Run &r : runs) {
        Case c;
        c.name = "ReSET run";
        c.vocab = r.vocab;
        c.team = r.team;
        c.use_graph = r.graph;
        c.push_delimiters = true;
        c.steps = g_quick ? 12 : 120;
        // τ0 near the middle of the entropies these logits produce, so both
        // temperatures are chosen.
        const float tau0 = 0.6f * std::log(float(r.vocab));
        const std::vector<reset::Policy> kinds = {
            reset_policy(RESET_POLICY_RESET, 0.1f, tau0, 32, 20, 0.95f, 0.0f),
            reset_policy(RESET_POLICY_RESET, 0.0f, tau0, 5, 0, 1.0f, 0.0f),  // T_low = 0: greedy below τ
            reset_policy(RESET_POLICY_RESET, 0.4f, tau0, 1, 0, 0.9f, 0.05f),
            reset_policy(RESET_POLICY_ENTROPY, 0.3f, tau0, 40, 50, 1.0f, 0.0f),
            reset_policy(RESET_POLICY_RESET, 0.1f, 0.5f * tau0, 64, 0, 1.0f, 0.0f),
            fixed(0.7f, 0, 0.95f),
            reset_policy(RESET_POLICY_RESET, 0.2f, 1.2f * tau0, 7, 100, 0.8f, 0.01f),
        };
        for (int b = 0; b < r.batch; ++b) c.policies.push_back(kinds[size_t(b) % kinds.size()]);
        if (r.batch == 8) {
            reset::Policy greedy;
            greedy.kind = RESET_POLICY_GREEDY;
            c.policies[7] = greedy;  // greedy keeps the ReSET state current too
        }
        run_case(c);
    }
}

// Penalties (rules/penalty.h): the same rows again every step, so tokens
// repeat and the counts the device keeps decide the draws; in every team
// layout, through a graph, with a mask, and mixed with unpenalized
// sequences.  (A penalized policy without counts: test_errors.)
void test_penalties() {
    std::printf("== repetition / presence / frequency penalties (counts and the prompt's flags on the device)\n");
    auto with = [](reset::Policy p, float presence, float frequency, float repetition = 1.0f) {
        p.presence_penalty = presence;
        p.frequency_penalty = frequency;
        p.repetition_penalty = repetition;
        return p;
    };
    reset::Policy greedy;
    greedy.kind = RESET_POLICY_GREEDY;
    const float tau0 = 0.6f * std::log(151936.0f);
    // Each sequence's prompt holds its row's 6 best tokens (run_case), which the repetition penalty lowers.
    const std::vector<reset::Policy> policies = {
        with(greedy, 1.5f, 0.0f),              // walks down the ranking, one new token a step
        with(fixed(0.8f), 0.0f, 0.7f, 1.3f),
        with(fixed(1.0f, 0, 0.95f), 1.0f, 0.3f),
        with(greedy, 0.0f, 0.0f, 1.2f),        // the repetition penalty alone: prompt and generation
        with(fixed(0.6f, 20), 0.0f, 2.0f, 10.0f),
        with(fixed(1.0f, 0, 1.0f, 0.05f), -1.0f, -0.5f, 0.5f),  // negative and below 1: repeats favoured
        with(reset_policy(RESET_POLICY_RESET, 0.1f, tau0, 8, 0, 0.95f, 0.0f), 1.5f, 0.25f, 1.1f),
        fixed(0.9f),                           // unpenalized beside them: counted, not lowered
    };
    struct Layout {
        int team;
        bool force_global, graph, mask;
        RowShape shape;
    };
    const Layout layouts[] = {{0, false, true, false, kRowCoarse}, {0, false, false, true, kRowRandom},
                              {1, false, false, false, kRowCoarse}, {8, true, false, false, kRowRandom},
                              {8, true, true, false, kRowCoarse}};
    for (const Layout &l : layouts) {
        Case c;
        c.name = "penalties";
        c.vocab = 151936;
        c.team = l.team;
        c.force_global = l.force_global;
        c.use_graph = l.graph;
        c.mask = l.mask;
        c.shape = l.shape;
        c.counts = true;
        c.same_row = true;
        c.steps = g_quick ? 6 : 40;
        c.policies = policies;
        run_case(c);
    }
    for (int32_t V : {7, 1000}) {  // small vocabularies: every token soon penalized, several times
        Case c;
        c.name = "penalties, small vocab";
        c.vocab = V;
        c.counts = true;
        c.same_row = true;
        c.steps = g_quick ? 6 : 30;
        c.policies.assign(policies.begin(), policies.begin() + 5);
        run_case(c);
    }
}

// The logit bias (sampling/logit_bias.h), on the even sequences only (the odd
// ones must ignore the array): alone and with the penalties, in every team
// layout, through a graph and with a mask.
void test_logit_bias() {
    std::printf("== logit bias (bans, raises, random moves; with and without penalties)\n");
    reset::Policy greedy;
    greedy.kind = RESET_POLICY_GREEDY;
    reset::Policy penalized = fixed(0.8f);
    penalized.presence_penalty = 1.0f;
    penalized.repetition_penalty = 1.3f;
    const float tau0 = 0.6f * std::log(151936.0f);
    const std::vector<reset::Policy> policies = {
        greedy, greedy, fixed(1.0f), fixed(0.7f, 0, 0.9f), penalized, penalized,
        reset_policy(RESET_POLICY_RESET, 0.1f, tau0, 8, 0, 0.95f, 0.0f), fixed(0.6f, 20),
    };
    struct Layout {
        int team;
        bool force_global, graph, mask, counts;
    };
    const Layout layouts[] = {{0, false, true, false, true}, {0, false, false, true, false},
                              {1, false, false, false, true}, {8, true, false, false, false}};
    for (const Layout &l : layouts) {
        Case c;
        c.name = "logit bias";
        c.vocab = 151936;
        c.team = l.team;
        c.force_global = l.force_global;
        c.use_graph = l.graph;
        c.mask = l.mask;
        c.counts = l.counts;
        c.bias = true;
        c.same_row = true;
        c.steps = g_quick ? 6 : 30;
        c.policies = policies;
        if (!l.counts)  // a penalized policy needs the counts (test_errors)
            for (reset::Policy &p : c.policies) p.presence_penalty = 0.0f, p.repetition_penalty = 1.0f;
        run_case(c);
    }
    Case small;
    small.name = "logit bias, small vocab";
    small.vocab = 9;
    small.bias = true;
    small.counts = true;
    small.same_row = true;
    small.steps = g_quick ? 6 : 30;
    small.policies.assign(policies.begin(), policies.begin() + 6);
    run_case(small);
}

// Bad logits and a bad device policy: statuses, token -1, state untouched;
// the CPU sampler throws on the same logits.
void test_errors() {
    std::printf("== error statuses\n");
    const int batch = 6;
    const int32_t V = 151936;
    std::vector<float> logits(size_t(batch) * V);
    for (auto &z : logits) z = normal(2.0f);
    logits[size_t(0) * V + 777] = NAN;
    logits[size_t(1) * V + 151935] = INFINITY;
    for (int32_t i = 0; i < V; ++i) logits[size_t(2) * V + size_t(i)] = -INFINITY;
    std::vector<reset::SamplingPolicyDevice> pol(batch, reset::sampling_policy_device(reset_policy(RESET_POLICY_RESET, 0.1f, 5.0f, 32, 20, 0.95f, 0.0f)));
    pol[3].window = kRingCapacity + 1;  // larger than the ring
    pol[5].presence_penalty = 0.5f;      // a penalty, and no counts (SamplingArgs::counts is null here)
    std::vector<reset::SamplingSequenceState> st(batch);
    for (auto &s : st) {
        reset::rule::clear_state(s.step);
        s.step.total_count = 3;
        s.step.total_sum = 12.5;
        s.accepted = 3;
        s.last_token = 11;
        s.prev_token = 12;
    }
    DeviceBuffer d_logits(logits.size() * 4), d_pol(pol.size() * sizeof(pol[0])), d_st(st.size() * sizeof(st[0])),
        d_rings(size_t(batch) * kRingCapacity * 4), d_ws(reset::sampling_workspace_bytes(batch, V)),
        d_tok(size_t(batch) * 4), d_sig(size_t(batch) * sizeof(reset::SamplingSignalsDevice));
    d_logits.upload(logits);
    d_pol.upload(pol);
    d_st.upload(st);
    d_rings.upload(std::vector<float>(size_t(batch) * kRingCapacity, 1.0f));
    reset::SamplingArgs a;
    a.batch = batch;
    a.vocab = V;
    a.logits = d_logits.as<float>();
    a.ld_logits = V;
    a.policies = d_pol.as<reset::SamplingPolicyDevice>();
    a.states = d_st.as<reset::SamplingSequenceState>();
    a.rings = d_rings.as<float>();
    a.ring_capacity = kRingCapacity;
    a.workspace = d_ws.as<float>();
    a.tokens = d_tok.as<int32_t>();
    a.signals = d_sig.as<reset::SamplingSignalsDevice>();
    reset::sample_tokens(a, nullptr);
    CUDA_OK(cudaDeviceSynchronize());
    const auto tok = d_tok.download<int32_t>(batch);
    const auto sig = d_sig.download<reset::SamplingSignalsDevice>(batch);
    const auto after = d_st.download<reset::SamplingSequenceState>(batch);
    const int32_t want[batch] = {reset::kSamplingBadLogit,  reset::kSamplingBadLogit, reset::kSamplingAllMasked,
                                 reset::kSamplingBadPolicy, reset::kSamplingOk,       reset::kSamplingBadPolicy};
    for (int b = 0; b < batch; ++b) {
        EXPECT(sig[size_t(b)].status == want[b], "errors: sequence %d status %d, expected %d", b, sig[size_t(b)].status,
               want[b]);
        if (want[b] != reset::kSamplingOk) {
            EXPECT(tok[size_t(b)] == -1, "errors: sequence %d token %d, expected -1", b, tok[size_t(b)]);
            EXPECT(std::memcmp(&after[size_t(b)], &st[size_t(b)], sizeof(st[0])) == 0,
                   "errors: sequence %d state changed", b);
        } else {
            EXPECT(tok[size_t(b)] >= 0 && tok[size_t(b)] < V && after[size_t(b)].accepted == 4,
                   "errors: the good sequence was not sampled (token %d)", tok[size_t(b)]);
        }
    }
    for (int b = 0; b < 3; ++b) {
        reset::SequenceSampler s;
        bool threw = false;
        try {
            s.sample(&logits[size_t(b) * V], V, 0, nullptr);
        } catch (const reset::Error &) {
            threw = true;
        }
        EXPECT(threw, "errors: the CPU sampler accepted the logits of sequence %d", b);
    }
    // Host-side argument checks launch nothing.
    bool threw = false;
    try {
        reset::SamplingArgs bad = a;
        bad.batch = 9;
        reset::sample_tokens(bad, nullptr);
    } catch (const reset::Error &) {
        threw = true;
    }
    EXPECT(threw, "errors: batch 9 was accepted");
    std::printf("  statuses ok\n");
}

// Median time of the sampler at vocab 151,936: CUDA events around each
// launch, after a warm-up, with logits shaped like a language model's (a few
// likely tokens over a normal background) and flat ones.
void test_timing() {
    const int32_t V = 151936;
    cudaDeviceProp prop;
    CUDA_OK(cudaGetDeviceProperties(&prop, 0));
    std::printf("== timing on %s (vocab %d, median of 200 launches, CUDA events)\n", prop.name, V);
    struct Policy {
        const char *name;
        reset::Policy p;
    };
    reset::Policy greedy;
    greedy.kind = RESET_POLICY_GREEDY;
    const Policy policies[] = {
        {"greedy", greedy},
        {"ReSET (Qwen3-8B preset), no truncation", reset_policy(RESET_POLICY_RESET, 0.1f, 0.5505f, 32, 0, 1.0f, 0.0f)},
        {"ReSET + top-p 0.95 (reset bench's default)",
         reset_policy(RESET_POLICY_RESET, 0.1f, 0.5505f, 32, 0, 0.95f, 0.0f)},
        {"ReSET + top-k 20 + top-p 0.95", reset_policy(RESET_POLICY_RESET, 0.1f, 0.5505f, 32, 20, 0.95f, 0.0f)},
        {"ReSET as `reset bench` (t_low 0.6, tau0 1.2) + top-p 0.95",
         reset_policy(RESET_POLICY_RESET, 0.6f, 1.2f, 32, 0, 0.95f, 0.0f)},
        {"FIXED 0.6 + top-p 0.95", fixed(0.6f, 0, 0.95f)},
        {"FIXED 0.6 + top-k 20 + top-p 0.95 + min-p 0.05", fixed(0.6f, 20, 0.95f, 0.05f)},
        {"ReSET + top-p 0.95 + presence 1.5, frequency 0.5, repetition 1.1", [] {
             reset::Policy p = reset_policy(RESET_POLICY_RESET, 0.1f, 0.5505f, 32, 0, 0.95f, 0.0f);
             p.presence_penalty = 1.5f;
             p.frequency_penalty = 0.5f;
             p.repetition_penalty = 1.1f;
             return p;
         }()},
    };
    // Shapes: 0 peaked; 1 flat, sigma 0.5; 2 flat, sigma 0.75 (the random-weight Qwen3-8B
    // checkpoint's logits: a normed hidden state times lm_head weights of magnitude 2^-7..2^-6
    // over 4096 columns, so sigma is about 64 * 0.0117).
    // 3: rows from RESET_GPU_TEST_LOGITS (raw FP32 rows of 151,936 logits, e.g. a model's, dumped on
    // the device; row b of a batch is file row b mod rows), when given.
    const char *shape_names[] = {"peaked", "flat  ", "flat75", "file  "};
    std::vector<float> file_rows;
    if (const char *path = std::getenv("RESET_GPU_TEST_LOGITS")) {
        if (FILE *f = std::fopen(path, "rb")) {
            std::vector<float> row(static_cast<size_t>(V));
            while (std::fread(row.data(), sizeof(float), row.size(), f) == row.size())
                file_rows.insert(file_rows.end(), row.begin(), row.end());
            std::fclose(f);
        }
        EXPECT(!file_rows.empty(), "timing: no full row of %d logits in %s", V, path);
    }
    const int shapes = file_rows.empty() ? 3 : 4;
    // RESET_GPU_TEST_COLD_L2: before each timed launch, a 256 MB memset pushes the L2's contents
    // out (the logits and the sampler's own code among them), as a decode step's weight stream
    // does between two sampler launches.  The memset is outside the timed events.
    const bool cold = std::getenv("RESET_GPU_TEST_COLD_L2") != nullptr;
    const size_t flush_bytes = size_t(256) << 20;
    DeviceBuffer flush(cold ? flush_bytes : 4);
    if (cold) std::printf("timing with a cold L2 (a %zu MB memset before each launch)\n", flush_bytes >> 20);
    for (int shape = 0; shape < shapes; ++shape) {
        for (int batch : {1, 8}) {
            std::vector<float> logits(size_t(batch) * V);
            for (int b = 0; b < batch; ++b) {
                float *z = &logits[size_t(b) * V];
                if (shape == 3) {
                    const size_t rows = file_rows.size() / size_t(V);
                    std::copy_n(&file_rows[(size_t(b) % rows) * size_t(V)], size_t(V), z);
                    continue;
                }
                for (int32_t i = 0; i < V; ++i) z[i] = shape == 0 ? normal(2.0f) : normal(shape == 1 ? 0.5f : 0.75f);
                if (shape == 0)
                    for (int j = 0; j < 10; ++j) z[size_t(g_rng() % V)] = 12.0f + uniform(0.0f, 6.0f);
            }
            DeviceBuffer d_logits(logits.size() * 4), d_pol(size_t(batch) * sizeof(reset::SamplingPolicyDevice)),
                d_st(size_t(batch) * sizeof(reset::SamplingSequenceState)), d_rings(size_t(batch) * kRingCapacity * 4),
                d_ws(reset::sampling_workspace_bytes(batch, V)), d_tok(size_t(batch) * 4),
                d_sig(size_t(batch) * sizeof(reset::SamplingSignalsDevice)),
                d_counts(size_t(batch) * V * 4);
            d_logits.upload(logits);
            // Counts as after a 2,000-token generation: the penalized policy reads them all the same.
            std::vector<int32_t> counts(size_t(batch) * V, 0);
            for (int i = 0; i < 2000 * batch; ++i) counts[size_t(g_rng() % (uint64_t(batch) * V))] += 1;
            d_counts.upload(counts);
            for (const Policy &pp : policies) {
                std::vector<reset::SamplingPolicyDevice> pol(size_t(batch), reset::sampling_policy_device(pp.p));
                std::vector<reset::SamplingSequenceState> st(static_cast<size_t>(batch));
                for (auto &s : st) reset::rule::clear_state(s.step);
                d_pol.upload(pol);
                d_st.upload(st);
                reset::SamplingArgs a;
                a.batch = batch;
                a.vocab = V;
                a.logits = d_logits.as<float>();
                a.ld_logits = V;
                a.policies = d_pol.as<reset::SamplingPolicyDevice>();
                a.states = d_st.as<reset::SamplingSequenceState>();
                a.rings = d_rings.as<float>();
                a.ring_capacity = kRingCapacity;
                a.workspace = d_ws.as<float>();
                a.tokens = d_tok.as<int32_t>();
                a.signals = d_sig.as<reset::SamplingSignalsDevice>();
                a.counts = d_counts.as<int32_t>();  // as the engine passes them, whatever the policy
                cudaStream_t stream;
                CUDA_OK(cudaStreamCreate(&stream));
                // In a graph, as the decode step will run it.
                cudaGraph_t graph;
                cudaGraphExec_t exec;
                CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
                reset::sample_tokens(a, stream);
                CUDA_OK(cudaStreamEndCapture(stream, &graph));
                CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
                cudaEvent_t e0, e1;
                CUDA_OK(cudaEventCreate(&e0));
                CUDA_OK(cudaEventCreate(&e1));
                for (int i = 0; i < 20; ++i) CUDA_OK(cudaGraphLaunch(exec, stream));
                std::vector<float> ms;
                for (int i = 0; i < 200; ++i) {
                    if (cold) CUDA_OK(cudaMemsetAsync(flush.as<uint8_t>(), i & 0xFF, flush_bytes, stream));
                    CUDA_OK(cudaEventRecord(e0, stream));
                    CUDA_OK(cudaGraphLaunch(exec, stream));
                    CUDA_OK(cudaEventRecord(e1, stream));
                    CUDA_OK(cudaEventSynchronize(e1));
                    float t = 0.0f;
                    CUDA_OK(cudaEventElapsedTime(&t, e0, e1));
                    ms.push_back(t);
                }
                std::sort(ms.begin(), ms.end());
#ifdef RESET_SAMPLING_TRACE
                {
                    // One more launch, traced: (label, µs since the first mark) of sequence 0's rank 0.
                    CUDA_OK(cudaDeviceSynchronize());
                    reset::sampling_trace_clear();
                    CUDA_OK(cudaGraphLaunch(exec, stream));
                    CUDA_OK(cudaStreamSynchronize(stream));
                    unsigned long long tr[128][2];
                    const int n = reset::sampling_trace_read(&tr[0][0], 128);
                    std::printf("trace: %s %s batch %d:", pp.name, shape_names[shape], batch);
                    for (int i = 0; i < n; ++i)
                        std::printf(" %llu@%.2f", tr[i][0], (tr[i][1] - tr[0][1]) / 1000.0);
                    std::printf("\n");
                }
#endif
                const auto sig = d_sig.download<reset::SamplingSignalsDevice>(size_t(batch));
                EXPECT(sig[0].status == reset::kSamplingOk, "timing: status %d", sig[0].status);
                const double us = 1000.0 * ms[ms.size() / 2];
                std::printf("timing: %-48s %s batch %d: median %7.2f us (min %7.2f, p90 %7.2f) = %.2f%% of a 2 ms step\n",
                            pp.name, shape_names[shape], batch, us, 1000.0 * ms.front(),
                            1000.0 * ms[ms.size() * 9 / 10], us / 20.0);
                CUDA_OK(cudaEventDestroy(e0));
                CUDA_OK(cudaEventDestroy(e1));
                CUDA_OK(cudaGraphExecDestroy(exec));
                CUDA_OK(cudaGraphDestroy(graph));
                CUDA_OK(cudaStreamDestroy(stream));
            }
        }
    }
}

}  // namespace

int main(int argc, char **argv) {
    if (!start("test_sampling", argc, argv)) return 0;
    g_quick = std::getenv("RESET_GPU_TEST_QUICK") != nullptr;
    try {
        reset::SamplingArgs probe;
        probe.vocab = 151936;
        const reset::SamplingPlan plan = reset::sampling_plan(probe);
        std::printf("plan at vocab 151936: team %d, %d per thread, %s, %zu bytes of dynamic shared memory per CTA, "
                    "top-p gathers up to %d members\n",
                    plan.team, plan.per_thread, plan.shared_row ? "row in shared memory" : "row in global memory",
                    plan.shared_bytes, plan.gather_capacity);
        // RESET_GPU_TEST_TIMING_ONLY: the timings alone (for a profiler run).  RESET_GPU_TEST_ONLY=NAME:
        // that group alone (e.g. logit_bias), which compute-sanitizer's racecheck can finish (the
        // whole quick set takes it over 7 minutes, session 33 run 3).
        const char *only = std::getenv("RESET_GPU_TEST_ONLY");
        const std::pair<const char *, void (*)()> groups[] = {
            {"errors", test_errors},         {"truncation", test_truncation}, {"candidate_list", test_candidate_list},
            {"wide_cut_bin", test_wide_cut_bin}, {"active_mask", test_active_mask}, {"reset_runs", test_reset_runs},
            {"penalties", test_penalties},   {"logit_bias", test_logit_bias}};
        if (std::getenv("RESET_GPU_TEST_TIMING_ONLY") == nullptr)
            for (const auto &[name, run] : groups)
                if (!only || std::string(only) == name) run();
        if (!g_quick && !only) test_timing();
    } catch (const reset::Error &e) {
        std::fprintf(stderr, "FAIL: reset::Error: %s\n", e.what());
        ++g_failures;
    }
    std::printf("test_sampling: %lld tokens compared (%lld drawn at T > 0, %lld of them by top-p's second draw, "
                "%lld rows rotated to get there), %lld temperature/gate near-ties and %lld truncation/draw near-ties "
                "counted, %lld boundaries, %lld state checks, %lld logprobs against the CPU's and %lld against "
                "log_softmax_at\n",
                static_cast<long long>(g_compared_tokens), static_cast<long long>(g_sampled_tokens),
                static_cast<long long>(g_second_draws), static_cast<long long>(g_rotated_rows),
                static_cast<long long>(g_near_ties), static_cast<long long>(g_draw_near_ties),
                static_cast<long long>(g_boundaries), static_cast<long long>(g_state_checks),
                static_cast<long long>(g_logprob_checks), static_cast<long long>(g_logprob_independent));
    if (g_compared_tokens > 0) EXPECT(g_logprob_independent > 0, "no logprob was checked independently");
    // Both of top-p's paths ran: the kept first draw (most top-p tokens) and the cut (in the groups that
    // rotate rows for it: every group but one picked out by RESET_GPU_TEST_ONLY).
    if (g_compared_tokens > 0 && !std::getenv("RESET_GPU_TEST_ONLY"))
        EXPECT(g_second_draws > 0 && g_rotated_rows > 0, "top-p's second draw never ran");
    return finish("test_sampling");
}
