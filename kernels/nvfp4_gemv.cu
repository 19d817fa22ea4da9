// nvfp4_gemv.cu — y[M, N] = x[M, K] · Wᵀ for M = 1..8 with W in NVFP4
// (nvfp4_gemv.h states the contract; docs/gemv.md the design and numbers).
//
// Decoding a batch-1..8 step is a stream of the weights through the chip, so
// the kernel is built around reading each weight byte once at full bandwidth
// while spending as few instructions per byte as possible:
//  - each warp owns a 16-row tile and walks a run of K in 64-element steps,
//    one coalesced 16-byte streaming load per thread per step (layout:
//    nvfp4_gemv_layout.h);
//  - the 8 codes of a thread's tensor-core A fragment sit in one 32-bit word
//    and become four FP16 pairs with 11 integer operations (or 4 native
//    conversions on sm_100a/sm_120a); each pair is multiplied by its FP16
//    block scale, so e2m1 * scale is exact in FP16;
//  - mma.m16n8k16 multiplies them with the activations (the 8 token columns
//    are the MMA's N, so M = 1..8 costs the same instructions) and
//    accumulates in FP32: no FP16 overflow, no per-block FP32 FMAs;
//  - small matrices split K across CTAs to fill the GPU; the last warp to
//    finish a tile sums the partial tiles in a fixed order (deterministic)
//    and runs the epilogue, so one launch does everything.
#include "kernels/nvfp4_gemv.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <array>
#include <atomic>

#include "kernels/cuda_common.cuh"

