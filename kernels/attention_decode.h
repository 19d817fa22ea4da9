// attention_decode.h — one decode step of grouped-query attention over a BF16
// KV cache, split along the context (flash-decoding), on the GPU
// (kernels/attention_decode.cu).  docs/cuda-engine.md has the design.
//
// For each sequence b of the batch and each query head h (KV head h / group):
//   out[b][h] = Σ_t softmax_t(scale · q[b][h] · K[b][kv][t]) · V[b][kv][t],  t < lengths[b]
// which is the CPU reference's attention (engine/cpu_engine.cpp) with K and V
// rounded to BF16 by the cache.  Arithmetic is FP32 throughout.
//
// The context length of every sequence is read from device memory at run
// time, so a CUDA graph captured once serves every length up to capacity.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "rules/host_device.h"

namespace reset {

// Query heads per KV head the kernel serves (Qwen3-32B: 64/8).
constexpr int kAttentionDecodeMaxGroup = 8;

// The KV cache of one layer: BF16 elements laid out [slot][kv_head][position][head_dim],
// so the rows one CTA streams (one KV head, a run of positions) are contiguous.
// Batch entry b reads and writes slot b.
struct KvCacheLayerView {
    void *keys = nullptr;    // BF16, 16-byte aligned
    void *values = nullptr;  // BF16, 16-byte aligned
    int32_t capacity = 0;    // positions per slot
    int32_t n_kv_heads = 0;
    int32_t head_dim = 0;
};

// Element offset of (slot, kv_head, position, 0) in a KvCacheLayerView.
RESET_HD int64_t kv_cache_offset(const KvCacheLayerView &c, int64_t slot, int64_t kv_head, int64_t position) {
    return ((slot * c.n_kv_heads + kv_head) * c.capacity + position) * c.head_dim;
}

struct AttentionDecodeArgs {
    int batch = 0;                // 1..8 (any positive count works)
    int n_heads = 0;              // query heads; n_heads / cache.n_kv_heads <= kAttentionDecodeMaxGroup
    float scale = 0.0f;           // softmax scale, 1/sqrt(head_dim) for every supported family
    const float *q = nullptr;     // [batch][n_heads][head_dim], RoPE applied
    KvCacheLayerView cache;       // head_dim 64 or 128
    const int32_t *lengths = nullptr;  // device [batch]: attend to positions [0, lengths[b]), 1..capacity
    float *out = nullptr;         // [batch][n_heads][head_dim]
    int splits = 0;               // context splits; attention_decode_splits() picks one
    float *workspace = nullptr;   // attention_decode_workspace_bytes() (needed when splits > 1)
    size_t workspace_bytes = 0;
};

// A split count for this shape: enough CTAs to cover the GPU several times at
// full capacity, no more splits than 128-position tiles fit in capacity.
int attention_decode_splits(int batch, int n_kv_heads, int capacity);

// Workspace for the partial results of `splits` splits (0 when splits <= 1).
size_t attention_decode_workspace_bytes(int batch, int n_heads, int head_dim, int splits);

// Enqueue on `stream`.  Throws reset::Error: RESET_ERR_UNSUPPORTED for a head
// dimension or group size the kernel lacks, RESET_ERR_INVALID_ARGUMENT for
// bad arguments (nothing launched then), RESET_ERR_BACKEND if a launch fails.
// lengths[b] outside [1, capacity] is not checked on the device (it lives
// there); the caller keeps it in range.
void attention_decode(const AttentionDecodeArgs &args, cudaStream_t stream);

}  // namespace reset
