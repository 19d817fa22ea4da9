// rms_norm.h — RMSNorm of activation rows on the GPU (kernels/rms_norm.cu):
//   out[r] = weight ⊙ (x[r] · 1/sqrt(mean(x[r]²) + eps))
// in FP32, the formula of the CPU reference (engine/cpu_engine.cpp) and of
// Hugging Face's Qwen/Llama RMSNorm.  Only the order of the sum of squares
// differs from the CPU (a tree instead of a left-to-right loop).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace reset {

struct RmsNormArgs {
    int rows = 0;                  // tokens, >= 1
    int64_t cols = 0;              // hidden size, >= 1
    const float *x = nullptr;      // [rows][ldx]
    int64_t ldx = 0;
    const float *weight = nullptr; // [cols]
    float eps = 0.0f;
    float *out = nullptr;          // [rows][ld_out]; may equal x (in place) when ld_out == ldx
    int64_t ld_out = 0;
};

// Enqueue on `stream`.  Throws reset::Error: RESET_ERR_INVALID_ARGUMENT for a
// bad shape or pointer (nothing launched), RESET_ERR_BACKEND if the launch fails.
void rms_norm(const RmsNormArgs &args, cudaStream_t stream);

}  // namespace reset