namespace reset {
namespace {

constexpr int kWarps = 4;               // 16-row tiles per CTA; they share the staged activations
constexpr int kThreads = 32 * kWarps;
constexpr int kUnroll = 4;              // 64-element steps whose loads are issued together
constexpr int kSuperBytesPerToken = 128;  // 64 FP16 activations of one token in shared memory
constexpr int kRowPadBytes = 16;        // keeps the 16-byte shared loads of 8 token rows conflict-free
constexpr int kMaxSharedBytes = 48 * 1024;  // activations staged per CTA (no opt-in needed)

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 1000 && defined(__CUDA_ARCH_FAMILY_SPECIFIC__)
#define RESET_NVFP4_NATIVE_E2M1 1
#else
#define RESET_NVFP4_NATIVE_E2M1 0
#endif

// Which decode this binary's kernel runs, read by the host from the module
// the driver actually loaded for the device.
__device__ int g_gemv_decode = RESET_NVFP4_NATIVE_E2M1;

struct GemvParams {
    const uint4 *codes;   // [row_tiles][k_supers][32] 16-byte lane words
    const uint2 *scales;  // [row_tiles][k_supers][8] 8-byte group words
    int64_t row_tiles;
    int64_t k_supers;
    int64_t cols;
    int64_t rows;
    int64_t outputs;
    const __half *x;
    int64_t ldx;
    int tokens;
    const float *x_row_scale;
    float out_scale;
    const float *bias;
    const void *residual;
    int64_t ld_residual;
    void *y;
    int64_t ldy;
    int output_bf16;
    int gate_up;
    int splits;
    int supers_per_split;
    int smem_row_stride;
    float *partials;      // [splits][row_tiles][32 lanes][4]
    unsigned *counters;   // [row_tiles]
};

// Four A-fragment registers (FP16 pairs, e2m1 * 2^-14, or exact e2m1 on the
// native path) from one 32-bit word; bit positions from nvfp4_gemv_layout.h.
__device__ __forceinline__ void decode_word(uint32_t w, uint32_t (&a)[4]) {
#if RESET_NVFP4_NATIVE_E2M1
    asm("{\n"
        ".reg .b8 b0, b1, b2, b3;\n"
        "mov.b32 {b0, b1, b2, b3}, %4;\n"
        "cvt.rn.f16x2.e2m1x2 %0, b0;\n"
        "cvt.rn.f16x2.e2m1x2 %1, b1;\n"
        "cvt.rn.f16x2.e2m1x2 %2, b2;\n"
        "cvt.rn.f16x2.e2m1x2 %3, b3;\n"
        "}"
        : "=r"(a[0]), "=r"(a[1]), "=r"(a[2]), "=r"(a[3])
        : "r"(w));
#else
    // An FP16 whose exponent's two low bits and mantissa's top bit hold the
    // E2M1 magnitude bits is exactly e2m1 * 2^-14 (code 1 lands on the FP16
    // subnormal 2^-15), so placing the bits is the whole decode.
    static_assert(kNvfp4MagnitudeBit[0] == 9 && kNvfp4SignBit[0] == 15, "layout changed: update the shifts");
    static_assert(kNvfp4MagnitudeBit[1] == 6 && kNvfp4SignBit[1] == 12, "layout changed: update the shifts");
    static_assert(kNvfp4MagnitudeBit[2] == 0 && kNvfp4SignBit[2] == 13, "layout changed: update the shifts");
    static_assert(kNvfp4MagnitudeBit[3] == 3 && kNvfp4SignBit[3] == 14, "layout changed: update the shifts");
    constexpr uint32_t kBoth = 0x8E008E00u, kMagnitude = 0x0E000E00u, kSign = 0x80008000u;
    a[0] = w & kBoth;
    a[1] = (w << 3) & kBoth;
    a[2] = ((w << 9) & kMagnitude) | ((w << 2) & kSign);
    a[3] = ((w << 6) & kMagnitude) | ((w << 1) & kSign);
#endif
}

// The FP16 block scales of rows g and g+8 for block b, each broadcast to both
// halves.  Integer decode: the 7 low E4M3 bits shifted to FP16 bit 7 give
// scale * 2^-8 exactly (subnormal scales included); one FP16 product then
// sets the power of two that makes e2m1 * scale land exactly in FP16:
// 2^8 for the integer decode (its weights carry 2^-14), 2^-6 for the native
// decode (exact weights), so both paths compute e2m1 * scale * 2^-14.
__device__ __forceinline__ void decode_scales(uint2 s, int b, uint32_t &row_g, uint32_t &row_g8) {
    const uint32_t word = b < 2 ? s.x : s.y;
    uint32_t pair = __byte_perm(word, 0u, (b & 1) ? 0x4342u : 0x4140u) << 7;
    pair = cuda::hmul2(pair, RESET_NVFP4_NATIVE_E2M1 ? 0x24002400u : 0x5C005C00u);
    row_g = __byte_perm(pair, 0u, 0x1010u);
    row_g8 = __byte_perm(pair, 0u, 0x3232u);
}

// One 64-element step of one tile: 4 blocks, 4 tensor-core products.
__device__ __forceinline__ void step(const uint4 &codes, const uint2 &scales, const uint8_t *x_smem, bool has_x,
                                     float (&acc)[4]) {
    uint4 xa = make_uint4(0, 0, 0, 0), xb = make_uint4(0, 0, 0, 0);
    if (has_x) {
        xa = *reinterpret_cast<const uint4 *>(x_smem);
        xb = *reinterpret_cast<const uint4 *>(x_smem + 16);
    }
    const uint32_t words[4] = {codes.x, codes.y, codes.z, codes.w};
    const uint32_t xw[8] = {xa.x, xa.y, xa.z, xa.w, xb.x, xb.y, xb.z, xb.w};
#pragma unroll
    for (int b = 0; b < 4; ++b) {
        uint32_t a[4];
        decode_word(words[b], a);
        uint32_t sg, sg8;
        decode_scales(scales, b, sg, sg8);
        a[0] = cuda::hmul2(a[0], sg);
        a[1] = cuda::hmul2(a[1], sg8);
        a[2] = cuda::hmul2(a[2], sg);
        a[3] = cuda::hmul2(a[3], sg8);
        cuda::mma_f16_16816(acc, a, xw[2 * b], xw[2 * b + 1]);
    }
}

__device__ __forceinline__ float silu(float v) { return v / (1.0f + __expf(-v)); }

__device__ __forceinline__ void store_output(const GemvParams &p, int token, int64_t col, float v) {
    const int64_t y_index = token * p.ldy + col;
    if (p.output_bf16) {
        if (p.residual)
            v += __bfloat162float(static_cast<const __nv_bfloat16 *>(p.residual)[token * p.ld_residual + col]);
        static_cast<__nv_bfloat16 *>(p.y)[y_index] = __float2bfloat16_rn(v);
    } else {
        if (p.residual) v += static_cast<const float *>(p.residual)[token * p.ld_residual + col];
        static_cast<float *>(p.y)[y_index] = v;
    }
}

// Scale, bias, activation, residual and store for one lane's four results:
// acc = {(row g, token 2t), (row g, token 2t+1), (row g+8, token 2t), (row g+8, token 2t+1)}.
__device__ __forceinline__ void epilogue(const GemvParams &p, int64_t tile, int lane, const float (&acc)[4]) {
    const int g = lane >> 2, t = lane & 3;
    float row_factor[2];
    bool valid_token[2];
#pragma unroll
    for (int c = 0; c < 2; ++c) {
        const int token = 2 * t + c;
        valid_token[c] = token < p.tokens;
        row_factor[c] = p.out_scale * ((valid_token[c] && p.x_row_scale) ? p.x_row_scale[token] : 1.0f);
    }
    if (p.gate_up) {
        // Tile rows g and g+8 are gate and up of output 8*tile + g.
        const int64_t col = 8 * tile + g;
        if (col >= p.outputs) return;
        const int64_t half = p.rows / 2;
#pragma unroll
        for (int c = 0; c < 2; ++c) {
            if (!valid_token[c]) continue;
            float gate = acc[c] * row_factor[c];
            float up = acc[2 + c] * row_factor[c];
            if (p.bias) {
                gate += p.bias[col];
                up += p.bias[half + col];
            }
            store_output(p, 2 * t + c, col, silu(gate) * up);
        }
        return;
    }
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        const int64_t col = 16 * tile + g + 8 * h;
        if (col >= p.outputs) continue;
#pragma unroll
        for (int c = 0; c < 2; ++c) {
            if (!valid_token[c]) continue;
            float v = acc[2 * h + c] * row_factor[c];
            if (p.bias) v += p.bias[col];
            store_output(p, 2 * t + c, col, v);
        }
    }
}

__global__ void __launch_bounds__(kThreads) nvfp4_gemv_kernel(const __grid_constant__ GemvParams p) {
    extern __shared__ __align__(16) uint8_t x_smem[];
    const int split = blockIdx.y;
    const int64_t super_begin = static_cast<int64_t>(split) * p.supers_per_split;
    const int super_count = static_cast<int>(p.k_supers - super_begin < p.supers_per_split ? p.k_supers - super_begin : p.supers_per_split);

    // Stage this split's activations, permuted so that each lane later reads
    // its B fragments (k = 2t, 2t+1, 2t+8, 2t+9 of each block) as two 16-byte
    // loads: per token row, per 64-step, per t, 4 blocks x 4 FP16.
    const int words_per_token = super_count * 32;
    for (int i = threadIdx.x; i < p.tokens * words_per_token; i += kThreads) {
        const int token = i / words_per_token;
        const int k_local = 2 * (i - token * words_per_token);
        const int64_t k = super_begin * 64 + k_local;
        uint32_t pair = 0;  // zero beyond K: the padding weights are zero codes, and 0 * 0 adds nothing
        if (k < p.cols) pair = *reinterpret_cast<const uint32_t *>(p.x + token * p.ldx + k);
        const int kk = k_local & 63, block = kk >> 4, kb = kk & 15;
        const int offset = token * p.smem_row_stride + (k_local >> 6) * kSuperBytesPerToken +
                           ((kb & 7) >> 1) * 32 + block * 8 + (kb >> 3) * 4;
        *reinterpret_cast<uint32_t *>(x_smem + offset) = pair;
    }
    __syncthreads();

    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int64_t tile = static_cast<int64_t>(blockIdx.x) * kWarps + warp;
    if (tile >= p.row_tiles) return;  // no barrier follows
    const int g = lane >> 2, t = lane & 3;
    const bool has_x = g < p.tokens;  // token columns past M multiply zeros
    const int64_t run = tile * p.k_supers + super_begin;
    const uint4 *code_ptr = p.codes + run * 32 + lane;
    const uint2 *scale_ptr = p.scales + run * 8 + g;
    const uint8_t *x_ptr = x_smem + g * p.smem_row_stride + t * 32;

    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    int s = 0;
    for (; s + kUnroll <= super_count; s += kUnroll) {
        uint4 c[kUnroll];
        uint2 sc[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
            c[u] = cuda::load_stream_16(code_ptr + (s + u) * 32);
            sc[u] = cuda::load_stream_8(scale_ptr + (s + u) * 8);
        }
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) step(c[u], sc[u], x_ptr + (s + u) * kSuperBytesPerToken, has_x, acc);
    }
    for (; s < super_count; ++s)
        step(cuda::load_stream_16(code_ptr + s * 32), cuda::load_stream_8(scale_ptr + s * 8),
             x_ptr + s * kSuperBytesPerToken, has_x, acc);

