// nvfp4_gemv.cu — y[M, N] = x[M, K] · Wᵀ for M = 1..8 with W in NVFP4
// (nvfp4_gemv.h states the contract; docs/gemv.md the design and numbers).
//
// Decoding a batch-1..8 step is a stream of the weights through the chip, so
// the kernel is built around reading each weight byte once at full bandwidth
// with few instructions per byte (the H100 issues about 10 thread
// instructions per weight byte at full bandwidth; at 4.2 the count no longer
// limits it, docs/history/gemv-sessions.md session 7):
//  - each warp owns one 16-row tile and one slice of K; per quad of 4
//    64-element supers it issues every weight load first (one coalesced
//    16-byte load per thread and super, layout in nvfp4_gemv_layout.h; one
//    8-byte scale word), then its activations as 32 contiguous bytes per
//    super straight from x (L1-resident), then computes: no staging of x, no
//    barrier before the first weight load;
//  - the loop over the quads that lie wholly inside K has no bounds checks:
//    token columns past M repeat the last token (in bounds, finite, never
//    stored), pointers advance by a fixed step, quad indices are 32-bit; the
//    one quad that crosses K (when K is not a multiple of 256) runs once
//    after the loop with the checks (270 SASS instructions per quad, was 478);
//  - the 8 codes of a thread's tensor-core A fragment sit in one 32-bit word
//    and become four FP16 pairs with 9 integer operations (or 4 native
//    conversions on sm_100a/sm_120a); each pair is multiplied by its FP16
//    block scale, so e2m1 * scale is exact in FP16;
//  - mma.m16n8k16 multiplies them with the activations (the 8 token columns
//    are the MMA's N, so M = 1..8 costs the same instructions) and
//    accumulates in FP32: no FP16 overflow, no per-block FP32 FMAs;
//  - where a launch's CTAs fit two per SM (o and down at batch 1 and the
//    Qwen3-8B shape: 256 CTAs), the registers a third CTA would take hold a
//    second quad: each warp requests quad i + 1 before the products of quad
//    i (pipelined_loop), so its weight stream does not stop for them;
//  - the quads are divided among warps by one of two plans (Plan, below):
//    local, each tile's K cut into up to 8 slices of one CTA, summed in
//    shared memory in slice order; or streamed, equal runs of quads across
//    tile boundaries for every warp of one wave, where the local plan would
//    leave a partial second wave: the last run of a cut tile to arrive sums
//    its parts from the workspace in run order (deterministic) and runs the
//    epilogue, so one launch does everything.
#include "kernels/nvfp4_gemv.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "kernels/cuda_common.cuh"
#include "kernels/dependent_launch.cuh"
#include "kernels/nvfp4_mma_decode.cuh"
#include "kernels/step_trace.cuh"
#include "kernels/claimed_work.cuh"
#include "kernels/weight_prefetch.h"
#include "kernels/row_rules.cuh"
#include "rules/w4a16.h"
#include "util/environment.h"

