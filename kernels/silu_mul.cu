// silu_mul.cu — element-wise, one (piece of a row, row) per CTA; each thread
// reads its gate and up element(s) before writing, so out may alias an input
// element for element.
#include "kernels/silu_mul.h"

#include "kernels/cuda_common.cuh"
#include "kernels/dependent_launch.cuh"

namespace reset {
namespace {

constexpr int kThreads = 256;

// The CPU's expression (cpu_engine.cpp), FP32, IEEE division.
__device__ __forceinline__ float silu(float x) { return x / (1.0f + expf(-x)); }

template <bool kVector>
__global__ void __launch_bounds__(kThreads) silu_mul_kernel(const SiluMulArgs a) {
    cuda::begin_dependent_kernel();
    const int64_t row = blockIdx.y;
    const float *gate = a.gate + row * a.ld_gate;
    const float *up = a.up + row * a.ld_up;
    float *out = a.out + row * a.ld_out;
    if constexpr (kVector) {
        const int64_t i = (static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x) * 4;
        if (i >= a.cols) return;
        const float4 g = *reinterpret_cast<const float4 *>(gate + i);
        const float4 u = *reinterpret_cast<const float4 *>(up + i);
        *reinterpret_cast<float4 *>(out + i) =
            make_float4(silu(g.x) * u.x, silu(g.y) * u.y, silu(g.z) * u.z, silu(g.w) * u.w);
    } else {
        const int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
        if (i >= a.cols) return;
        out[i] = silu(gate[i]) * up[i];
    }
}

bool aligned16(const void *p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

}  // namespace

void silu_mul(const SiluMulArgs &a, cudaStream_t stream) {
    if (a.rows <= 0 || a.cols <= 0 || a.ld_gate < a.cols || a.ld_up < a.cols || a.ld_out < a.cols)
        fail(RESET_ERR_INVALID_ARGUMENT, "silu_mul: rows ", a.rows, ", cols ", a.cols, ", ld_gate ", a.ld_gate,
             ", ld_up ", a.ld_up, ", ld_out ", a.ld_out, " (positive, leading dimensions >= cols)");
    if (a.rows > 65535) fail(RESET_ERR_UNSUPPORTED, "silu_mul: ", a.rows, " rows (at most 65,535)");
    require(a.gate, "silu_mul: gate");
    require(a.up, "silu_mul: up");
    require(a.out, "silu_mul: out");
    if ((a.out == a.gate && a.ld_out != a.ld_gate) || (a.out == a.up && a.ld_out != a.ld_up))
        fail(RESET_ERR_INVALID_ARGUMENT, "silu_mul: out may alias gate or up only with the same leading dimension");
    if (reinterpret_cast<uintptr_t>(a.gate) % 4 || reinterpret_cast<uintptr_t>(a.up) % 4 ||
        reinterpret_cast<uintptr_t>(a.out) % 4)
        fail(RESET_ERR_INVALID_ARGUMENT, "silu_mul: pointers must be 4-byte aligned");
    const bool vector = a.cols % 4 == 0 && a.ld_gate % 4 == 0 && a.ld_up % 4 == 0 && a.ld_out % 4 == 0 &&
                        aligned16(a.gate) && aligned16(a.up) && aligned16(a.out);
    const int64_t per_cta = vector ? int64_t(kThreads) * 4 : int64_t(kThreads);
    const int64_t pieces = (a.cols + per_cta - 1) / per_cta;
    if (pieces > 0x7fffffff) fail(RESET_ERR_UNSUPPORTED, "silu_mul: cols ", a.cols, " is too large");
    const dim3 grid(static_cast<unsigned>(pieces), static_cast<unsigned>(a.rows));
    cuda::launch_kernel("silu_mul", vector ? silu_mul_kernel<true> : silu_mul_kernel<false>, grid, dim3(kThreads), 0,
                        stream, a);
}

}  // namespace reset
