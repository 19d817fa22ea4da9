// qk_norm_rope_rules.cuh — the arithmetic of a new token's q/k RMSNorm, RoPE
// and KV-cache rounding, shared by the two kernels that do it:
// qk_norm_rope_kv_append (its own launch) and attention_decode's new token
// (AttentionDecodeArgs::new_token, inside attention).  One definition, so that both store
// the same bits; the formulas are the CPU reference's (engine/cpu_engine.cpp).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <cstdint>

namespace reset::qk_rules {

// RoPE's cosine and sine for one frequency at `position`: the angle in double,
// as the CPU (an FP32 product loses digits at long contexts), rounded to
// float, then times YaRN's attention factor (exact for 1), as the CPU.
__device__ __forceinline__ void rotation(int position, float freq, float attention_factor, float &cosine,
                                         float &sine) {
    double s_d, c_d;
    sincos(double(position) * double(freq), &s_d, &c_d);
    cosine = __fmul_rn(static_cast<float>(c_d), attention_factor);
    sine = __fmul_rn(static_cast<float>(s_d), attention_factor);
}

// One lane's share of a head's sum of squares, added in element order: the
// caller sums the shares over the head's lanes by xor shuffles.
__device__ __forceinline__ float add_square(float sum, float x) { return __fmaf_rn(x, x, sum); }

// The RMSNorm factor of a head of `head_dim` elements whose squares sum to `sum`.
__device__ __forceinline__ float rms_inverse(float sum, int head_dim, float eps) {
    return 1.0f / sqrtf(sum / static_cast<float>(head_dim) + eps);
}

// An element after the norm: weight · (x · inverse), in that order.
__device__ __forceinline__ float normed(float x, float weight, float inverse) {
    return __fmul_rn(weight, __fmul_rn(x, inverse));
}

// RoPE in the "rotate half" layout: element i < d/2 (`first`) pairs with
// i + d/2 (`second`); the rotated first and second.  Explicit roundings: no
// FMA contraction, so the products round as on the CPU.
__device__ __forceinline__ float rotated_first(float first, float second, float c, float s) {
    return __fsub_rn(__fmul_rn(first, c), __fmul_rn(second, s));
}
__device__ __forceinline__ float rotated_second(float first, float second, float c, float s) {
    return __fadd_rn(__fmul_rn(second, c), __fmul_rn(first, s));
}

// A cache element: BF16 by round to nearest even; FP8 as e4m3(x / scale), an
// IEEE division (no fast-math), then round to nearest even with saturation to
// ±448 (native cvt on sm_89+, cuda_fp8.h's software path before).
__device__ __forceinline__ uint16_t bf16_bits(float x) {
    return __bfloat16_as_ushort(__float2bfloat16_rn(x));
}
__device__ __forceinline__ uint8_t e4m3_bits(float x, float scale) {
    return static_cast<uint8_t>(__nv_cvt_float_to_fp8(__fdiv_rn(x, scale), __NV_SATFINITE, __NV_E4M3));
}

}  // namespace reset::qk_rules
