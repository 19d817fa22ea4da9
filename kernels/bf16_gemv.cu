// bf16_gemv.cu — BF16-weight GEMV for 1..8 tokens; bf16_gemv.h states the
// contract and the design.  Two kernels:
//  - the FP32 path (1 token, or Bf16GemvArgs::tensor_cores false): per warp
//    4 rows (kRows), each lane 8 columns (one 16-byte load per row) per step,
//    two steps' loads issued before their products; x read from shared memory
//    as two float4 per token per step (a warp reads 1 KiB contiguous:
//    conflict-free), shared by the 4 rows;
//  - 2..8 tokens (the tensor-core path, bf16_gemv_mma_kernel below).
#include "kernels/bf16_gemv.h"

#include <cuda_bf16.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <limits>
#include <map>
#include <mutex>
#include <tuple>
#include <utility>

#include "kernels/cuda_common.cuh"
#include "kernels/dependent_launch.cuh"
#include "kernels/step_trace.cuh"
#include "util/environment.h"

namespace reset {
namespace {

constexpr int kThreads = 512;
constexpr int kWarps = kThreads / 32;
constexpr int kRows = 4;                              // rows per warp
constexpr int64_t kMaxXBytes = 160 * 1024;            // largest x staging buffer
constexpr int kMaxDevices = 64;
// The weights' L2 policy: the default.  Evict-first made the Qwen3-8B BF16 step 6% slower on the
// H100 (7.36 against 6.94 ms, docs/history/cuda-engine-sessions.md, session 12; cause not profiled).
constexpr cuda::L2Priority kWeightL2 = cuda::L2Priority::kNormal;

// What both paths' kernels take (the tensor-core path's MmaParams is this).
struct GemvOperands {
    const float *x;
    int64_t ldx;
    const uint16_t *w;
    int64_t ldw;
    int64_t rows;
    int64_t cols;
    const float *bias;
    const float *residual;
    int64_t ld_residual;
    float *y;
    int64_t ldy;
    int k_slices;        // warps sharing one row quad (tensor cores: one tile), splitting K
    int64_t groups;      // row groups of kWarps / k_slices * kRows rows (tensor cores: of kMmaWarps / k_slices tiles)
    int x_vector;        // float4 staging (tensor cores: 16-byte loads of x) allowed
};

struct GemvParams : GemvOperands {
    int64_t k_tile;      // columns of x staged at a time (== cols: staged once)
};

// Copy x[:, k0 : k0 + kn) into xs[m][0 : kn) (row stride k_tile).
template <int M>
__device__ __forceinline__ void stage_x(const GemvParams &p, float *xs, int64_t k0, int kn) {
    if (p.x_vector) {
        const int quads = kn / 4;
        for (int i = threadIdx.x; i < M * quads; i += kThreads) {
            const int m = i / quads, q = i - m * quads;
            const float4 v = __ldg(reinterpret_cast<const float4 *>(p.x + m * p.ldx + k0) + q);
            reinterpret_cast<float4 *>(xs + m * p.k_tile)[q] = v;
        }
    } else {
        for (int i = threadIdx.x; i < M * kn; i += kThreads) {
            const int m = i / kn, k = i - m * kn;
            xs[m * p.k_tile + k] = __ldg(p.x + m * p.ldx + k0 + k);
        }
    }
}

// acc[r][m] += dot(w[r] (8 BF16), xs[m][8 columns at xp]).
template <int M>
__device__ __forceinline__ void accumulate(float (&acc)[kRows][M], const uint4 (&w)[kRows], const float *xp,
                                           int64_t k_tile) {
    float wf[kRows][8];
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
        const uint32_t u[4] = {w[r].x, w[r].y, w[r].z, w[r].w};
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            wf[r][2 * j] = __uint_as_float(u[j] << 16);
            wf[r][2 * j + 1] = __uint_as_float(u[j] & 0xffff0000u);
        }
    }
#pragma unroll
    for (int m = 0; m < M; ++m) {
        const float4 a = *reinterpret_cast<const float4 *>(xp + m * k_tile);
        const float4 b = *reinterpret_cast<const float4 *>(xp + m * k_tile + 4);
        const float xv[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
#pragma unroll
        for (int r = 0; r < kRows; ++r)
#pragma unroll
            for (int e = 0; e < 8; ++e) acc[r][m] = fmaf(wf[r][e], xv[e], acc[r][m]);
    }
}

template <int M>
__global__ void __launch_bounds__(kThreads, 1) bf16_gemv_kernel(const __grid_constant__ GemvParams p) {
    [[maybe_unused]] const trace::EndMark end_mark;
    trace::begin_dependent_kernel(trace::kBf16Gemv);
    extern __shared__ float4 xs_storage[];
    float *xs = reinterpret_cast<float *>(xs_storage);
    __shared__ float partial[kWarps][kRows * M];

    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int slice = warp % p.k_slices;
    const int row_warp = warp / p.k_slices;
    const int rows_per_group = (kWarps / p.k_slices) * kRows;
    const bool whole = p.k_tile >= p.cols;
    const int step = 32 * p.k_slices;  // chunks (of 8 columns) between a lane's steps

    if (whole) {
        stage_x<M>(p, xs, 0, static_cast<int>(p.cols));
        __syncthreads();
    }
    for (int64_t group = blockIdx.x; group < p.groups; group += gridDim.x) {
        const int64_t row0 = group * rows_per_group + row_warp * kRows;
        const uint16_t *wrow[kRows];
        bool valid[kRows];
#pragma unroll
        for (int r = 0; r < kRows; ++r) {
            valid[r] = row0 + r < p.rows;
            wrow[r] = p.w + (valid[r] ? row0 + r : 0) * p.ldw;
        }
        float acc[kRows][M];
#pragma unroll
        for (int r = 0; r < kRows; ++r)
#pragma unroll
            for (int m = 0; m < M; ++m) acc[r][m] = 0.0f;

        for (int64_t k0 = 0; k0 < p.cols; k0 += p.k_tile) {
            const int kn = static_cast<int>(min(p.k_tile, p.cols - k0));
            if (!whole) {
                __syncthreads();  // every warp is done with the previous tile
                stage_x<M>(p, xs, k0, kn);
                __syncthreads();
            }
            const int chunks = kn / 8;
            for (int c = slice * 32 + lane; c < chunks; c += 2 * step) {
                const int c1 = c + step;
                const bool has1 = c1 < chunks;
                uint4 w0[kRows], w1[kRows];
#pragma unroll
                for (int r = 0; r < kRows; ++r) {
                    w0[r] = valid[r] ? cuda::load_stream_16<kWeightL2>(wrow[r] + k0 + 8 * c) : make_uint4(0, 0, 0, 0);
                    w1[r] = valid[r] && has1 ? cuda::load_stream_16<kWeightL2>(wrow[r] + k0 + 8 * c1)
                                             : make_uint4(0, 0, 0, 0);
                }
                accumulate<M>(acc, w0, xs + 8 * c, p.k_tile);
                if (has1) accumulate<M>(acc, w1, xs + 8 * c1, p.k_tile);
            }
        }

        // Sum each accumulator over the warp's lanes; lane r * M + m keeps (r, m).
        float mine = 0.0f;
#pragma unroll
        for (int r = 0; r < kRows; ++r)
#pragma unroll
            for (int m = 0; m < M; ++m) {
                float v = acc[r][m];
#pragma unroll
                for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
                if (lane == r * M + m) mine = v;
            }
        int out_index = lane;   // (r, m) = (index / M, index % M)
        int64_t out_row0 = row0;
        bool writer = lane < kRows * M;
        if (p.k_slices > 1) {
            if (lane < kRows * M) partial[warp][lane] = mine;
            __syncthreads();
            // Thread t sums (row warp t / (kRows*M), index t % (kRows*M)) over the slices, in slice order.
            const int t = threadIdx.x;
            const int row_warps = kWarps / p.k_slices;
            writer = t < row_warps * kRows * M;
            if (writer) {
                const int rw = t / (kRows * M);
                out_index = t - rw * (kRows * M);
                out_row0 = group * rows_per_group + rw * kRows;
                float s = 0.0f;
                for (int q = 0; q < p.k_slices; ++q) s += partial[rw * p.k_slices + q][out_index];
                mine = s;
            }
        }
        if (writer) {
            const int r = out_index / M, m = out_index - r * M;
            const int64_t n = out_row0 + r;
            if (n < p.rows) {
                float v = mine;
                if (p.bias) v += p.bias[n];
                if (p.residual) v += p.residual[m * p.ld_residual + n];
                p.y[m * p.ldy + n] = v;
            }
        }
        if (p.k_slices > 1) __syncthreads();  // partial[] is rewritten by the next group
    }
}

// ---------------------------------------------------------------------------
// The tensor-core path (2..8 tokens)
// ---------------------------------------------------------------------------
//
// The FP32 path above spends 8·M FMAs per 16 weight bytes a lane loads: from 2 tokens on it is
// bound by them, not by the weights' bytes (the BF16 mode's batch-8 step is 1.7× its batch-1
// step on the H100, 1.9× on the H200, sessions 23 and 46).  Here the products run on the tensor
// cores without giving up FP32 inputs: each x is split into three BF16 values whose sum is
// exactly x (split_pair), each part times a BF16 weight is exact in FP32, and mma.m16n8k16
// sums them in FP32.
//
// Per warp one 16-row tile.  A 32-column step: lane 4g + t loads 16 bytes (columns 8t..8t+7)
// of the tile's rows g and g + 8, which are the A fragments of two MMAs under a permutation of
// k that B shares: MMA j's k = {2t, 2t + 1, 2t + 8, 2t + 9} are the step's columns
// 8t + 4j + {0, 1, 2, 3}.  Its B fragments are token g's same 8 columns, read as FP32 through
// the L1 (__ldg: every warp of the SM reads the same x) and split in registers.  The MMA's 8
// columns are the tokens; past M they repeat the last token (in bounds, never stored).  The
// warps of a CTA split K among them (k_slices) where the tiles alone would leave SMs idle,
// summed in slice order through shared memory.  (A first version staged x's parts in shared
// memory a K tile at a time: the staging, repeated by every CTA, cost more than the products,
// 469 µs for the lm_head at 8 tokens; session 46.)
//
// How the weights are read (session 49, H200, the lm_head at 8 tokens alone, µs):
//  - a slice takes neighbouring pairs of steps (steps 2j and 2j + 1 for j = slice, slice +
//    k_slices, ...), so the two loads a lane keeps in flight per row are one 128-byte line's
//    halves and a warp asks for whole lines of its 16 rows (alternate steps: 351.5 → 337.0);
//  - one CTA per group of tiles, placed by the hardware in launch order, rather than one
//    resident wave of CTAs each walking every wave-th group: the CTAs running at once read
//    neighbouring rows, and a CTA that finds no free slot at first (another kernel's CTAs
//    still resident) delays one group, not a wave-th of the weight (351.5 → 321.3; both
//    315.8, 3.94 TB/s, the FP32 path 408 at 8 tokens and 302 at 1-2).  In the step a
//    wave's last CTAs ran 232 µs behind its median (session 47);
//  - where a shape's grid fits one wave at two CTAs per SM (Qwen3-8B's o and down: 256 CTAs),
//    an instance for two CTAs per SM keeps two pairs of steps in flight instead of one
//    (110 registers against 63): those shapes were bound by the bytes a warp keeps in flight
//    (o 1.7 TB/s, down 2.5), in the two-step instance's summation order (the same bits; runs of
//    four neighbouring steps agreed 7-14x less with the CPU reference's sums, session 49 run 10).
//    BF16 mode at 1k batch 2 / 4 / 8 -12.5 / -11.6 / -7.0% on the H200 (session 50 run 1; the
//    engine test's BF16 logits equal the two-step kernel's to the printed digit).  Halving a larger
//    grid's split to fit (qkv: 384 → 192 CTAs) made it slower, so the split stays the two-step
//    plan's.

// The token count from which the tensor-core path runs: 2, or RESET_BF16_GEMV_TENSOR_CORES_FROM
// (2..9; 9 = never) for A/B runs.
int tensor_cores_from() {
    static const int from = int(environment_integer("RESET_BF16_GEMV_TENSOR_CORES_FROM", 2, 2, kBf16GemvMaxTokens + 1));
    return from;
}
constexpr int kMmaThreads = 256;
constexpr int kMmaWarps = kMmaThreads / 32;

using MmaParams = GemvOperands;

// Two FP32 values as three BF16 pairs whose sums are the values exactly (finite values): each
// part rounds (to nearest) what the earlier ones leave, the remainders are exact in FP32, and
// 3 × 8 significant bits cover FP32's 24.  The first value goes to the low halves (the lower k
// of an MMA fragment register).
__device__ __forceinline__ void split_pair(float x0, float x1, uint32_t &hi, uint32_t &mid, uint32_t &lo) {
    const __nv_bfloat162 h = __floats2bfloat162_rn(x0, x1);
    const float2 hf = __bfloat1622float2(h);
    const float r0 = x0 - hf.x, r1 = x1 - hf.y;
    const __nv_bfloat162 m = __floats2bfloat162_rn(r0, r1);
    const float2 mf = __bfloat1622float2(m);
    const __nv_bfloat162 l = __floats2bfloat162_rn(r0 - mf.x, r1 - mf.y);
    hi = *reinterpret_cast<const uint32_t *>(&h);
    mid = *reinterpret_cast<const uint32_t *>(&m);
    lo = *reinterpret_cast<const uint32_t *>(&l);
}

// A lane's 8 columns of x at column k of its token's row (zeros past K: K is a multiple of 8,
// so the 8 lie wholly inside or wholly past it).
__device__ __forceinline__ void load_x8(const MmaParams &p, const float *row, int64_t k, float (&v)[8]) {
    if (k >= p.cols) {
#pragma unroll
        for (int e = 0; e < 8; ++e) v[e] = 0.0f;
    } else if (p.x_vector) {
        const float4 a = __ldg(reinterpret_cast<const float4 *>(row + k)),
                     b = __ldg(reinterpret_cast<const float4 *>(row + k) + 1);
        v[0] = a.x, v[1] = a.y, v[2] = a.z, v[3] = a.w, v[4] = b.x, v[5] = b.y, v[6] = b.z, v[7] = b.w;
    } else {
#pragma unroll
        for (int e = 0; e < 8; ++e) v[e] = __ldg(row + k + e);
    }
}

// One 32-column step: rows g and g + 8 (16 bytes each) against the lane's 8 columns of x,
// the smallest part first.
__device__ __forceinline__ void mma_step(float (&acc)[4], const uint4 &row_g, const uint4 &row_g8,
                                         const float (&x)[8]) {
    uint32_t part[3][4];
#pragma unroll
    for (int i = 0; i < 4; ++i) split_pair(x[2 * i], x[2 * i + 1], part[0][i], part[1][i], part[2][i]);
    const uint32_t a0[4] = {row_g.x, row_g8.x, row_g.y, row_g8.y};
    const uint32_t a1[4] = {row_g.z, row_g8.z, row_g.w, row_g8.w};
#pragma unroll
    for (int q = 2; q >= 0; --q) {
        cuda::mma_bf16_16816(acc, a0, part[q][0], part[q][1]);
        cuda::mma_bf16_16816(acc, a1, part[q][2], part[q][3]);
    }
}

// kAhead: 32-column steps a warp keeps in flight, as pairs of neighbours: 2 (four CTAs per SM) or 4 (two).
template <int M, int kAhead>
__global__ void __launch_bounds__(kMmaThreads, kAhead == 2 ? 4 : 2) bf16_gemv_mma_kernel(const __grid_constant__ MmaParams p) {
    [[maybe_unused]] const trace::EndMark end_mark;
    trace::begin_dependent_kernel(trace::kBf16Gemv);
    __shared__ float4 partial[kMmaWarps][32];

    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    const int slice = warp % p.k_slices;
    const int tiles_per_group = kMmaWarps / p.k_slices;
    const float *x_row = p.x + min(g, M - 1) * p.ldx;
    const int64_t steps = (p.cols + 31) / 32;

    for (int64_t group = blockIdx.x; group < p.groups; group += gridDim.x) {
        const int64_t tile = group * tiles_per_group + warp / p.k_slices;
        const bool live = tile * 16 < p.rows;  // the last group's spare warps still meet the barriers
        // Rows past N read the last row (in bounds; their sums are never stored).
        const uint16_t *w_g = p.w + min(tile * 16 + g, p.rows - 1) * p.ldw + 8 * t;
        const uint16_t *w_g8 = p.w + min(tile * 16 + g + 8, p.rows - 1) * p.ldw + 8 * t;
        auto load_w = [&](const uint16_t *w, int64_t s) {
            return 32 * s + 8 * t < p.cols ? cuda::load_stream_16<kWeightL2>(w + 32 * s) : make_uint4(0, 0, 0, 0);
        };
        float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        if (live) {
            // Slice s takes the step pairs s, s + k_slices, ... (above; contiguous runs of steps per
            // slice: lm_head +2.5%, gate_up +3.5%, down -5% at 8 tokens on the H200, session 46 run 5),
            // kAhead / 2 of its pairs in flight, multiplied in the same order whatever kAhead: both
            // instances give the same bits (taking runs of four steps instead agreed 7-14x less
            // with the CPU reference's sums in the engine test, session 49 run 10).
            constexpr int kPairs = kAhead / 2;
            const int64_t stride = 2 * p.k_slices;  // from one of the slice's pairs to its next
            int64_t s = 2 * slice;
            for (; s + (kPairs - 1) * stride + 1 < steps; s += kPairs * stride) {
                uint4 a[kPairs][2], b[kPairs][2];
                float x[kPairs][2][8];
#pragma unroll
                for (int i = 0; i < kPairs; ++i)
#pragma unroll
                    for (int e = 0; e < 2; ++e)
                        a[i][e] = load_w(w_g, s + i * stride + e), b[i][e] = load_w(w_g8, s + i * stride + e);
#pragma unroll
                for (int i = 0; i < kPairs; ++i)
#pragma unroll
                    for (int e = 0; e < 2; ++e) load_x8(p, x_row, 32 * (s + i * stride + e) + 8 * t, x[i][e]);
#pragma unroll
                for (int i = 0; i < kPairs; ++i)
#pragma unroll
                    for (int e = 0; e < 2; ++e) mma_step(acc, a[i][e], b[i][e], x[i][e]);
            }
            for (; s + 1 < steps; s += stride) {  // the slice's last pairs, fewer than kPairs
                const uint4 a0 = load_w(w_g, s), b0 = load_w(w_g8, s), a1 = load_w(w_g, s + 1), b1 = load_w(w_g8, s + 1);
                float x0[8], x1[8];
                load_x8(p, x_row, 32 * s + 8 * t, x0);
                load_x8(p, x_row, 32 * (s + 1) + 8 * t, x1);
                mma_step(acc, a0, b0, x0);
                mma_step(acc, a1, b1, x1);
            }
            if (s < steps) {  // a last single step
                const uint4 a0 = load_w(w_g, s), b0 = load_w(w_g8, s);
                float x0[8];
                load_x8(p, x_row, 32 * s + 8 * t, x0);
                mma_step(acc, a0, b0, x0);
            }
        }
        if (p.k_slices > 1) {
            partial[warp][lane] = make_float4(acc[0], acc[1], acc[2], acc[3]);
            __syncthreads();
            if (slice == 0)
                for (int q = 1; q < p.k_slices; ++q) {  // slice order
                    const float4 o = partial[warp + q][lane];
                    acc[0] += o.x, acc[1] += o.y, acc[2] += o.z, acc[3] += o.w;
                }
        }
        if (slice == 0 && live) {
            // Accumulator i of lane 4g + t: row g (+ 8 for i >= 2), token 2t + (i & 1).
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                const int64_t n = tile * 16 + g + (i >= 2 ? 8 : 0);
                const int m = 2 * t + (i & 1);
                if (n < p.rows && m < M) {
                    float v = acc[i];
                    if (p.bias) v += p.bias[n];
                    if (p.residual) v += p.residual[m * p.ld_residual + n];
                    p.y[m * p.ldy + n] = v;
                }
            }
        }
        if (p.k_slices > 1) __syncthreads();  // partial[] is rewritten by the next group
    }
}

