// nvfp4_linear.cpp — CPU reference NVFP4 matrix-vector products (see the header).
#include "engine/nvfp4_linear.h"

#include <array>
#include <cmath>
#include <vector>

#include "rules/nvfp4.h"
#include "rules/w4a16.h"
#include "util/threads.h"

namespace reset {

using namespace nvfp4;

namespace {

// The E2M1 pair of each packed byte (element 2j, then 2j+1) and the value of each E4M3 scale
// byte, filled once from rules/nvfp4.h's own functions, so the loop below reads the values those
// give, to the bit.
struct DecodeTables {
    std::array<std::array<float, 2>, 256> pairs;
    std::array<float, 256> scales;
    DecodeTables() {
        for (int byte = 0; byte < 256; ++byte) {
            pairs[size_t(byte)] = {e2m1_to_float(uint8_t(byte & 0xf)), e2m1_to_float(uint8_t(byte >> 4))};
            scales[size_t(byte)] = e4m3_to_float(uint8_t(byte));
        }
    }
};
const DecodeTables &decode_tables() {
    static const DecodeTables tables;
    return tables;
}

// Rows a thread carries through the loop together: each row's sums are a chain of dependent FP32
// additions, and interleaving kRows chains keeps the adder busy (one row at a time, each addition
// waited on the one before: a Qwen3-8B-shape NVFP4 token took ~21.7 s on two cores; 8 rows
// together, 0.75 s; session 45).  Each row's operations and their order are those of the one-row
// loop, so y is the same to the bit.
constexpr int kRows = 8;

// Both activation modes share one loop:
//   y[n] = multiplier * sum_b block_scale(b, sW_b) * sum_{k in b} e2m1(qW_nk) * x[k]
// with k in order within a block and b in order across them.  W4A16 feeds the activations
// themselves; W4A4 feeds their decoded E2M1 values (products of two E2M1 values are multiples of
// 0.25 up to 36, so each block sum is exact in FP32, as on a tensor core) and folds sx_b into the
// block scale.
template <typename BlockScale>
void blocked_matvec(const Nvfp4Weight &w, const float *x, BlockScale block_scale, float multiplier, float *y,
                    int32_t threads) {
    const int64_t blocks = w.cols / kBlock, row_bytes = w.cols / 2;
    const DecodeTables &tables = decode_tables();
    const int64_t groups = (w.rows + kRows - 1) / kRows;
    // Small matrices stay on one thread: a team's fork and join cost more.
    const bool parallel = w.rows * w.cols >= (int64_t(1) << 20);
#pragma omp parallel for schedule(static) num_threads(openmp_threads(threads)) if (parallel)
    for (int64_t g = 0; g < groups; ++g) {
        const int64_t first = g * kRows;
        // The last group's missing rows repeat its first (computed, not stored).
        int64_t row[kRows];
        for (int r = 0; r < kRows; ++r) row[r] = first + r < w.rows ? first + r : first;
        float acc[kRows] = {};
        for (int64_t b = 0; b < blocks; ++b) {
            float block_sum[kRows] = {};
            const float *xb = x + b * kBlock;
            for (int j = 0; j < kBlock / 2; ++j)
                for (int r = 0; r < kRows; ++r) {
                    const std::array<float, 2> &pair = tables.pairs[w.codes[row[r] * row_bytes + b * (kBlock / 2) + j]];
                    block_sum[r] += pair[0] * xb[2 * j];
                    block_sum[r] += pair[1] * xb[2 * j + 1];
                }
            for (int r = 0; r < kRows; ++r)
                acc[r] += block_scale(b, tables.scales[w.scales[row[r] * blocks + b]]) * block_sum[r];
        }
        for (int r = 0; r < kRows && first + r < w.rows; ++r) y[first + r] = multiplier * acc[r];
    }
}

}  // namespace

void nvfp4_matvec_w4a16(const Nvfp4Weight &w, const float *x, float *y, reset_activations activations,
                        int32_t threads) {
    const auto weight_scale_only = [](int64_t, float weight_scale) { return weight_scale; };
    if (activations == RESET_ACTIVATIONS_FP32) {
        blocked_matvec(w, x, weight_scale_only, w.tensor_scale, y, threads);
        return;
    }
    // The GPU's FP16 input (nvfp4_quantize_activations.cu): divide by the
    // power-of-two row scale (exact), round to FP16; the scale is multiplied
    // back with the tensor scale (exactly: a power of two), as the GEMV's epilogue does.
    float amax = 0.0f;
    for (int64_t k = 0; k < w.cols; ++k) amax = std::fmax(amax, std::fabs(x[k]));
    const float row_scale = w4a16::fp16_row_scale(amax);
    std::vector<float> x16(static_cast<size_t>(w.cols));
    for (int64_t k = 0; k < w.cols; ++k) x16[size_t(k)] = w4a16::round_to_fp16(x[k] / row_scale);
    blocked_matvec(w, x16.data(), weight_scale_only, w.tensor_scale * row_scale, y, threads);
}

float nvfp4_quantize_activations(const float *x, int64_t cols, float input_scale, uint8_t *codes,
                                 uint8_t *scales) {
    float tensor_scale = input_scale;
    if (!(input_scale > 0.0f)) {
        // Dynamic per-token scale (nvfp4.md: a checkpoint quantized on load has no input_scale).
        float amax = 0.0f;
        for (int64_t k = 0; k < cols; ++k) amax = std::fmax(amax, std::fabs(x[k]));
        tensor_scale = tensor_scale_from_amax(amax);
    }
    for (int64_t b = 0; b < cols / kBlock; ++b)
        scales[b] = quantize_block(x + b * kBlock, tensor_scale, codes + b * kBlock);
    return tensor_scale;
}

void nvfp4_matvec_w4a4(const Nvfp4Weight &w, const float *x, float *y, int32_t threads) {
    const int64_t blocks = w.cols / kBlock;
    std::vector<uint8_t> x_codes(static_cast<size_t>(w.cols));
    std::vector<uint8_t> x_scale_codes(static_cast<size_t>(blocks));
    const float x_tensor_scale =
        nvfp4_quantize_activations(x, w.cols, w.input_scale, x_codes.data(), x_scale_codes.data());
    std::vector<float> x_values(static_cast<size_t>(w.cols));
    std::vector<float> x_scales(static_cast<size_t>(blocks));
    for (int64_t k = 0; k < w.cols; ++k) x_values[k] = e2m1_to_float(x_codes[k]);
    for (int64_t b = 0; b < blocks; ++b) x_scales[b] = e4m3_to_float(x_scale_codes[b]);
    blocked_matvec(
        w, x_values.data(), [&](int64_t b, float weight_scale) { return weight_scale * x_scales[size_t(b)]; },
        w.tensor_scale * x_tensor_scale, y, threads);
}

}  // namespace reset
