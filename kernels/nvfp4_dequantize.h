// nvfp4_dequantize.h — the NVFP4 weight as a dense FP16 matrix for the
// prefill GEMM path (cuBLAS), from the repacked device layout the GEMV reads
// (kernels/nvfp4_gemv_layout.h), on the GPU (kernels/nvfp4_dequantize.cu).
//
//   out[row - row_begin][k] = FP16( e2m1(q[row][k]) * e4m3(s[row][k / 16]) * 2^-14 )
//
// exact in FP16 (at most 6 significant bits, multiples of 2^-24, |v| <= 0.165:
// see nvfp4_gemv.h); the remaining factor tensor_scale * 2^14 is applied by
// the caller after the GEMM (prefill_epilogue's `scale`).  Rows are in
// checkpoint order: for a fused gate_up layout, whose tiles interleave gate
// and up rows, out holds [gate rows; up rows] as the checkpoint does.  Only the
// real rows of [row_begin, row_end) and the real K columns are written; the
// padding rows/columns of the layout are skipped and out's columns past K
// are left untouched.  A negative code with magnitude 0 gives -0.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/nvfp4_gemv.h"

namespace reset {

struct Nvfp4DequantizeArgs {
    int64_t row_begin = 0;   // first checkpoint row to write
    int64_t row_end = -1;    // one past the last; < 0 means layout.rows
    void *out = nullptr;     // FP16 [row_end - row_begin][ld_out], 2-byte aligned
                             // (16-byte aligned with ld_out % 8 == 0: 16-byte stores, the fast path)
    int64_t ld_out = 0;      // >= layout.cols
};

// Enqueue on `stream` (capturable).  Both decodes (kInteger and kNativeE2M1)
// are supported: the bit layout is the weight's, not the GPU's.  Throws
// reset::Error: RESET_ERR_INVALID_ARGUMENT for an inconsistent layout, a bad
// row range, pointer or alignment (nothing launched), RESET_ERR_BACKEND if
// the launch fails.
void nvfp4_dequantize(const Nvfp4GemvWeight &weight, const Nvfp4DequantizeArgs &args, cudaStream_t stream);

}  // namespace reset
