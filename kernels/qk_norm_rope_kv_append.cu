// qk_norm_rope_kv_append.cu — one warp per head (q, k or v) of one row (a
// sequence, or one position of a prefill chunk).
// Lane `lane` holds elements lane + 32·j; RoPE pairs element i with i + d/2,
// which is j with j + d/64 in the same lane, so the rotation needs no shuffles
// and the RMSNorm only one warp reduction.
// head_dim 16 and 32 (the project's small models) have their own kernel: a
// group of head_dim lanes per head (2 heads per warp at 16, 1 at 32), one
// element per lane; RoPE's partner i ± d/2 comes from lane ^ d/2 by a
// shuffle and the RMSNorm sums over the group's lanes (xor offsets < d stay
// inside the group), with the same FP32 roundings as the wide kernel.
// Latency (a decode step runs this once per layer on a few KB): the constant
// inputs (the head's norm weights, the inverse frequencies) are loaded before
// griddepcontrol.wait, so under programmatic dependent launch they arrive
// while the QKV GEMV drains, and everything other kernels write (the head's
// elements and cache slot) is requested together right after it: one
// dependent round trip.  The row's position, which only the step's input
// upload writes, is read before the wait too (long_attention_follows), and
// the rotation's cosines and sines are formed from it there (session 42: the
// decode step 0.2% faster at 1k, 0.4% at 32k with an FP8 cache, H100).
// Before, the norm weights, the frequencies and the slot were each loaded
// where first used, behind the shuffles and branches, a chain of three or
// four round trips (4.6 vs 3.9 µs a launch isolated under Nsight Compute,
// 2.0 vs 1.4 µs in a graph, H100).
#include "kernels/qk_norm_rope_kv_append.h"

#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <cmath>

#include "kernels/cuda_common.cuh"
#include "kernels/dependent_launch.cuh"
#include "kernels/qk_norm_rope_rules.cuh"
#include "kernels/step_trace.cuh"

