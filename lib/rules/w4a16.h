// w4a16.h — how NVFP4 W4A16 linears read their activations, in one place.
// The CUDA GEMV multiplies the NVFP4 weights by FP16 activations on the tensor
// cores, so each activation row is divided by a power-of-two row scale and
// rounded to FP16 (kernels/nvfp4_quantize_activations.cu, rms_norm_prepare.cu),
// and the GEMV's FP32 epilogue multiplies the scale back.  The CPU reference
// (engine/nvfp4_linear.cpp) applies the same two rules by default
// (RESET_ACTIVATIONS_FP16), so both backends multiply the same activation values.
#pragma once

#include <cmath>

#include "rules/host_device.h"

namespace reset::w4a16 {

// |x / row_scale| stays at or below this: half of FP16's largest finite value
// (65504), so no activation overflows FP16.
constexpr float kFp16RowLimit = 32768.0f;

// The row scale of a row whose largest magnitude is amax: 1 when amax <= 32768
// (also NaN and 0), else the smallest power of two s with amax / s < 32768
// (strictly: an amax of exactly 32768 * 2^k gets 2^(k+1), as frexp gives it;
// the CUDA kernels have always used this rule).  Dividing by a power of two is
// exact, so the scale adds no rounding of its own.
RESET_HD float fp16_row_scale(float amax) {
    if (!(amax > kFp16RowLimit)) return 1.0f;
    int e = 0;
    std::frexp(amax / kFp16RowLimit, &e);  // amax / 32768 = f * 2^e, f in [0.5, 1): 2^e covers it
    return std::ldexp(1.0f, e);
}

// x rounded to the nearest FP16 value (round half to even, as
// __float2half_rn), returned as a float: the host side of the GPU's
// conversion, without depending on a compiler's half type.  FP16 has 10
// mantissa bits, exponents -14..15 and subnormals in steps of 2^-24; a
// magnitude at or above 65520 (the midpoint between 65504, the largest
// finite value, and 2^16, which ties to even rounds up) becomes infinity.
// NaN passes through, and the sign of zero is kept.
inline float round_to_fp16(float x) {
    const float a = std::fabs(x);
    if (!(a > 0.0f)) return x;                             // 0, -0 and NaN
    if (a >= 65520.0f) return std::copysign(INFINITY, x);  // also infinity
    int e2 = 0;
    std::frexp(a, &e2);     // a = f * 2^e2, f in [0.5, 1)
    int exponent = e2 - 1;  // a = m * 2^exponent, m in [1, 2)
    // Below 2^-14 FP16 is subnormal: multiples of 2^-24, the spacing of
    // exponent -14.  Scaling by a power of two is exact, and rint rounds half
    // to even, so the one rounding is the FP16 one.  A result of 2^11 steps
    // (a mantissa carry) is still exact: it is the next power of two.
    if (exponent < -14) exponent = -14;
    const float steps = std::rint(std::ldexp(a, 10 - exponent));  // multiples of 2^(exponent-10)
    return std::copysign(std::ldexp(steps, exponent - 10), x);
}

}  // namespace reset::w4a16
