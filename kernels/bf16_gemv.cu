// bf16_gemv.cu — BF16-weight GEMV for 1..8 tokens; bf16_gemv.h states the
// contract and the design.  Per warp: 4 rows (kRows), each lane 8 columns
// (one 16-byte load per row) per step, two steps' loads issued before their
// products; x read from shared memory as two float4 per token per step (a
// warp reads 1 KiB contiguous: conflict-free), shared by the 4 rows.
#include "kernels/bf16_gemv.h"

#include <algorithm>
#include <atomic>

#include "kernels/cuda_common.cuh"
#include "kernels/dependent_launch.cuh"
#include "kernels/step_trace.cuh"

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

struct GemvParams {
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
    int64_t k_tile;      // columns of x staged at a time (== cols: staged once)
    int k_slices;        // warps sharing one row quad, splitting K
    int64_t groups;      // row groups of kWarps / k_slices * kRows rows
    int x_vector;        // float4 staging allowed
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

using KernelFn = void (*)(GemvParams);

KernelFn kernel_for(int tokens) {
    switch (tokens) {
        case 1: return bf16_gemv_kernel<1>;
        case 2: return bf16_gemv_kernel<2>;
        case 3: return bf16_gemv_kernel<3>;
        case 4: return bf16_gemv_kernel<4>;
        case 5: return bf16_gemv_kernel<5>;
        case 6: return bf16_gemv_kernel<6>;
        case 7: return bf16_gemv_kernel<7>;
        default: return bf16_gemv_kernel<8>;
    }
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

int64_t k_tile_for(int tokens, int64_t cols, int64_t budget) {
    if (int64_t(tokens) * cols * 4 <= budget) return cols;
    return std::max<int64_t>(256, budget / (int64_t(tokens) * 4) / 256 * 256);
}

// Choose the K split: the makespan in rounds of resident CTAs times the rows
// a CTA handles per group (the same K per group whatever the split), smallest
// split on ties.
Bf16GemvPlan make_plan(int tokens, int64_t rows, int64_t cols, const DeviceInfo &info, KernelFn fn) {
    Bf16GemvPlan plan;
    plan.k_tile = k_tile_for(tokens, cols, info.x_budget);
    const size_t smem = static_cast<size_t>(plan.k_tile) * tokens * 4;
    allow_shared(info, tokens, fn);
    int per_sm = 0;
    RESET_CUDA_CHECK(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reinterpret_cast<const void *>(fn), kThreads, smem));
    const int64_t resident = int64_t(std::max(per_sm, 1)) * info.sms;
    int64_t best_cost = -1;
    for (int ks = 1; ks <= kWarps; ks *= 2) {
        if (ks > 1 && cols / 8 < int64_t(32) * ks) break;  // every slice gets at least one step per lane
        const int64_t per_group = int64_t(kWarps / ks) * kRows;
        const int64_t groups = (rows + per_group - 1) / per_group;
        const int64_t cost = (groups + resident - 1) / resident * per_group;
        if (best_cost < 0 || cost < best_cost) {
            best_cost = cost;
            plan.k_slices = ks;
            plan.grid = static_cast<int>(std::min(groups, resident));
        }
    }
    return plan;
}

}  // namespace

Bf16GemvPlan bf16_gemv_plan(int tokens, int64_t rows, int64_t cols) {
    if (tokens < 1 || tokens > kBf16GemvMaxTokens || rows <= 0 || cols <= 0)
        fail(RESET_ERR_INVALID_ARGUMENT, "bf16_gemv_plan: tokens ", tokens, ", rows ", rows, ", cols ", cols);
    const DeviceInfo info = device_info();
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
    const KernelFn fn = kernel_for(a.tokens);
    const Bf16GemvPlan plan = make_plan(a.tokens, a.rows, a.cols, info, fn);

    GemvParams p{};
    p.x = a.x;
    p.ldx = a.ldx;
    p.w = static_cast<const uint16_t *>(a.weight);
    p.ldw = ldw;
    p.rows = a.rows;
    p.cols = a.cols;
    p.bias = a.bias;
    p.residual = a.residual;
    p.ld_residual = a.ld_residual;
    p.y = a.y;
    p.ldy = a.ldy;
    p.k_tile = plan.k_tile;
    p.k_slices = plan.k_slices;
    const int64_t per_group = int64_t(kWarps / plan.k_slices) * kRows;
    p.groups = (a.rows + per_group - 1) / per_group;
    p.x_vector = a.ldx % 4 == 0 && reinterpret_cast<uintptr_t>(a.x) % 16 == 0;
    const size_t smem = static_cast<size_t>(plan.k_tile) * a.tokens * 4;
    cuda::launch_kernel("bf16_gemv", fn, dim3(plan.grid), dim3(kThreads), smem, stream, p);
}

}  // namespace reset