namespace reset {
namespace {

constexpr int kMaxWarps = 8;            // CTA size (the K slices of a tile group share a CTA)
constexpr int kMaxSlices = 8;           // K slices per tile inside one CTA
// CTAs per SM the register budget is set for, and how many supers ahead a
// warp loads its activations: compile-time knobs only for the A/B runs of
// docs/gemv.md (tests/bench/compare_variants.sh).
#ifndef RESET_NVFP4_GEMV_MIN_CTAS
#define RESET_NVFP4_GEMV_MIN_CTAS 3
#endif
#ifndef RESET_NVFP4_GEMV_X_AHEAD
#define RESET_NVFP4_GEMV_X_AHEAD 1
#endif
constexpr int kMinCtasPerSm = RESET_NVFP4_GEMV_MIN_CTAS;  // 3 = 80 registers (24 warps per SM), 4 = 64 (32 warps)
constexpr int kResidentWarpsPerSm = kMaxWarps * kMinCtasPerSm;  // the launch heuristic's one wave
// The streamed plan's arrival counters: a fixed region at the start of the
// workspace (plan_workspace_bytes), enough for a 512k-row weight.
constexpr int64_t kCounterTiles = 32768;
constexpr size_t kCounterBytes = kCounterTiles * sizeof(unsigned);
// 4: all four supers' activations are loaded with the quad's weights (32
// registers); 1: one super ahead of the products (8 registers, an L1 round
// trip per super for other warps to cover).
constexpr int kXAhead = RESET_NVFP4_GEMV_X_AHEAD;
static_assert(kXAhead == 1 || kXAhead == 4, "RESET_NVFP4_GEMV_X_AHEAD is 1 or 4");

// Which decode this binary's kernel runs, read by the host from the module
// the driver actually loaded for the device.
__device__ int g_gemv_decode = RESET_NVFP4_NATIVE_E2M1;

struct GemvParams {
    const uint4 *codes;   // quad-major records (nvfp4_gemv_layout.h), 16-byte lane words
    const uint2 *scales;  // the same records, 8-byte lane words
    int row_tiles;        // the quad counts are 32-bit (nvfp4_gemv checks that they fit)
    int k_quads;
    int64_t quad_stride;  // records between quads q and q + 1 of a tile (nvfp4_gemv_layout.h)
    int64_t tile_stride;  // records between tiles r and r + 1 of a quad
    int full_quads;       // quads whose 256 columns all lie inside K: read without checks
    int total_quads;      // row_tiles * k_quads
    int64_t cols;
    int64_t rows;
    int64_t outputs;
    const void *x;        // FP16, or FP32 when x_amax is set (the kernel's kFloatX)
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
    int max_parts;        // streamed: the partial tiles' stride in the workspace
    // The division of the quads among warps (Plan; which plan is the kernel's kStreamed).
    int slices;
    int tiles_per_cta;
    int quads_per_run;
    float *partials;      // streamed: [row_tiles][max_parts][32 lanes][4]
    unsigned *counters;   // streamed: [row_tiles]
    const float *x_amax;  // FP32 input or copy: the rows' max |x| past 32768 (Nvfp4GemvArgs::x_amax)
    float *y_amax;        // where set: the stored rows' max |y| past 32768, by atomicMax
    __half *y16;          // where set: y rounded to FP16 too (Nvfp4GemvArgs::y16)
    int64_t ld_y16;
    const float *x_fallback;  // copy mode (kCopy): the FP32 rows behind x, the FP16 copy (Nvfp4GemvArgs::x_fallback)
    int64_t ld_x_fallback;
    WeightPrefetch prefetch;  // asked of the L2 by each warp after its last quad (Nvfp4GemvArgs::prefetch)
};

// This warp's share of the next weight's prefetch, once its own quads are all
// loaded; `block` of `blocks` is the CTA's unit of the product (blockIdx.x of
// gridDim.x, or the unit nvfp4_gemv_pair's CTA claimed).
__device__ __forceinline__ void prefetch_next_weight(const GemvParams &p, int warp, int lane, int block, int blocks) {
    if (lane == 0)
        issue_weight_prefetch(p.prefetch, static_cast<unsigned>(block * kMaxWarps + warp),
                              static_cast<unsigned>(blocks * kMaxWarps));
}

// The lane's 16 activations of one super (32 contiguous bytes at x).
// `inverse` is for the FP32 overload below.
template <bool kVectorX>
__device__ __forceinline__ void load_x(const __half *x, float /*inverse*/, uint4 (&xv)[2]) {
    if constexpr (kVectorX) {
        const uint4 *v = reinterpret_cast<const uint4 *>(x);
        xv[0] = __ldg(v);
        xv[1] = __ldg(v + 1);
    } else {
        const uint32_t *w = reinterpret_cast<const uint32_t *>(x);
        xv[0] = make_uint4(__ldg(w), __ldg(w + 1), __ldg(w + 2), __ldg(w + 3));
        xv[1] = make_uint4(__ldg(w + 4), __ldg(w + 5), __ldg(w + 6), __ldg(w + 7));
    }
}

// FP32 activations not yet prepared (Nvfp4GemvArgs::x_amax): the lane's 16
// of one super (64 contiguous bytes, `v`) as the 16 FP16 values
// nvfp4_prepare_activations would have written, by the same rule
// (row_rules.cuh's w4a16_chunk: v times the exact inverse of the power-of-two
// row scale, rounded to FP16), so the products are bit for bit the same.
__device__ __forceinline__ void convert_x(const float4 (&v)[4], float inverse, uint4 (&xv)[2]) {
    uint32_t h[8];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        __half2 lo, hi;
        w4a16_chunk(v[i], inverse, &lo, &hi);
        h[2 * i] = *reinterpret_cast<const uint32_t *>(&lo);
        h[2 * i + 1] = *reinterpret_cast<const uint32_t *>(&hi);
    }
    xv[0] = make_uint4(h[0], h[1], h[2], h[3]);
    xv[1] = make_uint4(h[4], h[5], h[6], h[7]);
}

template <bool kVectorX>
__device__ __forceinline__ void load_x(const float *x, float inverse, uint4 (&xv)[2]) {
    static_assert(kVectorX, "FP32 input takes 16-byte loads only (the host checks the alignment)");
    const float4 *v = reinterpret_cast<const float4 *>(x);
    const float4 loaded[4] = {__ldg(v), __ldg(v + 1), __ldg(v + 2), __ldg(v + 3)};
    convert_x(loaded, inverse, xv);
}

// FP32 activations written earlier in the same launch (the second product of
// nvfp4_gemv_pair): ordinary loads, which the acquire of the claimed-work wait
// (kernels/claimed_work.cuh) orders after the writes.  __ldg's non-coherent path is only for data that no CTA of
// the launch writes.
struct FreshFloat {
    float value;
};

template <bool kVectorX>
__device__ __forceinline__ void load_x(const FreshFloat *x, float inverse, uint4 (&xv)[2]) {
    static_assert(kVectorX, "FP32 input takes 16-byte loads only (the host checks the alignment)");
    const float4 *v = reinterpret_cast<const float4 *>(x);
    const float4 loaded[4] = {v[0], v[1], v[2], v[3]};
    convert_x(loaded, inverse, xv);
}

__device__ __forceinline__ float silu(float v) { return v / (1.0f + __expf(-v)); }

// Returns the value stored (for y_amax, which the host allows with FP32 output only), and
// writes its FP16 copy where asked (y16, FP32 output only as well).
__device__ __forceinline__ float store_output(const GemvParams &p, int token, int64_t col, float v) {
    const int64_t y_index = token * p.ldy + col;
    if (p.output_bf16) {
        if (p.residual)
            v += __bfloat162float(static_cast<const __nv_bfloat16 *>(p.residual)[token * p.ld_residual + col]);
        static_cast<__nv_bfloat16 *>(p.y)[y_index] = __float2bfloat16_rn(v);
    } else {
        if (p.residual) v += static_cast<const float *>(p.residual)[token * p.ld_residual + col];
        static_cast<float *>(p.y)[y_index] = v;
        if (p.y16) p.y16[token * p.ld_y16 + col] = __float2half_rn(v);
    }
    return v;
}

// The row scale of an FP32-input token: nvfp4_prepare_activations' W4A16 rule on its max |x|.
__device__ __forceinline__ float input_row_scale(const GemvParams &p, int token) {
    return w4a16::fp16_row_scale(p.x_amax[token]);
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
        float row_scale = 1.0f;
        if (valid_token[c]) row_scale = p.x_amax ? input_row_scale(p, token) : p.x_row_scale ? p.x_row_scale[token] : 1.0f;
        row_factor[c] = p.out_scale * row_scale;
    }
    float stored_max[2] = {0.0f, 0.0f};  // max |y| of this lane's stores, per token (fmaxf drops NaN, as row_max)
    if (p.gate_up) {
        // Tile rows g and g+8 are gate and up of output 8*tile + g.
        const int64_t col = 8 * tile + g;
        const int64_t half = p.rows / 2;
#pragma unroll
        for (int c = 0; c < 2; ++c) {
            if (!valid_token[c] || col >= p.outputs) continue;
            float gate = acc[c] * row_factor[c];
            float up = acc[2 + c] * row_factor[c];
            if (p.bias) {
                gate += p.bias[col];
                up += p.bias[half + col];
            }
            stored_max[c] = fmaxf(stored_max[c], fabsf(store_output(p, 2 * t + c, col, silu(gate) * up)));
        }
    } else {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int64_t col = 16 * tile + g + 8 * h;
            if (col >= p.outputs) continue;
#pragma unroll
            for (int c = 0; c < 2; ++c) {
                if (!valid_token[c]) continue;
                float v = acc[2 * h + c] * row_factor[c];
                if (p.bias) v += p.bias[col];
                stored_max[c] = fmaxf(stored_max[c], fabsf(store_output(p, 2 * t + c, col, v)));
            }
        }
    }
    if (p.y_amax) {
        // The next GEMV's row maxima (Nvfp4GemvArgs::y_amax): the lanes of one
        // token (same t) first, then one atomic per token and warp, only where
        // the warp's maximum is past the FP16 row limit, the only maxima the
        // row scale depends on (one atomic per warp and row cost 1.6% of a
        // batch-8 step).  A maximum does not depend on the order, and
        // non-negative floats order as their bits, so the unsigned atomicMax
        // is exact and deterministic.
#pragma unroll
        for (int c = 0; c < 2; ++c)
#pragma unroll
            for (int offset = 4; offset < 32; offset <<= 1)
                stored_max[c] = fmaxf(stored_max[c], __shfl_xor_sync(0xffffffffu, stored_max[c], offset));
        if (g == 0)
#pragma unroll
            for (int c = 0; c < 2; ++c)
                if (valid_token[c] && stored_max[c] > w4a16::kFp16RowLimit)
                    atomicMax(reinterpret_cast<unsigned *>(p.y_amax + 2 * t + c), __float_as_uint(stored_max[c]));
    }
}

