// NVFP4 rules (lib/rules/nvfp4.h) and the CPU reference linear, checked
// against values written out by hand from nvfp4.md and against FP64 sums.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <utility>
#include <vector>

#include "engine/nvfp4_linear.h"
#include "model/weights.h"
#include "rules/nvfp4.h"

using namespace reset;
using namespace reset::nvfp4;

TEST_CASE("E2M1 codes decode to the table of nvfp4.md, bit 3 is the sign") {
    const float magnitudes[8] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
    for (uint8_t code = 0; code < 8; ++code) {
        CHECK(e2m1_to_float(code) == magnitudes[code]);
        CHECK(e2m1_to_float(uint8_t(code | 8)) == -magnitudes[code]);
    }
}

TEST_CASE("E2M1 rounding is nearest with ties to the even code, clamped at 6") {
    struct Case { float in; float out; };
    const Case cases[] = {{0.0f, 0}, {0.25f, 0}, {0.2501f, 0.5f}, {0.75f, 1}, {0.7499f, 0.5f}, {1.25f, 1},
                          {1.2501f, 1.5f}, {1.75f, 2}, {2.5f, 2}, {2.5001f, 3}, {3.5f, 4}, {3.4999f, 3},
                          {5.0f, 4}, {5.0001f, 6}, {6.0f, 6}, {100.0f, 6}, {-0.75f, -1}, {-5.0f, -4}, {-7.0f, -6}};
    for (const auto &c : cases) {
        CAPTURE(c.in);
        CHECK(e2m1_to_float(float_to_e2m1(c.in)) == c.out);
    }
    // A negative value that rounds to zero keeps its sign bit (as ModelOpt does).
    CHECK(float_to_e2m1(-0.1f) == 0x8);
    CHECK(float_to_e2m1(NAN) == 0);
}

TEST_CASE("E4M3: every finite non-negative code survives a decode/encode round trip") {
    for (int code = 0; code < 0x7f; ++code) {
        const float v = e4m3_to_float(uint8_t(code));
        CAPTURE(code);
        CHECK(float_to_e4m3(v) == code);
    }
    CHECK(e4m3_to_float(0x7e) == 448.0f);
    CHECK(std::isnan(e4m3_to_float(0x7f)));
    CHECK(e4m3_to_float(0x01) == std::ldexp(1.0f, -9));
    CHECK(e4m3_to_float(kE4M3One) == 1.0f);
}

TEST_CASE("E4M3 rounding: nearest-even between neighbours, saturating at 448") {
    // 1.0 (0x38) and 1.125 (0x39): the midpoint 1.0625 goes to the even mantissa 0.
    CHECK(float_to_e4m3(1.0625f) == 0x38);
    CHECK(float_to_e4m3(1.0626f) == 0x39);
    // 1.125 (0x39) and 1.25 (0x3a): midpoint 1.1875 goes to 0x3a (even).
    CHECK(float_to_e4m3(1.1875f) == 0x3a);
    CHECK(float_to_e4m3(460.0f) == 0x7e);
    CHECK(float_to_e4m3(1e9f) == 0x7e);
    // Subnormals: 2^-9 steps; 1.5 * 2^-9 is a tie between 1 and 2 steps -> 2 (even).
    CHECK(float_to_e4m3(1.5f * std::ldexp(1.0f, -9)) == 0x02);
    CHECK(float_to_e4m3(0.4f * std::ldexp(1.0f, -9)) == 0x00);
    // The mantissa carry: just under 2.0 rounds up into the next exponent.
    CHECK(e4m3_to_float(float_to_e4m3(1.97f)) == 2.0f);
}