    if (p.splits > 1) {
        // Publish this split's partial tile; the last of the tile's splits to
        // arrive adds them all in split order and finishes the tile.
        float4 *mine = reinterpret_cast<float4 *>(p.partials) + (split * p.row_tiles + tile) * 32 + lane;
        __stcg(mine, make_float4(acc[0], acc[1], acc[2], acc[3]));
        __threadfence();
        __syncwarp();
        unsigned arrived = 0;
        if (lane == 0) arrived = atomicAdd(p.counters + tile, 1u);
        arrived = __shfl_sync(0xffffffffu, arrived, 0);
        if (arrived != static_cast<unsigned>(p.splits - 1)) return;
        __threadfence();
        acc[0] = acc[1] = acc[2] = acc[3] = 0.0f;
        for (int other = 0; other < p.splits; ++other) {
            const float4 v =
                __ldcg(reinterpret_cast<const float4 *>(p.partials) + (other * p.row_tiles + tile) * 32 + lane);
            acc[0] += v.x;
            acc[1] += v.y;
            acc[2] += v.z;
            acc[3] += v.w;
        }
        if (lane == 0) p.counters[tile] = 0;  // ready for the next launch or graph replay
    }
    epilogue(p, tile, lane, acc);
}

// The workspace starts with the per-tile arrival counters, at a fixed place
// whatever the split count (a launch must find them zero), then the partials.
size_t counter_bytes(const Nvfp4GemvLayout &layout) {
    return (static_cast<size_t>(layout.row_tiles) * sizeof(unsigned) + 15) / 16 * 16;
}