using MmaKernelFn = void (*)(MmaParams);
using KernelFn = void (*)(GemvParams);

// Each path's instance for `tokens` (1..8, checked by the caller): M is a template argument.
template <int... M>
std::array<KernelFn, sizeof...(M)> fp32_instances(std::integer_sequence<int, M...>) {
    return {bf16_gemv_kernel<M + 1>...};
}
template <int kAhead, int... M>
std::array<MmaKernelFn, sizeof...(M)> mma_instances(std::integer_sequence<int, M...>) {
    return {bf16_gemv_mma_kernel<M + 1, kAhead>...};
}

KernelFn kernel_for(int tokens) {
    static const auto instances = fp32_instances(std::make_integer_sequence<int, kBf16GemvMaxTokens>());
    return instances[size_t(tokens - 1)];
}

MmaKernelFn mma_kernel_for(int tokens, int steps_in_flight) {
    static const auto two = mma_instances<2>(std::make_integer_sequence<int, kBf16GemvMaxTokens>());
    static const auto four = mma_instances<4>(std::make_integer_sequence<int, kBf16GemvMaxTokens>());
    return (steps_in_flight == 4 ? four : two)[size_t(tokens - 1)];
}

// Whether the tensor-core path may keep four steps in flight (the kernel's comment); RESET_BF16_GEMV_FOUR_STEPS=0
// keeps two everywhere, for A/B runs.
bool four_steps_allowed() {
    static const bool allowed = environment_integer("RESET_BF16_GEMV_FOUR_STEPS", 1, 0, 1) == 1;
    return allowed;
}

