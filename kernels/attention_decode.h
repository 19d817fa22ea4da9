// attention_decode.h — one decode step of grouped-query attention over a BF16
// or FP8 (E4M3) KV cache, split along the context (flash-decoding), on the GPU
// (kernels/attention_decode.cu).  docs/cuda-engine.md has the design.
//
// For each row b of the batch and each query head h (KV head h / group), with
// slot s = slots ? slots[b] : b:
//   out[b][h] = Σ_t softmax_t(scale · q[b][h] · K[s][kv][t]) · V[s][kv][t],  t < lengths[b]
// which is the CPU reference's attention (engine/cpu_engine.cpp) with K and V
// rounded to BF16 (or FP8 E4M3, times the view's scales) by the cache.  The
// products run on the tensor cores with FP32 accumulation; the FP32 queries
// and softmax weights enter them as 16-bit parts that carry 22-24 of their
// bits, so results match FP32 arithmetic to its last few bits.
// head_dim 16, 32, 64 or 128; group sizes 1..kAttentionDecodeMaxGroup.
//
// The context length of every sequence is read from device memory at run
// time, so a CUDA graph captured once serves every length up to capacity.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "kernels/weight_prefetch.h"

#include "rules/host_device.h"

namespace reset {

// Query heads per KV head the kernel serves (Qwen3-32B: 64/8).
constexpr int kAttentionDecodeMaxGroup = 8;

// Element type of a KV cache.  kFp8E4M3 stores e4m3(x / scale) (round to
// nearest even, saturated to ±448; NaN stays NaN) with one FP32 scale per
// tensor and layer (KvCacheLayerView::k_scale, v_scale; 1.0 = vLLM's default
// "fp8" KV cache without calibration), and reads x = stored · scale.
enum class KvCacheType : int { kBFloat16 = 0, kFp8E4M3 = 1 };

// Bytes per cache element of a type.
RESET_HD int kv_cache_element_bytes(KvCacheType type) { return type == KvCacheType::kFp8E4M3 ? 1 : 2; }

// The KV cache of one layer: elements laid out [slot][kv_head][position][head_dim],
// so the rows one CTA streams (one KV head, a run of positions) are contiguous.
// Row b of a launch reads and writes slot b, or slots[b] when the launch
// passes a slot map (several rows of one sequence in a prefill chunk).
struct KvCacheLayerView {
    void *keys = nullptr;    // `type` elements, 16-byte aligned
    void *values = nullptr;  // `type` elements, 16-byte aligned
    int32_t capacity = 0;    // positions per slot
    int32_t n_kv_heads = 0;
    int32_t head_dim = 0;    // 16, 32, 64 or 128 (the kernels' instances): a row is >= 16 bytes
    KvCacheType type = KvCacheType::kBFloat16;
    float k_scale = 1.0f;    // kFp8E4M3 only: K = stored · k_scale (finite, > 0)
    float v_scale = 1.0f;    // kFp8E4M3 only: V = stored · v_scale (finite, > 0)
};

// The K and V bytes an attention launch over `rows` rows reads, estimated from
// one row's length (a CTA knows its own row's): the rule behind attention's
// weight prefetch and the q/k norm's early placement of attention.
RESET_HD int64_t attention_kv_bytes_estimate(const KvCacheLayerView &c, int64_t length, int rows) {
    return length * 2 * c.head_dim * kv_cache_element_bytes(c.type) * c.n_kv_heads * rows;
}

// Whether an attention launch streams enough K/V (attention_kv_bytes_estimate
// above 10 MB) to be "long": the q/k norm then lets attention be placed
// before its own wait (kernels/qk_norm_rope_kv_append.cu has the
// measurements), and at 6-7 rows the decode step takes its new token inside
// attention (AttentionDecodeArgs::new_token; lib/cuda/device_session.cpp:
// new_token_in_attention_pays has the measurements).
constexpr int64_t kLongAttentionKvBytes = int64_t(10) << 20;
RESET_HD bool long_attention(const KvCacheLayerView &c, int64_t length, int rows) {
    return attention_kv_bytes_estimate(c, length, rows) > kLongAttentionKvBytes;
}

// Element offset (in elements, not bytes: multiply by kv_cache_element_bytes)
// of (slot, kv_head, position, 0) in a KvCacheLayerView.
RESET_HD int64_t kv_cache_offset(const KvCacheLayerView &c, int64_t slot, int64_t kv_head, int64_t position) {
    return ((slot * c.n_kv_heads + kv_head) * c.capacity + position) * c.head_dim;
}

// Largest row count of one launch (the grid's y/z limit).
constexpr int kAttentionDecodeMaxBatch = 65535;

// New tokens as the QKV GEMV left them, and how their heads are normed and
// rotated: the input of qk_norm_rope_kv_append (kernels/qk_norm_rope_kv_append.h),
// and of attention_decode where it appends a decode step's token itself
// (AttentionDecodeArgs::new_token).  Query heads get the q RMSNorm (where
// q_norm is set) and RoPE, keys the k RMSNorm and RoPE; keys and values are
// then rounded into the cache, by both kernels with the same FP32 operations
// in the same order (kernels/qk_norm_rope_rules.cuh): the same bits.
struct NewTokenInputs {
    const float *qkv = nullptr;      // [rows][ld_qkv]: n_heads q heads, then the k heads, then the v heads
    int64_t ld_qkv = 0;
    const float *q_norm = nullptr;   // [head_dim] or null: no q/k RMSNorm (then k_norm is null too)
    const float *k_norm = nullptr;   // [head_dim] or null
    float eps = 0.0f;
    // [head_dim / 2] from rope_inverse_frequencies (engine/loaded_model.h): llama3 and YaRN
    // frequency scaling are already in the table.
    const float *inv_freq = nullptr;
    float rope_attention_factor = 1.0f;  // YaRN's (LoadedModel::rope_attention_factor); 1: plain RoPE
};

// Throws reset::Error RESET_ERR_INVALID_ARGUMENT (the message starts with
// `who`) unless `t` is usable for n_heads query heads over `cache`: qkv and
// inv_freq set, ld_qkv >= (n_heads + 2 kv heads) * head_dim, q_norm and
// k_norm both set or both null, the attention factor finite and positive.
void check_new_token_inputs(const NewTokenInputs &t, int n_heads, const KvCacheLayerView &cache, const char *who);

struct AttentionDecodeArgs {
    int batch = 0;                // rows: 1..8 sequences in decode, up to a prefill chunk (1..65535)
    int n_heads = 0;              // query heads; n_heads / cache.n_kv_heads <= kAttentionDecodeMaxGroup
    float scale = 0.0f;           // softmax scale, 1/sqrt(head_dim) for every supported family
    const float *q = nullptr;     // [batch][n_heads][head_dim], RoPE applied; unused (may be null) with new_token
    // Where new_token.qkv is set (decode only: every row writes its own slot), row b's token sits at
    // position lengths[b] - 1: attention takes its queries from new_token, normed and rotated, and
    // stores its K and V rows in the cache at (slot, lengths[b] - 1) as qk_norm_rope_kv_append would,
    // instead of reading q.
    NewTokenInputs new_token;
    KvCacheLayerView cache;       // head_dim 16, 32, 64 or 128
    const int32_t *lengths = nullptr;  // device [batch]: attend to positions [0, lengths[b]), 1..capacity
    const int32_t *slots = nullptr;  // device [batch]: the cache slot of row b; null = slot b
    float *out = nullptr;         // [batch][n_heads][head_dim]
    // Where set: out_amax[b] = max(out_amax[b], max |out| over the values
    // stored for row b) (NaN dropped) wherever that max exceeds 32768
    // (w4a16::kFp16RowLimit; a row whose values all fit leaves it as it was),
    // by atomicMax on the bits (non-negative floats order as their bits:
    // exact and order-independent); the caller zeroes it before the launch.
    // It is the x_amax of an NVFP4 GEMV that reads out (Nvfp4GemvArgs::x_amax),
    // as the GEMV's y_amax is.
    float *out_amax = nullptr;
    // Where set: out rounded to FP16 as well (round to nearest even), row b at
    // out16 + b * ld_out16 (FP16 elements, ld_out16 >= n_heads * head_dim):
    // what the W4A16 preparation writes wherever the row's max |out| <= 32768
    // (its row scale is then 1), so the o GEMV reads it with no preparation
    // launch (Nvfp4GemvArgs::x_fallback).
    void *out16 = nullptr;
    int64_t ld_out16 = 0;
    int splits = 0;               // context splits; attention_decode_splits() picks one
    float *workspace = nullptr;   // attention_decode_workspace_bytes() (needed when splits > 1), zeroed once
    size_t workspace_bytes = 0;
    // Ranges (the weight of a GEMV that follows) that each CTA asks the L2
    // for once it has read its last K/V block, where the launch's K/V are
    // small enough to leave the DRAM mostly idle (16 MB, estimated as batch
    // times this row's; attention_decode.cu says why and what was measured).
    // A hint: no result depends on it (kernels/weight_prefetch.h).
    WeightPrefetch prefetch;
};

// A split count for this shape: as many CTAs as fill one wave of resident
// CTAs on the current device at full capacity (batch x n_kv_heads x splits
// <= resident CTAs), at most kMaxMergeSplits (256) and no more splits than
// 64-position pieces fit in capacity; 1 when the pairs alone fill the GPU.
int attention_decode_splits(int batch, int n_kv_heads, int capacity);

// Workspace for the arrival counters of the merge and the partial results of
// `splits` splits (0 when splits <= 1).  The caller zeroes it once
// (cudaMemset); every launch leaves the counters at zero again, and they sit
// at the same place whatever the batch and splits, so graph replays and later
// launches of any shape reuse it.  One workspace must not serve two launches
// that run at the same time.
size_t attention_decode_workspace_bytes(int batch, int n_heads, int head_dim, int splits);

// Enqueue on `stream`.  Throws reset::Error: RESET_ERR_UNSUPPORTED for a head
// dimension other than 16, 32, 64 or 128 or a group size above
// kAttentionDecodeMaxGroup, RESET_ERR_INVALID_ARGUMENT for
// bad arguments (nothing launched then), RESET_ERR_BACKEND if a launch fails.
// lengths[b] outside [1, capacity] and slots[b] outside the cache are not
// checked on the device (they live there); the caller keeps them in range.
// Rows that share a slot (a causal prefill chunk: row i at position p_i with
// lengths = p_i + 1, after qk_norm_rope_kv_append wrote all of the chunk's
// rows) are independent: each reads the cache, nothing is written to it.
void attention_decode(const AttentionDecodeArgs &args, cudaStream_t stream);

}  // namespace reset