namespace reset {
namespace {

constexpr int kWarps = 4;

// Whether the attention launch after this kernel streams enough K/V that it
// pays to let it be placed before this kernel's wait
// (cuda::begin_dependent_kernel_placing_next): its CTAs then take their slots
// and ask the L2 for their first K/V blocks during the QKV GEMV's tail.
// Measured in the decode step (H100, Qwen3-8B shape, docs/history/cuda-engine-sessions.md,
// session 16): 4-5% faster at 32k with an FP8 cache (67 MB of K/V), 1-2% from
// 12.6 MB on (1k at batch 3, 4k at batch 1); no faster at 8.4 MB (2k at
// batch 1, 1k at batch 2); at 4 MB (1k, batch 1) 1.9% slower (run 6, on top of
// the row norms placed early: 2.907 against 2.854 ms), the early CTAs then
// contending with the GEMV for little K/V to fetch.  Hence 10 MB
// (kLongAttentionKvBytes).  The estimate is attention_decode's
// (attention_kv_bytes_estimate), from the row's position, which the step's
// first kernel (the input upload, kernels/range_copy.h) wrote: this kernel is
// placed only once the QKV GEMV has passed its own wait, long after that
// upload completed.
__device__ __forceinline__ bool long_attention_follows(const QkNormRopeArgs &a, int position) {
    return long_attention(a.cache, int64_t(position) + 1, a.batch);
}

template <int kHeadDim>
__global__ void __launch_bounds__(kWarps * 32) qk_norm_rope_kernel(const QkNormRopeArgs a) {
    [[maybe_unused]] const trace::EndMark end_mark;
    constexpr int kPerLane = kHeadDim / 32;
    constexpr int kHalf = kPerLane / 2;  // j and j + kHalf form a rotation pair
    const int lane = threadIdx.x % 32;
    const int head = blockIdx.x * kWarps + threadIdx.x / 32;
    const int b = blockIdx.y;
    const int n_kv = a.cache.n_kv_heads;
    const bool valid = head < a.n_heads + 2 * n_kv;
    const bool is_q = head < a.n_heads, is_k = !is_q && head < a.n_heads + n_kv;

    // Constant data first, before the wait: this head's norm weights and the
    // inverse frequencies (kernels/dependent_launch.cuh).
    const float *norm = is_q ? a.token.q_norm : is_k ? a.token.k_norm : nullptr;
    float weight[kPerLane], freq[kHalf];
#pragma unroll
    for (int j = 0; j < kPerLane; ++j) weight[j] = valid && norm ? __ldg(norm + lane + 32 * j) : 0.0f;
#pragma unroll
    for (int j = 0; j < kHalf; ++j) freq[j] = valid && (is_q || is_k) ? __ldg(a.token.inv_freq + lane + 32 * j) : 0.0f;
    const int position = a.positions[b];  // written by the step's first kernel (see above)
    // The rotation's cosines and sines depend on nothing other kernels write, so they are formed
    // before the wait too, while the QKV GEMV drains: the double-precision sincos is off the path
    // from the GEMV's end to the attention (see the top).
    float cosine[kHalf], sine[kHalf];
#pragma unroll
    for (int j = 0; j < kHalf; ++j) qk_rules::rotation(position, freq[j], a.token.rope_attention_factor, cosine[j], sine[j]);
    trace::begin_dependent_kernel(trace::kQkNormRope, 0, 0, long_attention_follows(a, position));
    if (!valid) return;  // whole warps leave: no barrier follows

    // Everything the head needs from other kernels in one round trip: its
    // elements, the row's position and (k, v) its cache slot.
    const float *in = a.token.qkv + int64_t(b) * a.token.ld_qkv + int64_t(head) * kHeadDim;
    float x[kPerLane];
#pragma unroll
    for (int j = 0; j < kPerLane; ++j) x[j] = in[lane + 32 * j];
    const int slot = !is_q && a.slots ? a.slots[b] : b;

    if (is_q || is_k) {
        if (norm) {
            float sum = 0.0f;
#pragma unroll
            for (int j = 0; j < kPerLane; ++j) sum = qk_rules::add_square(sum, x[j]);
#pragma unroll
            for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
            const float inverse = qk_rules::rms_inverse(sum, kHeadDim, a.token.eps);
#pragma unroll
            for (int j = 0; j < kPerLane; ++j) x[j] = qk_rules::normed(x[j], weight[j], inverse);
        }
#pragma unroll
        for (int j = 0; j < kHalf; ++j) {
            const float first = x[j], second = x[j + kHalf];
            x[j] = qk_rules::rotated_first(first, second, cosine[j], sine[j]);
            x[j + kHalf] = qk_rules::rotated_second(first, second, cosine[j], sine[j]);
        }
    }

    if (is_q) {
        float *out = a.q_out + (int64_t(b) * a.n_heads + head) * kHeadDim;
#pragma unroll
        for (int j = 0; j < kPerLane; ++j) out[lane + 32 * j] = x[j];
        return;
    }
    const int kv_head = is_k ? head - a.n_heads : head - a.n_heads - n_kv;
    const int64_t offset = kv_cache_offset(a.cache, slot, kv_head, position);
    if (a.cache.type == KvCacheType::kFp8E4M3) {
        const float scale = is_k ? a.cache.k_scale : a.cache.v_scale;
        uint8_t *cache = static_cast<uint8_t *>(is_k ? a.cache.keys : a.cache.values) + offset;
#pragma unroll
        for (int j = 0; j < kPerLane; ++j) cache[lane + 32 * j] = qk_rules::e4m3_bits(x[j], scale);
        return;
    }
    uint16_t *cache = static_cast<uint16_t *>(is_k ? a.cache.keys : a.cache.values) + offset;
#pragma unroll
    for (int j = 0; j < kPerLane; ++j) cache[lane + 32 * j] = qk_rules::bf16_bits(x[j]);
}

// head_dim 16 or 32: kHeadDim lanes per head, lane-in-head i holds element i.
// No lane leaves before the shuffles (a warp may hold a q and a k head, or a
// head past the end), so they run with the full mask in every lane.
template <int kHeadDim>
__global__ void __launch_bounds__(kWarps * 32) qk_norm_rope_small_kernel(const QkNormRopeArgs a) {
    [[maybe_unused]] const trace::EndMark end_mark;
    static_assert(kHeadDim == 16 || kHeadDim == 32, "one element per lane, a power-of-two group within a warp");
    constexpr int kHalf = kHeadDim / 2;  // element i pairs with i ^ kHalf
    const int i = threadIdx.x % kHeadDim;
    const int head = blockIdx.x * (kWarps * 32 / kHeadDim) + threadIdx.x / kHeadDim;
    const int b = blockIdx.y;
    const int n_kv = a.cache.n_kv_heads;
    const bool valid = head < a.n_heads + 2 * n_kv;
    const bool is_q = head < a.n_heads, is_k = !is_q && head < a.n_heads + n_kv;
    const bool low = i < kHalf;

    // Constant data first, before the wait (kernels/dependent_launch.cuh).
    const float weight = valid && a.token.q_norm && (is_q || is_k) ? __ldg((is_q ? a.token.q_norm : a.token.k_norm) + i) : 0.0f;
    const float freq = valid && (is_q || is_k) ? __ldg(a.token.inv_freq + (low ? i : i - kHalf)) : 0.0f;
    const int position = a.positions[b];  // written by the step's first kernel (see above)
    float c, s;  // before the wait, as in the wide kernel
    qk_rules::rotation(position, freq, a.token.rope_attention_factor, c, s);
    trace::begin_dependent_kernel(trace::kQkNormRope, 0, 0, long_attention_follows(a, position));

    // What comes from other kernels, in one round trip.
    float x = valid ? a.token.qkv[int64_t(b) * a.token.ld_qkv + int64_t(head) * kHeadDim + i] : 0.0f;
    const int slot = valid && !is_q && a.slots ? a.slots[b] : b;
    if (a.token.q_norm) {  // the same in every lane (q_norm and k_norm go together)
        float sum = qk_rules::add_square(0.0f, x);
#pragma unroll
        for (int o = kHalf; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
        const float inverse = qk_rules::rms_inverse(sum, kHeadDim, a.token.eps);
        if (is_q || is_k) x = qk_rules::normed(x, weight, inverse);
    }
    const float partner = __shfl_xor_sync(0xffffffffu, x, kHalf);
    if (is_q || is_k) {
        const float first = low ? x : partner, second = low ? partner : x;
        x = low ? qk_rules::rotated_first(first, second, c, s) : qk_rules::rotated_second(first, second, c, s);
    }
    if (!valid) return;

    if (is_q) {
        a.q_out[(int64_t(b) * a.n_heads + head) * kHeadDim + i] = x;
        return;
    }
    const int kv_head = is_k ? head - a.n_heads : head - a.n_heads - n_kv;
    const int64_t offset = kv_cache_offset(a.cache, slot, kv_head, position) + i;
    if (a.cache.type == KvCacheType::kFp8E4M3) {
        const float scale = is_k ? a.cache.k_scale : a.cache.v_scale;
        static_cast<uint8_t *>(is_k ? a.cache.keys : a.cache.values)[offset] = qk_rules::e4m3_bits(x, scale);
        return;
    }
    static_cast<uint16_t *>(is_k ? a.cache.keys : a.cache.values)[offset] = qk_rules::bf16_bits(x);
}

template <int kHeadDim>
void launch_small(const QkNormRopeArgs &a, int heads, cudaStream_t stream) {
    constexpr int kHeadsPerBlock = kWarps * 32 / kHeadDim;
    const dim3 grid(static_cast<unsigned>((heads + kHeadsPerBlock - 1) / kHeadsPerBlock), static_cast<unsigned>(a.batch));
    cuda::launch_kernel("qk_norm_rope_kv_append", qk_norm_rope_small_kernel<kHeadDim>, grid, dim3(kWarps * 32), 0,
                        stream, a);
}

}  // namespace

void qk_norm_rope_kv_append(const QkNormRopeArgs &a, cudaStream_t stream) {
    const KvCacheLayerView &c = a.cache;
    if (c.head_dim != 16 && c.head_dim != 32 && c.head_dim != 64 && c.head_dim != 128)
        fail(RESET_ERR_UNSUPPORTED, "qk_norm_rope_kv_append: head_dim ", c.head_dim,
             " (16, 32, 64 and 128 are supported)");
    if (a.batch <= 0 || a.n_heads <= 0 || c.n_kv_heads <= 0 || c.capacity <= 0)
        fail(RESET_ERR_INVALID_ARGUMENT, "qk_norm_rope_kv_append: batch ", a.batch, ", heads ", a.n_heads, "/",
             c.n_kv_heads, ", capacity ", c.capacity, " must all be positive");
    if (a.batch > kAttentionDecodeMaxBatch)
        fail(RESET_ERR_INVALID_ARGUMENT, "qk_norm_rope_kv_append: batch ", a.batch, " rows (at most ",
             kAttentionDecodeMaxBatch, " per launch)");
    if (c.type != KvCacheType::kBFloat16 && c.type != KvCacheType::kFp8E4M3)
        fail(RESET_ERR_INVALID_ARGUMENT, "qk_norm_rope_kv_append: unknown KV cache type ", static_cast<int>(c.type));
    if (c.type == KvCacheType::kFp8E4M3 &&
        !(std::isfinite(c.k_scale) && c.k_scale > 0.0f && std::isfinite(c.v_scale) && c.v_scale > 0.0f))
        fail(RESET_ERR_INVALID_ARGUMENT, "qk_norm_rope_kv_append: FP8 cache scales ", c.k_scale, " and ", c.v_scale,
             " must be finite and positive");
    check_new_token_inputs(a.token, a.n_heads, c, "qk_norm_rope_kv_append");
    require(a.positions, "qk_norm_rope_kv_append: positions");
    require(a.q_out, "qk_norm_rope_kv_append: q_out");
    require(c.keys, "qk_norm_rope_kv_append: cache keys");
    require(c.values, "qk_norm_rope_kv_append: cache values");
    const int heads = a.n_heads + 2 * c.n_kv_heads;
    const dim3 grid(static_cast<unsigned>((heads + kWarps - 1) / kWarps), static_cast<unsigned>(a.batch));
    if (c.head_dim == 16) launch_small<16>(a, heads, stream);
    else if (c.head_dim == 32) launch_small<32>(a, heads, stream);
    else
        cuda::launch_kernel("qk_norm_rope_kv_append",
                            c.head_dim == 64 ? qk_norm_rope_kernel<64> : qk_norm_rope_kernel<128>, grid,
                            dim3(kWarps * 32), 0, stream, a);
}

}  // namespace reset
