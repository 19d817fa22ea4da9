// W4A16 activation rules (lib/rules/w4a16.h): the FP16 rounding checked
// against the compiler's own conversion (GCC's _Float16, an independent
// implementation of IEEE binary16 round-to-nearest-even), and the row scale.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>

#include "rules/w4a16.h"

using namespace reset::w4a16;

namespace {

float via_float16(float x) { return static_cast<float>(static_cast<_Float16>(x)); }

uint32_t bits_of(float x) {
    uint32_t b;
    std::memcpy(&b, &x, sizeof b);
    return b;
}

// Equal as values, with NaN equal to NaN and the sign of zero compared too.
bool same(float a, float b) { return (std::isnan(a) && std::isnan(b)) || bits_of(a) == bits_of(b); }

}  // namespace

TEST_CASE("round_to_fp16 rounds as an IEEE binary16 conversion, on hand-picked values") {
    CHECK(round_to_fp16(1.0f) == 1.0f);
    // 1 + 2^-11 lies halfway between 1 and 1 + 2^-10: ties go to the even mantissa, 1.
    CHECK(round_to_fp16(1.0f + std::ldexp(1.0f, -11)) == 1.0f);
    // 1 + 3 * 2^-11 lies halfway between 1 + 2^-10 (odd) and 1 + 2^-9 (even).
    CHECK(round_to_fp16(1.0f + 3 * std::ldexp(1.0f, -11)) == 1.0f + std::ldexp(1.0f, -9));
    // Just under 2 rounds up into the next binade.
    CHECK(round_to_fp16(1.99999f) == 2.0f);
    CHECK(round_to_fp16(0.1f) == 0.0999755859375f);  // 0x2e66
    CHECK(round_to_fp16(-3.14159f) == -3.140625f);   // 0xc248
    // 65504 is the largest finite value; 65520, halfway to 2^16, ties to the even 2^16: infinity.
    CHECK(round_to_fp16(65504.0f) == 65504.0f);
    CHECK(round_to_fp16(65519.0f) == 65504.0f);
    CHECK(round_to_fp16(65520.0f) == INFINITY);
    CHECK(round_to_fp16(-1e9f) == -INFINITY);
    // Subnormals are multiples of 2^-24; 2^-25 is a tie between 0 and 2^-24 and goes to 0.
    CHECK(round_to_fp16(std::ldexp(1.0f, -24)) == std::ldexp(1.0f, -24));
    CHECK(round_to_fp16(std::ldexp(1.0f, -25)) == 0.0f);
    CHECK(round_to_fp16(std::ldexp(3.0f, -25)) == std::ldexp(2.0f, -24));
    CHECK(round_to_fp16(std::ldexp(1.0f, -14) - std::ldexp(1.0f, -26)) == std::ldexp(1.0f, -14));  // up to the smallest normal
    CHECK(std::signbit(round_to_fp16(-0.0f)));
    CHECK(std::signbit(round_to_fp16(-std::ldexp(1.0f, -30))));  // underflows to -0
    CHECK(std::isnan(round_to_fp16(NAN)));
    CHECK(round_to_fp16(INFINITY) == INFINITY);
}

TEST_CASE("round_to_fp16 equals _Float16 on random normals, subnormals, ties and overflows") {
    std::mt19937 rng(16);
    std::uniform_int_distribution<int> exponent(-30, 17);  // below FP16's subnormals to past its largest value
    std::uniform_int_distribution<uint32_t> mantissa(0, (1u << 23) - 1);
    std::uniform_int_distribution<int> fp16_code(0, 0x7bff);  // every finite non-negative FP16 value
    int checked = 0;
    for (int i = 0; i < 200000; ++i) {
        float x;
        if (i % 2 == 0) {
            // Any float in the range: random exponent, random 23-bit mantissa.
            x = std::ldexp(1.0f + std::ldexp(static_cast<float>(mantissa(rng)), -23), exponent(rng));
        } else {
            // A tie: an FP16 value plus half its spacing (2^-24 below 2^-14, else 2^(e-10)).
            const int code = fp16_code(rng);
            const int field = code >> 10;
            const float value = field == 0 ? std::ldexp(static_cast<float>(code), -24)
                                           : std::ldexp(static_cast<float>(1024 + (code & 1023)), field - 25);
            const float half_step = std::ldexp(1.0f, (field == 0 ? 1 : field) - 26);
            x = value + half_step;  // exact in FP32: 12 significant bits
        }
        if (rng() & 1) x = -x;
        CAPTURE(x);
        CHECK(same(round_to_fp16(x), via_float16(x)));
        ++checked;
    }
    for (float x : {65504.0f, 65505.0f, 65519.99f, 65520.0f, 65536.0f, 1e30f, INFINITY, -INFINITY, NAN, 0.0f, -0.0f,
                    std::ldexp(1.0f, -149), std::ldexp(1.0f, -126)}) {
        CAPTURE(x);
        CHECK(same(round_to_fp16(x), via_float16(x)));
    }
    CHECK(checked == 200000);
}

TEST_CASE("fp16_row_scale is 1 up to 32768, above it the smallest power of two bringing amax below 32768") {
    CHECK(fp16_row_scale(0.0f) == 1.0f);
    CHECK(fp16_row_scale(NAN) == 1.0f);
    CHECK(fp16_row_scale(0.001f) == 1.0f);
    CHECK(fp16_row_scale(32768.0f) == 1.0f);
    CHECK(fp16_row_scale(32769.0f) == 2.0f);
    // 65536 / 2 would be exactly 32768; the rule (the CUDA kernels' frexp) asks for strictly below.
    CHECK(fp16_row_scale(65536.0f) == 4.0f);
    CHECK(fp16_row_scale(65535.0f) == 2.0f);
    CHECK(fp16_row_scale(65537.0f) == 4.0f);
    CHECK(fp16_row_scale(1e9f) == 32768.0f);  // 1e9 / 32768 = 30518 -> 2^15
    for (float amax : {40000.0f, 1e6f, 3e38f}) {
        CAPTURE(amax);
        const float s = fp16_row_scale(amax);
        CHECK(amax / s < 32768.0f);
        CHECK(amax / (s / 2) >= 32768.0f);  // no smaller power of two would do
    }
}
