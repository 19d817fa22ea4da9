// weights.cpp — turning a checkpoint into the weights the engine runs:
// BF16 as stored, NVFP4 quantized on load (round-to-nearest, nvfp4.md), or
// NVFP4 taken as a checkpoint holds it: exported by NVIDIA ModelOpt, or saved
// by llm-compressor in compressed-tensors' "nvfp4-pack-quantized" format.
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
// What the checkpoint says about its quantization
// ---------------------------------------------------------------------------

struct CheckpointQuantization {
    CheckpointFormat format = CheckpointFormat::Unquantized;
    bool present() const { return format != CheckpointFormat::Unquantized; }
    std::vector<std::string> excluded;  // ModelOpt: glob patterns over module names
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

// A compressed-tensors quantization argument ("weights" or "input_activations" of a config
// group) must be NVFP4 as llm-compressor writes it: 4-bit float, one E4M3 scale per 16 elements
// under one FP32 global scale ("tensor_group"), symmetric.
void check_nvfp4_args(const json &args, const std::string &where) {
    if (!args.is_object()) fail(RESET_ERR_FORMAT, where, " is not an object");
    const auto value = [&](const char *key) { return args.contains(key) ? args[key] : json(); };
    const auto refuse = [&](const char *key, const std::string &expected) {
        fail(RESET_ERR_UNSUPPORTED, where, ": ", key, " ", value(key).dump(), " is not supported (NVFP4 needs ",
             expected, ")");
    };
    if (value("num_bits") != json(4)) refuse("num_bits", "4");
    if (value("type") != json("float")) refuse("type", "\"float\"");
    if (value("group_size") != json(16)) refuse("group_size", "16");
    if (value("strategy") != json("tensor_group")) refuse("strategy", "\"tensor_group\"");
    if (args.contains("symmetric") && value("symmetric") != json(true)) refuse("symmetric", "true");
    const json scale_dtype = value("scale_dtype");
    if (!scale_dtype.is_null() && scale_dtype != json("torch.float8_e4m3fn")) refuse("scale_dtype", "\"torch.float8_e4m3fn\"");
}

// config.json's quantization_config with quant_method "compressed-tensors" (llm-compressor).
void check_compressed_tensors_config(const json &q, const std::string &where) {
    const auto refuse = [&](const std::string &what) {
        fail(RESET_ERR_UNSUPPORTED, where, ": ", what,
             " (libreset loads compressed-tensors checkpoints in the \"nvfp4-pack-quantized\" format, as "
             "llm-compressor's NVFP4 and NVFP4A16 schemes save them)");
    };
    // A sparsity or transform config that changes nothing: absent, null, {}, a "dense" sparsity
    // format, or transforms without config groups.
    const auto changes_weights = [&](const char *key, const char *inert_key, const json &inert_value) {
        auto it = q.find(key);
        if (it == q.end() || it->is_null() || (it->is_object() && it->empty())) return false;
        if (!it->is_object()) return true;
        auto inner = it->find(inert_key);
        return inner == it->end() || !(*inner == inert_value || (inner->is_object() && inner->empty()));
    };
    std::vector<std::string> formats;
    if (auto it = q.find("format"); it != q.end() && !it->is_null()) {
        if (!it->is_string()) fail(RESET_ERR_FORMAT, where, ": quantization_config.format is not a string");
        if (*it != "mixed-precision") formats.push_back(it->get<std::string>());
    }
    if (auto status = q.find("quantization_status"); status != q.end() && *status != json("compressed"))
        refuse("quantization_status " + status->dump() + " means the weights are not stored compressed");
    if (changes_weights("sparsity_config", "format", "dense")) refuse("a sparsity_config (sparse weights) is not supported");
    if (changes_weights("transform_config", "config_groups", json::object()))
        refuse("a transform_config (rotated weights, e.g. QuIP or SpinQuant) is not supported");
    auto groups = q.find("config_groups");
    if (groups == q.end() || !groups->is_object() || groups->empty())
        fail(RESET_ERR_FORMAT, where, ": quantization_config has no config_groups");
    for (const auto &[name, group] : groups->items()) {
        const std::string at = where + ": config_groups." + name;
        if (!group.is_object()) fail(RESET_ERR_FORMAT, at, " is not an object");
        if (auto format = group.find("format"); format != group.end() && !format->is_null()) {
            if (!format->is_string()) fail(RESET_ERR_FORMAT, at, ".format is not a string");
            formats.push_back(format->get<std::string>());
        }
        auto weights = group.find("weights");
        if (weights == group.end() || weights->is_null()) refuse("config group '" + name + "' quantizes no weights");
        check_nvfp4_args(*weights, at + ".weights");
        if (weights->contains("dynamic") && (*weights)["dynamic"] != json(false))
            refuse("config group '" + name + "' has dynamic weights");
        // Input activations: none (NVFP4A16) or NVFP4 with a calibrated global scale ("dynamic": "local",
        // llm-compressor's NVFP4) or a dynamic one (true); either way W4A4 quantizes them per 16.
        if (auto input = group.find("input_activations"); input != group.end() && !input->is_null())
            check_nvfp4_args(*input, at + ".input_activations");
        if (auto output = group.find("output_activations"); output != group.end() && !output->is_null())
            refuse("config group '" + name + "' quantizes output activations");
    }
    if (formats.empty()) fail(RESET_ERR_FORMAT, where, ": quantization_config names no format");
    for (const std::string &format : formats)
        if (format != "nvfp4-pack-quantized") refuse("format \"" + format + "\" is not supported");
}

CheckpointQuantization read_checkpoint_quantization(const std::string &directory) {
    CheckpointQuantization out;
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
        out.format = CheckpointFormat::ModelOpt;
        return out;
    }
    // Newer ModelOpt exports and llm-compressor: config.json -> quantization_config.
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
    if (method_name == "compressed-tensors") {
        check_compressed_tensors_config(*q, config_path);
        out.format = CheckpointFormat::CompressedTensors;
        return out;
    }
    if (method_name != "modelopt")
        fail(RESET_ERR_UNSUPPORTED, config_path, ": quantization_config with quant_method \"", method_name,
             "\" is not supported (libreset loads NVFP4 checkpoints exported by NVIDIA ModelOpt or saved by "
             "llm-compressor as compressed-tensors)");
    check_quant_algo(*q, config_path);
    if (q->contains("ignore")) out.excluded = string_list((*q)["ignore"], config_path);
    if (q->contains("exclude_modules")) {
        auto more = string_list((*q)["exclude_modules"], config_path);
        out.excluded.insert(out.excluded.end(), more.begin(), more.end());
    }
    out.format = CheckpointFormat::ModelOpt;
    return out;
}

