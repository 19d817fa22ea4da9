// nvfp4_gemv.cu — y[M, N] = x[M, K] · Wᵀ for M = 1..8 with W in NVFP4
// (nvfp4_gemv.h states the contract; docs/gemv.md the design and numbers).
//
// Decoding a batch-1..8 step is a stream of the weights through the chip, so
// the kernel is built around reading each weight byte once at full bandwidth
// while spending as few instructions per byte as possible:
//  - each warp owns kTilesPerWarp 16-row tiles and one slice of K; per quad
//    of 4 64-element supers it issues every load first (per tile and super
//    one coalesced 16-byte weight load per thread, layout in
//    nvfp4_gemv_layout.h; one 8-byte scale word per tile; its activations as
//    32 contiguous bytes per super straight from x, L1-resident), then
//    computes: no staging of x, no barrier before the first weight load;
//  - the 8 codes of a thread's tensor-core A fragment sit in one 32-bit word
//    and become four FP16 pairs with 11 integer operations (or 4 native
//    conversions on sm_100a/sm_120a); each pair is multiplied by its FP16
//    block scale, so e2m1 * scale is exact in FP16;
//  - mma.m16n8k16 multiplies them with the activations (the 8 token columns
//    are the MMA's N, so M = 1..8 costs the same instructions) and
//    accumulates in FP32: no FP16 overflow, no per-block FP32 FMAs;
//  - small matrices split K across the warps of one CTA (summed in shared
//    memory, fixed order) and, only where that is not enough, across CTAs:
//    the last warp to finish a tile sums the partial tiles in a fixed order
//    (deterministic) and runs the epilogue, so one launch does everything.
#include "kernels/nvfp4_gemv.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <array>
#include <atomic>

#include "kernels/cuda_common.cuh"
#include "kernels/dependent_launch.cuh"

