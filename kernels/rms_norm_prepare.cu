// rms_norm_prepare.cu — one CTA of 256 threads per row.  Pass 1 is
// rms_norm.cu's inverse RMS (row_rms_inverse, kernels/row_rules.cuh), so it is
// the same FP32 value.  Pass 2 (only when needed) finds amax(|y|) over the
// normed row; pass 3 recomputes y (the same expression, so the same values)
// and quantizes it with nvfp4_quantize_activations.cu's rules (row_rules.cuh):
// element k on thread k % 256, so each 16-element block is 16 adjacent lanes.
// The row is re-read from L1/L2 (at most 100 KiB per row).
#include "kernels/rms_norm_prepare.h"

#include <cuda_fp16.h>

#include "kernels/cuda_common.cuh"
#include "kernels/dependent_launch.cuh"
#include "kernels/row_rules.cuh"
#include "rules/nvfp4.h"
#include "rules/w4a16.h"

namespace reset {
namespace {

constexpr int kThreads = kRowThreads;

struct FusedParams {
    int64_t cols;
    const float *x;
    int64_t ldx;
    const float *weight;
    float eps;
    int w4a4;
    float input_scale;
    __half *x16;
    int64_t ld_x16;
    float *row_scale;
    uint8_t *codes;
    uint8_t *scales;
    float *normed;
    int64_t ld_normed;
};

__global__ void __launch_bounds__(kThreads) rms_norm_prepare_kernel(const __grid_constant__ FusedParams p) {
    cuda::begin_dependent_kernel();
    const int token = blockIdx.x;
    const float *x = p.x + int64_t(token) * p.ldx;
    const float inverse = row_rms_inverse(x, p.cols, p.eps);  // rms_norm.cu's rule

    // The row amax, when the mode needs it (W4A16 always, W4A4 dynamic).
    const bool need_amax = !p.w4a4 || !(p.input_scale > 0.0f);
    float amax = 0.0f;
    if (need_amax) {
        float m = 0.0f;
        for (int64_t i = threadIdx.x; i < p.cols; i += kThreads) m = fmaxf(m, fabsf(p.weight[i] * (x[i] * inverse)));
        amax = row_max(m);
    }

    __half *out = p.x16 + int64_t(token) * p.ld_x16;
    float *normed = p.normed ? p.normed + int64_t(token) * p.ld_normed : nullptr;
    if (!p.w4a4) {
        const float scale = w4a16::fp16_row_scale(amax);
        for (int64_t k = threadIdx.x; k < p.cols; k += kThreads) {
            const float y = p.weight[k] * (x[k] * inverse);
            if (normed) normed[k] = y;
            out[k] = __float2half_rn(y / scale);
        }
        if (threadIdx.x == 0) p.row_scale[token] = scale;
        return;
    }

    const float tensor_scale = p.input_scale > 0.0f ? p.input_scale : nvfp4::tensor_scale_from_amax(amax);
    // K is a multiple of 16 and the loop bound is uniform per 16-lane group, so
    // whole blocks are inside or outside; the shuffles run on full warps.
    for (int64_t base = 0; base < p.cols; base += kThreads) {
        const int64_t k = base + threadIdx.x;
        const bool inside = k < p.cols;
        const float y = inside ? p.weight[k] * (x[k] * inverse) : 0.0f;
        uint8_t q = 0, scale_code = 0;
        unsigned upper = 0;
        const __half value = nvfp4_quantize_lane(y, tensor_scale, &q, &upper, &scale_code);
        if (inside) {
            if (normed) normed[k] = y;
            out[k] = value;
            if (p.codes && (k & 1) == 0)
                p.codes[int64_t(token) * (p.cols / 2) + k / 2] = static_cast<uint8_t>(q | (upper << 4));
            if (p.scales && (k & 15) == 0)
                p.scales[int64_t(token) * (p.cols / nvfp4::kBlock) + k / nvfp4::kBlock] = scale_code;
        }
    }
    if (threadIdx.x == 0) p.row_scale[token] = tensor_scale;
}

}  // namespace

void rms_norm_prepare(const RmsNormPrepareArgs &a, cudaStream_t stream) {
    if (a.rows <= 0) fail(RESET_ERR_INVALID_ARGUMENT, "rms_norm_prepare: ", a.rows, " rows");
    if (a.cols <= 0 || a.cols % nvfp4::kBlock != 0)
        fail(RESET_ERR_UNSUPPORTED, "rms_norm_prepare: K = ", a.cols, " is not a positive multiple of 16");
    require(a.x, "rms_norm_prepare: x");
    require(a.weight, "rms_norm_prepare: weight");
    require(a.x16, "rms_norm_prepare: x16");
    require(a.row_scale, "rms_norm_prepare: row_scale");
    if (a.ldx < a.cols || a.ld_x16 < a.cols || a.ld_x16 % 2 || reinterpret_cast<uintptr_t>(a.x16) % 4 ||
        (a.normed && a.ld_normed < a.cols))
        fail(RESET_ERR_INVALID_ARGUMENT, "rms_norm_prepare: ldx, ld_x16 and ld_normed must be >= K, ld_x16 even and "
                                         "x16 4-byte aligned");
    if (a.mode != Nvfp4ActivationMode::kW4A4 && a.mode != Nvfp4ActivationMode::kW4A16)
        fail(RESET_ERR_INVALID_ARGUMENT, "rms_norm_prepare: unknown mode");
    if (a.normed) {
        const auto n0 = reinterpret_cast<uintptr_t>(a.normed);
        const auto n1 = reinterpret_cast<uintptr_t>(a.normed + int64_t(a.rows - 1) * a.ld_normed + a.cols);
        const auto x0 = reinterpret_cast<uintptr_t>(a.x);
        const auto x1 = reinterpret_cast<uintptr_t>(a.x + int64_t(a.rows - 1) * a.ldx + a.cols);
        if (n0 < x1 && x0 < n1)
            fail(RESET_ERR_INVALID_ARGUMENT, "rms_norm_prepare: normed overlaps x (the row is read three times)");
    }
    FusedParams p{};
    p.cols = a.cols;
    p.x = a.x;
    p.ldx = a.ldx;
    p.weight = a.weight;
    p.eps = a.eps;
    p.w4a4 = a.mode == Nvfp4ActivationMode::kW4A4;
    p.input_scale = a.input_scale;
    p.x16 = static_cast<__half *>(a.x16);
    p.ld_x16 = a.ld_x16;
    p.row_scale = a.row_scale;
    p.codes = a.codes;
    p.scales = a.scales;
    p.normed = a.normed;
    p.ld_normed = a.ld_normed;
    cuda::launch_kernel("rms_norm_prepare", rms_norm_prepare_kernel, dim3(static_cast<unsigned>(a.rows)),
                        dim3(kThreads), 0, stream, p);
}

}  // namespace reset
