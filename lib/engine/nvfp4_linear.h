// nvfp4_linear.h — the CPU reference of an NVFP4 linear layer, y = W x.
//
// This is what every GPU kernel is tested against, so its arithmetic is
// fixed: nvfp4.md's two activation modes in FP32, each row summed block by
// block in order (W4A16 rounds its activations to FP16 as the GPU does unless
// asked for FP32).  Rows go through the loop eight at a time for speed, which
// changes no bit of y (tests/unit/test_nvfp4.cpp checks it against the
// one-row loop).
#pragma once

#include <cstdint>

#include "reset.h"

namespace reset {

// An NVFP4 weight in the ModelOpt layout (what the loader holds).
struct Nvfp4Weight {
    int64_t rows = 0;              // N, output features
    int64_t cols = 0;              // K, input features (a multiple of 16; the loader pads)
    const uint8_t *codes = nullptr;   // [rows][cols/2]: element 2j in the low nibble, 2j+1 in the high
    const uint8_t *scales = nullptr;  // [rows][cols/16]: E4M3 block scales
    float tensor_scale = 0.0f;        // weight_scale_2
    float input_scale = 0.0f;         // W4A4: calibrated activation tensor scale; <= 0 means dynamic
};

// W4A16: y[n] = tensor_scale * sum_b scale_b * sum_{k in b} e2m1(q_nk) * a_k.
// x has cols elements, y has rows.  RESET_ACTIVATIONS_FP32: a_k = x_k (nvfp4.md
// literally).  RESET_ACTIVATIONS_FP16: what the CUDA GEMV reads (rules/w4a16.h),
// a_k = fp16(x_k / s) with s = fp16_row_scale(amax_k |x_k|), and y multiplied by s.
// threads: reset_model_options.threads (0 = all cores; util/threads.h).
void nvfp4_matvec_w4a16(const Nvfp4Weight &w, const float *x, float *y, reset_activations activations,
                        int32_t threads = 0);

// W4A4: x is first quantized per 16-element block (tensor scale input_scale,
// or amax(|x|)/(6*448) when input_scale <= 0), then
// y[n] = tensor_scale * ts_x * sum_b (sW_b * sx_b) * sum_{k in b} e2m1(qW) * e2m1(qx).
void nvfp4_matvec_w4a4(const Nvfp4Weight &w, const float *x, float *y, int32_t threads = 0);

// The same for `tokens` rows of x (stride ldx) into as many rows of y (stride
// ldy): each row of y is, to the bit, what the one-token product gives for its
// row of x; the weight is decoded once per 4 tokens (a prefill's chunk).
void nvfp4_matmul_w4a16(const Nvfp4Weight &w, const float *x, int64_t ldx, int32_t tokens, float *y, int64_t ldy,
                        reset_activations activations, int32_t threads = 0);
void nvfp4_matmul_w4a4(const Nvfp4Weight &w, const float *x, int64_t ldx, int32_t tokens, float *y, int64_t ldy,
                       int32_t threads = 0);

// The activation side of W4A4, exposed for tests and for the GPU quantizer's
// reference: codes[cols] (unpacked), scales[cols/16], and the tensor scale used.
float nvfp4_quantize_activations(const float *x, int64_t cols, float input_scale, uint8_t *codes,
                                 uint8_t *scales);

}  // namespace reset
