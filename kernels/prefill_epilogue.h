// prefill_epilogue.h — the element-wise tail of a prefill GEMM on the GPU
// (kernels/prefill_epilogue.cu).  After cuBLAS has written Y[M][N] in FP32
// (for NVFP4 weights: the product with the FP16 weights of
// nvfp4_dequantize, which still lack the tensor_scale * 2^14 factor), one
// launch applies
//   out[m][n] = (y[m][n] * (scale * row_scale[m]) + bias[n]) + residual[m][n]
// (out = y, in place, unless an out is given) with each term optional: scale
// defaults to 1, row_scale / bias / residual are skipped when null.  The
// factor scale * row_scale[m] is formed first in FP32 (one rounding), then one
// multiply, one add for the bias, one for the residual, in that order.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace reset {

struct PrefillEpilogueArgs {
    int rows = 0;                     // M, >= 1 (prefill chunk tokens)
    int64_t cols = 0;                 // N, >= 1
    float *y = nullptr;               // FP32 [rows][ldy], updated in place
    int64_t ldy = 0;
    float scale = 1.0f;               // a constant factor (NVFP4: tensor_scale * 2^14)
    const float *row_scale = nullptr; // device [rows] factors (W4A16 power-of-two / W4A4 activation scale), or null
    const float *bias = nullptr;      // device [cols], or null
    const float *residual = nullptr;  // FP32 [rows][ld_residual], or null; may equal y (then ld_residual == ldy)
    int64_t ld_residual = 0;
    float *out = nullptr;             // FP32 [rows][ld_out], or null for y itself; may equal residual
                                      // (a residual GEMM writes a scratch y, and the sum lands in the residual)
    int64_t ld_out = 0;
};

// Enqueue on `stream` (capturable).  Throws reset::Error:
// RESET_ERR_INVALID_ARGUMENT for a bad shape or pointer (nothing launched),
// RESET_ERR_BACKEND if the launch fails.  Float4 accesses when cols and the
// leading dimensions are multiples of 4 and the pointers 16-byte aligned.
void prefill_epilogue(const PrefillEpilogueArgs &args, cudaStream_t stream);

}  // namespace reset
