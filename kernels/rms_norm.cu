// rms_norm.cu — one CTA per row, laid out by kernels/row_rules.cuh: the
// row's chunks are requested in one burst of 16-byte loads and kept in
// registers, the norm weights are loaded before griddepcontrol.wait (they are
// constant, so that load overlaps the previous kernel's tail), then one block
// reduction and the scaled row is written.  Before: a strided scalar pass for
// the sum of squares and a second one for the output, each a chain of
// dependent L2 round trips.  Rows past the registers (over 16,384 elements)
// re-read the row from L1/L2 in the same order.  The sum of squares follows
// row_rules.cuh, so rms_norm_prepare.cu gets the same inverse bit for bit.
// Measured on the H100 (4096 wide, 1 or 8 rows): 9.7 -> 3.7 µs a launch
// isolated under Nsight Compute with flushed caches, 4.0 -> 1.3 µs in a graph
// with PDL.
#include "kernels/rms_norm.h"

#include "kernels/cuda_common.cuh"
#include "kernels/dependent_launch.cuh"
#include "kernels/row_rules.cuh"
#include "kernels/step_trace.cuh"

namespace reset {
namespace {

// kSlots > 0: the row in registers (row_fits_registers); 0: any length.
template <int kSlots>
__global__ void __launch_bounds__(kRowMaxThreads) rms_norm_kernel(const RmsNormArgs a) {
    [[maybe_unused]] const trace::EndMark end_mark;
    const float *x = a.x + int64_t(blockIdx.x) * a.ldx;
    float *out = a.out + int64_t(blockIdx.x) * a.ld_out;
    const bool whole = a.cols % kRowChunk == 0;
    const bool vec_x = whole && aligned_to(x, 16), vec_w = whole && aligned_to(a.weight, 16),
               vec_out = whole && aligned_to(out, 16);
    if constexpr (kSlots > 0) {
        float4 w[kSlots], v[kSlots];
        load_chunks<kSlots, true>(a.weight, a.cols, threadIdx.x, blockDim.x, vec_w, w);
        trace::begin_dependent_kernel(trace::kRmsNorm, unsigned(a.cols));
        load_chunks(x, a.cols, threadIdx.x, blockDim.x, vec_x, v);
        const float inverse = row_rms_inverse(v, a.cols, a.eps);
        // In place, every thread has read its chunks before it writes them.
#pragma unroll
        for (int s = 0; s < kSlots; ++s)
            store_chunk(out, a.cols, threadIdx.x + s * blockDim.x, vec_out, rms_scale(w[s], v[s], inverse));
    } else {
        trace::begin_dependent_kernel(trace::kRmsNorm, unsigned(a.cols));
        const float inverse = row_rms_inverse(x, a.cols, a.eps, vec_x);
        const int64_t chunks = (a.cols + kRowChunk - 1) / kRowChunk;
        for (int64_t c = threadIdx.x; c < chunks; c += blockDim.x)
            store_chunk(out, a.cols, c, vec_out,
                        rms_scale(load_constant_chunk(a.weight, a.cols, c, vec_w), load_chunk(x, a.cols, c, vec_x),
                                  inverse));
    }
}

}  // namespace

void rms_norm(const RmsNormArgs &a, cudaStream_t stream) {
    if (a.rows <= 0 || a.cols <= 0 || a.ldx < a.cols || a.ld_out < a.cols)
        fail(RESET_ERR_INVALID_ARGUMENT, "rms_norm: rows ", a.rows, ", cols ", a.cols, ", ldx ", a.ldx, ", ld_out ",
             a.ld_out, " (rows and cols positive, leading dimensions >= cols)");
    require(a.x, "rms_norm: x");
    require(a.weight, "rms_norm: weight");
    require(a.out, "rms_norm: out");
    if (a.out == a.x && a.ld_out != a.ldx)
        fail(RESET_ERR_INVALID_ARGUMENT, "rms_norm: in place needs ld_out == ldx");
    const dim3 grid(static_cast<unsigned>(a.rows)), block(static_cast<unsigned>(row_threads(a.cols)));
    cuda::launch_kernel("rms_norm", row_fits_registers(a.cols) ? rms_norm_kernel<kRowSlots> : rms_norm_kernel<0>, grid,
                        block, 0, stream, a);
}

}  // namespace reset
