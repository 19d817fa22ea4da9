// silu_mul.h — the SwiGLU activation on the GPU (kernels/silu_mul.cu):
//   out[m][i] = silu(gate[m][i]) * up[m][i],   silu(x) = x / (1 + exp(-x))
// in FP32, the expression of the CPU reference (engine/cpu_engine.cpp).  Only
// exp differs: CUDA's expf (<= 2 ulp) instead of the C library's.
//
// gate and up are separate pointers with their own leading dimensions, so a
// fused [gate | up] buffer (up = gate + intermediate, both with ld = 2 *
// intermediate) works as well as two buffers.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace reset {

struct SiluMulArgs {
    int rows = 0;                 // tokens, 1..65,535
    int64_t cols = 0;             // intermediate size, >= 1
    const float *gate = nullptr;  // [rows][ld_gate]
    int64_t ld_gate = 0;
    const float *up = nullptr;    // [rows][ld_up]
    int64_t ld_up = 0;
    float *out = nullptr;         // [rows][ld_out]; may equal gate (with ld_out == ld_gate) or up (ld_out == ld_up)
    int64_t ld_out = 0;
};

// Enqueue on `stream` (capturable).  Throws reset::Error:
// RESET_ERR_INVALID_ARGUMENT for a bad shape or pointer, RESET_ERR_UNSUPPORTED
// for more than 65,535 rows (nothing launched), RESET_ERR_BACKEND if the
// launch fails.  Float4 loads/stores when cols and every leading dimension are
// multiples of 4 and the three pointers 16-byte aligned; element-wise otherwise.
void silu_mul(const SiluMulArgs &args, cudaStream_t stream);

}  // namespace reset
