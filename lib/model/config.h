// config.h — a model's architecture as read from config.json and
// generation_config.json (Hugging Face format), validated.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace reset {

// rope_scaling of type "llama3": frequency-dependent scaling of the RoPE
// inverse frequencies (Llama 3.1's long-context recipe).
struct Llama3RopeScaling {
    bool enabled = false;
    double factor = 1.0;
    double low_freq_factor = 1.0;
    double high_freq_factor = 4.0;
    int64_t original_max_position_embeddings = 8192;
};

// rope_scaling of type "yarn" (YaRN, Peng et al. 2023; Qwen3's and Qwen2.5's
// recipe past their native context), as transformers' _compute_yarn_parameters
// reads it: each inverse frequency blends the original one and `factor` times
// slower by a linear ramp over the dimensions whose wavelengths fall between
// beta_fast and beta_slow rotations of original_max_position_embeddings, and
// RoPE's cosines and sines are multiplied by attention_factor.
struct YarnRopeScaling {
    bool enabled = false;
    double factor = 1.0;
    int64_t original_max_position_embeddings = 0;  // max_position_embeddings where the file names none
    double beta_fast = 32.0;
    double beta_slow = 1.0;
    bool truncate = true;           // the ramp's ends rounded outwards to whole dimensions
    double attention_factor = 1.0;  // as given, else 0.1 ln(factor) + 1 (or mscale / mscale_all_dim's ratio)
};

struct GenerationDefaults {
    bool do_sample = false;
    float temperature = 1.0f;
    float top_p = 1.0f;
    int32_t top_k = 0;
    float repetition_penalty = 1.0f;  // applied greedy or not, as transformers' logits processor is
};

struct ModelConfig {
    std::string architecture;  // model_type: "qwen3", "qwen2" or "llama"
    int32_t n_layers = 0;
    int32_t hidden_size = 0;
    int32_t intermediate_size = 0;
    int32_t n_heads = 0;
    int32_t n_kv_heads = 0;
    int32_t head_dim = 0;  // explicit in Qwen3; hidden/heads otherwise
    int32_t vocab_size = 0;
    int32_t max_position_embeddings = 0;  // with YaRN at least factor x original_max_position_embeddings, as vLLM
    double rms_norm_eps = 1e-6;
    double rope_theta = 10000.0;
    Llama3RopeScaling rope_scaling;
    YarnRopeScaling yarn;
    bool tie_word_embeddings = false;
    bool attention_bias = false;  // q/k/v biases (qwen2 always; llama and qwen3 if attention_bias)
    bool output_bias = false;     // o_proj bias (llama and qwen3 if attention_bias; never qwen2)
    bool qk_norm = false;         // per-head RMSNorm of q and k before RoPE (qwen3)
    std::string torch_dtype;      // as written, informative only
    std::vector<int32_t> eos_ids; // generation_config.json, else config.json
    int32_t bos_id = -1;
    GenerationDefaults generation;
};

// Read <dir>/config.json (required) and <dir>/generation_config.json
// (optional).  Throws reset::Error: RESET_ERR_IO, RESET_ERR_FORMAT,
// RESET_ERR_UNSUPPORTED (unknown model_type or rope_scaling type).
ModelConfig read_model_config(const std::string &directory);

// Parse from JSON text (used by the loader and by tests).
ModelConfig parse_model_config(const std::string &config_json, const std::string &generation_json,
                               const std::string &where);

}  // namespace reset
