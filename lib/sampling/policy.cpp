// policy.cpp — validation of reset_policy_params and the paper's presets.
#include "sampling/policy.h"

#include <cctype>
#include <cmath>
#include <sstream>

#include "api/errors.h"
#include "model/config.h"

namespace reset {

namespace {

std::string lower(std::string s) {
    for (char &c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B" -> "r1-distill-qwen-7b".
std::string normalise_model_name(const std::string &name) {
    std::string s = lower(name);
    const size_t slash = s.rfind('/');
    if (slash != std::string::npos) s = s.substr(slash + 1);
    const std::string deepseek = "deepseek-";
    if (s.compare(0, deepseek.size(), deepseek) == 0) s = s.substr(deepseek.size());
    return s;
}

std::string preset_names() {
    std::string names;
    for (const PaperPreset &p : paper_presets()) {
        if (!names.empty()) names += ", ";
        names += p.name;
    }
    return names;
}

std::string show(float v) {
    std::ostringstream out;
    out << v;
    return out.str();
}

// A float field that must be finite and inside [lo, hi] (open ends as asked).
void check_range(const char *field, float value, float lo, bool lo_open, float hi, bool hi_open,
                 const char *meaning) {
    const bool ok = std::isfinite(value) && (lo_open ? value > lo : value >= lo) &&
                    (hi_open ? value < hi : value <= hi);
    if (!ok) fail(RESET_ERR_INVALID_ARGUMENT, "policy parameter ", field, " is ", show(value), " (", meaning, ")");
}

}  // namespace

const std::vector<PaperPreset> &paper_presets() {
    // reset-algorithm.md, "Values published with the paper".
    static const std::vector<PaperPreset> presets = {
        {"Qwen3-8B", 0.1f, 0.5505f},
        {"Qwen3-14B", 0.3f, 0.4863f},
        {"Qwen3-32B", 0.1f, 0.5363f},
        {"DeepSeek-R1-Distill-Qwen-7B", 0.4f, 0.6446f},
        {"DeepSeek-R1-Distill-Qwen-14B", 0.3f, 0.6488f},
    };
    return presets;
}

const PaperPreset *find_preset(const std::string &name) {
    const std::string wanted = normalise_model_name(name);
    for (const PaperPreset &p : paper_presets())
        if (normalise_model_name(p.name) == wanted) return &p;
    return nullptr;
}

const PaperPreset *recognise_model(const ModelConfig &config) {
    // Shapes from shared/docs/models.md (intermediate = the down projection's K).
    struct Shape {
        const char *architecture;
        int32_t layers, hidden, heads, kv_heads, intermediate;
        const char *preset;
    };
    static const Shape shapes[] = {
        {"qwen3", 36, 4096, 32, 8, 12288, "Qwen3-8B"},
        {"qwen3", 40, 5120, 40, 8, 17408, "Qwen3-14B"},
        {"qwen3", 64, 5120, 64, 8, 25600, "Qwen3-32B"},
        {"qwen2", 28, 3584, 28, 4, 18944, "DeepSeek-R1-Distill-Qwen-7B"},
        {"qwen2", 48, 5120, 40, 8, 13824, "DeepSeek-R1-Distill-Qwen-14B"},
    };
    for (const Shape &s : shapes) {
        if (config.architecture == s.architecture && config.n_layers == s.layers &&
            config.hidden_size == s.hidden && config.n_heads == s.heads && config.n_kv_heads == s.kv_heads &&
            config.intermediate_size == s.intermediate)
            return find_preset(s.preset);
    }
    return nullptr;
}

Policy validate_policy(const reset_policy_params &params, const ModelConfig *config) {
    Policy p;
    const int32_t kind = enum_as_int(params.kind);
    if (kind < RESET_POLICY_GREEDY || kind > RESET_POLICY_ENTROPY)
        fail(RESET_ERR_INVALID_ARGUMENT, "policy parameter kind is ", kind,
             " (expected RESET_POLICY_GREEDY, _FIXED, _RESET or _ENTROPY: 0..3)");
    p.kind = params.kind;

    // Every field is checked whatever the kind: a wrong value is an error
    // now, not a surprise when the caller later switches kind.
    check_range("temperature", params.temperature, 0.0f, false, INFINITY, true, "must be finite and >= 0");
    if (params.top_k < 0)
        fail(RESET_ERR_INVALID_ARGUMENT, "policy parameter top_k is ", params.top_k, " (must be >= 0; 0 = off)");
    check_range("top_p", params.top_p, 0.0f, true, 1.0f, false, "must be in (0, 1]; 1 = off");
    check_range("min_p", params.min_p, 0.0f, false, 1.0f, true, "must be in [0, 1); 0 = off");
    check_range("t_high", params.t_high, 0.0f, false, INFINITY, true, "must be finite and >= 0");
    check_range("presence_penalty", params.presence_penalty, -rule::kMaxPenalty, false, rule::kMaxPenalty, false,
                "must be in [-2, 2]; 0 = off");
    check_range("frequency_penalty", params.frequency_penalty, -rule::kMaxPenalty, false, rule::kMaxPenalty, false,
                "must be in [-2, 2]; 0 = off");
    check_range("repetition_penalty", params.repetition_penalty, rule::kMinRepetitionPenalty, false,
                rule::kMaxRepetitionPenalty, false, "must be in [0.1, 10]; 1 = off");
    // t_low and tau0: any negative value means "from the preset"; NaN and
    // infinities are errors.
    if (!std::isfinite(params.t_low))
        fail(RESET_ERR_INVALID_ARGUMENT, "policy parameter t_low is ", show(params.t_low),
             " (must be finite: >= 0, or < 0 for the model's preset)");
    if (!std::isfinite(params.tau0))
        fail(RESET_ERR_INVALID_ARGUMENT, "policy parameter tau0 is ", show(params.tau0),
             " (must be finite: >= 0 nats, or < 0 for the model's preset)");
    if (params.window < 1 || params.window > kMaxWindow)
        fail(RESET_ERR_INVALID_ARGUMENT, "policy parameter window is ", params.window, " (must be in 1..",
             kMaxWindow, ")");
    if (params.reset_state != 0 && params.reset_state != 1)
        fail(RESET_ERR_INVALID_ARGUMENT, "policy parameter reset_state is ", params.reset_state,
             " (must be 0 or 1)");
    const PaperPreset *named = nullptr;
    if (params.preset) {
        named = find_preset(params.preset);
        if (!named)
            fail(RESET_ERR_INVALID_ARGUMENT, "policy parameter preset is \"", params.preset,
                 "\", which is not in the paper's table (known: ", preset_names(), ")");
    }

    p.temperature = params.temperature;
    p.top_k = params.top_k;
    p.top_p = params.top_p;
    p.min_p = params.min_p;
    p.seed = params.seed;
    p.t_high = params.t_high;
    p.window = params.window;
    p.reset_state = params.reset_state == 1;
    p.presence_penalty = params.presence_penalty;
    p.frequency_penalty = params.frequency_penalty;
    p.repetition_penalty = params.repetition_penalty;
    p.t_low = params.t_low;
    p.tau0 = params.tau0;

    const bool needs_thresholds = p.kind == RESET_POLICY_RESET || p.kind == RESET_POLICY_ENTROPY;
    if (needs_thresholds && (p.t_low < 0.0f || p.tau0 < 0.0f)) {
        // An explicit preset wins over recognising the model: the caller
        // named the row they want.
        const PaperPreset *row = named ? named : (config ? recognise_model(*config) : nullptr);
        if (!row)
            fail(RESET_ERR_UNSUPPORTED, "ReSET needs t_low and tau0, and ",
                 config ? "the loaded model is not one of the paper's" : "no model was given to recognise",
                 ": set params.t_low and params.tau0 (calibrate tau0 with reset_calibrate), or name a preset "
                 "in params.preset (",
                 preset_names(), ")");
        if (p.t_low < 0.0f) p.t_low = row->t_low;
        if (p.tau0 < 0.0f) p.tau0 = row->tau0;
        p.preset = row->name;
    } else if (!needs_thresholds) {
        // Unused by GREEDY and FIXED; a resolved non-negative value keeps the
        // struct meaningful if the caller inspects it.
        if (p.t_low < 0.0f) p.t_low = 0.0f;
        if (p.tau0 < 0.0f) p.tau0 = 0.0f;
    }
    return p;
}

reset_policy_params policy_params(const Policy &policy) {
    reset_policy_params p;
    reset_policy_params_init(&p);
    p.kind = policy.kind;
    p.temperature = policy.temperature;
    p.top_k = policy.top_k;
    p.top_p = policy.top_p;
    p.min_p = policy.min_p;
    p.seed = policy.seed;
    p.t_high = policy.t_high;
    p.t_low = policy.t_low;
    p.tau0 = policy.tau0;
    p.window = policy.window;
    p.presence_penalty = policy.presence_penalty;
    p.frequency_penalty = policy.frequency_penalty;
    p.repetition_penalty = policy.repetition_penalty;
    return p;
}

}  // namespace reset