struct DeviceInfo {
    int device = 0;
    int sms = 0;
    int64_t x_budget = 0;  // bytes of dynamic shared memory for x
};

DeviceInfo device_info() {
    static std::atomic<int64_t> budgets[kMaxDevices] = {};
    DeviceInfo info;
    RESET_CUDA_CHECK(cudaGetDevice(&info.device));
    info.sms = cuda::multiprocessor_count();
    int64_t budget = info.device >= 0 && info.device < kMaxDevices ? budgets[info.device].load() : 0;
    if (budget <= 0) {
        int optin = 0;
        RESET_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, info.device));
        // Leave room for the static partial sums (2 KiB) and the runtime's reservation.
        budget = std::min<int64_t>(kMaxXBytes, int64_t(optin) - 4096);
        budget = std::max<int64_t>(budget, 16 * 1024);
        if (info.device >= 0 && info.device < kMaxDevices) budgets[info.device].store(budget);
    }
    info.x_budget = budget;
    return info;
}

// Set the kernel's dynamic shared-memory limit once per device and token count.
void allow_shared(const DeviceInfo &info, int tokens, KernelFn fn) {
    static std::atomic<bool> done[kMaxDevices][kBf16GemvMaxTokens] = {};
    const bool cacheable = info.device >= 0 && info.device < kMaxDevices;
    if (cacheable && done[info.device][tokens - 1].load()) return;
    RESET_CUDA_CHECK(cudaFuncSetAttribute(reinterpret_cast<const void *>(fn),
                                          cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          static_cast<int>(info.x_budget)));
    if (cacheable) done[info.device][tokens - 1].store(true);
}

