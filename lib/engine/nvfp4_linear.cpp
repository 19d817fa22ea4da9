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

// Tokens a pass carries together: each weight byte decoded once for all of them (a prefill's
// chunk, engine/cpu_engine.h).
constexpr int kTokens = 4;

// Both activation modes share one loop, over kRows rows and T tokens at a time:
//   y_t[n] = multiplier_t * sum_b block_scale(t, b, sW_b) * sum_{k in b} e2m1(qW_nk) * x_t[k]
// with k in order within a block and b in order across them, for each row and token the
// operations of the one-row, one-token loop in their order.  W4A16 feeds the activations
// themselves; W4A4 feeds their decoded E2M1 values (products of two E2M1 values are multiples of
// 0.25 up to 36, so each block sum is exact in FP32, as on a tensor core) and folds sx_b into the
// block scale.
template <int T, typename BlockScale>
void blocked_pass(const Nvfp4Weight &w, const float *const *x, BlockScale block_scale, const float *multiplier,
                  float *const *y, int32_t threads) {
    const int64_t blocks = w.cols / kBlock, row_bytes = w.cols / 2;
    const DecodeTables &tables = decode_tables();
    const int64_t groups = (w.rows + kRows - 1) / kRows;
    // Small matrices stay on one thread: a team's fork and join cost more.
    const bool parallel = w.rows * w.cols * T >= (int64_t(1) << 20);
#pragma omp parallel for schedule(static) num_threads(openmp_threads(threads)) if (parallel)
    for (int64_t g = 0; g < groups; ++g) {
        const int64_t first = g * kRows;
        // The last group's missing rows repeat its first (computed, not stored).
        int64_t row[kRows];
        for (int r = 0; r < kRows; ++r) row[r] = first + r < w.rows ? first + r : first;
        float acc[T][kRows] = {};
        for (int64_t b = 0; b < blocks; ++b) {
            float block_sum[T][kRows] = {};
            for (int j = 0; j < kBlock / 2; ++j) {
                // The rows' two weights of this byte, decoded once, then each token's products
                // across the rows.
                float first_weight[kRows], second_weight[kRows];
                for (int r = 0; r < kRows; ++r) {
                    const std::array<float, 2> &pair = tables.pairs[w.codes[row[r] * row_bytes + b * (kBlock / 2) + j]];
                    first_weight[r] = pair[0];
                    second_weight[r] = pair[1];
                }
                for (int t = 0; t < T; ++t) {
                    const float x0 = x[t][b * kBlock + 2 * j], x1 = x[t][b * kBlock + 2 * j + 1];
                    for (int r = 0; r < kRows; ++r) {
                        block_sum[t][r] += first_weight[r] * x0;
                        block_sum[t][r] += second_weight[r] * x1;
                    }
                }
            }
            for (int r = 0; r < kRows; ++r) {
                const float weight_scale = tables.scales[w.scales[row[r] * blocks + b]];
                for (int t = 0; t < T; ++t) acc[t][r] += block_scale(t, b, weight_scale) * block_sum[t][r];
            }
        }
        for (int t = 0; t < T; ++t)
            for (int r = 0; r < kRows && first + r < w.rows; ++r) y[t][first + r] = multiplier[t] * acc[t][r];
    }
}

// Tokens [first, x.size()) through blocked_pass, T at a time while T are left, then the rest
// T / 2 at a time (4, 2, 1); block_scale(t, b, sW_b) and multiplier[t] with t the token's index
// among all.
template <int T = kTokens, typename BlockScale>
void blocked_product(const Nvfp4Weight &w, const std::vector<const float *> &x, BlockScale block_scale,
                     const std::vector<float> &multiplier, const std::vector<float *> &y, int32_t threads,
                     size_t first = 0) {
    for (; x.size() - first >= T; first += T) {
        const auto scale_from = [&](int t, int64_t b, float weight_scale) {
            return block_scale(int(first) + t, b, weight_scale);
        };
        blocked_pass<T>(w, &x[first], scale_from, &multiplier[first], &y[first], threads);
    }
    if constexpr (T > 1) blocked_product<T / 2>(w, x, block_scale, multiplier, y, threads, first);
}

