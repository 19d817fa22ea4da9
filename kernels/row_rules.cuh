// row_rules.cuh — the per-row device rules that rms_norm.cu,
// nvfp4_quantize_activations.cu and the fused rms_norm_prepare.cu must apply
// identically (the fused kernel is tested bit for bit against the other two):
// the RMSNorm inverse, the row maximum and the W4A4 quantization of one
// element per lane.  One CTA of kRowThreads per row.  The W4A16 FP16 row scale
// is rules/w4a16.h's, shared with the CPU reference.
#pragma once

#include <cuda_fp16.h>

#include <cstdint>

#include "rules/nvfp4.h"

namespace reset {

constexpr int kRowThreads = 256;

// 1 / sqrt(mean(x²) + eps) over x[0, cols), on every thread: thread t sums
// elements t, t + 256, ... in order, then a shuffle tree and the warps in
// order — the CPU's expression in FP32, with only the summation order differing.
__device__ __forceinline__ float row_rms_inverse(const float *x, int64_t cols, float eps) {
    __shared__ float partial_s[kRowThreads / 32];
    float sum = 0.0f;
    for (int64_t i = threadIdx.x; i < cols; i += kRowThreads) sum += x[i] * x[i];
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
    if (threadIdx.x % 32 == 0) partial_s[threadIdx.x / 32] = sum;
    __syncthreads();
    float total = 0.0f;
#pragma unroll
    for (int w = 0; w < kRowThreads / 32; ++w) total += partial_s[w];
    return 1.0f / sqrtf(total / static_cast<float>(cols) + eps);
}

// The maximum of every thread's m, on every thread (call once per kernel:
// the shared slots are not fenced for reuse).
__device__ __forceinline__ float row_max(float m) {
    __shared__ float warp_max[kRowThreads / 32];
    for (int offset = 16; offset > 0; offset >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, offset));
    if ((threadIdx.x & 31) == 0) warp_max[threadIdx.x >> 5] = m;
    __syncthreads();
    m = 0.0f;
    for (int w = 0; w < kRowThreads / 32; ++w) m = fmaxf(m, warp_max[w]);
    return m;
}

// W4A4: element x of a 16-element block held by 16 adjacent lanes (a whole
// warp must call: the shuffles span it; lanes outside the row pass 0).
// nvfp4::quantize_block's functions in its order, so codes are bit-identical
// to the CPU reference.  Returns the FP16 value e2m1(q) · s_block (exact: at
// most 6 significant bits in [2^-10, 2688]); *code gets q, *upper the next
// lane's q (the high nibble of an even lane's byte), *scale_code the block's.
__device__ __forceinline__ __half nvfp4_quantize_lane(float x, float tensor_scale, uint8_t *code, unsigned *upper,
                                                      uint8_t *scale_code) {
    float block_amax = fabsf(x);
    for (int offset = 8; offset > 0; offset >>= 1)
        block_amax = fmaxf(block_amax, __shfl_xor_sync(0xffffffffu, block_amax, offset));
    *scale_code = nvfp4::block_scale_code(block_amax, tensor_scale);
    const float scale = nvfp4::e4m3_to_float(*scale_code);
    *code = nvfp4::quantize_element(x, scale, tensor_scale);
    *upper = __shfl_down_sync(0xffffffffu, static_cast<unsigned>(*code), 1);
    return __float2half_rn(nvfp4::e2m1_to_float(*code) * scale);
}

}  // namespace reset