// The weights of one quad (4 supers) of a warp's tile.
struct QuadWeights {
    uint4 codes[4];
    uint2 scales;
};

// A quad inside K: codes points at the lane's word of the quad's first super
// (the next supers follow 32 words apart), scales at the lane's scale word.
__device__ __forceinline__ void load_full_quad(const uint4 *codes, const uint2 *scales, QuadWeights &w) {
#pragma unroll
    for (int u = 0; u < 4; ++u) w.codes[u] = cuda::load_stream_16(codes + 32 * u);
    w.scales = cuda::load_stream_8(scales);
}

// The products of one quad; x points at the lane's activations of its first
// super (the next supers follow 64 elements apart).  X is __half, or float
// for unprepared FP32 input (with the row scale's inverse).
template <bool kVectorX, typename X>
__device__ __forceinline__ void compute_full_quad(const QuadWeights &w, const X *x, float inverse, float (&acc)[4]) {
    if constexpr (kXAhead == 4) {
        uint4 xv[4][2];
#pragma unroll
        for (int u = 0; u < 4; ++u) load_x<kVectorX>(x + 64 * u, inverse, xv[u]);
#pragma unroll
        for (int u = 0; u < 4; ++u) {
            uint32_t sg, sg8;
            decode_scales(w.scales, u, sg, sg8);
            super_step(w.codes[u], sg, sg8, xv[u], acc);
        }
    } else {
        uint4 xv[2][2];
        load_x<kVectorX>(x, inverse, xv[0]);
#pragma unroll
        for (int u = 0; u < 4; ++u) {
            if (u < 3) load_x<kVectorX>(x + 64 * (u + 1), inverse, xv[(u + 1) & 1]);
            uint32_t sg, sg8;
            decode_scales(w.scales, u, sg, sg8);
            super_step(w.codes[u], sg, sg8, xv[u & 1], acc);
        }
    }
}

// The quad that crosses K (K not a multiple of 256): its supers past K are
// stored as zero codes (exact zeros), and activations past K read as zeros
// (K is a multiple of 16, so a lane's 16 columns are all in or all out).
template <bool kVectorX, typename X>
__device__ __forceinline__ void tail_quad(const GemvParams &p, int64_t quad, const uint4 *codes, const uint2 *scales,
                                          const X *x, float inverse, int t, float (&acc)[4]) {
    QuadWeights w;
    load_full_quad(codes, scales, w);
    uint4 xv[4][2];
#pragma unroll
    for (int u = 0; u < 4; ++u) {
        xv[u][0] = xv[u][1] = make_uint4(0, 0, 0, 0);
        if (256 * quad + 64 * u + 16 * t < p.cols) load_x<kVectorX>(x + 64 * u, inverse, xv[u]);
    }
#pragma unroll
    for (int u = 0; u < 4; ++u) {
        uint32_t sg, sg8;
        decode_scales(w.scales, u, sg, sg8);
        super_step(w.codes[u], sg, sg8, xv[u], acc);
    }
}

// The products of the quads q_first, q_first + step, ... below q_end of one
// tile; w holds quad q_first's weights when `loaded` (the first quad of a
// launch, loaded before the wait).  Every quad but the one that crosses K
// (always the tile's last) runs without checks.
// kPipelined: each quad's weights are requested before the products of the
// one before (two quads in flight per warp; 90 / 120 registers for FP16 /
// FP32 input: the instances for two CTAs per SM, pipelined_loop).  Its loop
// is not unrolled: unrolled twice it took 106 / 125 registers and 35-38% more
// instructions, and the 1k step was 0.8% slower, the 32k one 0.5% (H100,
// docs/history/cuda-engine-sessions.md session 21); unrolled four times, 2.1% slower.
// x_base / ldx: the activations (p.x and p.ldx, or in copy mode's second
// pass the FP32 rows behind the copy).
template <bool kVectorX, typename X, bool kPipelined = false>
__device__ __forceinline__ void tile_quads(const GemvParams &p, const void *x_base, int64_t ldx, int tile, int q_first,
                                           int q_end, int step, int token, float inverse, int lane, bool loaded,
                                           QuadWeights &w, float (&acc)[4]) {
    const int t = lane & 3;
    // nvfp4_gemv_code_offset / nvfp4_gemv_scale_offset in 16- and 8-byte words.
    const int64_t record = static_cast<int64_t>(q_first) * p.quad_stride + static_cast<int64_t>(tile) * p.tile_stride;
    const uint4 *codes = p.codes + record * 128 + lane;
    const uint2 *scales = p.scales + record * 32 + lane;
    const X *x = static_cast<const X *>(x_base) + token * ldx + 256 * static_cast<int64_t>(q_first) + 16 * t;
    const int64_t code_step = 128 * step * p.quad_stride, scale_step = 32 * step * p.quad_stride;
    const int x_step = 256 * step;
    const int full_end = min(q_end, p.full_quads);
    const int full = q_first < full_end ? (full_end - q_first + step - 1) / step : 0;
    if (kPipelined && full > 0 && !loaded) load_full_quad(codes, scales, w);
#pragma unroll 1
    for (int i = 0; i < full; ++i) {
        // Every weight load of a quad first (2 KB per warp), then the activations, then the products;
        // pipelined, the next quad's loads come before this one's products.
        QuadWeights next;
        if constexpr (kPipelined) {
            if (i + 1 < full) load_full_quad(codes + code_step, scales + scale_step, next);
        } else if (i != 0 || !loaded) {
            load_full_quad(codes, scales, w);
        }
        compute_full_quad<kVectorX>(w, x, inverse, acc);
        // After the last full quad nothing was loaded: w is dead then (the tail loads its own).
        if constexpr (kPipelined) w = next;
        codes += code_step;
        scales += scale_step;
        x += x_step;
    }
    const int tail = q_first + full * step;
    if (tail < q_end) tail_quad<kVectorX>(p, tail, codes, scales, x, inverse, t, acc);
}

// The quads one warp multiplies.  Quad indices are 32-bit (the host checks
// that they fit): a 64-bit division costs a ~70-instruction call, which
// delays the first weight load (measured: 0.4-0.9 us per launch).
// Local plan: slice s of its CTA's tile takes quads s, s + slices, ...: at any
// moment the slices of a tile read neighbouring 2 KB records (faster than a
// contiguous range per slice: Qwen3-8B qkv 7.75 against 8.37 us).
// Streamed plan: the run [begin, end) of the tile-major sequence
// (tile * k_quads + quad), starting at quad first_quad of first_tile.
// `block` is the CTA's unit of the product: blockIdx.x for nvfp4_gemv, the
// unit it claimed for nvfp4_gemv_pair.
struct WarpWork {
    int first_tile = 0, first_quad = 0, begin = 0, end = 0;
    bool has_work = false;
};