std::vector<float *> output_rows(float *y, int64_t ldy, int32_t tokens) {
    std::vector<float *> rows(static_cast<size_t>(tokens));
    for (int32_t t = 0; t < tokens; ++t) rows[size_t(t)] = y + t * ldy;
    return rows;
}

}  // namespace

void nvfp4_matmul_w4a16(const Nvfp4Weight &w, const float *x, int64_t ldx, int32_t tokens, float *y, int64_t ldy,
                        reset_activations activations, int32_t threads) {
    const auto weight_scale_only = [](int, int64_t, float weight_scale) { return weight_scale; };
    std::vector<const float *> inputs(static_cast<size_t>(tokens));
    std::vector<float> multipliers(static_cast<size_t>(tokens), w.tensor_scale);
    std::vector<float> x16;
    if (activations == RESET_ACTIVATIONS_FP32) {
        for (int32_t t = 0; t < tokens; ++t) inputs[size_t(t)] = x + t * ldx;
    } else {
        // The GPU's FP16 input (nvfp4_quantize_activations.cu): divide by the
        // power-of-two row scale (exact), round to FP16; the scale is multiplied
        // back with the tensor scale (exactly: a power of two), as the GEMV's epilogue does.
        x16.resize(static_cast<size_t>(tokens * w.cols));
        for (int32_t t = 0; t < tokens; ++t) {
            const float *xt = x + t * ldx;
            float amax = 0.0f;
            for (int64_t k = 0; k < w.cols; ++k) amax = std::fmax(amax, std::fabs(xt[k]));
            const float row_scale = w4a16::fp16_row_scale(amax);
            float *x16t = x16.data() + t * w.cols;
            for (int64_t k = 0; k < w.cols; ++k) x16t[k] = w4a16::round_to_fp16(xt[k] / row_scale);
            inputs[size_t(t)] = x16t;
            multipliers[size_t(t)] = w.tensor_scale * row_scale;
        }
    }
    blocked_product(w, inputs, weight_scale_only, multipliers, output_rows(y, ldy, tokens), threads);
}

void nvfp4_matvec_w4a16(const Nvfp4Weight &w, const float *x, float *y, reset_activations activations,
                        int32_t threads) {
    nvfp4_matmul_w4a16(w, x, w.cols, 1, y, w.rows, activations, threads);
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

void nvfp4_matmul_w4a4(const Nvfp4Weight &w, const float *x, int64_t ldx, int32_t tokens, float *y, int64_t ldy,
                       int32_t threads) {
    const int64_t blocks = w.cols / kBlock;
    std::vector<uint8_t> x_codes(static_cast<size_t>(w.cols));
    std::vector<uint8_t> x_scale_codes(static_cast<size_t>(blocks));
    std::vector<float> x_values(static_cast<size_t>(tokens * w.cols)), x_scales(static_cast<size_t>(tokens * blocks));
    std::vector<const float *> inputs(static_cast<size_t>(tokens));
    std::vector<float> multipliers(static_cast<size_t>(tokens));
    for (int32_t t = 0; t < tokens; ++t) {
        const float x_tensor_scale =
            nvfp4_quantize_activations(x + t * ldx, w.cols, w.input_scale, x_codes.data(), x_scale_codes.data());
        float *values = x_values.data() + t * w.cols, *scales = x_scales.data() + t * blocks;
        for (int64_t k = 0; k < w.cols; ++k) values[k] = e2m1_to_float(x_codes[size_t(k)]);
        for (int64_t b = 0; b < blocks; ++b) scales[b] = e4m3_to_float(x_scale_codes[size_t(b)]);
        inputs[size_t(t)] = values;
        multipliers[size_t(t)] = w.tensor_scale * x_tensor_scale;
    }
    blocked_product(
        w, inputs,
        [&](int t, int64_t b, float weight_scale) { return weight_scale * x_scales[size_t(t * blocks + b)]; },
        multipliers, output_rows(y, ldy, tokens), threads);
}

void nvfp4_matvec_w4a4(const Nvfp4Weight &w, const float *x, float *y, int32_t threads) {
    nvfp4_matmul_w4a4(w, x, w.cols, 1, y, w.rows, threads);
}

}  // namespace reset