TEST_CASE("a block of zeros gets the scale 1.0 and decodes exactly") {
    float zeros[kBlock] = {};
    uint8_t codes[kBlock];
    CHECK(quantize_block(zeros, 0.01f, codes) == kE4M3One);
    for (uint8_t c : codes) CHECK(e2m1_to_float(c) == 0.0f);
    // A whole tensor of zeros (tensor scale 0) is exact too.
    CHECK(quantize_block(zeros, 0.0f, codes) == kE4M3One);
    for (uint8_t c : codes) CHECK(e2m1_to_float(c) == 0.0f);
}

TEST_CASE("the largest element of a block maps to +-6 and the block scale follows nvfp4.md") {
    float x[kBlock];
    for (int i = 0; i < kBlock; ++i) x[i] = 0.01f * float(i) - 0.05f;
    x[7] = -0.9f;
    const float tensor_scale = tensor_scale_from_amax(0.9f);
    uint8_t codes[kBlock];
    const uint8_t scale = quantize_block(x, tensor_scale, codes);
    CHECK(scale == float_to_e4m3(0.9f / (6.0f * tensor_scale)));
    CHECK(e4m3_to_float(scale) == 448.0f);
    CHECK(e2m1_to_float(codes[7]) == -6.0f);
}

namespace {
std::vector<float> random_values(size_t n, uint32_t seed, float scale) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.0f, scale);
    std::vector<float> v(n);
    for (auto &x : v) x = normal(rng);
    return v;
}

double relative_l2(const std::vector<float> &a, const std::vector<double> &b) {
    double num = 0, den = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        num += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
        den += b[i] * b[i];
    }
    return std::sqrt(num / den);
}
}  // namespace

namespace {
// A rows x cols linear of N(0, 0.3) weights, NVFP4-quantized.
Linear random_linear(int64_t rows, int64_t cols, uint32_t seed) {
    const std::vector<float> weights = random_values(size_t(rows * cols), seed, 0.3f);
    Linear linear;
    nvfp4_quantize_matrix(weights, rows, cols, nvfp4_shared_tensor_scale({&weights}), linear);
    return linear;
}

// The FP64 product of linear's dequantized weights with the activations a.
std::vector<double> fp64_product(const Linear &linear, int64_t rows, int64_t cols, const std::vector<float> &a) {
    std::vector<double> out(size_t(rows), 0.0);
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t k = 0; k < cols; ++k) {
            const uint8_t code = packed_code(linear.codes.data() + r * cols / 2, int(k));
            const double w = double(e2m1_to_float(code)) * e4m3_to_float(linear.scales[size_t(r * cols / 16 + k / 16)]) *
                             linear.tensor_scale;
            out[size_t(r)] += w * a[size_t(k)];
        }
    return out;
}

// x / scale rounded to FP16 by the compiler's _Float16 (independent of rules/w4a16.h), times scale.
std::vector<float> fp16_rounded(const std::vector<float> &x, float scale) {
    std::vector<float> out(x.size());
    for (size_t i = 0; i < x.size(); ++i) out[i] = static_cast<float>(static_cast<_Float16>(x[i] / scale)) * scale;
    return out;
}
}  // namespace

TEST_CASE("W4A16 reference matvec equals the FP64 product of the dequantized weights and its activations") {
    const int64_t rows = 37, cols = 96;
    const Linear linear = random_linear(rows, cols, 1);
    const std::vector<float> x = random_values(size_t(cols), 2, 1.0f);
    std::vector<float> y(static_cast<size_t>(rows));
    // FP32 accumulation of 96 terms: ~1e-6 relative; 1e-5 leaves room for the summation order.
    SUBCASE("FP16 activations (the default, what the CUDA GEMV reads): x rounded to FP16") {
        nvfp4_matvec_w4a16(linear.nvfp4_view(), x.data(), y.data(), RESET_ACTIVATIONS_FP16);
        CHECK(relative_l2(y, fp64_product(linear, rows, cols, fp16_rounded(x, 1.0f))) < 1e-5);
        // The rounding shows: ~2^-12 relative per element, far above the FP32 sums' error.
        CHECK(relative_l2(y, fp64_product(linear, rows, cols, x)) > 1e-5);
    }
    SUBCASE("FP32 activations: x as it is") {
        nvfp4_matvec_w4a16(linear.nvfp4_view(), x.data(), y.data(), RESET_ACTIVATIONS_FP32);
        CHECK(relative_l2(y, fp64_product(linear, rows, cols, x)) < 1e-5);
    }
}