template <bool kStreamed>
__device__ __forceinline__ WarpWork warp_work(const GemvParams &p, int warp, int block) {
    WarpWork work;
    const int k_quads = p.k_quads;
    if constexpr (!kStreamed) {
        work.first_quad = warp % p.slices;
        work.first_tile = block * p.tiles_per_cta + warp / p.slices;
        work.has_work = work.first_tile < p.row_tiles && work.first_quad < k_quads;
    } else {
        const int run = block * kMaxWarps + warp;
        work.begin = min(run * p.quads_per_run, p.total_quads);
        work.end = min(work.begin + p.quads_per_run, p.total_quads);
        work.first_tile = static_cast<int>(static_cast<unsigned>(work.begin) / static_cast<unsigned>(k_quads));
        work.first_quad = work.begin - work.first_tile * k_quads;
        work.has_work = work.begin < work.end;
    }
    return work;
}

// The warp's first quad into w where it has one inside K; returns whether it
// did.  Weights are constant, so this may run before a wait (for the previous
// kernel, or in nvfp4_gemv_pair for the first product's units).  Asking the L2 for the next 3
// quads as well was measured slower on the H100 (Qwen3-8B gate_up 24.1 vs
// 22.4 us, qkv 8.9 vs 7.7): docs/gemv.md.
__device__ __forceinline__ bool load_first_quad(const GemvParams &p, const WarpWork &work, int lane, QuadWeights &w) {
    if (!work.has_work || work.first_quad >= p.full_quads) return false;
    const int64_t record = work.first_quad * p.quad_stride + work.first_tile * p.tile_stride;
    load_full_quad(p.codes + record * 128 + lane, p.scales + record * 32 + lane, w);
    return true;
}

// One product once its inputs are ready: the warp's quads (w holds the first
// where `loaded`), the reduction of cut tiles, the epilogue, the next weight's
// prefetch.  X is the activations' element type: __half (prepared), float
// (FP32, constant during the launch) or FreshFloat (FP32 written earlier in
// the launch).  `block` of `blocks` is the CTA's unit (warp_work).  A warp may
// return early; nothing that follows in the caller may need it before a
// __syncthreads.
// Copy mode (Nvfp4GemvArgs::x_fallback), after the products from the FP16
// copy: where a token's row does not fit FP16 unscaled (its W4A16 row scale
// is not 1), the copy is not what the preparation would have written, so the
// warp multiplies its quads again from the FP32 rows, converted as loaded
// (the x_amax rule).  Every warp decides alike (all tokens' maxima), so the
// K slices of a tile agree.  `amax` is the lane's token's row maximum, loaded
// before the products (and only used here, so that nothing waits for it
// there).  The second pass takes the plain loop: it is rare, and the
// pipelined FP32 one would raise every launch's registers (90 to 120).
__device__ __forceinline__ void unless_rows_fit(const GemvParams &p, float amax, int tile, int q_first, int q_end,
                                                int step, int token, int lane, QuadWeights &w, float (&acc)[4]) {
    const float scale = w4a16::fp16_row_scale(amax);
    if (__all_sync(0xffffffffu, scale == 1.0f)) return;
    acc[0] = acc[1] = acc[2] = acc[3] = 0.0f;
    tile_quads<true, float>(p, p.x_fallback, p.ld_x_fallback, tile, q_first, q_end, step, token, 1.0f / scale, lane,
                            false, w, acc);
}

// kCopy: x is a producer's FP16 copy, with unless_rows_fit after each tile's products.
template <bool kVectorX, bool kStreamed, typename X, bool kPipelined = false, bool kCopy = false>
__device__ __forceinline__ void gemv_product(const GemvParams &p, const WarpWork &work, int warp, int lane, bool loaded,
                                             QuadWeights &w, float4 *slice_partials, int block, int blocks) {
    const int g = lane >> 2;
    // B-fragment column g is token g; columns past M repeat the last token
    // (in bounds and finite) and their results are never stored.
    const int token = min(g, p.tokens - 1);
    const int k_quads = p.k_quads;
    // FP32 input: the inverse of the B-fragment token's row scale (exact: a power of two).
    float inverse = 1.0f;
    if constexpr (!std::is_same_v<X, __half>) inverse = 1.0f / input_row_scale(p, token);
    // Copy mode: the token's row maximum, for unless_rows_fit after the products.
    [[maybe_unused]] float copy_amax = 0.0f;
    if constexpr (kCopy) copy_amax = p.x_amax[token];

    float acc[4] = {};
    if constexpr (!kStreamed) {
        if (work.has_work) {
            tile_quads<kVectorX, X, kPipelined>(p, p.x, p.ldx, work.first_tile, work.first_quad, k_quads, p.slices,
                                                token, inverse, lane, loaded, w, acc);
            if constexpr (kCopy)
                unless_rows_fit(p, copy_amax, work.first_tile, work.first_quad, k_quads, p.slices, token, lane, w,
                                acc);
        }
        prefetch_next_weight(p, warp, lane, block, blocks);
        if (p.slices > 1) {
            // Sum the K slices of each tile in slice order (deterministic).
            slice_partials[warp * 32 + lane] = make_float4(acc[0], acc[1], acc[2], acc[3]);
            __syncthreads();
            if (warp % p.slices != 0) return;
            acc[0] = acc[1] = acc[2] = acc[3] = 0.0f;
            for (int other = 0; other < p.slices; ++other) {
                const float4 v = slice_partials[(warp + other) * 32 + lane];
                acc[0] += v.x;
                acc[1] += v.y;
                acc[2] += v.z;
                acc[3] += v.w;
            }
        }
        if (work.first_tile < p.row_tiles) epilogue(p, work.first_tile, lane, acc);
    } else {
        // Streamed plan: the run may end one tile and start others.  A tile whose
        // K lies wholly in the run is finished here; a tile cut between runs is
        // finished by the last of its runs to arrive, which adds the parts in run
        // order (deterministic) from the workspace.
        const int run = block * kMaxWarps + warp;
        int tile = work.first_tile, q0 = work.first_quad;
        for (int i = work.begin; i < work.end; ++tile, q0 = 0) {
            const int q1 = min(k_quads, q0 + (work.end - i));
            acc[0] = acc[1] = acc[2] = acc[3] = 0.0f;
            tile_quads<kVectorX, X>(p, p.x, p.ldx, tile, q0, q1, 1, token, inverse, lane, loaded && i == work.begin, w,
                                    acc);
            if constexpr (kCopy) unless_rows_fit(p, copy_amax, tile, q0, q1, 1, token, lane, w, acc);
            i += q1 - q0;
            if (q0 == 0 && q1 == k_quads) {
                epilogue(p, tile, lane, acc);
                continue;
            }
            const int first_run = static_cast<int>(static_cast<unsigned>(tile * k_quads) / static_cast<unsigned>(p.quads_per_run));
            const int part = run - first_run;
            const int parts =
                static_cast<int>(static_cast<unsigned>((tile + 1) * k_quads - 1) / static_cast<unsigned>(p.quads_per_run)) -
                first_run + 1;
            float4 *tile_partials = reinterpret_cast<float4 *>(p.partials) + tile * p.max_parts * 32 + lane;
            __stcg(tile_partials + part * 32, make_float4(acc[0], acc[1], acc[2], acc[3]));
            __threadfence();
            __syncwarp();
            unsigned arrived = 0;
            if (lane == 0) arrived = atomicAdd(p.counters + tile, 1u);
            arrived = __shfl_sync(0xffffffffu, arrived, 0);
            if (arrived != static_cast<unsigned>(parts - 1)) continue;
            __threadfence();
            acc[0] = acc[1] = acc[2] = acc[3] = 0.0f;
            for (int other = 0; other < parts; ++other) {
                const float4 v = __ldcg(tile_partials + other * 32);
                acc[0] += v.x;
                acc[1] += v.y;
                acc[2] += v.z;
                acc[3] += v.w;
            }
            if (lane == 0) p.counters[tile] = 0;  // ready for the next launch or graph replay
            epilogue(p, tile, lane, acc);
        }
        prefetch_next_weight(p, warp, lane, block, blocks);
    }
}

