// rms_norm_prepare.h — RMSNorm fused with the NVFP4 GEMV input preparation
// (kernels/rms_norm_prepare.cu): one launch instead of rms_norm followed by
// nvfp4_prepare_activations in the decode step.  For each FP32 row x[r]:
//   y = weight ⊙ (x[r] · 1/sqrt(mean(x[r]²) + eps))     exactly as kernels/rms_norm.cu
//   x16[r], row_scale[r] (and optionally codes/scales) from y exactly as
//   nvfp4_prepare_activations does with FP32 input, in either mode:
//     W4A16: FP16 y / row_scale, row_scale the power of two keeping |x16| <= 32768;
//     W4A4:  per-16 NVFP4 quantization through rules/nvfp4.h, tensor scale
//            input_scale or (input_scale <= 0) amax(|y|) / (6 * 448).
// The output is bit-identical to the two separate launches (same FP32
// expressions, the same row layout for the sum of squares: row_rules.cuh, threads a function of K).
// Optionally the normed FP32 row is written too (`normed`).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/nvfp4_quantize_activations.h"

namespace reset {

struct RmsNormPrepareArgs {
    int rows = 0;                    // tokens, >= 1 (1..8 for the GEMV)
    int64_t cols = 0;                // hidden size, a positive multiple of 16
    const float *x = nullptr;        // FP32 [rows][ldx]
    int64_t ldx = 0;
    const float *weight = nullptr;   // FP32 [cols] norm weight
    float eps = 0.0f;
    Nvfp4ActivationMode mode = Nvfp4ActivationMode::kW4A4;
    float input_scale = 0.0f;        // W4A4: calibrated activation tensor scale; <= 0: dynamic per row
    void *x16 = nullptr;             // FP16 [rows][ld_x16], 4-byte aligned, ld_x16 even
    int64_t ld_x16 = 0;
    float *row_scale = nullptr;      // [rows]
    uint8_t *codes = nullptr;        // optional (W4A4): [rows][cols/2] ModelOpt-packed codes
    uint8_t *scales = nullptr;       // optional (W4A4): [rows][cols/16] E4M3 block scales
    float *normed = nullptr;         // optional: FP32 [rows][ld_normed], the RMSNorm output; must not overlap x
    int64_t ld_normed = 0;
    // Let the next kernel in the stream be placed before this launch's wait for the previous
    // one (cuda::begin_dependent_kernel_placing_next), so that its CTAs load their constant
    // data during this launch.  Only for a next kernel that touches nothing else before its own
    // wait (the NVFP4 GEMV: its first quad of weights).  Results do not depend on it.
    bool place_next_early = false;
};

// Enqueue on `stream` (capturable).  Throws reset::Error (RESET_ERR_UNSUPPORTED
// for K not a positive multiple of 16, RESET_ERR_INVALID_ARGUMENT for a bad
// argument; nothing launched), RESET_ERR_BACKEND when the launch fails.
void rms_norm_prepare(const RmsNormPrepareArgs &args, cudaStream_t stream);

}  // namespace reset
