// rms_norm_prepare.cu — one CTA per row, laid out by kernels/row_rules.cuh
// (the thread count follows the row: 256 threads for a 4096-wide row, each
// holding 4 chunks of 4 elements).  The norm weights are loaded before
// griddepcontrol.wait (constant data: that load overlaps the previous
// kernel's tail), the row in one burst of 16-byte loads after it; the row then
// stays in registers for the three steps that used to be three strided passes
// over L1/L2 (each a chain of dependent round trips): the inverse RMS (the
// same rule and order as rms_norm.cu, so the same FP32 value), amax(|y|) when
// the mode needs it, and the output y = weight ⊙ (x · inverse) quantized with
// nvfp4_quantize_activations.cu's rules (row_rules.cuh: a 16-element block is
// 4 adjacent lanes of 4 elements).  The W4A16 output divides by the power-of-two
// row scale as a multiplication by its exact inverse (row_rules.cuh).
// Rows past the registers (over 16,384 elements) re-read the row from L1/L2
// for each step, in the same order.  Measured on the H100 (Qwen3-8B hidden
// 4096, W4A16, 1 or 8 rows): 6.0 -> 4.0 µs a launch isolated under Nsight
// Compute with flushed caches, 3.3 -> 1.7 µs in a graph with PDL.
#include "kernels/rms_norm_prepare.h"

#include <cuda_fp16.h>

#include "kernels/cuda_common.cuh"
#include "kernels/dependent_launch.cuh"
#include "kernels/step_trace.cuh"
#include "kernels/row_rules.cuh"
#include "rules/nvfp4.h"
#include "rules/w4a16.h"

namespace reset {
namespace {

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
    bool place_next_early;
};

// The per-row outputs of chunk c, shared by the register and re-reading forms:
// the normed FP32 chunk (optional), then x16 (and codes/scales) in the mode.
struct RowOutput {
    const FusedParams &p;
    int64_t token;
    __half *x16;
    bool x16_vec;
    float *normed;
    bool normed_vec;
    float scale;  // W4A16: 1 / row_scale (exact); W4A4: the tensor scale

    __device__ __forceinline__ void w4a16(int64_t c, float4 y) const {
        if (normed) store_chunk(normed, p.cols, c, normed_vec, y);
        __half2 lo, hi;
        w4a16_chunk(y, scale, &lo, &hi);
        store_chunk(x16, p.cols, c, x16_vec, lo, hi);
    }
    // A whole warp calls (the block's shuffles).
    __device__ __forceinline__ void w4a4(int64_t c, float4 y) const {
        if (normed) store_chunk(normed, p.cols, c, normed_vec, y);
        const Nvfp4Chunk q = nvfp4_quantize_chunk(y, scale);
        store_nvfp4_chunk(q, x16, x16_vec, p.codes, p.scales, token, p.cols, c);
    }
};

// kSlots > 0: the row in registers (row_fits_registers); 0: any length.
template <int kSlots>
__global__ void __launch_bounds__(kRowMaxThreads) rms_norm_prepare_kernel(const __grid_constant__ FusedParams p) {
    [[maybe_unused]] const trace::EndMark end_mark;
    const int64_t token = blockIdx.x;
    const float *x = p.x + token * p.ldx;
    // cols is a multiple of 16.
    const bool vec_x = aligned_to(x, 16), vec_w = aligned_to(p.weight, 16);
    RowOutput o{p, token, p.x16 + token * p.ld_x16, false, p.normed ? p.normed + token * p.ld_normed : nullptr,
                false, 0.0f};
    o.x16_vec = aligned_to(o.x16, 8);
    o.normed_vec = o.normed && aligned_to(o.normed, 16);
    // The row amax, when the mode needs it (W4A16 always, W4A4 dynamic).
    const bool need_amax = !p.w4a4 || !(p.input_scale > 0.0f);

    float amax = 0.0f;
    if constexpr (kSlots > 0) {
        float4 w[kSlots], y[kSlots];
        load_chunks<kSlots, true>(p.weight, p.cols, threadIdx.x, blockDim.x, vec_w, w);
        trace::begin_dependent_kernel(trace::kRmsNormPrepare, unsigned(p.cols), 0, p.place_next_early);
        load_chunks(x, p.cols, threadIdx.x, blockDim.x, vec_x, y);
        const float inverse = row_rms_inverse(y, p.cols, p.eps);  // rms_norm.cu's rule
#pragma unroll
        for (int s = 0; s < kSlots; ++s) y[s] = rms_scale(w[s], y[s], inverse);  // padding stays 0
        if (need_amax) {
            float m = 0.0f;
#pragma unroll
            for (int s = 0; s < kSlots; ++s) m = abs_max(m, y[s]);
            amax = row_max(m);
        }
        if (!p.w4a4) {
            const float scale = w4a16::fp16_row_scale(amax);
            o.scale = 1.0f / scale;
#pragma unroll
            for (int s = 0; s < kSlots; ++s) o.w4a16(threadIdx.x + s * blockDim.x, y[s]);
            if (threadIdx.x == 0) p.row_scale[token] = scale;
            return;
        }
        o.scale = p.input_scale > 0.0f ? p.input_scale : nvfp4::tensor_scale_from_amax(amax);
#pragma unroll
        for (int s = 0; s < kSlots; ++s) o.w4a4(threadIdx.x + s * blockDim.x, y[s]);
        if (threadIdx.x == 0) p.row_scale[token] = o.scale;
    } else {
        trace::begin_dependent_kernel(trace::kRmsNormPrepare, unsigned(p.cols), 0, p.place_next_early);
        const float inverse = row_rms_inverse(x, p.cols, p.eps, vec_x);  // rms_norm.cu's rule
        const int64_t chunks = p.cols / kRowChunk;
        auto normed_chunk = [&](int64_t c) {
            return rms_scale(load_constant_chunk(p.weight, p.cols, c, vec_w), load_chunk(x, p.cols, c, vec_x),
                             inverse);
        };
        if (need_amax) {
            float m = 0.0f;
            for (int64_t c = threadIdx.x; c < chunks; c += blockDim.x) m = abs_max(m, normed_chunk(c));
            amax = row_max(m);
        }
        if (!p.w4a4) {
            const float scale = w4a16::fp16_row_scale(amax);
            o.scale = 1.0f / scale;
            for (int64_t c = threadIdx.x; c < chunks; c += blockDim.x) o.w4a16(c, normed_chunk(c));
            if (threadIdx.x == 0) p.row_scale[token] = scale;
            return;
        }
        o.scale = p.input_scale > 0.0f ? p.input_scale : nvfp4::tensor_scale_from_amax(amax);
        // Whole warps run each round (the bound is uniform per round), lanes past the row pass zeros.
        for (int64_t base = 0; base < chunks; base += blockDim.x) {
            const int64_t c = base + threadIdx.x;
            o.w4a4(c, c < chunks ? normed_chunk(c) : make_float4(0.0f, 0.0f, 0.0f, 0.0f));
        }
        if (threadIdx.x == 0) p.row_scale[token] = o.scale;
    }
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
    p.place_next_early = a.place_next_early;
    // rms_norm.cu's launch shape: the same threads for the same K, so the same sum of squares.
    const dim3 grid(static_cast<unsigned>(a.rows)), block(static_cast<unsigned>(row_threads(a.cols)));
    cuda::launch_kernel("rms_norm_prepare",
                        row_fits_registers(a.cols) ? rms_norm_prepare_kernel<kRowSlots> : rms_norm_prepare_kernel<0>,
                        grid, block, 0, stream, p);
}

}  // namespace reset
