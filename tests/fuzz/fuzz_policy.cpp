// fuzz_policy.cpp — the standalone ReSET policy (reset_policy_*), the trace
// formatters and reset_entropy_percentiles on fuzzed parameters, logits and
// token streams.  No model or tokenizer is needed.
//
// Input: a byte stream read field by field (Bytes below; zeros once it runs
// out).  Parameters and options come first, then operations: decide, sample,
// accept, set_params, reset and the trace formatters, then the rest of the
// input as entropies for reset_entropy_percentiles.  Floats are either small
// multiples of 1/64 around [0, 2] (to hit every boundary of the parameter
// ranges) or raw bit patterns (NaN, infinities, denormals, 3e38).
//
// Checked, as reset.h promises:
//   - parameters: exactly those the header allows are accepted, read through
//     struct_size as the header says (the harness applies the rule itself);
//     everything else is RESET_ERR_INVALID_ARGUMENT, or UNSUPPORTED for
//     ReSET without T_low / tau0 and no preset;
//   - logits with a NaN or +inf, all -inf or none are INVALID_ARGUMENT, and
//     a failed call leaves the policy as it was: a twin policy that receives
//     only the calls that succeeded must decide and draw bit for bit the same;
//   - every decision against the spec's rule (shared/docs/reset-algorithm.md)
//     computed here in double: H_t, the step boundaries, Ĥ, H̄, the gate, τ and
//     the temperature (greedy 0, fixed T, T_high at or above τ, else T_low);
//   - a drawn token is never masked, is the argmax when greedy, and survives
//     top-k, top-p and min-p as reset_policy_sample describes them, over the
//     row the penalties lowered (presence, frequency, repetition, with the
//     context reset_policy_add_context and earlier generations give);
//   - a sample's logprob is the raw row's log-softmax at its token, a
//     decision's NaN;
//   - the logit bias (0.7, reset_policy_set_logit_bias): refused exactly as
//     reset.h lists (a negative id, a NaN, +inf or out-of-range bias, a
//     duplicate, too many), and then the old one stays; a draw comes from the
//     penalized row plus the bias (never a banned token), a row shorter than
//     a listed id is RESET_ERR_OUT_OF_RANGE and a row the bias leaves nothing
//     in is INVALID_ARGUMENT; reset_policy_reset keeps it;
//   - trace lines are one line of valid JSON (nlohmann::json reads them) with
//     the values given (a step's top_logprobs too, a count above 20 or a
//     NULL array refused), floats round-tripping, non-finite ones null; the
//     buffer protocol (fuzz_support.h);
//   - percentile tables are ordered, finite, end at the minimum and maximum
//     and interpolate as numpy does.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>
#include <limits>
#include <numeric>

#include <nlohmann/json.hpp>

#include "fuzz_support.h"

using reset_fuzz::expect;
using reset_fuzz::Bytes;
using reset_fuzz::finding;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// The paper's table (shared/docs/reset-algorithm.md), for the presets a
// harness names exactly.
struct Preset {
    const char *name;
    float t_low, tau0;
};
constexpr Preset kPresets[] = {{"Qwen3-8B", 0.1f, 0.5505f},
                               {"Qwen3-14B", 0.3f, 0.4863f},
                               {"Qwen3-32B", 0.1f, 0.5363f},
                               {"DeepSeek-R1-Distill-Qwen-7B", 0.4f, 0.6446f},
                               {"DeepSeek-R1-Distill-Qwen-14B", 0.3f, 0.6488f}};

// What a caller passes (a preset's text lives in read_params' storage).
struct Params {
    reset_policy_params given;
};

// A struct_size the header's rule can read: at least the size field, at most
// the struct, and not ending inside a pointer (half a caller's pointer is no
// pointer; no older layout ended there).
template <typename T>
bool readable_size(uint32_t size, std::initializer_list<size_t> pointer_offsets, bool newer_allowed = false) {
    if (size < sizeof(uint32_t) || (size > sizeof(T) && !newer_allowed)) return false;
    for (size_t offset : pointer_offsets)
        if (size > offset && size < offset + sizeof(void *)) return false;
    return true;
}

// The header's rule: defaults, then the first struct_size bytes the caller has.
template <typename T>
T effective(const T &given, void (*init)(T *, size_t)) {
    T out;
    init(&out, sizeof out);
    const uint32_t own = out.struct_size;
    std::memcpy(&out, &given, given.struct_size);
    out.struct_size = own;
    return out;
}

uint32_t struct_size(Bytes &in, uint32_t full) {
    const uint8_t b = in.u8();
    if (b < 224) return full;
    return in.u8() % (full + 9);  // anything from 0 to past the end
}

Params read_params(Bytes &in, std::string &preset_storage) {
    Params p;
    reset_policy_params_init(&p.given);
    const uint8_t kind = in.u8();
    const int32_t kind_value = kind < 250 ? kind % 5 : in.raw<int32_t>();
    std::memcpy(&p.given.kind, &kind_value, sizeof kind_value);
    p.given.temperature = in.number();
    p.given.top_k = in.integer();
    p.given.top_p = in.number();
    p.given.min_p = in.number();
    p.given.seed = in.raw<uint64_t>();
    p.given.t_high = in.number();
    p.given.t_low = in.number();
    p.given.tau0 = in.number();
    p.given.window = in.integer();
    const uint8_t preset_byte = in.u8();
    const uint8_t preset = preset_byte % 8;
    if (preset >= 1 && preset <= 5) {
        preset_storage = kPresets[preset - 1].name;
        p.given.preset = preset_storage.c_str();
    } else if (preset == 6) {
        const size_t n = in.u8() % 32;
        preset_storage.clear();
        for (size_t i = 0; i < n; ++i) preset_storage.push_back(static_cast<char>(in.u8() | 1));  // no NUL
        p.given.preset = preset_storage.c_str();
    }
    const uint8_t reset_state = in.u8();
    p.given.reset_state = reset_state < 200 ? reset_state % 2 : in.integer();
    // The penalties (0.2, 0.3) where the preset byte's high bits ask for them, so an input of the
    // earlier format mostly reads as before: around [-1, 1] and [0.5, 2.5], raw bits out of range.
    if (preset_byte & 8) {
        p.given.presence_penalty = in.number() - 1.0f;
        p.given.frequency_penalty = in.number() - 1.0f;
    }
    if (preset_byte & 16) p.given.repetition_penalty = 0.5f + in.number();
    p.given.struct_size = struct_size(in, sizeof(reset_policy_params));
    return p;
}

