// device_model.h — a loaded model's weights in device memory, in the layouts
// the kernels read (engine/device_engine.h declares the entry points).
//
//   NVFP4 linears: repacked for nvfp4_gemv (kernels/nvfp4_gemv_layout.h);
//                  q/k/v fused into one weight, and gate/up into one gate_up
//                  weight whose GEMV applies SiLU(gate)·up, when the parts
//                  share their tensor and input scales (always so when
//                  quantized on load; ModelOpt exports usually); otherwise
//                  each part is its own GEMV into its columns.
//   BF16 linears:  row-major as in the checkpoint, parts concatenated by rows.
//   embeddings:    BF16; a tied BF16 lm_head reads the same buffer.
//   norms, biases, RoPE inverse frequencies: FP32.
#pragma once

#include <cstdint>
#include <vector>

#include "cuda/device_buffer.h"
#include "engine/loaded_model.h"
#include "kernels/nvfp4_gemv.h"

namespace reset {

// One GEMV's worth of weight: writes `out_features` columns starting at
// `column` of the output rows.
struct DeviceLinearPart {
    bool nvfp4 = false;
    int64_t out_features = 0;  // rows written (outputs(): rows/2 for a gate_up NVFP4 weight)
    int64_t in_features = 0;   // K as the activations have it
    int64_t column = 0;        // first output column
    // NVFP4
    Nvfp4GemvWeight gemv;
    int64_t padded_in = 0;     // K of the NVFP4 weight (a multiple of 16; padding reads zeros)
    float input_scale = 0.0f;  // W4A4 activation tensor scale; <= 0 = dynamic per row
    // BF16
    const uint16_t *bf16 = nullptr;  // [out_features][in_features]
    const float *bias = nullptr;     // [out_features] or null
};

// A checkpoint linear group (q/k/v, gate/up, or a single o/down/lm_head).
struct DeviceLinear {
    std::vector<DeviceLinearPart> parts;
    int64_t out_features = 0;  // columns of the output, all parts together
    // gate/up only: true when one NVFP4 GEMV already applied SiLU(gate)·up
    // (out_features = intermediate); false when the output holds [gate | up]
    // and silu_mul must run.
    bool fused_silu = false;
};

struct DeviceLayer {
    const float *input_norm = nullptr, *post_attention_norm = nullptr;
    const float *q_norm = nullptr, *k_norm = nullptr;  // null without qk_norm
    DeviceLinear qkv, o, gate_up, down;
    float k_cache_scale = 1.0f, v_cache_scale = 1.0f;  // an FP8 cache's (LayerWeights)
};

struct DeviceModel {
    int32_t device = 0;
    std::vector<DeviceBuffer> buffers;  // every allocation, freed with the model
    uint64_t bytes = 0;
    const uint16_t *embed = nullptr;    // BF16 [vocab][hidden]
    std::vector<DeviceLayer> layers;
    const float *final_norm = nullptr;
    DeviceLinear lm_head;
    const float *inv_freq = nullptr;    // [head_dim / 2]
    float rope_attention_factor = 1.0f;  // YaRN's (LoadedModel::rope_attention_factor)
    bool w4a4 = false;                  // NVFP4 GEMVs quantize their activations
    int64_t max_padded_in = 0;          // widest FP16 activation row an NVFP4 GEMV reads
    size_t gemv_workspace_bytes = 0;    // the largest nvfp4_gemv workspace any linear needs
};

// Make `device` current on the calling thread (CUDA keeps it per thread).
void use_device(int32_t device);

}  // namespace reset
