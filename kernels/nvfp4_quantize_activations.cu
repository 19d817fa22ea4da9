// nvfp4_quantize_activations.cu — activation rows to the GEMV's FP16 input,
// W4A4 (NVFP4 quantization, nvfp4.md) or W4A16 (overflow-safe FP16); the
// header states the contract.  The per-block rule is nvfp4.h's own functions,
// so the GPU and the CPU reference produce the same codes bit for bit.  Better still, a norm or
// activation kernel that already holds the row can apply the same rule
// before writing it; this standalone launch is what the benchmark times.
//
// Two shapes, both laid out by kernels/row_rules.cuh (chunks of 4 elements,
// 16-byte loads where the row's address allows, a 16-element block on 4
// adjacent lanes), because the two modes cost differently:
//  - W4A16 (a multiply and a conversion per element): one CTA per row, the
//    thread count following the row (K = 4096: 256 threads, 12,288: 768,
//    25,600: 800 with 8 chunks each).  The whole row is requested in one burst
//    and kept in registers: one round trip for the amax, then the writes
//    (before: an amax pass and a write pass of strided scalar loads, in a grid
//    of K/256 CTAs that each read the whole row for the amax: K/256 times the
//    row from L2, 20 MB for 8 rows of 25,600).  Splitting a row over plain
//    CTAs gains nothing (each would read the whole row for the amax anyway);
//    over a thread-block cluster sharing the amax through distributed shared
//    memory it was measured (H100, 1,024 elements per CTA) and not kept: the
//    cluster barriers cost more than the row's transfer into one SM saves up
//    to K = 12,288 (2.6 vs 1.9 µs a launch in a graph) and won 0.35 µs at
//    25,600.  Rows past 32,768 elements re-read the row for the second pass.
//  - W4A4 (the E4M3/E2M1 rounding, tens of instructions per element): the
//    work is spread as before, one CTA of 256 threads per 1,024 elements of a
//    row, one chunk per thread; with a dynamic tensor scale each CTA also
//    reads the whole row for its amax, all of a thread's chunks in one burst
//    of up to 16 loads, the row's bytes from L2.
// Measured on the H100 (µs a launch, isolated under Nsight Compute with
// flushed caches / in a graph with PDL, before -> after): W4A16 K = 4096
// 3.7 -> 3.5 / 1.75 -> 1.33; 12,288 4.9 -> 3.9 / 2.8 -> 1.9; 25,600 7.1 -> 5.3
// / 4.7 -> 3.2, and 8 rows of 25,600 11.4 -> 5.4 / 11.0 -> 3.4; W4A4 dynamic
// K = 4096 4.5 -> 4.0 / 2.5 -> 2.0.
#include "kernels/nvfp4_quantize_activations.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/cuda_common.cuh"
#include "kernels/dependent_launch.cuh"
#include "kernels/row_rules.cuh"
#include "kernels/step_trace.cuh"
#include "rules/nvfp4.h"
#include "rules/w4a16.h"

