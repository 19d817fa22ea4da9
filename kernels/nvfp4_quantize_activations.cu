// nvfp4_quantize_activations.cu — activation rows to the GEMV's FP16 input,
// W4A4 (NVFP4 quantization, nvfp4.md) or W4A16 (overflow-safe FP16); the
// header states the contract.  The per-block rule is nvfp4.h's own functions,
// so the GPU and the CPU reference produce the same codes bit for bit.  Better still, a norm or
// activation kernel that already holds the row can apply the same rule
// before writing it; this standalone launch is what the benchmark times.
#include "kernels/nvfp4_quantize_activations.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/cuda_common.cuh"
#include "kernels/dependent_launch.cuh"
#include "kernels/row_rules.cuh"
#include "rules/nvfp4.h"
#include "rules/w4a16.h"

namespace reset {
namespace {

constexpr int kThreads = kRowThreads;

struct PrepareParams {
    const void *x;
    int64_t ldx;
    int64_t cols;
    int input_bf16;
    int w4a4;
    float input_scale;
    __half *x16;
    int64_t ld_x16;
    float *row_scale;
    uint8_t *codes;
    uint8_t *scales;
};

__device__ __forceinline__ float load_x(const PrepareParams &p, const void *row, int64_t k) {
    if (p.input_bf16) return __bfloat162float(static_cast<const __nv_bfloat16 *>(row)[k]);
    return static_cast<const float *>(row)[k];
}

// The largest |x| of the row, on every thread of the CTA.
__device__ float row_amax(const PrepareParams &p, const void *row) {
    float m = 0.0f;
    for (int64_t k = threadIdx.x; k < p.cols; k += kThreads) m = fmaxf(m, fabsf(load_x(p, row, k)));
    return row_max(m);
}

// Grid: x covers the row in kThreads-element pieces, one element per thread
// (loads coalesce, and each 16-element block is 16 adjacent lanes that find
// its amax with 4 shuffles); y is the token.  A CTA that needs the row's amax
// reads the whole row itself (it sits in L2), so no second launch is needed.
__global__ void __launch_bounds__(kThreads) prepare_kernel(const __grid_constant__ PrepareParams p) {
    cuda::begin_dependent_kernel();
    const int token = blockIdx.y;
    const void *row = p.input_bf16 ? static_cast<const void *>(static_cast<const __nv_bfloat16 *>(p.x) + token * p.ldx)
                                   : static_cast<const void *>(static_cast<const float *>(p.x) + token * p.ldx);
    const int64_t k = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
    const bool inside = k < p.cols;  // whole 16-lane groups are inside or outside: K is a multiple of 16
    const float x = inside ? load_x(p, row, k) : 0.0f;
    __half *out = p.x16 + token * p.ld_x16;

    if (!p.w4a4) {
        // Power-of-two row scale: dividing by it is exact, and the GEMV's FP32
        // epilogue multiplies it back.
        const float scale = w4a16::fp16_row_scale(row_amax(p, row));
        if (inside) out[k] = __float2half_rn(x / scale);
        if (k == 0) p.row_scale[token] = scale;
        return;
    }

    const float tensor_scale =
        p.input_scale > 0.0f ? p.input_scale : nvfp4::tensor_scale_from_amax(row_amax(p, row));
    uint8_t q = 0, scale_code = 0;
    unsigned upper = 0;
    const __half value = nvfp4_quantize_lane(x, tensor_scale, &q, &upper, &scale_code);
    if (inside) {
        out[k] = value;
        if (p.codes && (k & 1) == 0)
            p.codes[token * (p.cols / 2) + k / 2] = static_cast<uint8_t>(q | (upper << 4));
        if (p.scales && (k & 15) == 0) p.scales[token * (p.cols / nvfp4::kBlock) + k / nvfp4::kBlock] = scale_code;
    }
    if (k == 0) p.row_scale[token] = tensor_scale;
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
    p.input_bf16 = args.input == Nvfp4ActivationInput::kBFloat16;
    p.w4a4 = args.mode == Nvfp4ActivationMode::kW4A4;
    p.input_scale = args.input_scale;
    p.x16 = static_cast<__half *>(args.x16);
    p.ld_x16 = args.ld_x16;
    p.row_scale = args.row_scale;
    p.codes = args.codes;
    p.scales = args.scales;
    const dim3 grid(static_cast<unsigned>((args.cols + kThreads - 1) / kThreads), static_cast<unsigned>(args.tokens));
    cuda::launch_kernel("nvfp4_prepare_activations", prepare_kernel, grid, dim3(kThreads), 0, stream, p);
}

}  // namespace reset
