// nvfp4_mma_decode.cuh — the NVFP4 codes and block scales of one weight
// record (nvfp4_gemv_layout.h) turned into tensor-core A fragments and
// multiplied: the arithmetic core of every kernel that streams the GEMV
// layout (kernels/nvfp4_gemv.cu; the persistent layer-chain prototype,
// tests/bench/persistent_chain_bench.cu).  One header, so that every such
// kernel decodes bit for bit alike; docs/gemv.md explains the bit tricks.
#pragma once
#include <cstdint>

#include "kernels/cuda_common.cuh"
#include "kernels/nvfp4_gemv_layout.h"

// sm_100a / sm_120a binaries convert E2M1 pairs natively; every other target
// (sm_80 to sm_90a, and family-portable sm_100 / sm_120) decodes with integer
// operations.  The layout the loader repacks into follows the choice
// (nvfp4_gemv_device_decode).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 1000 && defined(__CUDA_ARCH_FAMILY_SPECIFIC__)
#define RESET_NVFP4_NATIVE_E2M1 1
#else
#define RESET_NVFP4_NATIVE_E2M1 0
#endif

namespace reset {

// Four A-fragment registers (FP16 pairs, e2m1 * 2^-14, or exact e2m1 on the
// native path) from one 32-bit word; bit positions from nvfp4_gemv_layout.h.
__device__ __forceinline__ void decode_word(uint32_t w, uint32_t (&a)[4]) {
#if RESET_NVFP4_NATIVE_E2M1
    asm("{\n"
        ".reg .b8 b0, b1, b2, b3;\n"
        "mov.b32 {b0, b1, b2, b3}, %4;\n"
        "cvt.rn.f16x2.e2m1x2 %0, b0;\n"
        "cvt.rn.f16x2.e2m1x2 %1, b1;\n"
        "cvt.rn.f16x2.e2m1x2 %2, b2;\n"
        "cvt.rn.f16x2.e2m1x2 %3, b3;\n"
        "}"
        : "=r"(a[0]), "=r"(a[1]), "=r"(a[2]), "=r"(a[3])
        : "r"(w));
#else
    // An FP16 whose exponent's two low bits and mantissa's top bit hold the
    // E2M1 magnitude bits is exactly e2m1 * 2^-14 (code 1 lands on the FP16
    // subnormal 2^-15), so placing the bits is the whole decode.
    static_assert(kNvfp4MagnitudeBit[0] == 9 && kNvfp4SignBit[0] == 15, "layout changed: update the shifts");
    static_assert(kNvfp4MagnitudeBit[1] == 6 && kNvfp4SignBit[1] == 12, "layout changed: update the shifts");
    static_assert(kNvfp4MagnitudeBit[2] == 0 && kNvfp4SignBit[2] == 14, "layout changed: update the shifts");
    static_assert(kNvfp4MagnitudeBit[3] == 3 && kNvfp4SignBit[3] == 13, "layout changed: update the shifts");
    constexpr uint32_t kBoth = 0x8E008E00u;  // FP16 bits 9-11 and 15 of both halves
    a[0] = w & kBoth;
    a[1] = (w << 3) & kBoth;
    // Magnitude up 9, sign up 1: (m << 9) + (m << 1) of the masked word m;
    // the two copies never share a set bit, so the sum is their union.
    a[2] = ((w & 0x40074007u) * ((1u << 9) + (1u << 1))) & kBoth;
    // Magnitude up 6, sign up 2, likewise.
    a[3] = ((w & 0x20382038u) * ((1u << 6) + (1u << 2))) & kBoth;
#endif
}

// The FP16 block scales of rows g and g+8 for super u of a quad, each
// broadcast to both halves.  Integer decode: the 7 low E4M3 bits shifted to
// FP16 bit 7 give scale * 2^-8 exactly (subnormal scales included); one FP16
// product then sets the power of two that makes e2m1 * scale land exactly in
// FP16: 2^8 for the integer decode (its weights carry 2^-14), 2^-6 for the
// native decode (exact weights), so both paths compute e2m1 * scale * 2^-14.
__device__ __forceinline__ void decode_scales(uint2 s, int u, uint32_t &row_g, uint32_t &row_g8) {
    const uint32_t word = u < 2 ? s.x : s.y;
    uint32_t pair = __byte_perm(word, 0u, (u & 1) ? 0x4342u : 0x4140u) << 7;
    pair = cuda::hmul2(pair, RESET_NVFP4_NATIVE_E2M1 ? 0x24002400u : 0x5C005C00u);
    row_g = __byte_perm(pair, 0u, 0x1010u);
    row_g8 = __byte_perm(pair, 0u, 0x3232u);
}

// One super of one tile: 4 tensor-core products.  All of the lane's weights
// in the super share one block (docs: the k permutation), so one scale pair
// serves the 16 FP16 pairs; xv are the lane's 16 activations of the block.
__device__ __forceinline__ void super_step(const uint4 &codes, uint32_t sg, uint32_t sg8, const uint4 (&xv)[2],
                                           float (&acc)[4]) {
    const uint32_t words[4] = {codes.x, codes.y, codes.z, codes.w};
    const uint32_t xw[8] = {xv[0].x, xv[0].y, xv[0].z, xv[0].w, xv[1].x, xv[1].y, xv[1].z, xv[1].w};
#pragma unroll
    for (int b = 0; b < 4; ++b) {
        uint32_t a[4];
        decode_word(words[b], a);
        a[0] = cuda::hmul2(a[0], sg);
        a[1] = cuda::hmul2(a[1], sg8);
        a[2] = cuda::hmul2(a[2], sg);
        a[3] = cuda::hmul2(a[3], sg8);
        cuda::mma_f16_16816(acc, a, xw[2 * b], xw[2 * b + 1]);
    }
}

}  // namespace reset
