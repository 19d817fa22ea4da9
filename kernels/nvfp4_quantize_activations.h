// nvfp4_quantize_activations.h — turn activation rows (FP32 or BF16) into the
// FP16 input of the NVFP4 GEMV (kernels/nvfp4_quantize_activations.cu).
//
//   W4A4:  each row is quantized per 16-element block exactly as nvfp4.h and
//          the CPU reference do (engine/nvfp4_linear.h): tensor scale
//          input_scale, or amax(|x_row|) / (6 * 448) when input_scale <= 0.
//          x16 receives the dequantized values e2m1(q) * f32(s_block) (exact
//          in FP16: at most 6 significant bits, |v| <= 2688) and row_scale the
//          tensor scale, which the GEMV applies per token (x_row_scale).
//   W4A16: x16 = x / row_scale with row_scale the smallest power of two >= 1
//          that keeps |x16| <= 32768, so no activation overflows FP16; the
//          GEMV multiplies row_scale back (exact: a power of two).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace reset {

enum class Nvfp4ActivationMode : int { kW4A16 = 0, kW4A4 = 1 };
enum class Nvfp4ActivationInput : int { kFloat32 = 0, kBFloat16 = 1 };

struct Nvfp4PrepareArgs {
    Nvfp4ActivationMode mode = Nvfp4ActivationMode::kW4A4;
    int tokens = 0;                  // rows, 1..8 for the GEMV (any positive count works here)
    int64_t cols = 0;                // K, a multiple of 16
    const void *x = nullptr;         // [tokens][ldx] in `input`
    int64_t ldx = 0;
    Nvfp4ActivationInput input = Nvfp4ActivationInput::kFloat32;
    float input_scale = 0.0f;        // W4A4: calibrated activation tensor scale; <= 0: dynamic per row
    void *x16 = nullptr;             // FP16 [tokens][ld_x16], 4-byte aligned, ld_x16 even
    int64_t ld_x16 = 0;
    float *row_scale = nullptr;      // [tokens]
    uint8_t *codes = nullptr;        // optional (W4A4): [tokens][cols/2] ModelOpt-packed codes
    uint8_t *scales = nullptr;       // optional (W4A4): [tokens][cols/16] E4M3 block scales
};

// Enqueue on `stream`.  Throws reset::Error (RESET_ERR_UNSUPPORTED or
// RESET_ERR_INVALID_ARGUMENT) on a shape or argument it does not support,
// RESET_ERR_BACKEND when the launch fails.
void nvfp4_prepare_activations(const Nvfp4PrepareArgs &args, cudaStream_t stream);

}  // namespace reset