// The reference's promise to the GPU tests: y[n] = tensor_scale * (sum over blocks b, in order,
// of scale_b * (sum over k in b, in order, of e2m1(q_nk) * a_k)) in FP32, one row at a time.  The
// library interleaves rows for speed (session 45); the sums must still come out to the bit.
TEST_CASE("W4A16 FP32 reference matvec sums each row in the formula's order, to the bit") {
    // 37 rows: groups of 8 and a ragged last; 1100 x 1024: the threaded branch.
    for (const auto &[rows, cols] : {std::pair<int64_t, int64_t>{37, 96}, {1100, 1024}}) {
        CAPTURE(rows);
        const Linear linear = random_linear(rows, cols, 11);
        const std::vector<float> x = random_values(size_t(cols), 12, 1.0f);
        std::vector<float> y(static_cast<size_t>(rows));
        nvfp4_matvec_w4a16(linear.nvfp4_view(), x.data(), y.data(), RESET_ACTIVATIONS_FP32);
        int differ = 0;
        for (int64_t r = 0; r < rows; ++r) {
            float acc = 0.0f;
            for (int64_t b = 0; b < cols / 16; ++b) {
                float block_sum = 0.0f;
                for (int64_t k = b * 16; k < b * 16 + 16; ++k) {
                    const float product = e2m1_to_float(packed_code(linear.codes.data() + r * cols / 2, int(k))) * x[size_t(k)];
                    block_sum = block_sum + product;
                }
                const float scaled = e4m3_to_float(linear.scales[size_t(r * cols / 16 + b)]) * block_sum;
                acc = acc + scaled;
            }
            const float expected = linear.tensor_scale * acc;
            differ += std::memcmp(&expected, &y[size_t(r)], sizeof(float)) != 0;
        }
        CHECK(differ == 0);
    }
}

TEST_CASE("W4A16 FP16 activations beyond FP16's range: the row scale keeps them finite") {
    const int64_t rows = 21, cols = 64;
    const Linear linear = random_linear(rows, cols, 5);
    std::vector<float> x = random_values(size_t(cols), 6, 1000.0f);
    x[17] = 200000.0f;  // amax 2e5 > 65504: row scale 8 (2e5 / 8 = 25000 <= 32768)
    std::vector<float> y(static_cast<size_t>(rows));
    nvfp4_matvec_w4a16(linear.nvfp4_view(), x.data(), y.data(), RESET_ACTIVATIONS_FP16);
    for (float v : y) CHECK(std::isfinite(v));
    CHECK(relative_l2(y, fp64_product(linear, rows, cols, fp16_rounded(x, 8.0f))) < 1e-5);
}

TEST_CASE("W4A4 reference matvec equals the FP64 product of both dequantized operands") {
    const int64_t rows = 19, cols = 64;
    Linear linear = random_linear(rows, cols, 3);
    const std::vector<float> x = random_values(size_t(cols), 4, 2.0f);
    for (float input_scale : {0.0f, 0.002f}) {
        linear.input_scale = input_scale;
        std::vector<uint8_t> x_codes(static_cast<size_t>(cols)), x_scales(static_cast<size_t>(cols / 16));
        const float ts_x = nvfp4_quantize_activations(x.data(), cols, input_scale, x_codes.data(), x_scales.data());
        if (input_scale > 0) CHECK(ts_x == input_scale);
        std::vector<float> y(static_cast<size_t>(rows));
        nvfp4_matvec_w4a4(linear.nvfp4_view(), x.data(), y.data());
        std::vector<float> a(static_cast<size_t>(cols));  // dequantized activations (one FP32 rounding: 6e-8)
        for (int64_t k = 0; k < cols; ++k)
            a[size_t(k)] = e2m1_to_float(x_codes[size_t(k)]) * e4m3_to_float(x_scales[size_t(k / 16)]) * ts_x;
        CHECK(relative_l2(y, fp64_product(linear, rows, cols, a)) < 1e-5);
    }
}