// CTAs of `fn` resident per SM at `threads` threads and `smem` bytes, asked of
// the runtime once per device and shape: plans are made at every enqueue
// (eager steps, prefill passes), not only when a graph is captured.
int resident_per_sm(const DeviceInfo &info, const void *fn, int threads, size_t smem) {
    static std::mutex mutex;
    static std::map<std::tuple<int, const void *, int, size_t>, int> known;
    const auto key = std::make_tuple(info.device, fn, threads, smem);
    {
        const std::lock_guard<std::mutex> lock(mutex);
        if (const auto it = known.find(key); it != known.end()) return it->second;
    }
    int per_sm = 0;
    RESET_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fn, threads, smem));
    per_sm = std::max(per_sm, 1);
    const std::lock_guard<std::mutex> lock(mutex);
    known.emplace(key, per_sm);
    return per_sm;
}

int64_t k_tile_for(int tokens, int64_t cols, int64_t budget) {
    if (int64_t(tokens) * cols * 4 <= budget) return cols;
    return std::max<int64_t>(256, budget / (int64_t(tokens) * 4) / 256 * 256);
}

// Both paths' K split and row groups: over ks = 1, 2, 4, ... of a CTA's `warps`
// warps sharing a unit (FP32 path: a row, kRows per warp; tensor cores: a
// 16-row tile, one per warp), at most max_slices, the smallest makespan: rounds
// of resident CTAs times the time a warp spends on its share of a group, its
// cols / ks columns plus slice_overhead columns' worth for the slice's ramp
// (the first loads' round trip, the slices' reduction), smallest split on ties.
// The callers choose the grid.
void choose_k_split(Bf16GemvPlan &plan, int64_t units, int warps, int units_per_warp, int64_t max_slices,
                    int64_t resident, int64_t cols, int64_t slice_overhead) {
    double best_cost = -1;
    for (int ks = 1; ks <= warps; ks *= 2) {
        if (ks > 1 && ks > max_slices) break;
        const int64_t per_group = int64_t(warps / ks) * units_per_warp;
        const int64_t groups = (units + per_group - 1) / per_group;
        const double cost = double((groups + resident - 1) / resident) * (double(cols) / ks + double(slice_overhead));
        if (best_cost < 0 || cost < best_cost) {
            best_cost = cost;
            plan.k_slices = ks;
            plan.groups = groups;
        }
    }
}