// The kind as an int, read as bytes: a kind outside the enum (the fuzzer's
// 4, or raw bits) is not a value the enum type may be loaded as.
int32_t kind_of(const reset_policy_params &params) {
    int32_t kind;
    std::memcpy(&kind, &params.kind, sizeof kind);
    return kind;
}

const Preset *exact_preset(const char *name) {
    if (!name) return nullptr;
    for (const Preset &p : kPresets)
        if (std::strcmp(p.name, name) == 0) return &p;
    return nullptr;
}

// The status reset.h prescribes for a policy's parameters (RESET_OK, or the
// error), and the parameters in force; -1 when only the library's name
// matching can tell (a fuzzed preset name).
struct Verdict {
    int expected = RESET_OK;
    reset_policy_params params{};
    float t_low = 0, tau0 = 0;  // after the preset; negative: not known (a fuzzed preset)
};

Verdict judge(const Params &p) {
    Verdict v;
    if (!readable_size<reset_policy_params>(p.given.struct_size, {offsetof(reset_policy_params, preset)})) {
        v.expected = RESET_ERR_INVALID_ARGUMENT;
        return v;
    }
    const reset_policy_params e = effective(p.given, reset_policy_params_init_sized);
    v.params = e;
    const int32_t kind = kind_of(e);
    const auto finite_at_least_0 = [](float x) { return std::isfinite(x) && x >= 0.0f; };
    const bool fields_ok = kind >= RESET_POLICY_GREEDY && kind <= RESET_POLICY_ENTROPY &&
                           finite_at_least_0(e.temperature) && e.top_k >= 0 && e.top_p > 0.0f && e.top_p <= 1.0f &&
                           e.min_p >= 0.0f && e.min_p < 1.0f && finite_at_least_0(e.t_high) &&
                           std::isfinite(e.t_low) && std::isfinite(e.tau0) && e.window >= 1 && e.window <= 16384 &&
                           (e.reset_state == 0 || e.reset_state == 1) && e.presence_penalty >= -2.0f &&
                           e.presence_penalty <= 2.0f && e.frequency_penalty >= -2.0f &&
                           e.frequency_penalty <= 2.0f && e.repetition_penalty >= 0.1f &&
                           e.repetition_penalty <= 10.0f;
    if (!fields_ok) {
        v.expected = RESET_ERR_INVALID_ARGUMENT;
        return v;
    }
    const bool fuzzed_name = e.preset != nullptr && !exact_preset(e.preset);
    if (fuzzed_name) {
        v.expected = -1;  // a known name in another spelling, or an unknown one (INVALID_ARGUMENT)
        v.t_low = e.t_low;
        v.tau0 = e.tau0;
        return v;
    }
    const Preset *preset = exact_preset(e.preset);
    v.t_low = e.t_low >= 0.0f ? e.t_low : preset ? preset->t_low : -1.0f;
    v.tau0 = e.tau0 >= 0.0f ? e.tau0 : preset ? preset->tau0 : -1.0f;
    const bool uses_rule = kind == RESET_POLICY_RESET || kind == RESET_POLICY_ENTROPY;
    if (uses_rule && (v.t_low < 0.0f || v.tau0 < 0.0f)) v.expected = RESET_ERR_UNSUPPORTED;
    return v;
}

void expect_status(reset_status got, int expected, const std::string &call) {
    reset_fuzz::ok_or_clear_error(got, call.c_str());
    if (expected == -1) {
        expect(got == RESET_OK || got == RESET_ERR_INVALID_ARGUMENT, call + " gave " + reset_status_name(got));
        return;
    }
    if (got != expected)
        finding(call + " gave " + reset_status_name(got) + ", reset.h says " +
                reset_status_name(static_cast<reset_status>(expected)) + (got ? std::string(": ") + reset_last_error()
                                                                             : std::string()));
}

std::vector<float> read_logits(Bytes &in) {
    const uint8_t n_byte = in.u8();
    const size_t n = n_byte == 255 ? 1000 : n_byte % 48;  // 0: refused; 1000: a longer vocabulary
    std::vector<float> logits(n);
    for (size_t i = 0; i < n; ++i) {
        const uint8_t b = (n_byte == 255 && i >= 48) ? static_cast<uint8_t>(i * 37) : in.u8();
        if (b < 0xF0) logits[i] = static_cast<float>(static_cast<int8_t>(b)) / 8.0f;
        else if (b < 0xF8) logits[i] = -kInf;  // masked
        else if (b == 0xF8) logits[i] = kInf;
        else if (b == 0xF9) logits[i] = std::numeric_limits<float>::quiet_NaN();
        else logits[i] = in.raw<float>();
    }
    return logits;
}

bool usable(const std::vector<float> &logits) {
    if (logits.empty()) return false;
    bool any = false;
    for (float z : logits) {
        if (std::isnan(z) || z == kInf) return false;
        any |= z != -kInf;
    }
    return any;
}

// H_t in double: the entropy of softmax(logits), masked tokens left out.
double entropy_of(const std::vector<float> &logits) {
    const double max = *std::max_element(logits.begin(), logits.end());
    double sum = 0, weighted = 0;
    for (float z : logits) {
        if (z == -kInf) continue;
        const double y = static_cast<double>(z) - max;
        const double e = std::exp(y);
        sum += e;
        weighted += e * y;
    }
    return std::max(0.0, std::log(sum) - weighted / sum);
}

