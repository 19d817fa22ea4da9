// policy.h — a validated sampling policy: reset_policy_params checked field
// by field, with ReSET's T_low and τ0 resolved from the paper's table when the
// caller left them unset.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "reset.h"
#include "rules/penalty.h"

namespace reset {

struct ModelConfig;

// The largest ReSET window accepted.  The spec sets no bound (w >= 1); one
// is needed so the window ring has a known size (64 KiB of floats at most
// per sequence, and a fixed-size buffer in the CUDA sampler).
constexpr int32_t kMaxWindow = 16384;

// A policy every field of which has been checked (validate_policy).
struct Policy {
    reset_policy_kind kind = RESET_POLICY_GREEDY;
    float temperature = 0.6f;  // FIXED
    int32_t top_k = 0;         // 0 = off
    float top_p = 1.0f;        // 1 = off
    float min_p = 0.0f;        // 0 = off
    uint64_t seed = 0;
    float t_high = 1.0f;       // RESET/ENTROPY
    float t_low = 0.0f;        // RESET/ENTROPY, resolved (>= 0)
    float tau0 = 0.0f;         // RESET/ENTROPY, resolved (>= 0)
    int32_t window = 32;       // RESET/ENTROPY
    std::string preset;        // the table row T_low/τ0 came from, "" if the caller gave them
    bool reset_state = false;  // the caller asked for a new generation (step state, penalty counts) when applied
    float presence_penalty = 0.0f;   // [-2, 2]
    float frequency_penalty = 0.0f;  // [-2, 2]
    float repetition_penalty = 1.0f; // [0.1, 10]

    bool penalized() const { return rule::penalties_on(presence_penalty, frequency_penalty, repetition_penalty); }
};

// One row of the paper's table (reset-algorithm.md, "Hyperparameters").
struct PaperPreset {
    const char *name;
    float t_low;
    float tau0;
};

// The five rows published with the paper (T_high = 1.0, w = 32 for all).
const std::vector<PaperPreset> &paper_presets();

// The row named `name` (case-insensitive; an "org/" prefix such as "Qwen/" or
// "deepseek-ai/" and a leading "DeepSeek-" are ignored), or nullptr.
const PaperPreset *find_preset(const std::string &name);

// The row whose model has the architecture of `config` (matched on
// model_type, layers, hidden size, heads, KV heads and intermediate size from
// shared/docs/models.md), or nullptr.
const PaperPreset *recognise_model(const ModelConfig &config);

// Check every field of params (whatever the kind, so a wrong value is caught
// before it is ever used) and resolve T_low/τ0 for RESET and ENTROPY:
// explicit values (>= 0) win; otherwise params.preset, else the model
// recognised from config (may be null).
// Throws reset::Error: RESET_ERR_INVALID_ARGUMENT naming the field and its
// value; RESET_ERR_UNSUPPORTED when T_low/τ0 are needed and cannot be found.
Policy validate_policy(const reset_policy_params &params, const ModelConfig *config);

// The inverse, for reset_session_get_policy: params that validate_policy
// turns back into `policy` on any model (T_low/τ0 resolved, preset NULL,
// reset_state 0).
reset_policy_params policy_params(const Policy &policy);

}  // namespace reset
