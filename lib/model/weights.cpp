// weights.cpp — turning a checkpoint into the weights the engine runs:
// BF16 as stored, NVFP4 quantized on load (round-to-nearest, nvfp4.md), or
// NVFP4 taken as exported by NVIDIA ModelOpt.
#include "model/weights.h"

#include <fnmatch.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

#include "api/errors.h"
#include "model/safetensors.h"
#include "rules/nvfp4.h"
#include "util/files.h"
#include "util/threads.h"

namespace reset {

using json = nlohmann::json;

uint16_t float_to_bf16(float value) {
    uint32_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    if (std::isnan(value)) return 0x7fc0;
    bits += 0x7fffu + ((bits >> 16) & 1u);  // round to nearest, ties to even
    return static_cast<uint16_t>(bits >> 16);
}

Nvfp4Weight Linear::nvfp4_view() const {
    Nvfp4Weight w;
    w.rows = out_features;
    w.cols = padded_in;
    w.codes = codes.data();
    w.scales = scales.data();
    w.tensor_scale = tensor_scale;
    w.input_scale = input_scale;
    return w;
}

uint64_t Linear::weight_bytes() const {
    uint64_t bytes = bias.size() * sizeof(float);
    if (format == LinearFormat::NVFP4) return bytes + codes.size() + scales.size() + 2 * sizeof(float);
    return bytes + static_cast<uint64_t>(dense.rows * dense.cols) * 2;
}

namespace {

std::string shape_text(const std::vector<int64_t> &shape) {
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
}

void expect_shape(const TensorView &t, const std::vector<int64_t> &shape) {
    if (t.shape != shape)
        fail(RESET_ERR_SHAPE, "tensor '", t.name, "' is ", t.describe(), " but config.json implies ", shape_text(shape));
}

bool is_float_dtype(Dtype d) { return d == Dtype::BF16 || d == Dtype::F16 || d == Dtype::F32; }

float half_to_float(uint16_t h) {
    const int sign = h >> 15, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
    float v;
    if (exponent == 0) v = std::ldexp(static_cast<float>(mantissa), -24);
    else if (exponent == 31) v = mantissa ? NAN : INFINITY;
    else v = std::ldexp(static_cast<float>(mantissa | 0x400), exponent - 25);
    return sign ? -v : v;
}

// Any float tensor as FP32 values.
std::vector<float> to_floats(const TensorView &t) {
    if (!is_float_dtype(t.dtype))
        fail(RESET_ERR_SHAPE, "tensor '", t.name, "' has dtype ", dtype_name(t.dtype), "; expected BF16, F16 or F32");
    const size_t n = static_cast<size_t>(t.numel());
    std::vector<float> out(n);
    for (size_t i = 0; i < n; ++i) {
        if (t.dtype == Dtype::F32) {
            std::memcpy(&out[i], t.data + 4 * i, 4);
        } else {
            uint16_t bits;
            std::memcpy(&bits, t.data + 2 * i, 2);
            out[i] = t.dtype == Dtype::BF16 ? bf16_to_float(bits) : half_to_float(bits);
        }
    }
    return out;
}

std::vector<float> vector_tensor(const TensorStore &store, const std::string &name, int64_t size) {
    const TensorView &t = store.get(name);
    expect_shape(t, {size});
    return to_floats(t);
}

// A BF16 matrix: the mapped bytes themselves when the file holds BF16
// (2-byte alignment is guaranteed by the format's 8-byte header length and
// offsets that are multiples of the element size... checked here anyway).
Bf16Matrix bf16_matrix(const TensorView &t, int64_t rows, int64_t cols) {
    expect_shape(t, {rows, cols});
    Bf16Matrix m;
    m.rows = rows;
    m.cols = cols;
    if (t.dtype == Dtype::BF16 && reinterpret_cast<uintptr_t>(t.data) % alignof(uint16_t) == 0) {
        m.data = reinterpret_cast<const uint16_t *>(t.data);
        return m;
    }
    const std::vector<float> values = to_floats(t);
    m.owned.resize(values.size());
    for (size_t i = 0; i < values.size(); ++i) m.owned[i] = float_to_bf16(values[i]);
    m.data = m.owned.data();
    return m;
}

// ---------------------------------------------------------------------------
// ModelOpt export description
// ---------------------------------------------------------------------------

struct ModelOptConfig {
    bool present = false;
    std::vector<std::string> excluded;  // glob patterns over module names
    std::string kv_cache_algo;
};

std::vector<std::string> string_list(const json &value, const std::string &where) {
    std::vector<std::string> out;
    if (value.is_null()) return out;
    if (!value.is_array()) fail(RESET_ERR_FORMAT, where, ": exclude list is not an array");
    for (const auto &item : value) {
        if (!item.is_string()) fail(RESET_ERR_FORMAT, where, ": exclude list holds a non-string");
        out.push_back(item.get<std::string>());
    }
    return out;
}

void check_quant_algo(const json &q, const std::string &where) {
    auto algo = q.find("quant_algo");
    if (algo == q.end() || !algo->is_string()) fail(RESET_ERR_FORMAT, where, ": no \"quant_algo\"");
    if (algo->get<std::string>() != "NVFP4")
        fail(RESET_ERR_UNSUPPORTED, where, ": quant_algo \"", algo->get<std::string>(),
             "\" is not supported (libreset loads NVFP4 ModelOpt checkpoints and unquantized BF16/F16/F32 ones)");
    if (auto group = q.find("group_size"); group != q.end() && !group->is_null()) {
        if (!group->is_number_integer() || group->get<int64_t>() != 16)
            fail(RESET_ERR_UNSUPPORTED, where, ": group_size ", group->dump(), " is not supported (NVFP4 uses 16)");
    }
}

ModelOptConfig read_modelopt_config(const std::string &directory) {
    ModelOptConfig out;
    const std::string hf_quant = join_path(directory, "hf_quant_config.json");
    const std::string config_path = join_path(directory, "config.json");
    if (file_exists(hf_quant)) {
        json root;
        try {
            root = json::parse(read_text_file(hf_quant));
        } catch (const json::exception &e) {  // parse_error, or out_of_range for a number past double's range ("1e506")
            fail(RESET_ERR_FORMAT, "'", hf_quant, "' is not valid JSON: ", e.what());
        }
        auto q = root.find("quantization");
        if (!root.is_object() || q == root.end() || !q->is_object())
            fail(RESET_ERR_FORMAT, "'", hf_quant, "' has no \"quantization\" object");
        check_quant_algo(*q, hf_quant);
        if (q->contains("exclude_modules")) out.excluded = string_list((*q)["exclude_modules"], hf_quant);
        if (auto kv = q->find("kv_cache_quant_algo"); kv != q->end() && kv->is_string()) out.kv_cache_algo = kv->get<std::string>();
        out.present = true;
        return out;
    }
    // Newer exports: config.json -> quantization_config with quant_method "modelopt".
    json config;
    try {
        config = json::parse(read_text_file(config_path));
    } catch (const json::exception &) {
        return out;  // already reported by the config reader
    }
    auto q = config.find("quantization_config");
    if (q == config.end() || !q->is_object()) return out;
    auto method = q->find("quant_method");
    const std::string method_name = method != q->end() && method->is_string() ? method->get<std::string>() : "";
    if (method_name != "modelopt")
        fail(RESET_ERR_UNSUPPORTED, config_path, ": quantization_config with quant_method \"", method_name,
             "\" is not supported (only NVIDIA ModelOpt NVFP4 exports are)");
    check_quant_algo(*q, config_path);
    if (q->contains("ignore")) out.excluded = string_list((*q)["ignore"], config_path);
    if (q->contains("exclude_modules")) {
        auto more = string_list((*q)["exclude_modules"], config_path);
        out.excluded.insert(out.excluded.end(), more.begin(), more.end());
    }
    if (auto kv = q->find("kv_cache_quant_algo"); kv != q->end() && kv->is_string()) out.kv_cache_algo = kv->get<std::string>();
    out.present = true;
    return out;
}

bool is_excluded(const ModelOptConfig &modelopt, const std::string &module) {
    for (const auto &pattern : modelopt.excluded)
        if (pattern == module || fnmatch(pattern.c_str(), module.c_str(), 0) == 0) return true;
    return false;
}

float scalar_f32(const TensorView &t) {
    if (t.dtype != Dtype::F32 || t.numel() != 1)
        fail(RESET_ERR_SHAPE, "tensor '", t.name, "' is ", t.describe(), "; expected a scalar F32");
    float v;
    std::memcpy(&v, t.data, 4);
    if (!std::isfinite(v) || v < 0.0f) fail(RESET_ERR_FORMAT, "tensor '", t.name, "' holds ", v, ", not a finite non-negative scale");
    return v;
}

int64_t round_up_16(int64_t k) { return (k + nvfp4::kBlock - 1) / nvfp4::kBlock * nvfp4::kBlock; }

// One linear of a ModelOpt export, already NVFP4.
void load_modelopt_linear(const TensorStore &store, Linear &linear, int32_t threads) {
    const std::string &p = linear.name;
    const int64_t n = linear.out_features, k = linear.in_features;
    if (store.find(p + ".pre_quant_scale"))
        fail(RESET_ERR_UNSUPPORTED, "'", p, ".pre_quant_scale' (AWQ-style activation smoothing) is not supported; "
             "export the checkpoint without it");
    if (k % nvfp4::kBlock != 0)
        fail(RESET_ERR_UNSUPPORTED, "'", p, "': in_features ", k, " is not a multiple of 16 in an NVFP4 export");
    const TensorView &weight = store.get(p + ".weight");
    if (weight.dtype != Dtype::U8) fail(RESET_ERR_SHAPE, "tensor '", weight.name, "' is ", weight.describe(), "; expected packed NVFP4 (U8)");
    expect_shape(weight, {n, k / 2});
    const TensorView &scale = store.get(p + ".weight_scale");
    if (scale.dtype != Dtype::F8_E4M3) fail(RESET_ERR_SHAPE, "tensor '", scale.name, "' is ", scale.describe(), "; expected F8_E4M3");
    expect_shape(scale, {n, k / nvfp4::kBlock});
    linear.format = LinearFormat::NVFP4;
    linear.padded_in = k;
    linear.codes.borrow(weight.data, weight.nbytes);
    linear.scales.borrow(scale.data, scale.nbytes);
    // The first touch of the scales' pages in the mapping: on every core (one thread scanning an
    // 8B model's 0.43 GB of scales was most of its 0.2-0.3 s of reading, session 37 run 3).
    const uint8_t *scales = linear.scales.data();
    const int64_t count = static_cast<int64_t>(linear.scales.size());
    int64_t first_nan = count;
#pragma omp parallel for schedule(static) num_threads(openmp_threads(threads)) reduction(min : first_nan)
    for (int64_t i = 0; i < count; ++i)
        if ((scales[i] & 0x7f) == 0x7f && i < first_nan) first_nan = i;
    if (first_nan < count)
        fail(RESET_ERR_FORMAT, "tensor '", scale.name, "' holds a NaN block scale (byte ", first_nan, ")");
    linear.tensor_scale = scalar_f32(store.get(p + ".weight_scale_2"));
    if (const TensorView *input = store.find(p + ".input_scale")) linear.input_scale = scalar_f32(*input);
}

}  // namespace

void release_host_weights(ModelWeights &w) {
    auto release_dense = [](Bf16Matrix &m) {
        std::vector<uint16_t>().swap(m.owned);
        m.data = nullptr;
    };
    auto release = [&](Linear &l) {
        l.codes.release();
        l.scales.release();
        release_dense(l.dense);
    };
    for (LayerWeights &layer : w.layers)
        for (Linear *l : {&layer.q, &layer.k, &layer.v, &layer.o, &layer.gate, &layer.up, &layer.down}) release(*l);
    release(w.lm_head);
    release_dense(w.embed);
    w.owned_bytes = 0;
}

float nvfp4_shared_tensor_scale(const std::vector<const std::vector<float> *> &siblings) {
    float amax = 0.0f;
    for (const auto *values : siblings)
        for (float v : *values) amax = std::fmax(amax, std::fabs(v));
    return nvfp4::tensor_scale_from_amax(amax);
}

void nvfp4_quantize_matrix(const std::vector<float> &values, int64_t rows, int64_t cols, float tensor_scale,
                           Linear &out, int32_t threads) {
    const int64_t padded = round_up_16(cols);
    out.out_features = rows;
    out.in_features = cols;
    out.format = LinearFormat::NVFP4;
    out.padded_in = padded;
    out.tensor_scale = tensor_scale;
    out.input_scale = 0.0f;
    uint8_t *const codes = out.codes.own(static_cast<size_t>(rows * padded / 2));
    uint8_t *const scales = out.scales.own(static_cast<size_t>(rows * padded / nvfp4::kBlock));
    // Nothing in the loop allocates: no exception can leave it (one would end the host process).
#pragma omp parallel for schedule(static) num_threads(openmp_threads(threads))
    for (int64_t r = 0; r < rows; ++r) {
        const float *row = values.data() + r * cols;
        uint8_t block_codes[nvfp4::kBlock];
        for (int64_t b = 0; b < padded / nvfp4::kBlock; ++b) {
            // Zero padding along K is exact: padded elements quantize to 0 and add nothing.
            float block[nvfp4::kBlock];
            for (int i = 0; i < nvfp4::kBlock; ++i) {
                const int64_t k = b * nvfp4::kBlock + i;
                block[i] = k < cols ? row[k] : 0.0f;
            }
            scales[r * (padded / nvfp4::kBlock) + b] = nvfp4::quantize_block(block, tensor_scale, block_codes);
            uint8_t *dst = codes + r * (padded / 2) + b * (nvfp4::kBlock / 2);
            for (int i = 0; i < nvfp4::kBlock / 2; ++i)
                dst[i] = static_cast<uint8_t>(block_codes[2 * i] | (block_codes[2 * i + 1] << 4));
        }
    }
}

namespace {

struct LinearSpec {
    Linear *linear;
    std::string name;
    int64_t out, in;
    bool has_bias;
};

// Load a group of siblings that read the same input (q/k/v, gate/up, or one
// linear alone), in the requested format.
void load_linear_group(const TensorStore &store, const std::vector<LinearSpec> &group, bool quantize,
                       const ModelOptConfig &modelopt, ModelWeights &weights, int32_t threads) {
    for (const auto &spec : group) {
        Linear &l = *spec.linear;
        l.name = spec.name;
        l.out_features = spec.out;
        l.in_features = spec.in;
        if (spec.has_bias) l.bias = vector_tensor(store, spec.name + ".bias", spec.out);
        else if (store.find(spec.name + ".bias"))
            fail(RESET_ERR_SHAPE, "tensor '", spec.name, ".bias' is present but config.json declares no bias there");
    }
    if (modelopt.present) {
        for (const auto &spec : group) {
            Linear &l = *spec.linear;
            const TensorView &weight = store.get(spec.name + ".weight");
            if (is_float_dtype(weight.dtype)) {
                // Excluded from quantization by the exporter (or never quantized): stays BF16.
                l.dense = bf16_matrix(weight, spec.out, spec.in);
                l.format = LinearFormat::BF16;
                ++weights.n_bf16_linears;
            } else {
                if (is_excluded(modelopt, spec.name))
                    fail(RESET_ERR_FORMAT, "'", spec.name, "' is excluded from quantization by the config but stored as ",
                         weight.describe());
                load_modelopt_linear(store, l, threads);
            }
        }
        return;
    }
    for (const auto &spec : group) {
        const TensorView &weight = store.get(spec.name + ".weight");
        if (!is_float_dtype(weight.dtype))
            fail(RESET_ERR_FORMAT, "tensor '", weight.name, "' is ", weight.describe(),
                 " but the checkpoint has no hf_quant_config.json or quantization_config describing it");
    }
    if (!quantize) {
        for (const auto &spec : group) spec.linear->dense = bf16_matrix(store.get(spec.name + ".weight"), spec.out, spec.in);
        return;
    }
    std::vector<std::vector<float>> values;
    values.reserve(group.size());
    for (const auto &spec : group) {
        const TensorView &weight = store.get(spec.name + ".weight");
        expect_shape(weight, {spec.out, spec.in});
        values.push_back(to_floats(weight));
    }
    std::vector<const std::vector<float> *> siblings;
    for (const auto &v : values) siblings.push_back(&v);
    const float tensor_scale = nvfp4_shared_tensor_scale(siblings);
    for (size_t i = 0; i < group.size(); ++i)
        nvfp4_quantize_matrix(values[i], group[i].out, group[i].in, tensor_scale, *group[i].linear, threads);
}

}  // namespace

ModelWeights load_weights(const ModelConfig &config, const TensorStore &store, const std::string &directory,
                          LoadOptions &options) {
    const ModelOptConfig modelopt = read_modelopt_config(directory);
    if (modelopt.present) {
        if (options.weights == RESET_WEIGHTS_BF16)
            fail(RESET_ERR_UNSUPPORTED, "'", directory, "' is an NVFP4 ModelOpt checkpoint; load it with "
                 "RESET_WEIGHTS_NVFP4_W4A16, RESET_WEIGHTS_NVFP4_W4A4 or RESET_WEIGHTS_AUTO, not BF16");
        if (options.weights == RESET_WEIGHTS_AUTO) options.weights = RESET_WEIGHTS_NVFP4_W4A16;
    } else if (options.weights == RESET_WEIGHTS_AUTO) {
        options.weights = RESET_WEIGHTS_BF16;
    }
    const bool quantize = options.weights != RESET_WEIGHTS_BF16;
    if (options.quantize_lm_head && !quantize)
        fail(RESET_ERR_INVALID_ARGUMENT, "quantize_lm_head asks for an NVFP4 lm_head, which needs NVFP4 weights "
             "(RESET_WEIGHTS_NVFP4_W4A16 or _W4A4, or AUTO on an NVFP4 checkpoint); these weights load as BF16");

    const int64_t hidden = config.hidden_size, vocab = config.vocab_size;
    const int64_t q_out = int64_t(config.n_heads) * config.head_dim;
    const int64_t kv_out = int64_t(config.n_kv_heads) * config.head_dim;
    const int64_t inter = config.intermediate_size;

    ModelWeights w;
    w.from_modelopt = modelopt.present;
    w.embed = bf16_matrix(store.get("model.embed_tokens.weight"), vocab, hidden);
    w.final_norm = vector_tensor(store, "model.norm.weight", hidden);
    // The last layer first: a config claiming more layers than the checkpoint holds is RESET_ERR_SHAPE
    // naming the missing tensor, not an allocation of num_hidden_layers entries that fails ("out of host
    // memory" for num_hidden_layers = 2^30 before session 25).
    store.get("model.layers." + std::to_string(config.n_layers - 1) + ".input_layernorm.weight");
    w.layers.resize(static_cast<size_t>(config.n_layers));
    for (int32_t i = 0; i < config.n_layers; ++i) {
        // Layers are the unit of work (quantizing one is the slow part of a load).
        if (options.progress && options.progress(float(i) / float(config.n_layers + 1), options.progress_user_data))
            fail(RESET_ERR_CANCELLED, "loading cancelled by the progress callback");
        LayerWeights &layer = w.layers[static_cast<size_t>(i)];
        const std::string p = "model.layers." + std::to_string(i) + ".";
        layer.input_norm = vector_tensor(store, p + "input_layernorm.weight", hidden);
        layer.post_attention_norm = vector_tensor(store, p + "post_attention_layernorm.weight", hidden);
        if (config.qk_norm) {
            layer.q_norm = vector_tensor(store, p + "self_attn.q_norm.weight", config.head_dim);
            layer.k_norm = vector_tensor(store, p + "self_attn.k_norm.weight", config.head_dim);
        }
        load_linear_group(store,
                          {{&layer.q, p + "self_attn.q_proj", q_out, hidden, config.attention_bias},
                           {&layer.k, p + "self_attn.k_proj", kv_out, hidden, config.attention_bias},
                           {&layer.v, p + "self_attn.v_proj", kv_out, hidden, config.attention_bias}},
                          quantize, modelopt, w, options.threads);
        load_linear_group(store, {{&layer.o, p + "self_attn.o_proj", hidden, q_out, config.output_bias}}, quantize,
                          modelopt, w, options.threads);
        load_linear_group(store,
                          {{&layer.gate, p + "mlp.gate_proj", inter, hidden, false},
                           {&layer.up, p + "mlp.up_proj", inter, hidden, false}},
                          quantize, modelopt, w, options.threads);
        load_linear_group(store, {{&layer.down, p + "mlp.down_proj", hidden, inter, false}}, quantize, modelopt, w, options.threads);
    }

    Linear &head = w.lm_head;
    head.name = "lm_head";
    head.out_features = vocab;
    head.in_features = hidden;
    const TensorView *head_tensor = config.tie_word_embeddings ? nullptr : &store.get("lm_head.weight");
    if (head_tensor && modelopt.present && !is_float_dtype(head_tensor->dtype)) {
        load_modelopt_linear(store, head, options.threads);
    } else if (options.quantize_lm_head) {
        // A BF16 checkpoint quantized on load, or a ModelOpt export that kept
        // its lm_head (or tied embeddings) in BF16, as ModelOpt does by default.
        const std::vector<float> values =
            head_tensor ? to_floats(*head_tensor) : to_floats(store.get("model.embed_tokens.weight"));
        if (head_tensor) expect_shape(*head_tensor, {vocab, hidden});
        nvfp4_quantize_matrix(values, vocab, hidden, nvfp4_shared_tensor_scale({&values}), head, options.threads);
    } else if (head_tensor) {
        head.dense = bf16_matrix(*head_tensor, vocab, hidden);
    } else {
        // Tied: lm_head reads the embedding's rows.  Moving ModelWeights keeps
        // the vectors' buffers, so this alias stays valid; it is never copied.
        head.dense.rows = vocab;
        head.dense.cols = hidden;
        head.dense.data = w.embed.data;
    }

    // Sizes for model info.
    auto norm_bytes = [](const std::vector<float> &v) { return static_cast<uint64_t>(v.size()) * 4; };
    uint64_t params = static_cast<uint64_t>(vocab * hidden) + static_cast<uint64_t>(hidden);
    uint64_t bytes = static_cast<uint64_t>(vocab * hidden) * 2 + norm_bytes(w.final_norm);
    uint64_t owned = w.embed.owned.size() * 2 + norm_bytes(w.final_norm);
    auto add_linear = [&](const Linear &l) {
        params += static_cast<uint64_t>(l.out_features * l.in_features) + l.bias.size();
        bytes += l.weight_bytes();
        owned += l.codes.owned_bytes() + l.scales.owned_bytes() + l.dense.owned.size() * 2 + l.bias.size() * 4;
    };
    for (const auto &layer : w.layers) {
        for (const auto *norm : {&layer.input_norm, &layer.post_attention_norm, &layer.q_norm, &layer.k_norm}) {
            params += norm->size();
            bytes += norm_bytes(*norm);
            owned += norm_bytes(*norm);
        }
        for (const Linear *l : {&layer.q, &layer.k, &layer.v, &layer.o, &layer.gate, &layer.up, &layer.down}) add_linear(*l);
    }
    if (!config.tie_word_embeddings || head.format == LinearFormat::NVFP4) {
        add_linear(head);
        if (config.tie_word_embeddings) params -= static_cast<uint64_t>(vocab * hidden);  // not a new parameter
    }
    if (options.progress && options.progress(1.0f, options.progress_user_data))
        fail(RESET_ERR_CANCELLED, "loading cancelled by the progress callback");
    w.n_parameters = params;
    w.weight_bytes = bytes;
    w.owned_bytes = owned;
    if (modelopt.present || quantize) {
        if (head.format == LinearFormat::BF16) ++w.n_bf16_linears;  // lm_head counts as a linear here
    }
    return w;
}

}  // namespace reset