// kStreamed: the plan (Plan below), one instance each, so that each keeps
// its registers for the loop.  kFloatX: unprepared FP32 activations
// (Nvfp4GemvArgs::x_amax), converted to FP16 as they are loaded.
// kPipelined (local plan only): two quads in flight per warp, for launches of
// at most two CTAs per SM, whose registers allow it (pipelined_loop).
// kCopy: x is a producer's FP16 copy (Nvfp4GemvArgs::x_fallback).
template <bool kVectorX, bool kStreamed, bool kFloatX, bool kPipelined = false, bool kCopy = false>
__global__ void __launch_bounds__(32 * kMaxWarps, kPipelined ? 2 : kMinCtasPerSm)
    nvfp4_gemv_kernel(const __grid_constant__ GemvParams p) {
    static_assert(!kPipelined || !kStreamed, "the pipelined loop is the local plan's");
    static_assert(!kCopy || (kVectorX && !kFloatX), "the copy is FP16 read 16 bytes at a time");
    // Local plan: the partial tiles of the K slices, [warp][lane], summed by slice 0.
    extern __shared__ __align__(16) float4 slice_partials[];
    [[maybe_unused]] const trace::EndMark end_mark;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int block = static_cast<int>(blockIdx.x);
    const WarpWork work = warp_work<kStreamed>(p, warp, block);
    // While the previous kernel of the stream finishes (dependent_launch.cuh):
    // the first quad's weights into registers (weights are constant; the
    // activations, the partials and the counters are touched after the wait).
    QuadWeights w;
    const bool loaded = load_first_quad(p, work, lane, w);
    trace::begin_dependent_kernel(trace::kNvfp4Gemv, unsigned(p.rows), unsigned(p.cols));
    gemv_product<kVectorX, kStreamed, std::conditional_t<kFloatX, float, __half>, kPipelined, kCopy>(
        p, work, warp, lane, loaded, w, slice_partials, block, static_cast<int>(gridDim.x));
}

// nvfp4_gemv_pair: two products in one launch, the second reading what the
// first wrote (nvfp4_gemv.h).  The first reads prepared FP16 activations, the
// second FP32 ones with their row maxima (a decode step's gate_up -> down,
// behind the engine's A/B knobs since session 47).
// The first product's CTAs of nvfp4_gemv become units that the running CTAs
// claim (claimed_work.cuh has the protocol and why it cannot deadlock); CTA b
// does the second's CTA b.  A CTA waits for the first product only once it
// holds the first quad of its second-product unit, loaded after its last
// arrival: the DRAM keeps streaming across the wait, where two launches would
// drain the first kernel, place the second's CTAs and ramp up again
// (docs/history/gemv-sessions.md, sessions 13-14).
template <bool kStreamedFirst, bool kStreamedSecond>
__global__ void __launch_bounds__(32 * kMaxWarps, kMinCtasPerSm)
    nvfp4_gemv_pair_kernel(const __grid_constant__ GemvParams first, const __grid_constant__ GemvParams second,
                           int first_units, int second_units, cuda::ClaimedWork *state) {
    extern __shared__ __align__(16) float4 slice_partials[];
    __shared__ int first_claim, next_unit;  // thread 0's claims, for the whole CTA
    [[maybe_unused]] const trace::EndMark end_mark;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const unsigned ctas = gridDim.x;
    // Nothing waits for the second product, so its units are the hardware's blockIdx.x.
    const int second_unit = static_cast<int>(blockIdx.x);
    const bool has_second = second_unit < second_units;
    // Before the wait for the previous kernel, only the claim (the previous
    // launch that used the state has completed, nvfp4_gemv.h) and constant data.
    if (threadIdx.x == 0) first_claim = static_cast<int>(cuda::claim_unit(state));
    __syncthreads();
    int unit = first_claim < first_units ? first_claim : -1;
    // (A unit's division is worked out again where it is needed: kept live across the loop, it spills.)
    QuadWeights w;
    bool loaded = unit >= 0 && load_first_quad(first, warp_work<kStreamedFirst>(first, warp, unit), lane, w);
    trace::begin_dependent_kernel(trace::kNvfp4GemvPair, unsigned(first.rows), unsigned(second.cols));
    bool second_loaded = false;
    for (;;) {
        if (unit >= 0) {
            gemv_product<true, kStreamedFirst, __half>(first, warp_work<kStreamedFirst>(first, warp, unit), warp, lane,
                                                       loaded, w, slice_partials, unit, first_units);
            __syncthreads();  // every warp's writes of the unit before the arrival; slice_partials free again
            if (threadIdx.x == 0) cuda::arrive(state);
        }
        // The second unit's first quad, after the arrival (its release would
        // wait for the loads) and before the wait.
        if (!second_loaded && has_second)
            second_loaded = load_first_quad(second, warp_work<kStreamedSecond>(second, warp, second_unit), lane, w);
        if (threadIdx.x == 0)
            next_unit = cuda::claim_or_wait(state, static_cast<unsigned>(first_units), has_second);
        __syncthreads();
        unit = next_unit;
        if (unit < 0) break;
        // A unit nobody had claimed (another stream holds SMs, or CTAs came late): it reloads w.
        loaded = second_loaded = false;
    }
    if (!has_second) {
        if (threadIdx.x == 0) cuda::pass_without_wait(state, ctas);
        return;
    }
    unsigned pass_ticket = 0;
    if (threadIdx.x == 0) pass_ticket = cuda::pass_after_wait(state);
    gemv_product<true, kStreamedSecond, FreshFloat>(second, warp_work<kStreamedSecond>(second, warp, second_unit), warp,
                                                    lane, second_loaded, w, slice_partials, second_unit, second_units);
    if (threadIdx.x == 0) cuda::finish_pass(state, pass_ticket, ctas);
}

