// qk_norm_rope_kv_append.h — what happens between the QKV GEMV and attention
// in one decode step, fused into one launch (kernels/qk_norm_rope_kv_append.cu):
//   q, k heads: optional per-head RMSNorm (Qwen3's q_norm / k_norm), then RoPE
//               in the "rotate half" layout at the sequence's position;
//   q -> q_out (FP32), k and v -> the KV cache at (slot, position): BF16
//   (round to nearest even), or FP8 E4M3 as e4m3(x / scale) with the view's
//   k_scale / v_scale (FP32 division, round to nearest even, saturated to ±448).
// The formulas are the CPU reference's (engine/cpu_engine.cpp): RMSNorm in
// FP32, the angle position · inv_freq[i] in double, its cosine and sine
// rounded to FP32, the rotation in FP32 without fused multiply-adds.
// inv_freq comes from rope_inverse_frequencies (engine/loaded_model.h), so
// llama3 and YaRN frequency scaling is already in the table; YaRN's attention
// factor multiplies the FP32 cosine and sine (rope_attention_factor).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/attention_decode.h"

namespace reset {

struct QkNormRopeArgs {
    int batch = 0;                   // rows, 1..kAttentionDecodeMaxBatch (row b writes cache slot b, or slots[b])
    int n_heads = 0;                 // query heads
    const float *qkv = nullptr;      // [batch][ld_qkv]: n_heads q heads, then n_kv_heads k heads, then v heads
    int64_t ld_qkv = 0;
    const float *q_norm = nullptr;   // [head_dim] or null: no q/k RMSNorm (then k_norm is null too)
    const float *k_norm = nullptr;   // [head_dim] or null
    float eps = 0.0f;
    const float *inv_freq = nullptr; // [head_dim / 2]
    float rope_attention_factor = 1.0f;  // YaRN's (LoadedModel::rope_attention_factor); 1: plain RoPE
    const int32_t *positions = nullptr;  // device [batch], 0..capacity-1
    const int32_t *slots = nullptr;  // device [batch]: the cache slot of row b; null = slot b
    float *q_out = nullptr;          // [batch][n_heads][head_dim]
    KvCacheLayerView cache;          // head_dim 16, 32, 64 or 128, BF16 or FP8 E4M3
};

// Enqueue on `stream`.  Throws reset::Error: RESET_ERR_UNSUPPORTED for a
// head_dim other than 16, 32, 64 or 128, RESET_ERR_INVALID_ARGUMENT for bad
// arguments (nothing launched), RESET_ERR_BACKEND if the launch fails.
// positions[b] and slots[b] live on the device and are not range-checked
// there.  Rows may share a slot (a prefill chunk: several positions of one
// sequence); two rows must not write the same (slot, position).
void qk_norm_rope_kv_append(const QkNormRopeArgs &args, cudaStream_t stream);

}  // namespace reset
