// rms_norm.cu — one CTA per row: a strided pass for the sum of squares, a
// block reduction, and a second pass that scales (the row is re-read from L1/
// L2: at most 8 rows of ≤ 25,600 floats per step, far below either).
#include "kernels/rms_norm.h"

#include "kernels/cuda_common.cuh"
#include "kernels/dependent_launch.cuh"
#include "kernels/row_rules.cuh"

namespace reset {
namespace {

constexpr int kThreads = kRowThreads;

__global__ void __launch_bounds__(kThreads) rms_norm_kernel(const RmsNormArgs a) {
    cuda::begin_dependent_kernel();
    const float *x = a.x + int64_t(blockIdx.x) * a.ldx;
    float *out = a.out + int64_t(blockIdx.x) * a.ld_out;
    const float inverse = row_rms_inverse(x, a.cols, a.eps);
    for (int64_t i = threadIdx.x; i < a.cols; i += kThreads) out[i] = a.weight[i] * (x[i] * inverse);
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
    cuda::launch_kernel("rms_norm", rms_norm_kernel, dim3(static_cast<unsigned>(a.rows)), dim3(kThreads), 0, stream, a);
}

}  // namespace reset