// How a launch divides the quads among warps.  Local: each tile's K is cut
// into `slices` runs, the warps of one CTA, summed in shared memory; right
// where the tiles times slices fill about one wave of resident warps.
// Streamed: every warp of one wave takes an equal run of quads_per_run quads
// of the tile-major sequence, whatever the tile boundaries, and tiles cut
// between runs are summed through the workspace; right where the local plan
// would leave a partial second wave (Qwen3-32B gate_up: 400 CTAs for 396
// slots) or too few warps.
struct Plan {
    bool local = true;
    int slices = 1;
    int tiles_per_cta = kMaxWarps;
    int64_t quads_per_run = 1;
    int64_t ctas = 1;
    int max_parts = 1;  // streamed: runs a tile can be cut into
};

// Plan choice override for the A/B runs of docs/gemv.md: RESET_NVFP4_GEMV_PLAN=local or streamed.
int forced_plan() {
    static const int forced = [] {
        const char *v = std::getenv("RESET_NVFP4_GEMV_PLAN");
        if (!v) return 0;
        return std::strcmp(v, "local") == 0 ? 1 : std::strcmp(v, "streamed") == 0 ? 2 : 0;
    }();
    return forced;
}

Plan streamed_plan(const Nvfp4GemvLayout &layout, int64_t quads_per_run) {
    Plan plan;
    plan.local = false;
    plan.quads_per_run = std::max<int64_t>(1, quads_per_run);
    const int64_t total = layout.row_tiles * layout.k_quads();
    const int64_t runs = (total + plan.quads_per_run - 1) / plan.quads_per_run;
    plan.ctas = (runs + kMaxWarps - 1) / kMaxWarps;
    plan.max_parts = static_cast<int>((layout.k_quads() + plan.quads_per_run - 1) / plan.quads_per_run + 1);
    return plan;
}

// The streamed plan make_plan weighs: runs that spread the quads over one wave of resident warps.
Plan automatic_streamed_plan(const Nvfp4GemvLayout &layout) {
    const int64_t target = static_cast<int64_t>(kResidentWarpsPerSm) * cuda::multiprocessor_count();
    return streamed_plan(layout, (layout.row_tiles * layout.k_quads() + target - 1) / target);
}

Plan make_plan(const Nvfp4GemvLayout &layout, int requested_splits) {
    const int64_t tiles = layout.row_tiles, k_quads = layout.k_quads();
    const int64_t sms = cuda::multiprocessor_count();
    const int64_t target = static_cast<int64_t>(kResidentWarpsPerSm) * sms;
    const int64_t slots = static_cast<int64_t>(kMinCtasPerSm) * sms;
    // Local: slices up to 8, as long as the warps stay within one wave (25%
    // slack keeps shapes just past a power of two on the larger split), but
    // never past one wave of CTAs: Qwen3-14B qkv (448 tiles) at 8 slices is
    // 448 CTAs for 396 slots, a second wave of 52 for a third of the time.
    Plan local;
    const int64_t slack_target = target + target / 4;
    auto ctas_at = [&](int64_t slices) { return (tiles + kMaxWarps / slices - 1) / (kMaxWarps / slices); };
    while (local.slices * 2 <= kMaxSlices && local.slices * 2 <= k_quads && tiles * local.slices * 2 <= slack_target &&
           (ctas_at(local.slices * 2) <= slots || ctas_at(local.slices) > slots))
        local.slices *= 2;
    local.tiles_per_cta = kMaxWarps / local.slices;
    local.quads_per_run = (k_quads + local.slices - 1) / local.slices;
    local.ctas = (tiles + local.tiles_per_cta - 1) / local.tiles_per_cta;
    if (tiles > kCounterTiles) return local;  // more tiles than counters: only the local plan (no workspace)
    // A forced split count cuts every tile into at least that many runs; a
    // negative one gives runs of that many quads across tiles (tests, benchmarks).
    if (requested_splits < 0) return streamed_plan(layout, -static_cast<int64_t>(requested_splits));
    if (requested_splits > 0)
        return streamed_plan(layout, (k_quads + std::min<int64_t>(requested_splits, k_quads) - 1) /
                                         std::min<int64_t>(requested_splits, k_quads));
    const Plan streamed = automatic_streamed_plan(layout);
    if (forced_plan() == 1) return local;
    if (forced_plan() == 2) return streamed;
    // Cost in quads per warp on the critical path: the local plan's waves
    // times its run; the streamed run plus, where it cuts tiles, the
    // reduction through memory (store, fence, counter, reload), about 6
    // quads' time as measured on the H100: that rule picks the faster plan
    // on every shape of the benchmark (docs/history/gemv-sessions.md, session 7).
    const int64_t local_cost = (local.ctas + slots - 1) / slots * local.quads_per_run;
    const int64_t streamed_cost = streamed.quads_per_run + (streamed.quads_per_run % k_quads != 0 ? 6 : 0);
    return local_cost <= streamed_cost ? local : streamed;
}

// Whether a launch of this plan runs the pipelined loop (tile_quads): the
// local plan at two CTAs per SM or fewer, where the registers of a third CTA
// are free for a second quad per warp.  Measured in the decode step (H100,
// Qwen3-8B shape, docs/history/cuda-engine-sessions.md session 18): o and down (256 CTAs)
// pipelined made a 1k step 2.4-2.7% faster and a 32k one 0.7%; an instance
// for three CTAs per SM on qkv and gate_up as well made it 2.6% slower than
// none (80 registers, 8-24 bytes spilled), and 2.7% slower again in session
// 21 with the loop not unrolled, which fits 80 registers without spilling:
// at three CTAs per SM the second quad in flight costs, not the spills.
// `requested` is
// Nvfp4GemvArgs::pipeline; RESET_NVFP4_GEMV_PIPELINE=0 turns the automatic
// choice off (A/B runs).
bool pipelined_loop(const Plan &plan, int requested) {
    if (!plan.local || requested < 0) return false;
    if (requested > 0) return true;
    static const bool enabled = environment_integer("RESET_NVFP4_GEMV_PIPELINE", 1, 0, 1) == 1;
    return enabled && plan.ctas <= 2 * static_cast<int64_t>(cuda::multiprocessor_count());
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

// The workspace of a streamed plan: kCounterTiles arrival counters, one per
// tile, then the partial tiles.  The counters sit at the same place for every
// weight, so one workspace serves launches on every weight of a model in
// stream order: each launch finds them zero (partials of other weights never
// land there) and leaves them zero.
size_t plan_workspace_bytes(const Nvfp4GemvLayout &layout, const Plan &plan) {
    if (plan.local) return 0;
    return kCounterBytes + static_cast<size_t>(layout.row_tiles * plan.max_parts) * 32 * sizeof(float4);
}

}  // namespace

Nvfp4GemvDecode nvfp4_gemv_device_decode() { return query_device_decode(); }

