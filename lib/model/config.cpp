// config.cpp — config.json and generation_config.json, read and validated.
#include "model/config.h"

#include <algorithm>
#include <climits>
#include <cmath>

#include <nlohmann/json.hpp>

#include "api/errors.h"
#include "rules/penalty.h"
#include "util/files.h"

namespace reset {

using json = nlohmann::json;

namespace {

json parse_json(const std::string &text, const std::string &where) {
    try {
        return json::parse(text);
    } catch (const json::exception &e) {  // parse_error, or out_of_range for a number past double's range ("1e506")
        fail(RESET_ERR_FORMAT, where, " is not valid JSON: ", e.what());
    }
}

// A required positive integer field.
int32_t positive_int(const json &config, const char *key, const std::string &where) {
    auto it = config.find(key);
    if (it == config.end() || it->is_null()) fail(RESET_ERR_FORMAT, where, ": missing \"", key, "\"");
    if (!it->is_number_integer()) fail(RESET_ERR_FORMAT, where, ": \"", key, "\" is not an integer");
    const int64_t value = it->get<int64_t>();
    if (value <= 0 || value > (int64_t(1) << 30))
        fail(RESET_ERR_FORMAT, where, ": \"", key, "\" = ", value, " is out of range");
    return static_cast<int32_t>(value);
}

int32_t optional_int(const json &config, const char *key, int32_t fallback, const std::string &where) {
    auto it = config.find(key);
    if (it == config.end() || it->is_null()) return fallback;
    return positive_int(config, key, where);
}

double optional_number(const json &config, const char *key, double fallback, const std::string &where) {
    auto it = config.find(key);
    if (it == config.end() || it->is_null()) return fallback;
    if (!it->is_number()) fail(RESET_ERR_FORMAT, where, ": \"", key, "\" is not a number");
    return it->get<double>();
}

bool optional_bool(const json &config, const char *key, bool fallback, const std::string &where) {
    auto it = config.find(key);
    if (it == config.end() || it->is_null()) return fallback;
    if (!it->is_boolean()) fail(RESET_ERR_FORMAT, where, ": \"", key, "\" is not a boolean");
    return it->get<bool>();
}

// eos_token_id may be an integer or a list of integers.
std::vector<int32_t> token_id_list(const json &value, const std::string &where) {
    std::vector<int32_t> ids;
    if (value.is_null()) return ids;
    // Read as 64 bits and range-checked here: get<int32_t> would wrap 2^32 + 5 to 5.
    auto id_of = [&](const json &item) {
        const int64_t id = item.get<int64_t>();
        if (id < 0 || id > INT32_MAX) fail(RESET_ERR_FORMAT, where, ": eos_token_id ", id, " is not a token id");
        return static_cast<int32_t>(id);
    };
    if (value.is_number_integer()) {
        ids.push_back(id_of(value));
    } else if (value.is_array()) {
        for (const auto &item : value) {
            if (!item.is_number_integer()) fail(RESET_ERR_FORMAT, where, ": eos_token_id holds a non-integer");
            ids.push_back(id_of(item));
        }
    } else {
        fail(RESET_ERR_FORMAT, where, ": eos_token_id is neither an integer nor a list");
    }
    return ids;
}

// YaRN's parameters, resolved as transformers' _compute_yarn_parameters does
// (model.max_position_embeddings is read already).
void read_yarn(const json &scaling, ModelConfig &model, const std::string &where) {
    YarnRopeScaling &y = model.yarn;
    y.enabled = true;
    y.original_max_position_embeddings =
        optional_int(scaling, "original_max_position_embeddings", model.max_position_embeddings, where);
    // A null factor is max_position_embeddings over the original (DeepSeek-V3's convention).
    y.factor = optional_number(scaling, "factor",
                               double(model.max_position_embeddings) / double(y.original_max_position_embeddings),
                               where);
    if (!(y.factor >= 1.0 && std::isfinite(y.factor)))
        fail(RESET_ERR_FORMAT, where, ": yarn rope scaling needs factor >= 1, not ", y.factor);
    // transformers reads these with `or`: 0 (or null) means the default.
    y.beta_fast = optional_number(scaling, "beta_fast", 0.0, where);
    y.beta_slow = optional_number(scaling, "beta_slow", 0.0, where);
    if (y.beta_fast == 0.0) y.beta_fast = 32.0;
    if (y.beta_slow == 0.0) y.beta_slow = 1.0;
    if (!(y.beta_fast > 0 && y.beta_slow > 0 && std::isfinite(y.beta_fast) && std::isfinite(y.beta_slow)))
        fail(RESET_ERR_FORMAT, where, ": yarn rope scaling needs beta_fast and beta_slow > 0");
    y.truncate = optional_bool(scaling, "truncate", true, where);
    const auto mscale = [](double scale, double m) { return scale <= 1.0 ? 1.0 : 0.1 * m * std::log(scale) + 1.0; };
    const double m = optional_number(scaling, "mscale", 0.0, where);
    const double m_all = optional_number(scaling, "mscale_all_dim", 0.0, where);
    y.attention_factor = optional_number(
        scaling, "attention_factor",
        m != 0.0 && m_all != 0.0 ? mscale(y.factor, m) / mscale(y.factor, m_all) : mscale(y.factor, 1.0), where);
    if (!(y.attention_factor > 0 && std::isfinite(y.attention_factor)))
        fail(RESET_ERR_FORMAT, where, ": yarn rope scaling's attention factor ", y.attention_factor,
             " is not positive");
    // The ramp's ends divide by ln(rope_theta).
    if (!(model.rope_theta > 1.0 && std::isfinite(model.rope_theta)))
        fail(RESET_ERR_FORMAT, where, ": yarn rope scaling needs rope_theta > 1, not ", model.rope_theta);
    if (optional_number(scaling, "partial_rotary_factor", 1.0, where) != 1.0)
        fail(RESET_ERR_UNSUPPORTED, where, ": partial_rotary_factor other than 1 is not supported");
    // The context the scaling is for, as vLLM derives max_model_len from it.
    const double scaled = std::floor(y.factor * double(y.original_max_position_embeddings));
    if (scaled > double(model.max_position_embeddings))
        model.max_position_embeddings = int32_t(std::min(scaled, double(int64_t(1) << 30)));
}

// RoPE parameters: transformers < 5 writes rope_theta and rope_scaling at the
// top level; transformers 5 writes one "rope_parameters" object holding
// rope_type, rope_theta and the scaling fields.  Both are accepted.
void read_rope(const json &config, ModelConfig &model, const std::string &where) {
    json scaling = json(nullptr);
    model.rope_theta = optional_number(config, "rope_theta", 10000.0, where);
    if (auto it = config.find("rope_parameters"); it != config.end() && it->is_object()) {
        model.rope_theta = optional_number(*it, "rope_theta", model.rope_theta, where);
        scaling = *it;
    }
    if (auto it = config.find("rope_scaling"); it != config.end() && !it->is_null()) {
        if (!it->is_object()) fail(RESET_ERR_FORMAT, where, ": rope_scaling is not an object");
        scaling = *it;
    }
    if (scaling.is_null()) return;
    std::string type;
    if (auto t = scaling.find("rope_type"); t != scaling.end() && t->is_string()) type = t->get<std::string>();
    else if (auto t2 = scaling.find("type"); t2 != scaling.end() && t2->is_string()) type = t2->get<std::string>();
    if (type.empty() || type == "default") return;
    if (type == "yarn") return read_yarn(scaling, model, where);
    if (type != "llama3")
        fail(RESET_ERR_UNSUPPORTED, where, ": rope scaling type \"", type,
             "\" is not supported (supported: none, \"default\", \"llama3\", \"yarn\")");
    Llama3RopeScaling &s = model.rope_scaling;
    s.enabled = true;
    s.factor = optional_number(scaling, "factor", 8.0, where);
    s.low_freq_factor = optional_number(scaling, "low_freq_factor", 1.0, where);
    s.high_freq_factor = optional_number(scaling, "high_freq_factor", 4.0, where);
    s.original_max_position_embeddings = optional_int(scaling, "original_max_position_embeddings", 8192, where);
    if (!(s.factor > 0) || !(s.low_freq_factor > 0) || !(s.high_freq_factor > s.low_freq_factor))
        fail(RESET_ERR_FORMAT, where, ": llama3 rope scaling needs factor > 0 and high_freq_factor > low_freq_factor > 0");
}

}  // namespace

ModelConfig parse_model_config(const std::string &config_json, const std::string &generation_json,
                               const std::string &where) {
    const json config = parse_json(config_json, where);
    if (!config.is_object()) fail(RESET_ERR_FORMAT, where, " is not a JSON object");

    ModelConfig model;
    auto type = config.find("model_type");
    if (type == config.end() || !type->is_string()) fail(RESET_ERR_FORMAT, where, ": missing \"model_type\"");
    model.architecture = type->get<std::string>();
    if (model.architecture != "qwen3" && model.architecture != "qwen2" && model.architecture != "llama")
        fail(RESET_ERR_UNSUPPORTED, where, ": model_type \"", model.architecture,
             "\" is not supported (supported: qwen3, qwen2, llama)");

    model.hidden_size = positive_int(config, "hidden_size", where);
    model.n_layers = positive_int(config, "num_hidden_layers", where);
    model.n_heads = positive_int(config, "num_attention_heads", where);
    model.n_kv_heads = optional_int(config, "num_key_value_heads", model.n_heads, where);
    model.intermediate_size = positive_int(config, "intermediate_size", where);
    model.vocab_size = positive_int(config, "vocab_size", where);
    model.max_position_embeddings = optional_int(config, "max_position_embeddings", 4096, where);
    if (model.n_heads % model.n_kv_heads != 0)
        fail(RESET_ERR_FORMAT, where, ": num_attention_heads (", model.n_heads,
             ") is not a multiple of num_key_value_heads (", model.n_kv_heads, ")");
    // Qwen3 writes head_dim explicitly, and it need not be hidden/heads.
    if (config.contains("head_dim") && !config["head_dim"].is_null()) {
        model.head_dim = positive_int(config, "head_dim", where);
    } else {
        if (model.hidden_size % model.n_heads != 0)
            fail(RESET_ERR_FORMAT, where, ": hidden_size is not a multiple of num_attention_heads and no head_dim is given");
        model.head_dim = model.hidden_size / model.n_heads;
    }
    if (model.head_dim % 2 != 0) fail(RESET_ERR_FORMAT, where, ": head_dim ", model.head_dim, " is odd (RoPE needs pairs)");

    model.rms_norm_eps = optional_number(config, "rms_norm_eps", 1e-6, where);
    read_rope(config, model, where);
    model.tie_word_embeddings = optional_bool(config, "tie_word_embeddings", false, where);
    model.qk_norm = model.architecture == "qwen3";
    // Qwen2 always has q/k/v biases (and none on o); llama and qwen3 follow attention_bias.
    model.attention_bias = model.architecture == "qwen2" || optional_bool(config, "attention_bias", false, where);
    model.output_bias = model.architecture != "qwen2" && optional_bool(config, "attention_bias", false, where);

    if (optional_bool(config, "mlp_bias", false, where))
        fail(RESET_ERR_UNSUPPORTED, where, ": mlp_bias = true is not supported");
    if (optional_bool(config, "use_sliding_window", false, where))
        fail(RESET_ERR_UNSUPPORTED, where, ": use_sliding_window = true is not supported");
    if (auto act = config.find("hidden_act"); act != config.end() && act->is_string() && act->get<std::string>() != "silu")
        fail(RESET_ERR_UNSUPPORTED, where, ": hidden_act \"", act->get<std::string>(), "\" is not supported (only silu)");
    if (auto dtype = config.find("torch_dtype"); dtype != config.end() && dtype->is_string())
        model.torch_dtype = dtype->get<std::string>();
    else if (auto dtype2 = config.find("dtype"); dtype2 != config.end() && dtype2->is_string())
        model.torch_dtype = dtype2->get<std::string>();

    if (config.contains("eos_token_id")) model.eos_ids = token_id_list(config["eos_token_id"], where);
    if (auto bos = config.find("bos_token_id"); bos != config.end() && bos->is_number_integer())
        model.bos_id = bos->get<int32_t>();

    if (!generation_json.empty()) {
        const std::string gen_where = "generation_config.json";
        const json generation = parse_json(generation_json, gen_where);
        if (!generation.is_object()) fail(RESET_ERR_FORMAT, gen_where, " is not a JSON object");
        if (generation.contains("eos_token_id")) {
            auto ids = token_id_list(generation["eos_token_id"], gen_where);
            if (!ids.empty()) model.eos_ids = ids;
        }
        if (auto bos = generation.find("bos_token_id"); bos != generation.end() && bos->is_number_integer())
            model.bos_id = bos->get<int32_t>();
        model.generation.do_sample = optional_bool(generation, "do_sample", false, gen_where);
        model.generation.temperature =
            static_cast<float>(optional_number(generation, "temperature", 1.0, gen_where));
        model.generation.top_p = static_cast<float>(optional_number(generation, "top_p", 1.0, gen_where));
        if (auto k = generation.find("top_k"); k != generation.end() && k->is_number_integer())
            model.generation.top_k = static_cast<int32_t>(std::clamp<int64_t>(k->get<int64_t>(), 0, INT32_MAX));
        model.generation.repetition_penalty =
            static_cast<float>(optional_number(generation, "repetition_penalty", 1.0, gen_where));
        // The session's first policy samples with these (reset.h, reset_session_create): refused here, naming
        // the file, rather than as the caller's invalid policy at session creation.  Unused when greedy, as in
        // transformers.
        const GenerationDefaults &g = model.generation;
        if (g.do_sample && !(g.temperature > 0 && std::isfinite(g.temperature)))
            fail(RESET_ERR_FORMAT, gen_where, ": do_sample with temperature ", g.temperature, " (must be > 0)");
        if (g.do_sample && !(g.top_p > 0 && g.top_p <= 1))
            fail(RESET_ERR_FORMAT, gen_where, ": do_sample with top_p ", g.top_p, " (must be in (0, 1])");
        const float r = g.repetition_penalty;
        if (!(r >= rule::kMinRepetitionPenalty && r <= rule::kMaxRepetitionPenalty))
            fail(RESET_ERR_FORMAT, gen_where, ": repetition_penalty ", r, " (libreset takes [0.1, 10]; 1 = off)");
    }
    for (int32_t id : model.eos_ids)
        if (id < 0 || id >= model.vocab_size)
            fail(RESET_ERR_FORMAT, where, ": eos_token_id ", id, " is outside the vocabulary of ", model.vocab_size);
    if (model.eos_ids.size() > 8) model.eos_ids.resize(8);
    return model;
}

ModelConfig read_model_config(const std::string &directory) {
    if (!directory_exists(directory)) fail(RESET_ERR_IO, "model directory '", directory, "' does not exist");
    const std::string config_path = join_path(directory, "config.json");
    if (!file_exists(config_path)) fail(RESET_ERR_IO, "'", config_path, "' is missing: not a Hugging Face model directory");
    const std::string generation_path = join_path(directory, "generation_config.json");
    const std::string generation = file_exists(generation_path) ? read_text_file(generation_path) : std::string();
    return parse_model_config(read_text_file(config_path), generation, config_path);
}

}  // namespace reset