// The FP32 path's slice overhead in columns (choose_k_split).  Without one (session 49 and
// before) the wave arithmetic alone split Qwen3-8B's gate_up 16 ways (slices of 256 columns:
// 91 us alone at 1 token, 2.2 TB/s) and qkv 4 ways; at one slice each they ran 55 and 20.5 us,
// o and down best at two (session 50 run 4, H200).  Any overhead from 512 to 2048 columns picks
// those splits; at 1024 BF16 mode at 1k batch 1 ran 5.907 -> 4.615 ms (-21.9%), and the 1-token
// shapes of Qwen3-14B/-32B and R1-7B level or faster (Qwen3-32B's gate_up 223 -> 140 us; session
// 50 run 5).  RESET_BF16_GEMV_FP32_SLICE_OVERHEAD (columns, 0 = the old plans) for A/B runs.
int64_t fp32_slice_overhead() {
    static const int64_t overhead = environment_integer("RESET_BF16_GEMV_FP32_SLICE_OVERHEAD", 1024, 0, 1 << 20);
    return overhead;
}

// The FP32 path's plan: the K tile x is staged in, and the K split.
Bf16GemvPlan make_plan(int tokens, int64_t rows, int64_t cols, const DeviceInfo &info, KernelFn fn) {
    Bf16GemvPlan plan;
    plan.k_tile = k_tile_for(tokens, cols, info.x_budget);
    const size_t smem = static_cast<size_t>(plan.k_tile) * tokens * 4;
    allow_shared(info, tokens, fn);
    const int per_sm = resident_per_sm(info, reinterpret_cast<const void *>(fn), kThreads, smem);
    const int64_t resident = int64_t(per_sm) * info.sms;
    // Every slice gets at least one step per lane (8 columns).
    choose_k_split(plan, rows, kWarps, kRows, cols / (8 * 32), resident, cols, fp32_slice_overhead());
    plan.grid = static_cast<int>(std::min(plan.groups, resident));  // persistent: one wave at most
    return plan;
}