// A prefill's chunk goes through the product several tokens at a time (passes of 4, 2 and 1 for
// 7 tokens); each token's row must be what the one-token product gives it, to the bit.
TEST_CASE("the several-token products give each token the one-token product's bits") {
    for (const auto &[rows, cols] : {std::pair<int64_t, int64_t>{37, 96}, {1100, 1024}}) {
        CAPTURE(rows);
        Linear linear = random_linear(rows, cols, 21);
        const int32_t tokens = 7;
        const int64_t ldx = cols + 3, ldy = rows + 5;  // strides past the rows
        std::vector<float> x = random_values(size_t(tokens * ldx), 22, 1.5f);
        x[size_t(2 * ldx + 5)] = 90000.0f;  // one token's FP16 row scale above 1
        const auto one_by_one = [&](auto &&product) {
            std::vector<float> y(size_t(tokens * ldy), -1.0f);
            for (int32_t t = 0; t < tokens; ++t) product(x.data() + t * ldx, y.data() + t * ldy);
            return y;
        };
        int differ = 0;
        const auto compare = [&](const std::vector<float> &a, const std::vector<float> &b) {
            differ += std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) != 0;
        };
        for (reset_activations activations : {RESET_ACTIVATIONS_FP16, RESET_ACTIVATIONS_FP32}) {
            std::vector<float> together(size_t(tokens * ldy), -1.0f);
            nvfp4_matmul_w4a16(linear.nvfp4_view(), x.data(), ldx, tokens, together.data(), ldy, activations);
            compare(together, one_by_one([&](const float *xt, float *yt) {
                nvfp4_matvec_w4a16(linear.nvfp4_view(), xt, yt, activations);
            }));
        }
        for (float input_scale : {0.0f, 0.002f}) {
            linear.input_scale = input_scale;
            std::vector<float> together(size_t(tokens * ldy), -1.0f);
            nvfp4_matmul_w4a4(linear.nvfp4_view(), x.data(), ldx, tokens, together.data(), ldy);
            compare(together, one_by_one([&](const float *xt, float *yt) { nvfp4_matvec_w4a4(linear.nvfp4_view(), xt, yt); }));
        }
        CHECK(differ == 0);
    }
}

TEST_CASE("quantizing pads K to a multiple of 16 with zeros") {
    const int64_t rows = 3, cols = 20;
    const std::vector<float> weights = random_values(size_t(rows * cols), 5, 1.0f);
    Linear linear;
    nvfp4_quantize_matrix(weights, rows, cols, nvfp4_shared_tensor_scale({&weights}), linear);
    CHECK(linear.padded_in == 32);
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t k = cols; k < 32; ++k) CHECK(packed_code(linear.codes.data() + r * 16, int(k)) == 0);
}

TEST_CASE("siblings share the largest tensor scale") {
    const std::vector<float> a = {0.5f, -2.0f}, b = {3.0f, 1.0f};
    CHECK(nvfp4_shared_tensor_scale({&a, &b}) == tensor_scale_from_amax(3.0f));
}

TEST_CASE("BF16 conversion rounds to nearest even") {
    CHECK(float_to_bf16(1.0f) == 0x3f80);
    CHECK(bf16_to_float(float_to_bf16(1.00390625f)) == 1.0f);      // exactly halfway, to even
    CHECK(bf16_to_float(float_to_bf16(1.01171875f)) == 1.015625f); // halfway, odd below: rounds up
}