// The spec's state and rule ("State (per sequence)", "Decision"), kept from
// the entropies the library reports, and its boundary test from the tokens.
struct Reference {
    std::deque<double> window;  // W
    std::vector<double> step;   // S
    double sum = 0;
    int64_t n = 0;
    int32_t step_index = 0;
    int64_t accepted = 0;
    int32_t last = -1, prev = -1;
    // The penalties' tokens (reset.h, reset_policy_params): the current generation's accepted ones,
    // and the context (reset_policy_add_context, and earlier generations' tokens).
    std::vector<int32_t> generation, context;
    bool pending = false;  // a decision not yet accepted: deciding again replaces it
    double pending_h = 0;
    bool pending_boundary = false;
    // The state before the pending decision, to replace it.
    std::deque<double> saved_window;
    std::vector<double> saved_step;
    double saved_sum = 0;
    int64_t saved_n = 0;
    int32_t saved_step_index = 0;

    void clear_entropies() {
        window.clear();
        step.clear();
        sum = 0;
        n = 0;
        step_index = 0;
    }
    void save() {
        saved_window = window;
        saved_step = step;
        saved_sum = sum;
        saved_n = n;
        saved_step_index = step_index;
    }
    // Steps 1 and 7 for an entropy h (the decision itself is checked apart).
    void observe(double h, bool boundary, size_t w) {
        save();
        pending = true;
        pending_h = h;
        pending_boundary = boundary;
        if (boundary) {
            step.clear();
            step_index += 1;
        }
        step.push_back(h);
        window.push_back(h);
        while (window.size() > w) window.pop_front();
        sum += h;
        n += 1;
    }
    void undo_pending() {
        if (!pending) return;
        window = saved_window;
        step = saved_step;
        sum = saved_sum;
        n = saved_n;
        step_index = saved_step_index;
        pending = false;
    }
};

bool in(const std::vector<int32_t> &set, int32_t token) {
    return std::find(set.begin(), set.end(), token) != set.end();
}

