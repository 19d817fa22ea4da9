// qk_norm_rope_kv_append.cu — one warp per head (q, k or v) of one sequence.
// Lane `lane` holds elements lane + 32·j; RoPE pairs element i with i + d/2,
// which is j with j + d/64 in the same lane, so the rotation needs no shuffles
// and the RMSNorm only one warp reduction.
#include "kernels/qk_norm_rope_kv_append.h"

#include <cuda_bf16.h>

#include "kernels/cuda_common.cuh"

namespace reset {
namespace {

constexpr int kWarps = 4;

template <int kHeadDim>
__global__ void __launch_bounds__(kWarps * 32) qk_norm_rope_kernel(const QkNormRopeArgs a) {
    constexpr int kPerLane = kHeadDim / 32;
    constexpr int kHalf = kPerLane / 2;  // j and j + kHalf form a rotation pair
    const int lane = threadIdx.x % 32;
    const int head = blockIdx.x * kWarps + threadIdx.x / 32;
    const int b = blockIdx.y;
    const int n_kv = a.cache.n_kv_heads;
    if (head >= a.n_heads + 2 * n_kv) return;  // whole warps leave: no barrier follows

    const float *in = a.qkv + int64_t(b) * a.ld_qkv + int64_t(head) * kHeadDim;
    float x[kPerLane];
#pragma unroll
    for (int j = 0; j < kPerLane; ++j) x[j] = in[lane + 32 * j];

    const int position = a.positions[b];
    const bool is_q = head < a.n_heads, is_k = !is_q && head < a.n_heads + n_kv;
    if (is_q || is_k) {
        const float *norm = is_q ? a.q_norm : a.k_norm;
        if (norm) {
            float sum = 0.0f;
#pragma unroll
            for (int j = 0; j < kPerLane; ++j) sum += x[j] * x[j];
#pragma unroll
            for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
            const float inverse = 1.0f / sqrtf(sum / static_cast<float>(kHeadDim) + a.eps);
#pragma unroll
            for (int j = 0; j < kPerLane; ++j) x[j] = norm[lane + 32 * j] * (x[j] * inverse);
        }
#pragma unroll
        for (int j = 0; j < kHalf; ++j) {
            // The angle in double, as the CPU: an FP32 product loses digits at long contexts.
            const double angle = double(position) * double(a.inv_freq[lane + 32 * j]);
            double s_d, c_d;
            sincos(angle, &s_d, &c_d);
            const float c = static_cast<float>(c_d), s = static_cast<float>(s_d);
            const float first = x[j], second = x[j + kHalf];
            // Explicit roundings: no FMA contraction, so the products round as on the CPU.
            x[j] = __fsub_rn(__fmul_rn(first, c), __fmul_rn(second, s));
            x[j + kHalf] = __fadd_rn(__fmul_rn(second, c), __fmul_rn(first, s));
        }
    }

    if (is_q) {
        float *out = a.q_out + (int64_t(b) * a.n_heads + head) * kHeadDim;
#pragma unroll
        for (int j = 0; j < kPerLane; ++j) out[lane + 32 * j] = x[j];
        return;
    }
    const int kv_head = is_k ? head - a.n_heads : head - a.n_heads - n_kv;
    __nv_bfloat16 *cache = static_cast<__nv_bfloat16 *>(is_k ? a.cache.keys : a.cache.values) +
                           kv_cache_offset(a.cache, b, kv_head, position);
#pragma unroll
    for (int j = 0; j < kPerLane; ++j) cache[lane + 32 * j] = __float2bfloat16_rn(x[j]);
}

}  // namespace

void qk_norm_rope_kv_append(const QkNormRopeArgs &a, cudaStream_t stream) {
    const KvCacheLayerView &c = a.cache;
    if (c.head_dim != 64 && c.head_dim != 128)
        fail(RESET_ERR_UNSUPPORTED, "qk_norm_rope_kv_append: head_dim ", c.head_dim, " (64 and 128 are supported)");
    if (a.batch <= 0 || a.n_heads <= 0 || c.n_kv_heads <= 0 || c.capacity <= 0 ||
        a.ld_qkv < int64_t(a.n_heads + 2 * c.n_kv_heads) * c.head_dim)
        fail(RESET_ERR_INVALID_ARGUMENT, "qk_norm_rope_kv_append: batch ", a.batch, ", heads ", a.n_heads, "/",
             c.n_kv_heads, ", capacity ", c.capacity, ", ld_qkv ", a.ld_qkv,
             " (all positive, ld_qkv >= (heads + 2 kv heads) * head_dim)");
    if ((a.q_norm == nullptr) != (a.k_norm == nullptr))
        fail(RESET_ERR_INVALID_ARGUMENT, "qk_norm_rope_kv_append: q_norm and k_norm go together");
    require(a.qkv, "qk_norm_rope_kv_append: qkv");
    require(a.inv_freq, "qk_norm_rope_kv_append: inv_freq");
    require(a.positions, "qk_norm_rope_kv_append: positions");
    require(a.q_out, "qk_norm_rope_kv_append: q_out");
    require(c.keys, "qk_norm_rope_kv_append: cache keys");
    require(c.values, "qk_norm_rope_kv_append: cache values");
    const int heads = a.n_heads + 2 * c.n_kv_heads;
    const dim3 grid(static_cast<unsigned>((heads + kWarps - 1) / kWarps), static_cast<unsigned>(a.batch));
    if (c.head_dim == 64) qk_norm_rope_kernel<64><<<grid, kWarps * 32, 0, stream>>>(a);
    else qk_norm_rope_kernel<128><<<grid, kWarps * 32, 0, stream>>>(a);
    RESET_CUDA_CHECK(cudaGetLastError());
}

}  // namespace reset