WeightPrefetch nvfp4_gemv_weight_prefetch(const Nvfp4GemvWeight &weight, size_t max_bytes) {
    WeightPrefetch w;
    const Nvfp4GemvLayout &layout = weight.layout;
    if (!weight.codes || !weight.scales || layout.code_bytes() == 0 || max_bytes == 0) return w;
    // Whole quads (the records of every tile for one quad), at least one.
    const size_t k_quads = static_cast<size_t>(layout.k_quads());
    const size_t code_quad = layout.code_bytes() / k_quads, scale_quad = layout.scale_bytes() / k_quads;
    const size_t quads = std::min(k_quads, std::max<size_t>(1, max_bytes / (code_quad + scale_quad)));
    w.first[0] = weight.codes;
    w.bytes[0] = quads * code_quad;
    // The scales are 8-byte aligned: start at the first 16-byte boundary, end on one.
    const auto s0 = reinterpret_cast<uintptr_t>(weight.scales);
    const uintptr_t begin = (s0 + 15) / 16 * 16, end = (s0 + quads * scale_quad) / 16 * 16;
    if (end > begin) {
        w.first[1] = reinterpret_cast<const void *>(begin);
        w.bytes[1] = end - begin;
    }
    return w;
}

size_t nvfp4_gemv_workspace_bytes(const Nvfp4GemvLayout &layout, int max_splits) {
    // The streamed plan whether or not the rule picks it (RESET_NVFP4_GEMV_PLAN may); none for a weight
    // with more tiles than counters, which always takes the local plan.
    if (layout.row_tiles > kCounterTiles) return 0;
    size_t bytes = plan_workspace_bytes(layout, automatic_streamed_plan(layout));
    for (int splits = 1; splits <= std::min<int64_t>(max_splits, layout.k_quads()); ++splits)
        bytes = std::max(bytes, plan_workspace_bytes(layout, make_plan(layout, splits)));
    return bytes;
}

int nvfp4_gemv_splits(const Nvfp4GemvLayout &layout, int tokens, int requested) {
    if (tokens < 1 || tokens > kNvfp4GemvMaxTokens)
        fail(RESET_ERR_UNSUPPORTED, "nvfp4 gemv: ", tokens, " tokens (supported: 1 to ", kNvfp4GemvMaxTokens, ")");
    const Plan plan = make_plan(layout, requested);
    return plan.local ? plan.slices : plan.max_parts;
}

namespace {

// The checks every launch makes, and its parameters and plan.
struct Launch {
    GemvParams params{};
    Plan plan;
    bool vector_x = false;  // 16-byte activation loads (x and its row stride allow them)
    size_t shared_bytes = 0;
};

Launch prepare_launch(const Nvfp4GemvWeight &weight, const Nvfp4GemvArgs &args) {
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
    if (args.x_fallback) {
        if (!args.x_amax || args.x_row_scale)
            fail(RESET_ERR_INVALID_ARGUMENT, "nvfp4 gemv: an FP16 copy (x_fallback) needs x_amax and no x_row_scale");
        if (reinterpret_cast<uintptr_t>(args.x) % 16 || args.ldx % 8)
            fail(RESET_ERR_INVALID_ARGUMENT, "nvfp4 gemv: an FP16 copy (x_fallback) must be 16-byte aligned with ldx "
                                             "a multiple of 8, got ldx ", args.ldx);
        if (reinterpret_cast<uintptr_t>(args.x_fallback) % 16 || args.ld_x_fallback % 4 ||
            args.ld_x_fallback < layout.cols)
            fail(RESET_ERR_INVALID_ARGUMENT, "nvfp4 gemv: x_fallback must be 16-byte aligned with ld_x_fallback a "
                                             "multiple of 4 and >= K (", layout.cols, "), got ", args.ld_x_fallback);
    } else if (args.x_amax && (reinterpret_cast<uintptr_t>(args.x) % 16 || args.ldx % 4 || args.x_row_scale)) {
        fail(RESET_ERR_INVALID_ARGUMENT, "nvfp4 gemv: FP32 input (x_amax) needs x 16-byte aligned, ldx a multiple "
                                         "of 4 and no x_row_scale (the kernel derives it), got ldx ", args.ldx);
    }
    if (args.y16 && (args.output != Nvfp4GemvOutput::kFloat32 || args.ld_y16 < layout.outputs()))
        fail(RESET_ERR_INVALID_ARGUMENT, "nvfp4 gemv: y16 needs FP32 output and ld_y16 >= outputs (",
             layout.outputs(), "), got ", args.ld_y16);
    if (args.y_amax && args.output != Nvfp4GemvOutput::kFloat32)
        fail(RESET_ERR_INVALID_ARGUMENT, "nvfp4 gemv: y_amax needs FP32 output");
    const Nvfp4GemvDecode decode = query_device_decode();
    if (layout.decode != decode)
        fail(RESET_ERR_INVALID_ARGUMENT, "nvfp4 gemv: weight repacked for the ", decode_name(layout.decode),
             " decode, but this GPU runs the ", decode_name(decode), " decode (repack with nvfp4_gemv_device_decode())");

    check_weight_prefetch(args.prefetch, "nvfp4 gemv");
    if (args.pipeline < -1 || args.pipeline > 1)
        fail(RESET_ERR_INVALID_ARGUMENT, "nvfp4 gemv: pipeline ", args.pipeline, " (0, 1 or -1)");
    Launch launch;
    launch.plan = make_plan(layout, args.splits);
    const Plan &plan = launch.plan;
    GemvParams &p = launch.params;
    p.codes = static_cast<const uint4 *>(weight.codes);
    p.scales = static_cast<const uint2 *>(weight.scales);
    if (layout.row_tiles * layout.k_quads() > 0x7fffffff)
        fail(RESET_ERR_UNSUPPORTED, "nvfp4 gemv: ", layout.rows, " x ", layout.cols, " weight is too large");
    p.row_tiles = static_cast<int>(layout.row_tiles);
    p.k_quads = static_cast<int>(layout.k_quads());
    p.quad_stride = nvfp4_gemv_quad_stride(layout);
    p.tile_stride = nvfp4_gemv_tile_stride(layout);
    p.full_quads = static_cast<int>(layout.cols / 256);
    p.total_quads = static_cast<int>(layout.row_tiles * layout.k_quads());
    p.cols = layout.cols;
    p.rows = layout.rows;
    p.outputs = layout.outputs();
    p.x = args.x;
    p.x_amax = args.x_amax;
    p.y_amax = args.y_amax;
    p.y16 = static_cast<__half *>(args.y16);
    p.ld_y16 = args.ld_y16;
    p.x_fallback = args.x_fallback;
    p.ld_x_fallback = args.ld_x_fallback;
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
    p.slices = plan.slices;
    p.tiles_per_cta = plan.tiles_per_cta;
    p.quads_per_run = static_cast<int>(plan.quads_per_run);
    p.max_parts = plan.max_parts;
    p.prefetch = args.prefetch;
    if (!plan.local) {
        const size_t needed = plan_workspace_bytes(layout, plan);
        if (!args.workspace || args.workspace_bytes < needed)
            fail(RESET_ERR_INVALID_ARGUMENT, "nvfp4 gemv: cutting K into up to ", plan.max_parts,
                 " runs per tile needs a workspace of ", needed, " bytes (nvfp4_gemv_workspace_bytes), got ",
                 args.workspace ? args.workspace_bytes : 0);
        if (reinterpret_cast<uintptr_t>(args.workspace) % 16)
            fail(RESET_ERR_INVALID_ARGUMENT, "nvfp4 gemv: workspace must be 16-byte aligned");
        p.counters = static_cast<unsigned *>(args.workspace);
        p.partials = reinterpret_cast<float *>(static_cast<uint8_t *>(args.workspace) + kCounterBytes);
    }
    if (plan.ctas > 0x7fffffff) fail(RESET_ERR_UNSUPPORTED, "nvfp4 gemv: weight too large");
    launch.shared_bytes = plan.local && plan.slices > 1 ? static_cast<size_t>(kMaxWarps) * 32 * sizeof(float4) : 0;
    launch.vector_x = reinterpret_cast<uintptr_t>(args.x) % 16 == 0 && args.ldx % 8 == 0;
    return launch;
}

// The instance a launch runs: FP32 or FP16 activations (x_amax), a producer's FP16 copy
// (x_fallback, 16-byte loads), the plan, 16-byte or 4-byte activation loads, and the pipelined
// loop, which has instances for 16-byte loads only.
using GemvKernel = void (*)(GemvParams);
GemvKernel gemv_kernel(const Launch &launch, const Nvfp4GemvArgs &args) {
    const bool local = launch.plan.local, vector_x = launch.vector_x;
    const bool float_x = args.x_amax != nullptr && args.x_fallback == nullptr;
    if (args.x_fallback) {
        if (pipelined_loop(launch.plan, args.pipeline)) return nvfp4_gemv_kernel<true, false, false, true, true>;
        return local ? nvfp4_gemv_kernel<true, false, false, false, true>
                     : nvfp4_gemv_kernel<true, true, false, false, true>;
    }
    if (vector_x && pipelined_loop(launch.plan, args.pipeline))
        return float_x ? nvfp4_gemv_kernel<true, false, true, true> : nvfp4_gemv_kernel<true, false, false, true>;
    if (float_x) return local ? nvfp4_gemv_kernel<true, false, true> : nvfp4_gemv_kernel<true, true, true>;
    if (local) return vector_x ? nvfp4_gemv_kernel<true, false, false> : nvfp4_gemv_kernel<false, false, false>;
    return vector_x ? nvfp4_gemv_kernel<true, true, false> : nvfp4_gemv_kernel<false, true, false>;
}

static_assert(sizeof(cuda::ClaimedWork) == kNvfp4GemvPairStateBytes, "nvfp4_gemv.h states the state's size");

using PairKernel = void (*)(GemvParams, GemvParams, int, int, cuda::ClaimedWork *);

PairKernel pair_kernel(bool streamed_first, bool streamed_second) {
    return streamed_first ? (streamed_second ? nvfp4_gemv_pair_kernel<true, true> : nvfp4_gemv_pair_kernel<true, false>)
                          : (streamed_second ? nvfp4_gemv_pair_kernel<false, true> : nvfp4_gemv_pair_kernel<false, false>);
}

// The one launch of a pair: the kernel for its two plans, a grid of as many
// CTAs as the larger product has units (each CTA has one second-product unit
// at most), and shared memory that serves both.
struct PairLaunch {
    PairKernel kernel;
    int64_t ctas;
    size_t shared_bytes;
};

PairLaunch pair_launch(const Launch &first, const Launch &second) {
    return {pair_kernel(!first.plan.local, !second.plan.local), std::max(first.plan.ctas, second.plan.ctas),
            std::max(first.shared_bytes, second.shared_bytes)};
}

// Why a pair cannot run as one launch (nullptr: it can).
const char *pair_refusal(const Launch &first, const Nvfp4GemvArgs &first_args, const Nvfp4GemvArgs &second_args,
                         const PairLaunch &pair) {
    if (first_args.x_fallback || second_args.x_fallback) return "a product reading an FP16 copy (x_fallback) runs alone";
    if (first_args.x_amax || !first.vector_x)
        return "the first product must read prepared FP16 activations, 16-byte aligned with ldx a multiple of 8";
    if (!second_args.x_amax) return "the second product must read FP32 activations with their row maxima (x_amax)";
    if (first_args.tokens != second_args.tokens) return "both products must have the same tokens";
    // The claim counter (claimed_work.cuh) passes the first product's units by at most about the CTAs.
    if (first.plan.ctas + 2 * pair.ctas > 0x7fffffff) return "the products have too many units";
    return nullptr;
}

}  // namespace

