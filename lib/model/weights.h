// weights.h — a model's weights as the CPU reference engine holds them.
//
// Linears are BF16 or NVFP4.  BF16 data points into the mapped checkpoint when
// the file already holds BF16 (no copy); anything converted or quantized is
// owned here.
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

enum class LinearFormat { BF16, NVFP4 };

struct Linear {
    std::string name;                 // checkpoint prefix, e.g. "model.layers.0.self_attn.q_proj"
    int64_t out_features = 0, in_features = 0;
    LinearFormat format = LinearFormat::BF16;
    Bf16Matrix dense;                 // BF16 format
    // NVFP4 format (ModelOpt layout), K padded with zeros to a multiple of 16.
    int64_t padded_in = 0;
    std::vector<uint8_t> codes;       // [out][padded_in / 2]
    std::vector<uint8_t> scales;      // [out][padded_in / 16], E4M3
    float tensor_scale = 0.0f;
    float input_scale = 0.0f;         // calibrated (ModelOpt) or 0 = dynamic
    std::vector<float> bias;          // empty if none

    Nvfp4Weight nvfp4_view() const;
    uint64_t weight_bytes() const;
};

struct LayerWeights {
    std::vector<float> input_norm, post_attention_norm;
    std::vector<float> q_norm, k_norm;  // qwen3 only
    Linear q, k, v, o, gate, up, down;
};

struct ModelWeights {
    Bf16Matrix embed;  // [vocab][hidden], always BF16
    std::vector<LayerWeights> layers;
    std::vector<float> final_norm;
    Linear lm_head;    // BF16 (possibly sharing embed's data when tied) or NVFP4
    bool from_modelopt = false;
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