double mean(const std::vector<double> &v) {
    return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

// Two values that rounding may have told apart: within `relative` of the
// larger magnitude (at least 1).  1e-6 by default: the library reports Ĥ, H̄
// and τ as floats (2^-24 relative) of sums made in double.
bool near(double a, double b, double relative = 1e-6) {
    return std::fabs(a - b) <= relative * std::max({1.0, std::fabs(a), std::fabs(b)});
}

struct Delimiters {
    std::vector<int32_t> newline, double_newline;
};

// Check one decision against the spec, then advance the reference as the
// library must have (step 7).
void check_decision(Reference &ref, const reset_decision &d, const std::vector<float> &logits, const Verdict &v,
                    const Delimiters &delimiters, const std::string &what) {
    const double h_ref = entropy_of(logits);
    expect(std::isfinite(d.entropy) && d.entropy >= 0.0f, what + ": H_t is not a finite non-negative number");
    // H_t is summed in double over float exponentials: 1e-5 of log(vocabulary) covers their rounding.
    expect(std::fabs(d.entropy - h_ref) <= 1e-5 * std::max(1.0, std::log(static_cast<double>(logits.size()))),
           what + ": H_t " + std::to_string(d.entropy) + " but softmax gives " + std::to_string(h_ref));
    ref.undo_pending();

    // Step 1.
    const bool boundary = (ref.accepted >= 1 && in(delimiters.double_newline, ref.last)) ||
                          (ref.accepted >= 2 && in(delimiters.newline, ref.last) && in(delimiters.newline, ref.prev));
    const std::vector<double> step = boundary ? std::vector<double>() : ref.step;
    const int32_t step_index = ref.step_index + (boundary ? 1 : 0);
    expect(d.boundary == (boundary ? 1 : 0), what + ": the boundary flag is not the spec's");
    expect(d.step_index == step_index, what + ": step_index " + std::to_string(d.step_index) + ", the spec's " +
                                           std::to_string(step_index));
    // Steps 3-6, on the library's own H_t (the state holds what it reported).
    const double h = d.entropy;
    const size_t w = static_cast<size_t>(v.params.window);
    double estimate;
    bool whole_set;  // the estimate averages every entropy observed: Ĥ == H̄ exactly
    if (step.size() >= w) {
        estimate = mean(step);
        whole_set = static_cast<int64_t>(step.size()) == ref.n;
    } else if (!ref.window.empty()) {
        estimate = mean(std::vector<double>(ref.window.begin(), ref.window.end()));
        whole_set = static_cast<int64_t>(ref.window.size()) == ref.n;
    } else {
        estimate = h;
        whole_set = true;
    }
    const double global = ref.n > 0 ? ref.sum / static_cast<double>(ref.n) : estimate;
    expect(near(d.global_mean, global), what + ": H̄ " + std::to_string(d.global_mean) + ", the spec's " +
                                            std::to_string(global));
    const int32_t kind = kind_of(v.params);
    const bool rule = kind == RESET_POLICY_RESET || kind == RESET_POLICY_ENTROPY;
    if (!rule) {
        expect(d.step_entropy == 0.0f && d.threshold == 0.0f && d.uncertain == 0,
               what + ": a greedy or fixed policy reported a step estimate");
        const float fixed = kind == RESET_POLICY_FIXED && v.params.temperature > 1e-6f ? v.params.temperature : 0.0f;
        expect(d.temperature == fixed, what + ": temperature " + std::to_string(d.temperature) + ", expected " +
                                           std::to_string(fixed));
    } else {
        expect(near(d.step_entropy, estimate), what + ": Ĥ " + std::to_string(d.step_entropy) + ", the spec's " +
                                                   std::to_string(estimate));
        if (kind == RESET_POLICY_ENTROPY || whole_set)
            expect(d.uncertain == 0, what + ": uncertain, but the gate is off or Ĥ is H̄ by definition");
        else if (!near(estimate, global, 1e-9))
            expect(d.uncertain == (estimate > global ? 1 : 0), what + ": the gate is not Ĥ > H̄");
        if (v.tau0 >= 0.0f) {
            const double threshold = d.uncertain ? estimate : v.tau0;
            expect(near(d.threshold, threshold), what + ": τ is not the spec's");
            if (v.t_low >= 0.0f && !near(h, threshold, 1e-9)) {
                const float t = h >= threshold ? v.params.t_high : v.t_low;
                expect(d.temperature == (t > 1e-6f ? t : 0.0f),
                       what + ": temperature " + std::to_string(d.temperature) + " for H_t " + std::to_string(h) +
                           " and τ " + std::to_string(threshold) + ", the spec's " + std::to_string(t));
            }
        }
    }
    ref.observe(h, boundary, w);
}

// The row a draw is taken from (reset.h, reset_policy_params' penalties, in vLLM's order): a token of
// the context or the generation divided by the repetition penalty when positive, multiplied by it
// otherwise (saturating at the largest float; -inf stays); then, for a token the generation holds c
// times, minus frequency * c, minus presence.  Each step rounded to float on its own, as reset.h says.
std::vector<float> penalized_row(const std::vector<float> &logits, const Reference &ref, const reset_policy_params &p) {
    if (p.presence_penalty == 0.0f && p.frequency_penalty == 0.0f && p.repetition_penalty == 1.0f) return logits;
    std::vector<float> z = logits;
    const int32_t n = static_cast<int32_t>(z.size());
    std::vector<int32_t> count(z.size(), 0);
    std::vector<bool> seen(z.size(), false);
    for (int32_t t : ref.generation)
        if (t < n) {
            count[static_cast<size_t>(t)] += 1;
            seen[static_cast<size_t>(t)] = true;
        }
    for (int32_t t : ref.context)
        if (t < n) seen[static_cast<size_t>(t)] = true;
    constexpr float kLargest = std::numeric_limits<float>::max();
    for (size_t i = 0; i < z.size(); ++i) {
        if (!seen[i]) continue;
        volatile float v = z[i];
        if (p.repetition_penalty != 1.0f && v != -kInf) {
            v = v > 0.0f ? v / p.repetition_penalty : v * p.repetition_penalty;
            v = std::min(kLargest, std::max(-kLargest, static_cast<float>(v)));
        }
        if (count[i] > 0) {
            volatile float lowered = p.frequency_penalty * static_cast<float>(count[i]);
            v = v - lowered;
            v = v - p.presence_penalty;
        }
        z[i] = v;
    }
    return z;
}

// log softmax(raw logits) at the token, in double (reset_decision.logprob).
double log_softmax_at(const std::vector<float> &logits, int32_t token) {
    const double max = *std::max_element(logits.begin(), logits.end());
    double sum = 0;
    for (float z : logits)
        if (z != -kInf) sum += std::exp(static_cast<double>(z) - max);
    return static_cast<double>(logits[static_cast<size_t>(token)]) - max - std::log(sum);
}

// A drawn token against reset_policy_sample's description.
void check_draw(int32_t token, const std::vector<float> &logits, float temperature, const reset_policy_params &p,
                const std::string &what) {
    const int32_t n = static_cast<int32_t>(logits.size());
    expect(token >= 0 && token < n, what + ": token " + std::to_string(token) + " outside the vocabulary");
    const float z = logits[static_cast<size_t>(token)];
    expect(z != -kInf, what + ": a masked token was drawn");
    const float max = *std::max_element(logits.begin(), logits.end());
    if (temperature == 0.0f) {
        expect(z == max, what + ": greedy did not take the argmax");
        return;
    }
    // Probabilities at T in double; the draw's own arithmetic is float, hence the tolerances.
    std::vector<double> prob(logits.size());
    for (size_t i = 0; i < logits.size(); ++i)
        prob[i] = logits[i] == -kInf ? 0.0 : std::exp((static_cast<double>(logits[i]) - max) / temperature);
    int64_t above = 0;
    double mass_above = 0;
    for (size_t i = 0; i < logits.size(); ++i)
        if (logits[i] > z) {
            above += 1;
            mass_above += prob[i];
        }
    if (p.top_k > 0) expect(above < p.top_k, what + ": the token is not in the top " + std::to_string(p.top_k));
    // Top-p over what top-k kept: the token is kept iff the mass strictly above it is below top_p.
    std::vector<double> sorted = prob;
    std::sort(sorted.begin(), sorted.end(), std::greater<double>());
    const size_t kept = p.top_k > 0 ? std::min(sorted.size(), static_cast<size_t>(p.top_k)) : sorted.size();
    const double total = std::accumulate(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(kept), 0.0);
    if (p.top_p < 1.0f)
        expect(mass_above / total < p.top_p + 1e-4, what + ": the token is outside the top-p nucleus (" +
                                                        std::to_string(mass_above / total) + " above it)");
    if (p.min_p > 0.0f) {
        const double log_ratio = (static_cast<double>(z) - max) / temperature;
        expect(log_ratio >= std::log(p.min_p) - 1e-4 * std::max(1.0, std::fabs(log_ratio)),
               what + ": the token is below min_p");
    }
}

// The trace formatters' protocol (reset.h, "Traces"): the length without the
// NUL is always reported; a capacity below length + 1 is BUFFER_TOO_SMALL and
// writes nothing; length + 1 gets the line and its NUL, and not a byte more.
template <typename Call>
std::pair<reset_status, std::string> read_line(const std::string &what, Call call) {
    size_t length = 12345;
    const reset_status asked = call(nullptr, 0, &length);
    if (asked != RESET_ERR_BUFFER_TOO_SMALL) {
        reset_fuzz::ok_or_clear_error(asked, what.c_str());
        expect(asked != RESET_OK, what + ": capacity 0 was enough");
        return {asked, std::string()};
    }
    std::string buffer(length + 2, '\x7f');
    size_t short_length = 0;
    expect(call(buffer.data(), length, &short_length) == RESET_ERR_BUFFER_TOO_SMALL && short_length == length &&
               buffer == std::string(length + 2, '\x7f'),
           what + ": a capacity of the length alone (no room for the NUL) was written to or accepted");
    size_t written = 0;
    const reset_status done = call(buffer.data(), length + 1, &written);
    if (!reset_fuzz::ok_or_clear_error(done, what.c_str()) || written != length || buffer[length] != '\0' ||
        buffer[length + 1] != '\x7f')
        finding(what + ": the line did not fit length + 1 with its NUL");
    buffer.resize(length);
    expect(buffer.find('\0') == std::string::npos, what + ": a NUL inside the line");
    return {RESET_OK, buffer};
}

std::string float_key(const nlohmann::json &line, const char *key, float expected) {
    const nlohmann::json &v = line.at(key);
    if (!std::isfinite(expected)) return v.is_null() ? "" : std::string(key) + " should be null";
    if (!v.is_number()) return std::string(key) + " is not a number";
    return static_cast<float>(v.get<double>()) == expected ? "" : std::string(key) + " does not round-trip";
}

// One trace line: the buffer protocol, one line of JSON, and the values.
nlohmann::json check_trace_line(const std::string &text, const reset_decision &d, int32_t sequence, int32_t token,
                                const std::string &what) {
    expect(!text.empty() && text.back() == '\n' && text.find('\n') == text.size() - 1,
           what + ": not one line ending in a newline");
    nlohmann::json line = nlohmann::json::parse(text, nullptr, false);
    if (line.is_discarded() || !line.is_object()) finding(what + ": not a JSON object: " + text);
    for (auto [key, value] : {std::pair<const char *, float>{"entropy", d.entropy}, {"step_entropy", d.step_entropy},
                              {"global_mean", d.global_mean}, {"threshold", d.threshold},
                              {"temperature", d.temperature}}) {
        const std::string wrong = float_key(line, key, value);
        if (!wrong.empty()) finding(what + ": " + wrong + ": " + text);
    }
    expect(line.at("sequence") == sequence && line.at("token") == token && line.at("step_index") == d.step_index &&
               line.at("boundary") == (d.boundary != 0) && line.at("uncertain") == (d.uncertain != 0),
           what + ": the integers or flags differ: " + text);
    return line;
}

void check_traces(Bytes &in, const reset_decision &last) {
    reset_decision d = last;
    if (in.u8() & 1) {  // a decision no policy made: any bits
        d.temperature = in.number();
        d.entropy = in.raw<float>();
        d.step_entropy = in.number();
        d.global_mean = in.raw<float>();
        d.threshold = in.number();
        d.step_index = in.integer();
        d.boundary = in.integer();
        d.uncertain = in.integer();
    }
    const int32_t sequence = in.integer(), token = in.integer();
    const auto [status, text] =
        read_line("reset_decision_to_json", [&](char *buffer, size_t capacity, size_t *length) {
            return reset_decision_to_json(&d, sequence, token, buffer, capacity, length);
        });
    expect(status == RESET_OK, "reset_decision_to_json refused a decision");
    check_trace_line(text, d, sequence, token, "reset_decision_to_json");

    // A step with text: the trace must stay valid JSON whatever the bytes.
    reset_step step;
    reset_step_init(&step, 1);
    step.sequence = sequence;
    step.token = token;
    step.end_of_generation = in.u8() & 1;
    step.entropy = d.entropy;
    step.step_entropy = d.step_entropy;
    step.global_mean = d.global_mean;
    step.threshold = d.threshold;
    step.temperature = d.temperature;
    step.step_index = d.step_index;
    step.boundary = d.boundary;
    step.uncertain = d.uncertain;
    std::string bytes(in.u8() % 16, '\0');
    for (char &c : bytes) c = static_cast<char>(in.u8());
    step.text = bytes.data();
    step.text_len = bytes.size();
    // (0.4) Top logprobs: a count of 0..23 (above 20 is refused), entries of small or raw ids and fuzzed
    // logprobs, sometimes a NULL array.
    const uint8_t top_byte = in.u8();
    std::vector<reset_token_logprob> top;
    if (top_byte & 1) {
        step.top_logprob_count = (top_byte >> 1) % 24;
        top.resize(static_cast<size_t>(step.top_logprob_count));
        for (reset_token_logprob &e : top) {
            e.token = in.u8() < 240 ? static_cast<int32_t>(in.u8()) : in.integer();
            e.logprob = in.number() - 2.0f;
        }
        step.top_logprobs = (top_byte & 0x80) && !top.empty() ? nullptr : top.data();
    }
    step.struct_size = struct_size(in, sizeof(reset_step));
    // A step is also an output struct: a newer header's larger one is read up to what the library knows.
    const bool readable = readable_size<reset_step>(
        step.struct_size, {offsetof(reset_step, text), offsetof(reset_step, top_logprobs)}, true);
    // The library reads the first struct_size bytes over zeros: a struct that ends before the count leaves it
    // 0, one that ends inside it leaves its first bytes (found in session 34: the harness took that as 0).
    reset_step seen;
    std::memset(&seen, 0, sizeof seen);
    std::memcpy(&seen, &step, std::min<size_t>(step.struct_size, sizeof seen));
    const bool top_refused = seen.top_logprob_count < 0 || seen.top_logprob_count > RESET_MAX_TOP_LOGPROBS ||
                             (seen.top_logprob_count > 0 && !seen.top_logprobs);
    const auto [step_status, step_text] = read_line("reset_step_to_json", [&](char *b, size_t c, size_t *n) {
        return reset_step_to_json(&step, b, c, n);
    });
    if (!readable) {
        expect(step_status == RESET_ERR_INVALID_ARGUMENT, "reset_step_to_json read a struct_size of " +
                                                              std::to_string(step.struct_size));
        return;
    }
    if (top_refused) {
        expect(step_status == RESET_ERR_INVALID_ARGUMENT,
               "reset_step_to_json took top_logprob_count " + std::to_string(step.top_logprob_count) +
                   (step.top_logprobs ? "" : " with a NULL array"));
        return;
    }
    expect(step_status == RESET_OK, "reset_step_to_json refused a step");
    if (step.struct_size < sizeof(reset_step)) return;  // older layouts: defaults for the rest
    const nlohmann::json line = check_trace_line(step_text, d, sequence, token, "reset_step_to_json");
    expect(line.at("end") == (step.end_of_generation != 0), "reset_step_to_json: end differs");
    if (step.top_logprob_count == 0) {
        expect(!line.contains("top_logprobs"), "reset_step_to_json: top_logprobs for a step with none");
    } else if (line.contains("top_logprobs") && line.at("top_logprobs").is_array() &&
               line.at("top_logprobs").size() == top.size()) {
        for (size_t i = 0; i < top.size(); ++i) {
            const nlohmann::json &entry = line.at("top_logprobs")[i];
            expect(entry.at("token") == top[i].token, "reset_step_to_json: a top_logprobs token differs");
            const nlohmann::json &value = entry.at("logprob");
            expect(std::isfinite(top[i].logprob)
                       ? value.is_number() && static_cast<float>(value.get<double>()) == top[i].logprob
                       : value.is_null(),
                   "reset_step_to_json: top_logprobs entry " + std::to_string(i) + " is " + value.dump());
        }
    } else {
        finding("reset_step_to_json: top_logprobs is not the " + std::to_string(top.size()) + " entries given: " +
                step_text);
    }
    if (reset_fuzz::valid_utf8(bytes))
        expect(line.at("text") == bytes, "reset_step_to_json: the text did not round-trip: " + step_text);
}

void check_percentiles(Bytes &in) {
    const float percentile = in.number() * 64.0f;  // [-16, 110] in steps of 1, or raw bits
    std::vector<float> values;
    while (!in.empty() && values.size() < 256) values.push_back(in.number());
    reset_calibration_result result;
    reset_calibration_result_init(&result);
    const reset_status status = reset_entropy_percentiles(values.data(), values.size(), percentile, &result);
    const bool valid = !values.empty() && std::all_of(values.begin(), values.end(), [](float x) {
        return std::isfinite(x);
    }) && percentile >= 0.0f && percentile <= 100.0f;
    reset_fuzz::ok_or_clear_error(status, "reset_entropy_percentiles");
    if (!valid) {
        expect(status == RESET_ERR_INVALID_ARGUMENT, "reset_entropy_percentiles accepted invalid input");
        return;
    }
    expect(status == RESET_OK, std::string("reset_entropy_percentiles: ") + reset_last_error());
    std::vector<double> sorted(values.begin(), values.end());
    std::sort(sorted.begin(), sorted.end());
    const double lo = sorted.front(), hi = sorted.back();
    expect(result.n_tokens == values.size(), "reset_entropy_percentiles: n_tokens");
    expect(result.percentiles[0] == static_cast<float>(lo) && result.percentiles[100] == static_cast<float>(hi),
           "reset_entropy_percentiles: the 0th and 100th are not the minimum and maximum");
    for (int p = 0; p <= 100; ++p) {
        const float v = result.percentiles[p];
        expect(std::isfinite(v) && v >= lo && v <= hi, "reset_entropy_percentiles: percentile " +
                                                           std::to_string(p) + " is " + std::to_string(v));
        if (p > 0) expect(v >= result.percentiles[p - 1], "reset_entropy_percentiles: the table is not ordered");
    }
    // numpy's linear interpolation, in double.
    const double position = percentile / 100.0 * static_cast<double>(sorted.size() - 1);
    const size_t k = static_cast<size_t>(position);
    const double f = position - static_cast<double>(k);
    const double expected =
        k + 1 < sorted.size() ? sorted[k] + f * (sorted[k + 1] - sorted[k]) : sorted[k];
    expect(near(result.tau0, expected, 1e-6) || std::fabs(result.tau0 - expected) <= 1e-6 * (hi - lo),
           "reset_entropy_percentiles: tau0 " + std::to_string(result.tau0) + ", numpy's " +
               std::to_string(expected));
    expect(std::isfinite(result.mean) && result.mean >= lo - 1e-9 * std::fabs(lo) &&
               result.mean <= hi + 1e-9 * std::fabs(hi),
           "reset_entropy_percentiles: the mean is outside [min, max]");
}

// A policy and its twin: the twin gets only the calls that succeeded on the
// first, so a failed call that changed anything shows up as a difference.
// reset_policy_set_logit_bias (0.7) with 0..4 entries from the input: ids 0..19 or -1, biases read
// as fuzz_session reads them (0 -inf, 1 NaN, 2 +inf, 3 150, else (byte - 130) / 1.25, which passes
// -100 at 4); or RESET_MAX_LOGIT_BIAS + 1 entries.  A policy without a model checks no upper bound
// here.  Returns the status reset.h gives for them; *bias receives them sorted when accepted.
int read_logit_bias(Bytes &in, std::vector<reset_logit_bias> &entries) {
    const uint8_t shape = in.u8() % 6;
    if (shape == 5) {
        entries.assign(RESET_MAX_LOGIT_BIAS + 1, reset_logit_bias{});
        for (size_t i = 0; i < entries.size(); ++i) entries[i] = {static_cast<int32_t>(i), 1.0f};
        return RESET_ERR_INVALID_ARGUMENT;
    }
    entries.resize(shape);
    int expected = RESET_OK;
    for (reset_logit_bias &e : entries) {
        const uint8_t t = in.u8(), b = in.u8();
        e.token = t == 255 ? -1 : t % 20;
        e.bias = b == 0 ? -kInf : b == 1 ? std::nanf("") : b == 2 ? kInf : b == 3 ? 150.0f : (float(b) - 130.0f) / 1.25f;
        // The first bad entry decides, its token checked before its bias.
        if (expected != RESET_OK) continue;
        if (e.token < 0) expected = RESET_ERR_OUT_OF_RANGE;
        else if (e.bias != -kInf && !(std::fabs(e.bias) <= RESET_MAX_LOGIT_BIAS_VALUE)) expected = RESET_ERR_INVALID_ARGUMENT;
    }
    for (size_t i = 0; expected == RESET_OK && i < entries.size(); ++i)
        for (size_t j = 0; j < i; ++j)
            if (entries[i].token == entries[j].token) expected = RESET_ERR_INVALID_ARGUMENT;  // listed twice
    return expected;
}

struct Twin {
    reset_policy *fuzzed = nullptr;
    reset_policy *clean = nullptr;
    ~Twin() {
        reset_policy_free(fuzzed);
        reset_policy_free(clean);
    }
};

bool same_decision(const reset_decision &a, const reset_decision &b) {
    return std::memcmp(&a, &b, sizeof a) == 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    Bytes in(data, size);
    std::string preset_storage;
    Params params = read_params(in, preset_storage);
    Verdict verdict = judge(params);

    // Delimiters: a few small ids (some negative, which is refused).
    Delimiters delimiters;
    reset_policy_options options;
    reset_policy_options_init(&options);
    std::vector<int32_t> newline(in.u8() % 4), double_newline(in.u8() % 4);
    for (std::vector<int32_t> *set : {&newline, &double_newline})
        for (int32_t &id : *set) {
            id = static_cast<int32_t>(in.u8() % 16);
            if (in.u8() == 0xFF) id -= 20;  // a negative id
        }
    options.newline_ids = newline.data();
    options.n_newline_ids = newline.size();
    options.double_newline_ids = double_newline.data();
    options.n_double_newline_ids = double_newline.size();
    options.sequence = in.u8() < 250 ? in.u8() % 4 : in.integer();
    options.struct_size = struct_size(in, sizeof(reset_policy_options));
    const bool options_readable = readable_size<reset_policy_options>(
        options.struct_size,
        {offsetof(reset_policy_options, newline_ids), offsetof(reset_policy_options, double_newline_ids)});
    int expected = verdict.expected;
    if (!options_readable) {
        expected = RESET_ERR_INVALID_ARGUMENT;
    } else {
        const reset_policy_options o = effective(options, reset_policy_options_init_sized);
        const bool ids_ok = std::all_of(o.newline_ids, o.newline_ids + o.n_newline_ids, [](int32_t id) {
            return id >= 0;
        }) && std::all_of(o.double_newline_ids, o.double_newline_ids + o.n_double_newline_ids, [](int32_t id) {
            return id >= 0;
        });
        if (!ids_ok || o.sequence < 0) expected = RESET_ERR_INVALID_ARGUMENT;
        delimiters.newline.assign(o.newline_ids, o.newline_ids + o.n_newline_ids);
        delimiters.double_newline.assign(o.double_newline_ids, o.double_newline_ids + o.n_double_newline_ids);
    }
    // Parameter errors are found before option errors or after: either is the header's answer.
    if (verdict.expected != RESET_OK && expected != verdict.expected && verdict.expected != -1)
        expected = -2;

    Twin twin;
    const reset_status created = reset_policy_create(&params.given, &options, &twin.fuzzed);
    if (expected == -2) {
        reset_fuzz::ok_or_clear_error(created, "reset_policy_create");
        expect(created != RESET_OK, "reset_policy_create accepted invalid parameters and options");
    } else {
        expect_status(created, expected, "reset_policy_create");
    }
    expect((created == RESET_OK) == (twin.fuzzed != nullptr), "reset_policy_create: the handle and status disagree");
    if (created != RESET_OK) {
        check_percentiles(in);
        return 0;
    }
    expect(reset_policy_create(&params.given, &options, &twin.clean) == RESET_OK,
           "the same parameters created one policy but not a second");

    Reference ref;
    // The logit bias in force (0.7), sorted by token: reset_policy_reset keeps it, unlike ref.
    std::vector<reset_logit_bias> bias;
    reset_decision last;
    reset_decision_init(&last);
    for (int op = 0; op < 64 && in.left() > 8; ++op) {
        const uint8_t what = in.u8() % 10;
        if (what <= 3) {  // decide (0, 1) or sample (2, 3)
            std::vector<float> logits = read_logits(in);
            const bool good = usable(logits);
            const bool sampling = what >= 2;
            reset_decision a, b;
            reset_decision_init(&a);
            reset_decision_init(&b);
            int32_t token_a = -7, token_b = -7;
            const float *pointer = logits.empty() ? nullptr : logits.data();
            const reset_status status = sampling ? reset_policy_sample(twin.fuzzed, pointer, logits.size(), &token_a, &a)
                                                 : reset_policy_decide(twin.fuzzed, pointer, logits.size(), &a);
            const std::string call = sampling ? "reset_policy_sample" : "reset_policy_decide";
            // A draw's row: the penalties, then the bias (one float addition each).
            std::vector<float> drawn_from = good ? penalized_row(logits, ref, verdict.params) : logits;
            bool all_banned = true;
            for (const reset_logit_bias &e : bias)
                if (e.token < static_cast<int32_t>(drawn_from.size())) {
                    volatile float v = drawn_from[static_cast<size_t>(e.token)];
                    drawn_from[static_cast<size_t>(e.token)] = v + e.bias;
                }
            for (float z : drawn_from) all_banned = all_banned && z == -kInf;
            // reset.h's order: the row's size, a listed token past it, the row's values, nothing left to draw.
            int expected = good ? RESET_OK : RESET_ERR_INVALID_ARGUMENT;
            if (sampling && !logits.empty() && !bias.empty() && bias.back().token >= static_cast<int32_t>(logits.size()))
                expected = RESET_ERR_OUT_OF_RANGE;
            else if (sampling && good && all_banned)
                expected = RESET_ERR_INVALID_ARGUMENT;
            expect_status(status, expected, call);
            if (status != RESET_OK) continue;
            const reset_status twin_status = sampling
                                                 ? reset_policy_sample(twin.clean, logits.data(), logits.size(), &token_b, &b)
                                                 : reset_policy_decide(twin.clean, logits.data(), logits.size(), &b);
            expect(twin_status == RESET_OK, call + " failed on the twin");
            expect(same_decision(a, b) && token_a == token_b,
                   call + ": a failed call before this one changed the policy (the twin, which never saw it, differs)");
            check_decision(ref, a, logits, verdict, delimiters, call);
            if (sampling) {
                check_draw(token_a, drawn_from, a.temperature, verdict.params, call);
                // The raw row's log-probability of the drawn token, however the penalties lowered the draw's
                // (1e-5: the library rounds z - max and the result to float).
                // Rows whose spread overflows a float (raw bits near 3e38) are left out: there z - max is
                // -inf in float and the logprob rightly -inf, where double still has a number.
                const float spread = token_a >= 0 && token_a < static_cast<int32_t>(logits.size())
                                         ? logits[static_cast<size_t>(token_a)] -
                                               *std::max_element(logits.begin(), logits.end())
                                         : -kInf;
                if (std::isfinite(spread))
                    expect(near(a.logprob, log_softmax_at(logits, token_a), 1e-5),
                           call + ": logprob " + std::to_string(a.logprob) + ", log softmax gives " +
                               std::to_string(log_softmax_at(logits, token_a)));
            } else {
                expect(std::isnan(a.logprob), call + ": a decision without a token reported a logprob");
            }
            last = a;
        } else if (what == 4 || what == 5) {  // accept
            const int32_t token = what == 4 ? static_cast<int32_t>(in.u8() % 16) : in.integer();
            const reset_status status = reset_policy_accept(twin.fuzzed, token);
            expect_status(status, token >= 0 ? RESET_OK : RESET_ERR_OUT_OF_RANGE, "reset_policy_accept");
            if (status != RESET_OK) continue;
            expect(reset_policy_accept(twin.clean, token) == RESET_OK, "reset_policy_accept failed on the twin");
            ref.pending = false;
            ref.prev = ref.last;
            ref.last = token;
            ref.accepted += 1;
            ref.generation.push_back(token);
        } else if (what == 6) {  // new parameters
            std::string new_preset;
            Params next = read_params(in, new_preset);
            const Verdict next_verdict = judge(next);
            const reset_status status = reset_policy_set_params(twin.fuzzed, &next.given);
            expect_status(status, next_verdict.expected, "reset_policy_set_params");
            if (status != RESET_OK) continue;
            expect(reset_policy_set_params(twin.clean, &next.given) == RESET_OK,
                   "reset_policy_set_params failed on the twin");
            // reset.h: the step state goes only with reset_state 1 (accepted tokens stay).
            // A decision not yet accepted is taken back, W keeps its most recent
            // entropies under the new window, and the decision is made again.
            if (std::getenv("RESET_FUZZ_VERBOSE"))
                std::fprintf(stderr, "  set_params: window %d -> %d, reset_state %d, pending %d, |W| %zu |S| %zu n %lld\n",
                             verdict.params.window, next_verdict.params.window, next_verdict.params.reset_state,
                             ref.pending, ref.window.size(), ref.step.size(), static_cast<long long>(ref.n));
            verdict = next_verdict;
            const size_t w = static_cast<size_t>(verdict.params.window);
            const bool redo = ref.pending && verdict.params.reset_state == 0;
            const double pending_h = ref.pending_h;
            const bool pending_boundary = ref.pending_boundary;
            ref.undo_pending();
            if (verdict.params.reset_state == 1) {
                ref.clear_entropies();
                // A new generation: its tokens stay in the context (the repetition penalty's).
                ref.context.insert(ref.context.end(), ref.generation.begin(), ref.generation.end());
                ref.generation.clear();
            }
            while (ref.window.size() > w) ref.window.pop_front();
            if (redo) ref.observe(pending_h, pending_boundary, w);
        } else if (what == 7) {  // a new generation
            expect(reset_policy_reset(twin.fuzzed) == RESET_OK && reset_policy_reset(twin.clean) == RESET_OK,
                   "reset_policy_reset");
            ref = Reference();
        } else if (what == 9) {  // context tokens (0.3): a few small ids, some negative, or a NULL array
            std::vector<int32_t> ids(in.u8() % 8);
            bool negative = false;
            for (int32_t &id : ids) {
                id = static_cast<int32_t>(in.u8() % 16);
                if (in.u8() == 0xFF) id -= 20;
                negative |= id < 0;
            }
            const bool null_array = !ids.empty() && in.u8() == 0xFE;
            const int32_t *pointer = null_array ? nullptr : ids.data();
            const reset_status status = reset_policy_add_context(twin.fuzzed, pointer, ids.size());
            expect_status(status,
                          null_array ? RESET_ERR_INVALID_ARGUMENT : negative ? RESET_ERR_OUT_OF_RANGE : RESET_OK,
                          "reset_policy_add_context");
            if (status != RESET_OK) continue;
            expect(reset_policy_add_context(twin.clean, ids.data(), ids.size()) == RESET_OK,
                   "reset_policy_add_context failed on the twin");
            ref.context.insert(ref.context.end(), ids.begin(), ids.end());
        } else if (in.u8() >= 192) {  // (0.7) what == 8 with its next byte's top quarter: a logit bias
            std::vector<reset_logit_bias> entries;
            const int expected = read_logit_bias(in, entries);
            const reset_status status = reset_policy_set_logit_bias(twin.fuzzed, entries.data(), entries.size());
            expect_status(status, expected, "reset_policy_set_logit_bias");
            if (status != RESET_OK) continue;  // the bias in force stays (the twin never sees the call)
            expect(reset_policy_set_logit_bias(twin.clean, entries.data(), entries.size()) == RESET_OK,
                   "reset_policy_set_logit_bias failed on the twin");
            std::sort(entries.begin(), entries.end(),
                      [](const reset_logit_bias &x, const reset_logit_bias &y) { return x.token < y.token; });
            bias = entries;
        } else {
            check_traces(in, last);
        }
    }
    check_percentiles(in);
    return 0;
}