int smem_row_stride(int supers_per_split) { return supers_per_split * kSuperBytesPerToken + kRowPadBytes; }

// The most 64-steps one split may stage for `tokens` rows of activations.
int64_t max_supers_per_split(int tokens) {
    return std::max<int64_t>(1, (kMaxSharedBytes / tokens - kRowPadBytes) / kSuperBytesPerToken);
}

int64_t choose_splits(const Nvfp4GemvLayout &layout, int tokens, int requested) {
    const int64_t min_splits = (layout.k_supers + max_supers_per_split(tokens) - 1) / max_supers_per_split(tokens);
    int64_t splits = requested;
    if (splits <= 0) {
        // Enough CTAs for ~8 resident per multiprocessor (32 warps), but keep
        // at least 8 steps (4.5 KB of weights) per warp so the split's fixed
        // costs (staging, partial tile) stay small next to its stream.
        const int64_t row_ctas = (layout.row_tiles + kWarps - 1) / kWarps;
        const int64_t target = 8LL * cuda::multiprocessor_count();
        splits = std::min<int64_t>((target + row_ctas - 1) / row_ctas, std::max<int64_t>(1, layout.k_supers / 8));
    }
    splits = std::clamp<int64_t>(splits, min_splits, layout.k_supers);
    // Even out the steps: every split gets ceil(k_supers / splits), none empty.
    const int64_t per_split = (layout.k_supers + splits - 1) / splits;
    return (layout.k_supers + per_split - 1) / per_split;
}