bool is_excluded(const CheckpointQuantization &quantization, const std::string &module) {
    for (const auto &pattern : quantization.excluded)
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

// compressed-tensors stores the reciprocal of the tensor scale (a "global scale", 6 · 448 / amax):
// w = e2m1 · (s / global_scale).  We multiply by its reciprocal, one rounding instead of
// compressed-tensors' division, so a decoded weight may differ from its decompressor's by 1 ulp.
float reciprocal_global_scale(const TensorView &t) {
    const float global_scale = scalar_f32(t);
    const float scale = 1.0f / global_scale;
    if (!(global_scale > 0.0f) || !std::isfinite(scale) || scale == 0.0f)
        fail(RESET_ERR_FORMAT, "tensor '", t.name, "' holds ", global_scale, ", not a global scale with a finite reciprocal");
    return scale;
}

int64_t round_up_16(int64_t k) { return (k + nvfp4::kBlock - 1) / nvfp4::kBlock * nvfp4::kBlock; }

// One linear already NVFP4 in the checkpoint: its packed codes (U8 [N, K/2], element 2j in the low
// nibble) and E4M3 block scales ([N, K/16], row-major), which ModelOpt and compressed-tensors lay
// out alike; the scalar scales are left to the caller.
void load_packed_linear(const TensorStore &store, Linear &linear, const std::string &codes_name, int32_t threads) {
    const std::string &p = linear.name;
    const int64_t n = linear.out_features, k = linear.in_features;
    if (k % nvfp4::kBlock != 0)
        fail(RESET_ERR_UNSUPPORTED, "'", p, "': in_features ", k, " is not a multiple of 16 in an NVFP4 checkpoint");
    const TensorView &weight = store.get(codes_name);
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
}

// One linear of a ModelOpt export, already NVFP4.
void load_modelopt_linear(const TensorStore &store, Linear &linear, int32_t threads) {
    const std::string &p = linear.name;
    if (store.find(p + ".pre_quant_scale"))
        fail(RESET_ERR_UNSUPPORTED, "'", p, ".pre_quant_scale' (AWQ-style activation smoothing) is not supported; "
             "export the checkpoint without it");
    load_packed_linear(store, linear, p + ".weight", threads);
    linear.tensor_scale = scalar_f32(store.get(p + ".weight_scale_2"));
    if (const TensorView *input = store.find(p + ".input_scale")) linear.input_scale = scalar_f32(*input);
}

// One linear of a compressed-tensors checkpoint, already NVFP4 (weight_packed).
void load_compressed_tensors_linear(const TensorStore &store, Linear &linear, int32_t threads) {
    const std::string &p = linear.name;
    if (store.find(p + ".weight_zero_point"))
        fail(RESET_ERR_UNSUPPORTED, "'", p, ".weight_zero_point': asymmetric NVFP4 is not supported");
    load_packed_linear(store, linear, p + ".weight_packed", threads);
    linear.tensor_scale = reciprocal_global_scale(store.get(p + ".weight_global_scale"));
    // Absent with NVFP4A16 (no input quantization) or dynamic input scales: W4A4 then takes each
    // row's own amax, as it does for a checkpoint quantized on load.
    if (const TensorView *input = store.find(p + ".input_global_scale")) linear.input_scale = reciprocal_global_scale(*input);
}

// A linear the checkpoint holds in NVFP4 (true), or false where it kept it in floats
// (excluded from quantization: it stays BF16).
bool is_packed_in_checkpoint(const TensorStore &store, const CheckpointQuantization &quantization,
                             const std::string &name) {
    if (quantization.format == CheckpointFormat::CompressedTensors) {
        if (store.find(name + ".weight_packed")) return true;
    } else if (const TensorView *weight = store.find(name + ".weight"); weight && !is_float_dtype(weight->dtype)) {
        return true;
    }
    const TensorView &weight = store.get(name + ".weight");
    if (!is_float_dtype(weight.dtype))
        fail(RESET_ERR_SHAPE, "tensor '", weight.name, "' is ", weight.describe(),
             "; expected BF16, F16 or F32 (compressed-tensors stores NVFP4 codes as '", name, ".weight_packed')");
    return false;
}

void load_checkpoint_linear(const TensorStore &store, const CheckpointQuantization &quantization, Linear &linear,
                            int32_t threads) {
    if (quantization.format == CheckpointFormat::CompressedTensors) load_compressed_tensors_linear(store, linear, threads);
    else load_modelopt_linear(store, linear, threads);
}

// One layer's calibrated FP8 KV-cache scale for K or V ("k" or "v"), if the checkpoint has one:
// llm-compressor's kv_cache_scheme writes self_attn.k_scale, ModelOpt's FP8 KV cache
// self_attn.k_proj.k_scale (the names vLLM reads).  Both mean x = stored · scale.
const TensorView *find_kv_cache_scale(const TensorStore &store, const std::string &layer_prefix, const char *kv) {
    const std::string name = std::string(kv) + "_scale";
    if (const TensorView *t = store.find(layer_prefix + "self_attn." + name)) return t;
    return store.find(layer_prefix + "self_attn." + kv + "_proj." + name);
}

// Reads a layer's KV-cache scales into it; false where it has neither.
bool load_kv_cache_scales(const TensorStore &store, const std::string &layer_prefix, LayerWeights &layer) {
    const TensorView *k = find_kv_cache_scale(store, layer_prefix, "k"), *v = find_kv_cache_scale(store, layer_prefix, "v");
    if (!k && !v) return false;
    if (!k || !v)
        fail(RESET_ERR_FORMAT, "tensor '", (k ? k : v)->name, "' is a calibrated KV-cache scale but the layer has no ",
             k ? "V" : "K", " scale beside it");
    for (const auto &[tensor, out] : {std::pair{k, &layer.k_cache_scale}, std::pair{v, &layer.v_cache_scale}}) {
        *out = scalar_f32(*tensor);
        if (!(*out > 0.0f)) fail(RESET_ERR_FORMAT, "tensor '", tensor->name, "' holds ", *out, ", not a positive KV-cache scale");
    }
    return true;
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
                       const CheckpointQuantization &quantization, ModelWeights &weights, int32_t threads) {
    for (const auto &spec : group) {
        Linear &l = *spec.linear;
        l.name = spec.name;
        l.out_features = spec.out;
        l.in_features = spec.in;
        if (spec.has_bias) l.bias = vector_tensor(store, spec.name + ".bias", spec.out);
        else if (store.find(spec.name + ".bias"))
            fail(RESET_ERR_SHAPE, "tensor '", spec.name, ".bias' is present but config.json declares no bias there");
    }
    if (quantization.present()) {
        for (const auto &spec : group) {
            Linear &l = *spec.linear;
            if (!is_packed_in_checkpoint(store, quantization, spec.name)) {
                // Excluded from quantization by the exporter (or never quantized): stays BF16.
                l.dense = bf16_matrix(store.get(spec.name + ".weight"), spec.out, spec.in);
                l.format = LinearFormat::BF16;
                ++weights.n_bf16_linears;
            } else {
                if (is_excluded(quantization, spec.name))
                    fail(RESET_ERR_FORMAT, "'", spec.name, "' is excluded from quantization by the config but stored as ",
                         store.get(spec.name + ".weight").describe());
                load_checkpoint_linear(store, quantization, l, threads);
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
    const CheckpointQuantization quantization = read_checkpoint_quantization(directory);
    if (quantization.present()) {
        if (options.weights == RESET_WEIGHTS_BF16)
            fail(RESET_ERR_UNSUPPORTED, "'", directory, "' is an NVFP4 ",
                 quantization.format == CheckpointFormat::ModelOpt ? "ModelOpt" : "compressed-tensors", " checkpoint; load it with "
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
    w.checkpoint_format = quantization.format;
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
                          quantize, quantization, w, options.threads);
        load_linear_group(store, {{&layer.o, p + "self_attn.o_proj", hidden, q_out, config.output_bias}}, quantize,
                          quantization, w, options.threads);
        load_linear_group(store,
                          {{&layer.gate, p + "mlp.gate_proj", inter, hidden, false},
                           {&layer.up, p + "mlp.up_proj", inter, hidden, false}},
                          quantize, quantization, w, options.threads);
        load_linear_group(store, {{&layer.down, p + "mlp.down_proj", hidden, inter, false}}, quantize, quantization, w, options.threads);
        // Calibrated FP8 KV-cache scales come with quantized checkpoints only; every layer or none.
        if (quantization.present()) {
            const bool scaled = load_kv_cache_scales(store, p, layer);
            if (i == 0) w.kv_cache_scales = scaled;
            else if (scaled != w.kv_cache_scales)
                fail(RESET_ERR_FORMAT, "layer ", i, scaled ? " has" : " has no", " calibrated KV-cache scales (",
                     p, "self_attn.k_scale) but layer 0", scaled ? " has none" : " has them");
        }
    }

    Linear &head = w.lm_head;
    head.name = "lm_head";
    head.out_features = vocab;
    head.in_features = hidden;
    const bool head_packed =
        !config.tie_word_embeddings && quantization.present() && is_packed_in_checkpoint(store, quantization, "lm_head");
    const TensorView *head_tensor = config.tie_word_embeddings || head_packed ? nullptr : &store.get("lm_head.weight");
    if (head_packed) {
        load_checkpoint_linear(store, quantization, head, options.threads);
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
    if (quantization.present() || quantize) {
        if (head.format == LinearFormat::BF16) ++w.n_bf16_linears;  // lm_head counts as a linear here
    }
    return w;
}

}  // namespace reset
