// weights.h — a model's weights as the CPU reference engine holds them.
//
// Linears are BF16 or NVFP4.  BF16 data points into the mapped checkpoint when
// the file already holds BF16, and so do an NVFP4 checkpoint's codes and
// scales (ModelOpt or compressed-tensors; no copy); anything converted or quantized is owned here.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "engine/nvfp4_linear.h"
#include "model/config.h"
#include "reset.h"

namespace reset {

class TensorStore;

// A row-major BF16 matrix [rows][cols].
struct Bf16Matrix {
    int64_t rows = 0, cols = 0;
    const uint16_t *data = nullptr;  // into the mapping, or owned.data()
    std::vector<uint16_t> owned;
};

// Bytes of a weight: in the mapped checkpoint (an NVFP4 checkpoint's codes and scales, read in
// place as BF16 weights are) or owned (quantized at load).  Until session 37 the exported
// bytes were copied, an 8B model's 4.4 GB on one thread before its upload.  Reads like a
// vector of const bytes; a copy of owned bytes points at its own.
struct WeightBytes {
    WeightBytes() = default;
    WeightBytes(const WeightBytes &other) { *this = other; }
    WeightBytes &operator=(const WeightBytes &other) {
        if (this == &other) return *this;
        owned_ = other.owned_;
        data_ = other.is_owned() ? owned_.data() : other.data_;
        size_ = other.size_;
        return *this;
    }
    WeightBytes(WeightBytes &&) = default;  // the vector's buffer moves with it: data_ stays valid
    WeightBytes &operator=(WeightBytes &&) = default;

    // `n` bytes at `data`, which must outlive this (the model's TensorStore holds the mapping).
    void borrow(const uint8_t *data, size_t n) {
        std::vector<uint8_t>().swap(owned_);
        data_ = data;
        size_ = n;
    }
    // `n` zero bytes of its own, to be written through the pointer returned.
    uint8_t *own(size_t n) {
        owned_.assign(n, 0);
        data_ = owned_.data();
        size_ = n;
        return owned_.data();
    }
    void release() {
        std::vector<uint8_t>().swap(owned_);
        data_ = nullptr;
        size_ = 0;
    }
    bool is_owned() const { return !owned_.empty() && data_ == owned_.data(); }
    size_t owned_bytes() const { return is_owned() ? size_ : 0; }
    const uint8_t *data() const { return data_; }
    size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    const uint8_t *begin() const { return data_; }
    const uint8_t *end() const { return data_ + size_; }
    uint8_t operator[](size_t i) const { return data_[i]; }

private:
    const uint8_t *data_ = nullptr;
    size_t size_ = 0;
    std::vector<uint8_t> owned_;
};

enum class LinearFormat { BF16, NVFP4 };

struct Linear {
    std::string name;                 // checkpoint prefix, e.g. "model.layers.0.self_attn.q_proj"
    int64_t out_features = 0, in_features = 0;
    LinearFormat format = LinearFormat::BF16;
    Bf16Matrix dense;                 // BF16 format
    // NVFP4 format (ModelOpt layout, which compressed-tensors shares), K padded with zeros to a
    // multiple of 16.
    int64_t padded_in = 0;
    WeightBytes codes;                // [out][padded_in / 2]
    WeightBytes scales;               // [out][padded_in / 16], E4M3
    float tensor_scale = 0.0f;
    float input_scale = 0.0f;         // calibrated (by the checkpoint's quantizer) or 0 = dynamic
    std::vector<float> bias;          // empty if none

    Nvfp4Weight nvfp4_view() const;
    uint64_t weight_bytes() const;
};

// The quantized checkpoint formats the loader reads (README, "Weight formats").
enum class CheckpointFormat {
    Unquantized,        // BF16/F16/F32 tensors (quantized on load when NVFP4 is asked for)
    ModelOpt,           // NVIDIA ModelOpt NVFP4 export: weight, weight_scale, weight_scale_2, input_scale
    CompressedTensors,  // llm-compressor's "nvfp4-pack-quantized": weight_packed, weight_scale, *_global_scale
};

struct LayerWeights {
    std::vector<float> input_norm, post_attention_norm;
    std::vector<float> q_norm, k_norm;  // qwen3 only
    Linear q, k, v, o, gate, up, down;
    // The checkpoint's calibrated FP8 KV-cache scales (an FP8 cache stores e4m3(x / scale) and reads
    // stored · scale); 1 where it has none, vLLM's default for an uncalibrated "fp8" cache.
    float k_cache_scale = 1.0f, v_cache_scale = 1.0f;
};

struct ModelWeights {
    Bf16Matrix embed;  // [vocab][hidden], always BF16
    std::vector<LayerWeights> layers;
    std::vector<float> final_norm;
    Linear lm_head;    // BF16 (possibly sharing embed's data when tied) or NVFP4
    // Where the NVFP4 codes came from: quantized on load (or BF16), or a checkpoint's own.
    CheckpointFormat checkpoint_format = CheckpointFormat::Unquantized;
    bool kv_cache_scales = false;   // the layers' k/v_cache_scale come from the checkpoint
    int32_t n_bf16_linears = 0;     // in an NVFP4 model: linears left in BF16 (excluded modules)
    uint64_t n_parameters = 0;
    uint64_t weight_bytes = 0;
    uint64_t owned_bytes = 0;
};

struct LoadOptions {
    reset_weights weights = RESET_WEIGHTS_AUTO;  // resolved on return
    bool quantize_lm_head = false;
    reset_progress_callback progress = nullptr;  // per layer; non-zero return cancels
    void *progress_user_data = nullptr;
    int32_t threads = 0;  // reset_model_options.threads: quantizing on load uses this many (0 = all cores)
};

// Build the weights from an opened checkpoint.  `options.weights` is resolved
// (never AUTO on return).  Throws reset::Error with precise statuses.
ModelWeights load_weights(const ModelConfig &config, const TensorStore &store, const std::string &directory,
                          LoadOptions &options);

// Drop the host copies a device backend no longer reads: NVFP4 codes and
// scales and converted BF16 data (data that points into the mapped checkpoint
// costs nothing and is only unlinked).  Shapes, formats, scales, biases and
// norms stay, so the model still describes itself.  After this the CPU engine
// cannot run the model.
void release_host_weights(ModelWeights &weights);

// Quantize a row-major FP32 matrix group to NVFP4 with one shared tensor scale
// (siblings such as q/k/v share one, nvfp4.md).  Exposed for tests.
float nvfp4_shared_tensor_scale(const std::vector<const std::vector<float> *> &siblings);
// threads: reset_model_options.threads (0 = all cores).
void nvfp4_quantize_matrix(const std::vector<float> &values, int64_t rows, int64_t cols, float tensor_scale,
                           Linear &out, int32_t threads = 0);

// Inline: the CPU engine's inner loops decode BF16 per element.
inline float bf16_to_float(uint16_t bits) {
    const uint32_t wide = static_cast<uint32_t>(bits) << 16;
    float value;
    std::memcpy(&value, &wide, sizeof value);
    return value;
}
uint16_t float_to_bf16(float value);  // round to nearest even

}  // namespace reset