// The tensor-core path's plan: the K split for the two-step instance (every slice at least one pair
// of 32-column steps, the last perhaps a single step), four steps in flight where that split's grid
// fits one wave of the four-step instance, then one CTA per group of tiles (the kernel's comment:
// hardware placement in launch order), the grid-stride loop serving groups past the grid's limit.
Bf16GemvPlan make_mma_plan(int tokens, int64_t rows, int64_t cols, const DeviceInfo &info) {
    auto resident = [&](int steps_in_flight) {
        const void *fn = reinterpret_cast<const void *>(mma_kernel_for(tokens, steps_in_flight));
        return int64_t(resident_per_sm(info, fn, kMmaThreads, 0)) * info.sms;
    };
    Bf16GemvPlan plan;
    plan.tensor_cores = true;
    plan.k_tile = cols;  // x is read from the L1, not staged
    // No slice overhead: the split measured with this loop (sessions 46-50).
    choose_k_split(plan, (rows + 15) / 16, kMmaWarps, 1, ((cols + 31) / 32 + 1) / 2, resident(2), cols, 0);
    plan.steps_in_flight = four_steps_allowed() && plan.groups <= resident(4) ? 4 : 2;
    plan.grid = static_cast<int>(std::min<int64_t>(plan.groups, std::numeric_limits<int>::max()));
    return plan;
}

}  // namespace