Nvfp4GemvDecode query_device_decode() {
    int device = 0;
    RESET_CUDA_CHECK(cudaGetDevice(&device));
    constexpr int kMaxDevices = 64;
    static std::array<std::atomic<int>, kMaxDevices> cached{};  // 0 unknown, 1 integer, 2 native
    if (device >= 0 && device < kMaxDevices) {
        const int known = cached[device].load(std::memory_order_relaxed);
        if (known) return known == 2 ? Nvfp4GemvDecode::kNativeE2M1 : Nvfp4GemvDecode::kInteger;
    }
    int decode = 0;
    RESET_CUDA_CHECK(cudaMemcpyFromSymbol(&decode, g_gemv_decode, sizeof(decode)));
    if (device >= 0 && device < kMaxDevices) cached[device].store(decode ? 2 : 1, std::memory_order_relaxed);
    return decode ? Nvfp4GemvDecode::kNativeE2M1 : Nvfp4GemvDecode::kInteger;
}

const char *decode_name(Nvfp4GemvDecode d) {
    return d == Nvfp4GemvDecode::kNativeE2M1 ? "native-e2m1" : "integer";
}

}  // namespace

Nvfp4GemvDecode nvfp4_gemv_device_decode() { return query_device_decode(); }

size_t nvfp4_gemv_workspace_bytes(const Nvfp4GemvLayout &layout, int max_splits) {
    const int64_t splits = std::max<int64_t>(
        {static_cast<int64_t>(max_splits), choose_splits(layout, 1, 0), choose_splits(layout, kNvfp4GemvMaxTokens, 0)});
    return counter_bytes(layout) +
           static_cast<size_t>(std::min(splits, layout.k_supers) * layout.row_tiles) * 128 * sizeof(float);
}

int nvfp4_gemv_splits(const Nvfp4GemvLayout &layout, int tokens, int requested) {
    if (tokens < 1 || tokens > kNvfp4GemvMaxTokens)
        fail(RESET_ERR_UNSUPPORTED, "nvfp4 gemv: ", tokens, " tokens (supported: 1 to ", kNvfp4GemvMaxTokens, ")");
    return static_cast<int>(choose_splits(layout, tokens, requested));
}

