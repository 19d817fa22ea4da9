// qk_norm_rope_kv_append.h — what happens between the QKV GEMV and attention
// in one decode step, fused into one launch (kernels/qk_norm_rope_kv_append.cu):
//   q, k heads: optional per-head RMSNorm (Qwen3's q_norm / k_norm), then RoPE
//               in the "rotate half" layout at the sequence's position;
//   q -> q_out (FP32), k and v -> the KV cache at (slot, position): BF16
//   (round to nearest even), or FP8 E4M3 as e4m3(x / scale) with the view's
//   k_scale / v_scale (FP32 division, round to nearest even, saturated to ±448).
// The formulas are the CPU reference's (engine/cpu_engine.cpp): RMSNorm in
// FP32, the angle position · inv_freq[i] in double, its cosine and sine
// rounded to FP32, the rotation in FP32 without fused multiply-adds
// (kernels/qk_norm_rope_rules.cuh); YaRN's attention factor multiplies the
// FP32 cosine and sine (NewTokenInputs::rope_attention_factor).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/attention_decode.h"

namespace reset {

struct QkNormRopeArgs {
    int batch = 0;                   // rows, 1..kAttentionDecodeMaxBatch (row b writes cache slot b, or slots[b])
    int n_heads = 0;                 // query heads
    NewTokenInputs token;            // the rows' q, k and v heads and how they are normed and rotated
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