namespace reset {
namespace {

constexpr int kW4a4Threads = 256;  // W4A4: one chunk per thread, 1,024 elements per CTA
constexpr int kAmaxBurst = 16;     // W4A4 dynamic: chunks in flight per thread for the row amax
constexpr int kLongSlots = 8;      // W4A16: rows of up to 8 * 4 * 1024 = 32,768 elements in registers

struct PrepareParams {
    const void *x;
    int64_t ldx;
    int64_t cols;
    float input_scale;
    __half *x16;
    int64_t ld_x16;
    float *row_scale;
    uint8_t *codes;
    uint8_t *scales;
};

// A row's 16-byte (FP32) or 8-byte (BF16) loads need its start aligned; cols
// is a multiple of 16.
template <typename In>
__device__ __forceinline__ bool row_vec(const In *row) {
    return aligned_to(row, 4 * sizeof(In));
}

// W4A16: one CTA per row.  kSlots > 0: the row in registers (row_threads(K,
// kSlots) threads); 0: any length, 1024 threads, the row read twice.
template <typename In, int kSlots>
__global__ void __launch_bounds__(kRowMaxThreads) prepare_w4a16_kernel(const __grid_constant__ PrepareParams p) {
    [[maybe_unused]] const trace::EndMark end_mark;
    trace::begin_dependent_kernel(trace::kPrepareActivations, unsigned(p.cols));
    const int64_t token = blockIdx.x;
    const In *row = static_cast<const In *>(p.x) + token * p.ldx;
    const bool vec = row_vec(row);
    __half *out = p.x16 + token * p.ld_x16;
    const bool out_vec = aligned_to(out, 8);
    if constexpr (kSlots > 0) {
        float4 v[kSlots];
        load_chunks(row, p.cols, threadIdx.x, blockDim.x, vec, v);
        float m = 0.0f;
#pragma unroll
        for (int s = 0; s < kSlots; ++s) m = abs_max(m, v[s]);
        // Power-of-two row scale: dividing by it is exact, and the GEMV's FP32
        // epilogue multiplies it back.
        const float scale = w4a16::fp16_row_scale(row_max(m)), inverse = 1.0f / scale;
#pragma unroll
        for (int s = 0; s < kSlots; ++s) {
            __half2 lo, hi;
            w4a16_chunk(v[s], inverse, &lo, &hi);
            store_chunk(out, p.cols, threadIdx.x + s * blockDim.x, out_vec, lo, hi);
        }
        if (threadIdx.x == 0) p.row_scale[token] = scale;
    } else {
        const int64_t chunks = p.cols / kRowChunk;
        float m = 0.0f;
        for (int64_t c = threadIdx.x; c < chunks; c += blockDim.x) m = abs_max(m, load_chunk(row, p.cols, c, vec));
        const float scale = w4a16::fp16_row_scale(row_max(m)), inverse = 1.0f / scale;
        for (int64_t c = threadIdx.x; c < chunks; c += blockDim.x) {
            __half2 lo, hi;
            w4a16_chunk(load_chunk(row, p.cols, c, vec), inverse, &lo, &hi);
            store_chunk(out, p.cols, c, out_vec, lo, hi);
        }
        if (threadIdx.x == 0) p.row_scale[token] = scale;
    }
}

// W4A4: grid x covers the row in kW4a4Threads-chunk pieces, y is the token.
template <typename In>
__global__ void __launch_bounds__(kW4a4Threads) prepare_w4a4_kernel(const __grid_constant__ PrepareParams p) {
    [[maybe_unused]] const trace::EndMark end_mark;
    trace::begin_dependent_kernel(trace::kPrepareActivations, unsigned(p.cols));
    const int64_t token = blockIdx.y;
    const In *row = static_cast<const In *>(p.x) + token * p.ldx;
    const bool vec = row_vec(row);
    const int64_t chunks = p.cols / kRowChunk;
    const int64_t c = int64_t(blockIdx.x) * kW4a4Threads + threadIdx.x;
    const float4 v = load_chunk(row, p.cols, c, vec);  // zeros past the row

    float tensor_scale = p.input_scale;
    if (!(tensor_scale > 0.0f)) {
        // Every chunk t, t + 256, ... of the row: kAmaxBurst loads in flight, then their maximum.
        float m = 0.0f;
        for (int64_t base = threadIdx.x; base < chunks; base += int64_t(kAmaxBurst) * kW4a4Threads) {
            float4 burst[kAmaxBurst];
            load_chunks(row, p.cols, base, kW4a4Threads, vec, burst);
#pragma unroll
            for (int i = 0; i < kAmaxBurst; ++i) m = abs_max(m, burst[i]);
        }
        tensor_scale = nvfp4::tensor_scale_from_amax(row_max(m));
    }
    // Whole warps (the row is a multiple of 16: a block's 4 lanes are inside or outside together).
    const Nvfp4Chunk q = nvfp4_quantize_chunk(v, tensor_scale);
    store_nvfp4_chunk(q, p.x16 + token * p.ld_x16, aligned_to(p.x16 + token * p.ld_x16, 8), p.codes, p.scales, token,
                      p.cols, c);
    if (c == 0) p.row_scale[token] = tensor_scale;
}

template <typename In>
void launch(const Nvfp4PrepareArgs &args, const PrepareParams &p, cudaStream_t stream) {
    const char *what = "nvfp4_prepare_activations";
    if (args.mode == Nvfp4ActivationMode::kW4A4) {
        const int64_t chunks = args.cols / kRowChunk;
        const dim3 grid(static_cast<unsigned>((chunks + kW4a4Threads - 1) / kW4a4Threads),
                        static_cast<unsigned>(args.tokens));
        cuda::launch_kernel(what, prepare_w4a4_kernel<In>, grid, dim3(kW4a4Threads), 0, stream, p);
        return;
    }
    const dim3 grid(static_cast<unsigned>(args.tokens));
    if (row_fits_registers(args.cols, kRowSlots))
        cuda::launch_kernel(what, prepare_w4a16_kernel<In, kRowSlots>, grid,
                            dim3(static_cast<unsigned>(row_threads(args.cols, kRowSlots))), 0, stream, p);
    else if (row_fits_registers(args.cols, kLongSlots))
        cuda::launch_kernel(what, prepare_w4a16_kernel<In, kLongSlots>, grid,
                            dim3(static_cast<unsigned>(row_threads(args.cols, kLongSlots))), 0, stream, p);
    else
        cuda::launch_kernel(what, prepare_w4a16_kernel<In, 0>, grid, dim3(kRowMaxThreads), 0, stream, p);
}

}  // namespace

void nvfp4_prepare_activations(const Nvfp4PrepareArgs &args, cudaStream_t stream) {
    if (args.tokens <= 0) fail(RESET_ERR_UNSUPPORTED, "nvfp4 prepare activations: ", args.tokens, " tokens");
    if (args.cols <= 0 || args.cols % nvfp4::kBlock != 0)
        fail(RESET_ERR_UNSUPPORTED, "nvfp4 prepare activations: K = ", args.cols, " is not a positive multiple of 16");
    require(args.x, "nvfp4 prepare activations: x");
    require(args.x16, "nvfp4 prepare activations: x16");
    require(args.row_scale, "nvfp4 prepare activations: row_scale");
    if (args.ldx < args.cols || args.ld_x16 < args.cols || args.ld_x16 % 2 ||
        reinterpret_cast<uintptr_t>(args.x16) % 4)
        fail(RESET_ERR_INVALID_ARGUMENT, "nvfp4 prepare activations: ldx and ld_x16 must be >= K, ld_x16 even and x16 "
                                         "4-byte aligned");
    if (args.mode != Nvfp4ActivationMode::kW4A4 && args.mode != Nvfp4ActivationMode::kW4A16)
        fail(RESET_ERR_INVALID_ARGUMENT, "nvfp4 prepare activations: unknown mode");
    if (args.input != Nvfp4ActivationInput::kFloat32 && args.input != Nvfp4ActivationInput::kBFloat16)
        fail(RESET_ERR_INVALID_ARGUMENT, "nvfp4 prepare activations: unknown input type");
    PrepareParams p{};
    p.x = args.x;
    p.ldx = args.ldx;
    p.cols = args.cols;
    p.input_scale = args.mode == Nvfp4ActivationMode::kW4A4 ? args.input_scale : 0.0f;
    p.x16 = static_cast<__half *>(args.x16);
    p.ld_x16 = args.ld_x16;
    p.row_scale = args.row_scale;
    p.codes = args.mode == Nvfp4ActivationMode::kW4A4 ? args.codes : nullptr;
    p.scales = args.mode == Nvfp4ActivationMode::kW4A4 ? args.scales : nullptr;
    if (args.input == Nvfp4ActivationInput::kBFloat16) launch<__nv_bfloat16>(args, p, stream);
    else launch<float>(args, p, stream);
}

}  // namespace reset
