// prefill_epilogue.cu — one (piece of a row, row) per CTA, rows strided over
// the grid's y dimension; each thread reads and writes its own elements only,
// so residual may alias y or out.
#include "kernels/prefill_epilogue.h"

#include "kernels/cuda_common.cuh"
#include "kernels/dependent_launch.cuh"

namespace reset {
namespace {

constexpr int kThreads = 256;

// Separate roundings (no contraction into an FMA), so the result is exactly the
// FP32 expression of the header, reproducible on the CPU.
__device__ __forceinline__ float apply(float y, float factor, float bias, float residual) {
    return __fadd_rn(__fadd_rn(__fmul_rn(y, factor), bias), residual);
}

template <bool kVector>
__global__ void __launch_bounds__(kThreads) prefill_epilogue_kernel(const PrefillEpilogueArgs a) {
    cuda::begin_dependent_kernel();
    for (int64_t row = blockIdx.y; row < a.rows; row += gridDim.y) {
        const float factor = a.row_scale ? __fmul_rn(a.scale, a.row_scale[row]) : a.scale;
        const float *y = a.y + row * a.ldy;
        float *out = a.out ? a.out + row * a.ld_out : a.y + row * a.ldy;
        const float *res = a.residual ? a.residual + row * a.ld_residual : nullptr;
        if constexpr (kVector) {
            const int64_t i = (static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x) * 4;
            if (i >= a.cols) continue;
            float4 v = *reinterpret_cast<const float4 *>(y + i);
            const float4 b = a.bias ? *reinterpret_cast<const float4 *>(a.bias + i) : make_float4(0.f, 0.f, 0.f, 0.f);
            const float4 r = res ? *reinterpret_cast<const float4 *>(res + i) : make_float4(0.f, 0.f, 0.f, 0.f);
            v.x = apply(v.x, factor, b.x, r.x);
            v.y = apply(v.y, factor, b.y, r.y);
            v.z = apply(v.z, factor, b.z, r.z);
            v.w = apply(v.w, factor, b.w, r.w);
            *reinterpret_cast<float4 *>(out + i) = v;
        } else {
            const int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
            if (i >= a.cols) continue;
            out[i] = apply(y[i], factor, a.bias ? a.bias[i] : 0.0f, res ? res[i] : 0.0f);
        }
    }
}

bool aligned16(const void *p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

}  // namespace

void prefill_epilogue(const PrefillEpilogueArgs &a, cudaStream_t stream) {
    if (a.rows <= 0 || a.cols <= 0 || a.ldy < a.cols || (a.residual && a.ld_residual < a.cols))
        fail(RESET_ERR_INVALID_ARGUMENT, "prefill_epilogue: rows ", a.rows, ", cols ", a.cols, ", ldy ", a.ldy,
             ", ld_residual ", a.ld_residual, " (positive, leading dimensions >= cols)");
    require(a.y, "prefill_epilogue: y");
    if (a.residual == a.y && a.ld_residual != a.ldy)
        fail(RESET_ERR_INVALID_ARGUMENT, "prefill_epilogue: residual == y needs ld_residual == ldy");
    if (a.out && a.ld_out < a.cols)
        fail(RESET_ERR_INVALID_ARGUMENT, "prefill_epilogue: ld_out ", a.ld_out, " < cols ", a.cols);
    if (a.out && ((a.residual == a.out && a.ld_residual != a.ld_out) || (a.out == a.y && a.ld_out != a.ldy)))
        fail(RESET_ERR_INVALID_ARGUMENT, "prefill_epilogue: an out that aliases y or residual needs its leading "
                                         "dimension");
    if (reinterpret_cast<uintptr_t>(a.y) % 4 || reinterpret_cast<uintptr_t>(a.residual) % 4 ||
        reinterpret_cast<uintptr_t>(a.bias) % 4 || reinterpret_cast<uintptr_t>(a.row_scale) % 4 ||
        reinterpret_cast<uintptr_t>(a.out) % 4)
        fail(RESET_ERR_INVALID_ARGUMENT, "prefill_epilogue: pointers must be 4-byte aligned");
    const bool vector = a.cols % 4 == 0 && a.ldy % 4 == 0 && aligned16(a.y) &&
                        (!a.residual || (a.ld_residual % 4 == 0 && aligned16(a.residual))) &&
                        (!a.bias || aligned16(a.bias)) && (!a.out || (a.ld_out % 4 == 0 && aligned16(a.out)));
    const int64_t per_cta = vector ? int64_t(kThreads) * 4 : int64_t(kThreads);
    const int64_t pieces = (a.cols + per_cta - 1) / per_cta;
    if (pieces > 0x7fffffff) fail(RESET_ERR_UNSUPPORTED, "prefill_epilogue: cols ", a.cols, " is too large");
    const dim3 grid(static_cast<unsigned>(pieces), static_cast<unsigned>(a.rows < 65535 ? a.rows : 65535));
    cuda::launch_kernel("prefill_epilogue", vector ? prefill_epilogue_kernel<true> : prefill_epilogue_kernel<false>,
                        grid, dim3(kThreads), 0, stream, a);
}

}  // namespace reset
