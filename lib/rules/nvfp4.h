// nvfp4.h — the NVFP4 format in one place: E2M1 and E4M3 code tables,
// round-to-nearest quantization, dequantization and the two dot-product rules
// (W4A16 and W4A4).  Included by the CPU reference engine, the loader and the
// CUDA kernels, so every backend quantizes and decodes identically.
//
// Specification: shared/docs/nvfp4.md.  Summary:
//   w = e2m1(q) * f32(block_scale_e4m3) * tensor_scale,   16 elements per block along K
//   tensor_scale = amax(|W|) / (6 * 448)
//   block_scale  = e4m3_rne(block_amax / (6 * tensor_scale))
//   q            = e2m1_rne(w / (f32(block_scale) * tensor_scale)), ties to the even code
// The order of every floating-point operation below is part of the format:
// the reference script (tests/fixtures/make_fixtures.py) and NVIDIA ModelOpt's
// exporter do the same operations in the same order, so codes are bit-exact.
#pragma once

#include <cmath>
#include <cstdint>

#include "rules/host_device.h"

namespace reset::nvfp4 {

constexpr int kBlock = 16;           // elements sharing one E4M3 block scale
constexpr float kE2M1Max = 6.0f;     // largest E2M1 magnitude
constexpr float kE4M3Max = 448.0f;   // largest finite E4M3 (e4m3fn) value
constexpr uint8_t kE4M3One = 0x38;   // E4M3 code of 1.0 (exponent 7 = bias, mantissa 0)

// Magnitudes of E2M1 codes 0..7; bit 3 is the sign.
RESET_HD float e2m1_to_float(uint8_t code) {
    // A switch rather than a table: device code cannot read a host array, and
    // the compiler turns this into a select chain or a constant-bank lookup.
    float m;
    switch (code & 7) {
        case 0: m = 0.0f; break;
        case 1: m = 0.5f; break;
        case 2: m = 1.0f; break;
        case 3: m = 1.5f; break;
        case 4: m = 2.0f; break;
        case 5: m = 3.0f; break;
        case 6: m = 4.0f; break;
        default: m = 6.0f; break;
    }
    return (code & 8) ? -m : m;
}

// Round to the nearest E2M1 value, ties to the even code, clamped to +-6.
// The sign bit is set for every negative input, also one that rounds to zero
// (ModelOpt does the same; -0 decodes to 0).  NaN maps to code 0.
RESET_HD uint8_t float_to_e2m1(float x) {
    const float a = std::fabs(x);
    uint8_t code;
    if (!(a > 0.25f)) code = 0;        // also NaN
    else if (a < 0.75f) code = 1;      // 0.5
    else if (a <= 1.25f) code = 2;     // 1.0   (0.75 -> 1.0, 1.25 -> 1.0: even code)
    else if (a < 1.75f) code = 3;      // 1.5
    else if (a <= 2.5f) code = 4;      // 2.0   (1.75 -> 2.0, 2.5 -> 2.0)
    else if (a < 3.5f) code = 5;       // 3.0
    else if (a <= 5.0f) code = 6;      // 4.0   (3.5 -> 4.0, 5.0 -> 4.0)
    else code = 7;                     // 6.0, and everything above (clamp)
    return x < 0.0f ? static_cast<uint8_t>(code | 8) : code;
}

// Decode an E4M3 (e4m3fn: bias 7, no infinities, 0x7f/0xff = NaN) byte.
RESET_HD float e4m3_to_float(uint8_t b) {
    const int sign = b >> 7;
    const int exponent = (b >> 3) & 0xf;
    const int mantissa = b & 7;
    float v;
    if (exponent == 0xf && mantissa == 7) v = NAN;
    else if (exponent == 0) v = std::ldexp(static_cast<float>(mantissa), -9);   // subnormal: m/8 * 2^-6
    else v = std::ldexp(static_cast<float>(8 + mantissa), exponent - 10);     // (1 + m/8) * 2^(e-7)
    return sign ? -v : v;
}

// Round a non-negative float to the nearest E4M3 value, ties to even,
// saturating at 448 (scales are never negative).  NaN and negatives give 0.
RESET_HD uint8_t float_to_e4m3(float x) {
    if (!(x > 0.0f)) return 0;
    if (x >= kE4M3Max) return 0x7e;  // 448
    int e2 = 0;
    std::frexp(x, &e2);              // x = f * 2^e2, f in [0.5, 1)
    int exponent = e2 - 1;           // x = m * 2^exponent, m in [1, 2)
    if (exponent < -6) {
        // Subnormal range: multiples of 2^-9.  rint is round-half-even.
        const float q = std::rint(std::ldexp(x, 9));  // exact scaling by a power of two
        return static_cast<uint8_t>(q);               // 8 lands on 0x08 = 2^-6, the smallest normal
    }
    const float q = std::rint((std::ldexp(x, -exponent) - 1.0f) * 8.0f);  // 0..8, exact arithmetic
    int mantissa = static_cast<int>(q);
    if (mantissa == 8) {
        mantissa = 0;
        ++exponent;
    }
    const int field = exponent + 7;
    if (field > 15 || (field == 15 && mantissa == 7)) return 0x7e;  // rounded past 448: saturate
    return static_cast<uint8_t>((field << 3) | mantissa);
}

// tensor_scale = amax / (6 * 448), in FP32.
RESET_HD float tensor_scale_from_amax(float amax) { return amax / (kE2M1Max * kE4M3Max); }

// The E4M3 block scale of a block whose largest magnitude is block_amax.
// A block whose scale would be 0 (all zeros, or the whole tensor zero) gets
// 1.0, as ModelOpt does: its elements then quantize to 0 and decode exactly.
RESET_HD uint8_t block_scale_code(float block_amax, float tensor_scale) {
    const float v = block_amax / (kE2M1Max * tensor_scale);
    if (v == 0.0f || v != v) return kE4M3One;
    return float_to_e4m3(v);
}

// Quantize one element given its block's decoded scale and the tensor scale.
RESET_HD uint8_t quantize_element(float x, float block_scale, float tensor_scale) {
    const float denominator = block_scale * tensor_scale;
    if (denominator == 0.0f) return 0;  // the block's scale underflowed: every value decodes to 0
    return float_to_e2m1(x / denominator);
}

RESET_HD float dequantize_element(uint8_t code, float block_scale, float tensor_scale) {
    return e2m1_to_float(code) * block_scale * tensor_scale;
}

// Low nibble = element 2j, high nibble = element 2j+1 (ModelOpt packing).
RESET_HD uint8_t packed_code(const uint8_t *packed_row, int k) {
    const uint8_t byte = packed_row[k >> 1];
    return (k & 1) ? static_cast<uint8_t>(byte >> 4) : static_cast<uint8_t>(byte & 0xf);
}

// Quantize one 16-element block of activations or weights in place of the
// caller's arrays: codes[i] receives the unpacked code of x[i].  Returns the
// block's E4M3 scale code.  Used by W4A4 (activations) and the loader.
RESET_HD uint8_t quantize_block(const float *x, float tensor_scale, uint8_t *codes) {
    float block_amax = 0.0f;
    for (int i = 0; i < kBlock; ++i) block_amax = std::fmax(block_amax, std::fabs(x[i]));
    const uint8_t scale = block_scale_code(block_amax, tensor_scale);
    const float decoded = e4m3_to_float(scale);
    for (int i = 0; i < kBlock; ++i) codes[i] = quantize_element(x[i], decoded, tensor_scale);
    return scale;
}

}  // namespace reset::nvfp4