void nvfp4_gemv(const Nvfp4GemvWeight &weight, const Nvfp4GemvArgs &args, cudaStream_t stream) {
    const Nvfp4GemvLayout &layout = weight.layout;
    const int splits = nvfp4_gemv_splits(layout, args.tokens, args.splits);
    if (layout.rows <= 0 || layout.cols <= 0 || layout.cols % 16 != 0 || layout.k_supers != (layout.cols + 63) / 64)
        fail(RESET_ERR_UNSUPPORTED, "nvfp4 gemv: malformed weight layout (", layout.rows, " x ", layout.cols, ")");
    require(weight.codes, "nvfp4 gemv: weight codes");
    require(weight.scales, "nvfp4 gemv: weight scales");
    require(args.x, "nvfp4 gemv: x");
    require(args.y, "nvfp4 gemv: y");
    if (reinterpret_cast<uintptr_t>(weight.codes) % 16 || reinterpret_cast<uintptr_t>(weight.scales) % 8)
        fail(RESET_ERR_INVALID_ARGUMENT, "nvfp4 gemv: weight codes must be 16-byte and scales 8-byte aligned");
    if (reinterpret_cast<uintptr_t>(args.x) % 4 || args.ldx % 2 || args.ldx < layout.cols)
        fail(RESET_ERR_INVALID_ARGUMENT, "nvfp4 gemv: x must be 4-byte aligned with an even ldx >= K (", layout.cols,
             "), got ldx ", args.ldx);
    if (args.ldy < layout.outputs())
        fail(RESET_ERR_INVALID_ARGUMENT, "nvfp4 gemv: ldy ", args.ldy, " < outputs ", layout.outputs());
    if (args.residual && args.ld_residual < layout.outputs())
        fail(RESET_ERR_INVALID_ARGUMENT, "nvfp4 gemv: ld_residual ", args.ld_residual, " < outputs ",
             layout.outputs());
    if (args.output != Nvfp4GemvOutput::kFloat32 && args.output != Nvfp4GemvOutput::kBFloat16)
        fail(RESET_ERR_INVALID_ARGUMENT, "nvfp4 gemv: unknown output type");
    const Nvfp4GemvDecode decode = query_device_decode();
    if (layout.decode != decode)
        fail(RESET_ERR_INVALID_ARGUMENT, "nvfp4 gemv: weight repacked for the ", decode_name(layout.decode),
             " decode, but this GPU runs the ", decode_name(decode), " decode (repack with nvfp4_gemv_device_decode())");

    const int64_t per_split = (layout.k_supers + splits - 1) / splits;
    GemvParams p{};
    p.codes = static_cast<const uint4 *>(weight.codes);
    p.scales = static_cast<const uint2 *>(weight.scales);
    p.row_tiles = layout.row_tiles;
    p.k_supers = layout.k_supers;
    p.cols = layout.cols;
    p.rows = layout.rows;
    p.outputs = layout.outputs();
    p.x = static_cast<const __half *>(args.x);
    p.ldx = args.ldx;
    p.tokens = args.tokens;
    p.x_row_scale = args.x_row_scale;
    p.out_scale = weight.tensor_scale * 16384.0f;  // undo the 2^-14 carried by every decoded weight
    p.bias = args.bias;
    p.residual = args.residual;
    p.ld_residual = args.ld_residual;
    p.y = args.y;
    p.ldy = args.ldy;
    p.output_bf16 = args.output == Nvfp4GemvOutput::kBFloat16;
    p.gate_up = layout.gate_up;
    p.splits = splits;
    p.supers_per_split = static_cast<int>(per_split);
    p.smem_row_stride = smem_row_stride(p.supers_per_split);
    if (splits > 1) {
        const size_t needed =
            counter_bytes(layout) + static_cast<size_t>(splits * layout.row_tiles) * 128 * sizeof(float);
        if (!args.workspace || args.workspace_bytes < needed)
            fail(RESET_ERR_INVALID_ARGUMENT, "nvfp4 gemv: split-K over ", splits, " needs a workspace of ", needed,
                 " bytes (nvfp4_gemv_workspace_bytes), got ", args.workspace_bytes);
        if (reinterpret_cast<uintptr_t>(args.workspace) % 16)
            fail(RESET_ERR_INVALID_ARGUMENT, "nvfp4 gemv: workspace must be 16-byte aligned");
        p.counters = static_cast<unsigned *>(args.workspace);
        p.partials = reinterpret_cast<float *>(static_cast<uint8_t *>(args.workspace) + counter_bytes(layout));
    }
    const size_t smem = static_cast<size_t>(args.tokens) * p.smem_row_stride;
    const dim3 grid(static_cast<unsigned>((layout.row_tiles + kWarps - 1) / kWarps), static_cast<unsigned>(splits));
    nvfp4_gemv_kernel<<<grid, kThreads, smem, stream>>>(p);
    RESET_CUDA_CHECK(cudaGetLastError());
}

}  // namespace reset