void nvfp4_gemv(const Nvfp4GemvWeight &weight, const Nvfp4GemvArgs &args, cudaStream_t stream) {
    const Launch launch = prepare_launch(weight, args);
    const Plan &plan = launch.plan;
    cuda::launch_kernel("nvfp4_gemv", gemv_kernel(launch, args), dim3(static_cast<unsigned>(plan.ctas)),
                        dim3(32 * kMaxWarps), launch.shared_bytes, stream, launch.params);
}

bool nvfp4_gemv_pair_runs(const Nvfp4GemvWeight &first, const Nvfp4GemvArgs &first_args,
                          const Nvfp4GemvWeight &second, const Nvfp4GemvArgs &second_args) {
    const Launch a = prepare_launch(first, first_args), b = prepare_launch(second, second_args);
    return pair_refusal(a, first_args, second_args, pair_launch(a, b)) == nullptr;
}

void nvfp4_gemv_pair(const Nvfp4GemvWeight &first, const Nvfp4GemvArgs &first_args, const Nvfp4GemvWeight &second,
                     const Nvfp4GemvArgs &second_args, void *state, cudaStream_t stream) {
    const Launch a = prepare_launch(first, first_args), b = prepare_launch(second, second_args);
    const PairLaunch pair = pair_launch(a, b);
    if (const char *why = pair_refusal(a, first_args, second_args, pair))
        fail(RESET_ERR_UNSUPPORTED, "nvfp4 gemv pair: ", why);
    require(state, "nvfp4 gemv pair: state");
    if (reinterpret_cast<uintptr_t>(state) % alignof(cuda::ClaimedWork))
        fail(RESET_ERR_INVALID_ARGUMENT, "nvfp4 gemv pair: the state must be ", alignof(cuda::ClaimedWork),
             "-byte aligned");
    // An ordinary launch (with programmatic dependent launch where the thread
    // asked for it): the claimed units need no CTA to be resident with another.
    cuda::launch_kernel("nvfp4_gemv_pair", pair.kernel, dim3(static_cast<unsigned>(pair.ctas)), dim3(32 * kMaxWarps),
                        pair.shared_bytes, stream, a.params, b.params, static_cast<int>(a.plan.ctas),
                        static_cast<int>(b.plan.ctas), static_cast<cuda::ClaimedWork *>(state));
}

}  // namespace reset