namespace reset {
namespace {

#ifndef RESET_NVFP4_GEMV_TILES_PER_WARP
#define RESET_NVFP4_GEMV_TILES_PER_WARP 1
#endif
// Tiles per warp and CTAs per SM are compile-time knobs only for the A/B
// runs of docs/gemv.md (tests/bench/compare_variants.sh).  Two tiles share
// each activation load but double the weight registers; one tile with a
// register cap of 80 (3 CTAs, 24 warps per SM) measured fastest: more warps
// and more bytes in flight per SM.
constexpr int kTilesPerWarp = RESET_NVFP4_GEMV_TILES_PER_WARP;
constexpr int kMaxWarps = 8;            // CTA size (the K slices of a tile group share a CTA)
constexpr int kMaxSlices = 8;           // K slices per tile group inside one CTA
#ifndef RESET_NVFP4_GEMV_MIN_CTAS
#define RESET_NVFP4_GEMV_MIN_CTAS 3
#endif
constexpr int kMinCtasPerSm = RESET_NVFP4_GEMV_MIN_CTAS;  // register cap: 2 CTAs = 128 registers (16 warps per SM), 3 = 80 registers (24 warps)
constexpr int kResidentWarpsPerSm = kMaxWarps * kMinCtasPerSm;  // the launch heuristic's one wave
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
    const uint2 *scales;  // [row_tiles][k_quads][32] 8-byte lane words
    int64_t row_tiles;
    int64_t k_supers;
    int64_t k_quads;
    int64_t cols;
    int64_t rows;
    int64_t outputs;
    const __half *x;
    int64_t ldx;
    int tokens;
    int x_vector;         // x and ldx allow 16-byte loads
    const float *x_row_scale;
    float out_scale;
    const float *bias;
    const void *residual;
    int64_t ld_residual;
    void *y;
    int64_t ldy;
    int output_bf16;
    int gate_up;
    int slices;           // K slices of a tile group, one warp each, in one CTA
    int groups_per_cta;   // tile groups (kTilesPerWarp tiles) per CTA
    int splits;           // K splits across CTAs (blockIdx.y)
    int quads_per_split;
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

// The FP16 block scales of rows g and g+8 for super u of a quad, each
// broadcast to both halves.  Integer decode: the 7 low E4M3 bits shifted to
// FP16 bit 7 give scale * 2^-8 exactly (subnormal scales included); one FP16
// product then sets the power of two that makes e2m1 * scale land exactly in
// FP16: 2^8 for the integer decode (its weights carry 2^-14), 2^-6 for the
// native decode (exact weights), so both paths compute e2m1 * scale * 2^-14.
__device__ __forceinline__ void decode_scales(uint2 s, int u, uint32_t &row_g, uint32_t &row_g8) {
    const uint32_t word = u < 2 ? s.x : s.y;
    uint32_t pair = __byte_perm(word, 0u, (u & 1) ? 0x4342u : 0x4140u) << 7;
    pair = cuda::hmul2(pair, RESET_NVFP4_NATIVE_E2M1 ? 0x24002400u : 0x5C005C00u);
    row_g = __byte_perm(pair, 0u, 0x1010u);
    row_g8 = __byte_perm(pair, 0u, 0x3232u);
}

// One super of one tile: 4 tensor-core products.  All of the lane's weights
// in the super share one block (docs: the k permutation), so one scale pair
// serves the 16 FP16 pairs; xw are the lane's 16 activations of the block.
__device__ __forceinline__ void super_step(const uint4 &codes, uint32_t sg, uint32_t sg8, const uint4 (&xv)[2],
                                           float (&acc)[4]) {
    const uint32_t words[4] = {codes.x, codes.y, codes.z, codes.w};
    const uint32_t xw[8] = {xv[0].x, xv[0].y, xv[0].z, xv[0].w, xv[1].x, xv[1].y, xv[1].z, xv[1].w};
#pragma unroll
    for (int b = 0; b < 4; ++b) {
        uint32_t a[4];
        decode_word(words[b], a);
        a[0] = cuda::hmul2(a[0], sg);
        a[1] = cuda::hmul2(a[1], sg8);
        a[2] = cuda::hmul2(a[2], sg);
        a[3] = cuda::hmul2(a[3], sg8);
        cuda::mma_f16_16816(acc, a, xw[2 * b], xw[2 * b + 1]);
    }
}

// The lane's 16 activations k .. k+15 (k = 64s + 16t) of token g;
// zeros past K (whose weights are zero codes: 0 * 0 adds nothing) and for
// token columns past M.
__device__ __forceinline__ void load_x(const GemvParams &p, const __half *x_row, bool has_x, int64_t k,
                                       uint4 (&xv)[2]) {
    xv[0] = xv[1] = make_uint4(0, 0, 0, 0);
    if (!has_x || k >= p.cols) return;
    if (p.x_vector) {
        const uint4 *v = reinterpret_cast<const uint4 *>(x_row + k);
        xv[0] = __ldg(v);
        xv[1] = __ldg(v + 1);
    } else {
        const uint32_t *w = reinterpret_cast<const uint32_t *>(x_row + k);
        xv[0] = make_uint4(__ldg(w), __ldg(w + 1), __ldg(w + 2), __ldg(w + 3));
        xv[1] = make_uint4(__ldg(w + 4), __ldg(w + 5), __ldg(w + 6), __ldg(w + 7));
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

// The weights of one quad (4 supers) of a warp's tiles.
template <int kTiles>
struct QuadWeights {
    uint4 codes[kTiles][4];
    uint2 scales[kTiles];
};

// Issue the weight loads of quad q (zeros where `valid` is false, past K, or
// for a tile past N: zero codes add exact zeros, and 1.0 scales keep them so).
template <int kTiles>
__device__ __forceinline__ void load_quad(const GemvParams &p, int64_t tile0, const bool (&tile_ok)[kTiles], int64_t q,
                                          bool valid, int lane, QuadWeights<kTiles> &w) {
#pragma unroll
    for (int i = 0; i < kTiles; ++i) {
        w.scales[i] = make_uint2(0x38383838u, 0x38383838u);
        if (valid && tile_ok[i]) w.scales[i] = cuda::load_stream_8(p.scales + ((tile0 + i) * p.k_quads + q) * 32 + lane);
#pragma unroll
        for (int u = 0; u < 4; ++u) {
            const int64_t s = 4 * q + u;
            w.codes[i][u] = make_uint4(0, 0, 0, 0);
            if (valid && tile_ok[i] && s < p.k_supers)
                w.codes[i][u] = cuda::load_stream_16(p.codes + ((tile0 + i) * p.k_supers + s) * 32 + lane);
        }
    }
}

template <int kTiles>
__device__ __forceinline__ void compute_quad(const QuadWeights<kTiles> &w, const uint4 (&xv)[4][2],
                                             float (&acc)[kTiles][4]) {
#pragma unroll
    for (int i = 0; i < kTiles; ++i)
#pragma unroll
        for (int u = 0; u < 4; ++u) {
            uint32_t sg, sg8;
            decode_scales(w.scales[i], u, sg, sg8);
            super_step(w.codes[i][u], sg, sg8, xv[u], acc[i]);
        }
}

__global__ void __launch_bounds__(32 * kMaxWarps, kMinCtasPerSm) nvfp4_gemv_kernel(const __grid_constant__ GemvParams p) {
    // Partial tiles of the K slices, [warp][tile of the warp][lane]: summed by slice 0.
    extern __shared__ __align__(16) float4 slice_partials[];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int slice = warp % p.slices;
    const int64_t group = static_cast<int64_t>(blockIdx.x) * p.groups_per_cta + warp / p.slices;
    const int64_t tile0 = group * kTilesPerWarp;
    const int g = lane >> 2, t = lane & 3;
    const bool has_x = g < p.tokens;  // token columns past M multiply zeros
    const int split = blockIdx.y;
    const int64_t quad_begin = static_cast<int64_t>(split) * p.quads_per_split;
    const int64_t quad_end = min(p.k_quads, quad_begin + p.quads_per_split);
    const __half *x_row = p.x + g * p.ldx;

    bool tile_ok[kTilesPerWarp];
#pragma unroll
    for (int i = 0; i < kTilesPerWarp; ++i) tile_ok[i] = tile0 + i < p.row_tiles;

    float acc[kTilesPerWarp][4] = {};
    // Slices take quads in turn, so at any moment the warps of a group read
    // neighbouring 2 KB of each tile's stream.
    const int64_t q_first = quad_begin + slice;

    // While the previous kernel of the stream finishes (dependent_launch.cuh):
    // the first quad's weights into registers (weights are constant; the
    // activations, the partials and the counters are touched after the wait).
    // Asking the L2 for the next 3 quads as well was measured slower on the
    // H100 (Qwen3-8B gate_up 24.1 vs 22.4 us, qkv 8.9 vs 7.7): docs/gemv.md.
    QuadWeights<kTilesPerWarp> cur;
    load_quad(p, tile0, tile_ok, q_first, q_first < quad_end, lane, cur);
    cuda::begin_dependent_kernel();

    for (int64_t q = q_first; q < quad_end; q += p.slices) {
        // Every load of the quad first: kTilesPerWarp * 4 weight loads (2 KB
        // per tile per warp) and the activations are in flight together.
        if (q != q_first) load_quad(p, tile0, tile_ok, q, true, lane, cur);
        uint4 xv[4][2];
#pragma unroll
        for (int u = 0; u < 4; ++u) load_x(p, x_row, has_x, 64 * (4 * q + u) + 16 * t, xv[u]);
        compute_quad(cur, xv, acc);
    }

    if (p.slices > 1) {
        // Sum the K slices of each tile group in slice order (deterministic).
#pragma unroll
        for (int i = 0; i < kTilesPerWarp; ++i)
            slice_partials[(warp * kTilesPerWarp + i) * 32 + lane] = make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
        __syncthreads();
        if (slice != 0) return;  // no barrier follows
#pragma unroll
        for (int i = 0; i < kTilesPerWarp; ++i) {
            acc[i][0] = acc[i][1] = acc[i][2] = acc[i][3] = 0.0f;
            for (int other = 0; other < p.slices; ++other) {
                const float4 v = slice_partials[((warp + other) * kTilesPerWarp + i) * 32 + lane];
                acc[i][0] += v.x;
                acc[i][1] += v.y;
                acc[i][2] += v.z;
                acc[i][3] += v.w;
            }
        }
    }
    if (!tile_ok[0]) return;

    if (p.splits > 1) {
        // Publish this split's partial tiles; the last of the group's splits
        // to arrive adds them all in split order and finishes the tiles.
#pragma unroll
        for (int i = 0; i < kTilesPerWarp; ++i)
            if (tile_ok[i])
                __stcg(reinterpret_cast<float4 *>(p.partials) + (split * p.row_tiles + tile0 + i) * 32 + lane,
                       make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]));
        __threadfence();
        __syncwarp();
        unsigned arrived = 0;
        if (lane == 0) arrived = atomicAdd(p.counters + tile0, 1u);
        arrived = __shfl_sync(0xffffffffu, arrived, 0);
        if (arrived != static_cast<unsigned>(p.splits - 1)) return;
        __threadfence();
#pragma unroll
        for (int i = 0; i < kTilesPerWarp; ++i) {
            acc[i][0] = acc[i][1] = acc[i][2] = acc[i][3] = 0.0f;
            if (!tile_ok[i]) continue;
            for (int other = 0; other < p.splits; ++other) {
                const float4 v = __ldcg(reinterpret_cast<const float4 *>(p.partials) +
                                        (other * p.row_tiles + tile0 + i) * 32 + lane);
                acc[i][0] += v.x;
                acc[i][1] += v.y;
                acc[i][2] += v.z;
                acc[i][3] += v.w;
            }
        }
        if (lane == 0) p.counters[tile0] = 0;  // ready for the next launch or graph replay
    }
#pragma unroll
    for (int i = 0; i < kTilesPerWarp; ++i)
        if (tile_ok[i]) epilogue(p, tile0 + i, lane, acc[i]);
}

// The workspace starts with the per-tile arrival counters, at a fixed place
// whatever the split count (a launch must find them zero), then the partials.
size_t counter_bytes(const Nvfp4GemvLayout &layout) {
    return (static_cast<size_t>(layout.row_tiles) * sizeof(unsigned) + 15) / 16 * 16;
}

// How a launch divides the work: tile groups of kTilesPerWarp tiles, each
// group's K cut into `slices` warps of one CTA and, only for matrices too
// small to fill the GPU that way, into `splits` CTAs.
struct Plan {
    int slices = 1;
    int groups_per_cta = 1;
    int splits = 1;
    int64_t quads_per_split = 1;
};

Plan make_plan(const Nvfp4GemvLayout &layout, int requested_splits) {
    const int64_t groups = (layout.row_tiles + kTilesPerWarp - 1) / kTilesPerWarp;
    // One wave of resident warps: more warps only queue, fewer leave bytes
    // in flight (and so bandwidth) on the table.  25% slack keeps shapes
    // just past a power of two on the larger split.
    const int64_t target = static_cast<int64_t>(kResidentWarpsPerSm) * cuda::multiprocessor_count();
    const int64_t slack_target = target + target / 4;
    int64_t splits = requested_splits;
    if (splits <= 0) {
        const int64_t slices_max = std::min<int64_t>(kMaxSlices, layout.k_quads());
        splits = std::max<int64_t>(1, std::min(target / (groups * slices_max), layout.k_quads() / slices_max));
    }
    splits = std::clamp<int64_t>(splits, 1, layout.k_quads());
    Plan plan;
    plan.quads_per_split = (layout.k_quads() + splits - 1) / splits;
    plan.splits = static_cast<int>((layout.k_quads() + plan.quads_per_split - 1) / plan.quads_per_split);
    while (plan.slices * 2 <= kMaxSlices && plan.slices * 2 <= plan.quads_per_split &&
           groups * plan.splits * plan.slices * 2 <= slack_target)
        plan.slices *= 2;
    plan.groups_per_cta = std::max(1, kMaxWarps / plan.slices);
    return plan;
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
    const int64_t splits = std::max<int64_t>(static_cast<int64_t>(max_splits), make_plan(layout, 0).splits);
    return counter_bytes(layout) +
           static_cast<size_t>(std::min(splits, layout.k_quads()) * layout.row_tiles) * 128 * sizeof(float);
}

int nvfp4_gemv_splits(const Nvfp4GemvLayout &layout, int tokens, int requested) {
    if (tokens < 1 || tokens > kNvfp4GemvMaxTokens)
        fail(RESET_ERR_UNSUPPORTED, "nvfp4 gemv: ", tokens, " tokens (supported: 1 to ", kNvfp4GemvMaxTokens, ")");
    return make_plan(layout, requested).splits;
}

void nvfp4_gemv(const Nvfp4GemvWeight &weight, const Nvfp4GemvArgs &args, cudaStream_t stream) {
    const Nvfp4GemvLayout &layout = weight.layout;
    if (args.tokens < 1 || args.tokens > kNvfp4GemvMaxTokens)
        fail(RESET_ERR_UNSUPPORTED, "nvfp4 gemv: ", args.tokens, " tokens (supported: 1 to ", kNvfp4GemvMaxTokens,
             ")");
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

    const Plan plan = make_plan(layout, args.splits);
    const int splits = plan.splits;
    GemvParams p{};
    p.codes = static_cast<const uint4 *>(weight.codes);
    p.scales = static_cast<const uint2 *>(weight.scales);
    p.row_tiles = layout.row_tiles;
    p.k_supers = layout.k_supers;
    p.k_quads = layout.k_quads();
    p.cols = layout.cols;
    p.rows = layout.rows;
    p.outputs = layout.outputs();
    p.x = static_cast<const __half *>(args.x);
    p.ldx = args.ldx;
    p.tokens = args.tokens;
    p.x_vector = reinterpret_cast<uintptr_t>(args.x) % 16 == 0 && args.ldx % 8 == 0;
    p.x_row_scale = args.x_row_scale;
    p.out_scale = weight.tensor_scale * 16384.0f;  // undo the 2^-14 carried by every decoded weight
    p.bias = args.bias;
    p.residual = args.residual;
    p.ld_residual = args.ld_residual;
    p.y = args.y;
    p.ldy = args.ldy;
    p.output_bf16 = args.output == Nvfp4GemvOutput::kBFloat16;
    p.gate_up = layout.gate_up;
    p.slices = plan.slices;
    p.groups_per_cta = plan.groups_per_cta;
    p.splits = splits;
    p.quads_per_split = static_cast<int>(plan.quads_per_split);
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
    const int warps = plan.slices * plan.groups_per_cta;
    const size_t smem = plan.slices > 1 ? static_cast<size_t>(warps) * kTilesPerWarp * 32 * sizeof(float4) : 0;
    const int64_t groups = (layout.row_tiles + kTilesPerWarp - 1) / kTilesPerWarp;
    const dim3 grid(static_cast<unsigned>((groups + plan.groups_per_cta - 1) / plan.groups_per_cta),
                    static_cast<unsigned>(splits));
    cuda::launch_kernel("nvfp4_gemv", nvfp4_gemv_kernel, grid, dim3(32 * warps), smem, stream, p);
}

}  // namespace reset