Bf16GemvPlan bf16_gemv_plan(int tokens, int64_t rows, int64_t cols, bool tensor_cores) {
    if (tokens < 1 || tokens > kBf16GemvMaxTokens || rows <= 0 || cols <= 0)
        fail(RESET_ERR_INVALID_ARGUMENT, "bf16_gemv_plan: tokens ", tokens, ", rows ", rows, ", cols ", cols);
    const DeviceInfo info = device_info();
    if (tensor_cores && tokens >= tensor_cores_from()) return make_mma_plan(tokens, rows, cols, info);
    return make_plan(tokens, rows, cols, info, kernel_for(tokens));
}

void bf16_gemv(const Bf16GemvArgs &a, cudaStream_t stream) {
    if (a.tokens < 1 || a.tokens > kBf16GemvMaxTokens)
        fail(RESET_ERR_UNSUPPORTED, "bf16_gemv: ", a.tokens, " tokens (1..", kBf16GemvMaxTokens, " supported)");
    if (a.rows <= 0 || a.cols <= 0)
        fail(RESET_ERR_INVALID_ARGUMENT, "bf16_gemv: rows ", a.rows, " and cols ", a.cols, " must be positive");
    if (a.cols % 8 != 0)
        fail(RESET_ERR_UNSUPPORTED, "bf16_gemv: K = ", a.cols, " is not a multiple of 8");
    if (a.cols > (int64_t(1) << 28) || a.rows > (int64_t(1) << 40))
        fail(RESET_ERR_UNSUPPORTED, "bf16_gemv: shape ", a.rows, " x ", a.cols, " is too large");
    require(a.x, "bf16_gemv: x");
    require(a.weight, "bf16_gemv: weight");
    require(a.y, "bf16_gemv: y");
    const int64_t ldw = a.ldw == 0 ? a.cols : a.ldw;
    if (a.ldx < a.cols || a.ldy < a.rows || ldw < a.cols || (a.residual && a.ld_residual < a.rows))
        fail(RESET_ERR_INVALID_ARGUMENT, "bf16_gemv: leading dimensions ldx ", a.ldx, ", ldy ", a.ldy, ", ldw ", ldw,
             ", ld_residual ", a.ld_residual, " are too small for ", a.rows, " x ", a.cols);
    if (ldw % 8 != 0 || reinterpret_cast<uintptr_t>(a.weight) % 16 != 0)
        fail(RESET_ERR_INVALID_ARGUMENT, "bf16_gemv: the weight must be 16-byte aligned with a row stride that is a "
                                         "multiple of 8 elements");
    if (reinterpret_cast<uintptr_t>(a.x) % 4 || reinterpret_cast<uintptr_t>(a.y) % 4 ||
        reinterpret_cast<uintptr_t>(a.residual) % 4 || reinterpret_cast<uintptr_t>(a.bias) % 4)
        fail(RESET_ERR_INVALID_ARGUMENT, "bf16_gemv: x, y, bias and residual must be 4-byte aligned");
    if (a.residual == a.y && a.residual && a.ld_residual != a.ldy)
        fail(RESET_ERR_INVALID_ARGUMENT, "bf16_gemv: residual == y needs ld_residual == ldy");
    // y must not overlap x (x is read while y is written).
    {
        const auto y_begin = reinterpret_cast<uintptr_t>(a.y);
        const auto y_end = reinterpret_cast<uintptr_t>(a.y + (a.tokens - 1) * a.ldy + a.rows);
        const auto x_begin = reinterpret_cast<uintptr_t>(a.x);
        const auto x_end = reinterpret_cast<uintptr_t>(a.x + (a.tokens - 1) * a.ldx + a.cols);
        if (y_begin < x_end && x_begin < y_end) fail(RESET_ERR_INVALID_ARGUMENT, "bf16_gemv: y overlaps x");
    }
    const DeviceInfo info = device_info();
    GemvOperands operands{};
    operands.x = a.x;
    operands.ldx = a.ldx;
    operands.w = static_cast<const uint16_t *>(a.weight);
    operands.ldw = ldw;
    operands.rows = a.rows;
    operands.cols = a.cols;
    operands.bias = a.bias;
    operands.residual = a.residual;
    operands.ld_residual = a.ld_residual;
    operands.y = a.y;
    operands.ldy = a.ldy;
    operands.x_vector = a.ldx % 4 == 0 && reinterpret_cast<uintptr_t>(a.x) % 16 == 0;
    if (a.tensor_cores && a.tokens >= tensor_cores_from()) {
        const Bf16GemvPlan plan = make_mma_plan(a.tokens, a.rows, a.cols, info);
        const MmaKernelFn fn = mma_kernel_for(a.tokens, plan.steps_in_flight);
        MmaParams p = operands;
        p.k_slices = plan.k_slices;
        p.groups = plan.groups;
        cuda::launch_kernel("bf16_gemv", fn, dim3(plan.grid), dim3(kMmaThreads), 0, stream, p);
        return;
    }
    const KernelFn fn = kernel_for(a.tokens);
    const Bf16GemvPlan plan = make_plan(a.tokens, a.rows, a.cols, info, fn);
    GemvParams p{};
    static_cast<GemvOperands &>(p) = operands;
    p.k_tile = plan.k_tile;
    p.k_slices = plan.k_slices;
    p.groups = plan.groups;
    const size_t smem = static_cast<size_t>(plan.k_tile) * a.tokens * 4;
    cuda::launch_kernel("bf16_gemv", fn, dim3(plan.grid), dim3(kThreads), smem, stream, p);
}

}  // namespace reset
