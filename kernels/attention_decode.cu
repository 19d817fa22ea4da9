// attention_decode.cu — split-KV (flash-decoding) GQA attention for decode.
//
// Grid: (split, kv_head, sequence).  One CTA owns one KV head of one sequence
// over one chunk of the context and serves every query head of that KV head,
// so each K/V byte is read from memory once per step whatever the group size.
// Inside the chunk it walks 128-position tiles:
//   A. one thread per position: 16-byte loads of its K row, FP32 dot products
//      with the group's queries (kept in shared memory, pre-scaled);
//   B. the tile's max and exp-sum per query head (online softmax: the running
//      max m and sum l are rescaled, Milakov & Gimelshein 2018);
//   C. threads split as (position group × 8-element slice of head_dim):
//      16-byte loads of V rows, acc += p · v per query head.
// At the end the position groups are summed through shared memory.  With one
// split the CTA writes out = acc / l; otherwise it writes (acc, m, l) and a
// second kernel merges the splits (Dao et al., "Flash-Decoding", 2023).
//
// The chunk of a split depends on lengths[b], read on the device, so the same
// launch (and a CUDA graph holding it) serves every context length; splits
// past the end write an empty partial (m = -inf, l = 0).
#include "kernels/attention_decode.h"

#include <cuda_bf16.h>

#include <algorithm>
#include <cmath>

#include "kernels/cuda_common.cuh"

namespace reset {
namespace {

constexpr int kThreads = 128;
constexpr int kTile = 128;     // positions per tile: one per thread in phase A
constexpr int kVec = 8;        // BF16 elements per 16-byte load

// Eight BF16 values from a 16-byte word, as FP32 (BF16 is the top half of FP32).
__device__ __forceinline__ void bf16x8_to_float(const uint4 raw, float (&out)[kVec]) {
    const uint32_t words[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        out[2 * i] = __uint_as_float(words[i] << 16);
        out[2 * i + 1] = __uint_as_float(words[i] & 0xffff0000u);
    }
}

__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// Partial result of one (sequence, query head, split): head_dim accumulators,
// then the running max m and the sum l.
__host__ __device__ constexpr int64_t partial_stride(int head_dim) { return head_dim + 2; }

// kGroup: the group size rounded up to a power of two (register arrays need a
// compile-time size); the padded heads get a zero query and are never written.
template <int kHeadDim, int kGroup>
__global__ void __launch_bounds__(kThreads) split_kernel(const AttentionDecodeArgs a) {
    constexpr int kSlices = kHeadDim / kVec;         // threads per V row in phase C
    constexpr int kPositionGroups = kThreads / kSlices;
    constexpr int kWarps = kThreads / 32;
    __shared__ float4 q_s[kGroup][kHeadDim / 4];
    __shared__ float p_s[kGroup][kTile];
    __shared__ float max_s[kGroup][kWarps];
    __shared__ float sum_s[kGroup][kWarps];
    __shared__ float acc_s[kPositionGroups][kGroup][kHeadDim];

    const int split = blockIdx.x, kv_head = blockIdx.y, b = blockIdx.z;
    const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    const int group = a.n_heads / a.cache.n_kv_heads;
    const int first_head = kv_head * group;

    for (int i = tid; i < kGroup * kHeadDim; i += kThreads) {
        const int g = i / kHeadDim, d = i % kHeadDim;
        const float v = g < group ? a.q[(int64_t(b) * a.n_heads + first_head + g) * kHeadDim + d] * a.scale : 0.0f;
        reinterpret_cast<float *>(&q_s[g][0])[d] = v;
    }

    // The chunk: whole tiles, as evenly spread over the splits as tiles allow.
    const int length = a.lengths[b];
    const int tiles = (length + kTile - 1) / kTile;
    const int tiles_per_split = (tiles + a.splits - 1) / a.splits;
    const int begin = split * tiles_per_split * kTile;
    const int end = min(length, begin + tiles_per_split * kTile);

    const int64_t row0 = (int64_t(b) * a.cache.n_kv_heads + kv_head) * a.cache.capacity;
    const __nv_bfloat16 *keys = static_cast<const __nv_bfloat16 *>(a.cache.keys) + row0 * kHeadDim;
    const __nv_bfloat16 *values = static_cast<const __nv_bfloat16 *>(a.cache.values) + row0 * kHeadDim;

    const int slice = tid % kSlices, position_group = tid / kSlices;
    float m[kGroup], l[kGroup], acc[kGroup][kVec];
#pragma unroll
    for (int g = 0; g < kGroup; ++g) {
        m[g] = -INFINITY;
        l[g] = 0.0f;
#pragma unroll
        for (int i = 0; i < kVec; ++i) acc[g][i] = 0.0f;
    }
    __syncthreads();  // q_s ready

    for (int tile = begin; tile < end; tile += kTile) {
        const int count = min(kTile, end - tile);
        // Phase A: scores of position tile + tid.
        float s[kGroup];
#pragma unroll
        for (int g = 0; g < kGroup; ++g) s[g] = 0.0f;
        if (tid < count) {
            const uint4 *row = reinterpret_cast<const uint4 *>(keys + int64_t(tile + tid) * kHeadDim);
            uint4 raw[kSlices];
#pragma unroll
            for (int c = 0; c < kSlices; ++c) raw[c] = __ldg(row + c);  // all loads in flight first
#pragma unroll
            for (int c = 0; c < kSlices; ++c) {
                float k[kVec];
                bf16x8_to_float(raw[c], k);
#pragma unroll
                for (int g = 0; g < kGroup; ++g) {
                    const float4 q0 = q_s[g][2 * c], q1 = q_s[g][2 * c + 1];
                    s[g] += q0.x * k[0] + q0.y * k[1] + q0.z * k[2] + q0.w * k[3] + q1.x * k[4] + q1.y * k[5] +
                            q1.z * k[6] + q1.w * k[7];
                }
            }
        } else {
#pragma unroll
            for (int g = 0; g < kGroup; ++g) s[g] = -INFINITY;
        }
        // Phase B: tile max, new running max, weights, tile sum.
#pragma unroll
        for (int g = 0; g < kGroup; ++g) {
            const float w = warp_max(s[g]);
            if (lane == 0) max_s[g][warp] = w;
        }
        __syncthreads();
        float alpha[kGroup];
#pragma unroll
        for (int g = 0; g < kGroup; ++g) {
            float tile_max = max_s[g][0];
#pragma unroll
            for (int w = 1; w < kWarps; ++w) tile_max = fmaxf(tile_max, max_s[g][w]);
            const float new_m = fmaxf(m[g], tile_max);  // finite: the tile has a position
            alpha[g] = expf(m[g] - new_m);              // 0 on the first tile (m = -inf)
            m[g] = new_m;
            const float p = tid < count ? expf(s[g] - new_m) : 0.0f;
            p_s[g][tid] = p;
            const float w = warp_sum(p);
            if (lane == 0) sum_s[g][warp] = w;
        }
        __syncthreads();
#pragma unroll
        for (int g = 0; g < kGroup; ++g) {
            float tile_sum = 0.0f;
#pragma unroll
            for (int w = 0; w < kWarps; ++w) tile_sum += sum_s[g][w];
            l[g] = l[g] * alpha[g] + tile_sum;
#pragma unroll
            for (int i = 0; i < kVec; ++i) acc[g][i] *= alpha[g];
        }
        // Phase C: acc += p · V over this thread's positions and slice.
#pragma unroll 4
        for (int t = position_group; t < count; t += kPositionGroups) {
            float v[kVec];
            bf16x8_to_float(__ldg(reinterpret_cast<const uint4 *>(values + int64_t(tile + t) * kHeadDim) + slice), v);
#pragma unroll
            for (int g = 0; g < kGroup; ++g) {
                const float p = p_s[g][t];
#pragma unroll
                for (int i = 0; i < kVec; ++i) acc[g][i] += p * v[i];
            }
        }
        __syncthreads();  // p_s, max_s and sum_s are rewritten by the next tile
    }

    // Sum the position groups' accumulators.
#pragma unroll
    for (int g = 0; g < kGroup; ++g)
#pragma unroll
        for (int i = 0; i < kVec; ++i) acc_s[position_group][g][slice * kVec + i] = acc[g][i];
    __syncthreads();
    for (int i = tid; i < group * kHeadDim; i += kThreads) {
        const int g = i / kHeadDim, d = i % kHeadDim;
        float total = 0.0f;
        for (int pg = 0; pg < kPositionGroups; ++pg) total += acc_s[pg][g][d];
        // m and l are the same in every thread; pick head g's without a dynamic register index.
        float m_g = 0.0f, l_g = 0.0f;
#pragma unroll
        for (int j = 0; j < kGroup; ++j)
            if (j == g) {
                m_g = m[j];
                l_g = l[j];
            }
        const int64_t head = int64_t(b) * a.n_heads + first_head + g;
        if (a.splits == 1) {
            a.out[head * kHeadDim + d] = total / l_g;
        } else {
            float *partial = a.workspace + (head * a.splits + split) * partial_stride(kHeadDim);
            partial[d] = total;
            if (d == 0) {
                partial[kHeadDim] = m_g;
                partial[kHeadDim + 1] = l_g;
            }
        }
    }
}

// Merge the splits of one (sequence, query head): weights exp(m_s - M).
template <int kHeadDim>
__global__ void __launch_bounds__(kHeadDim) combine_kernel(const AttentionDecodeArgs a) {
    const int64_t head = int64_t(blockIdx.y) * a.n_heads + blockIdx.x;
    const float *partials = a.workspace + head * a.splits * partial_stride(kHeadDim);
    const int d = threadIdx.x;
    float max_m = -INFINITY;
    for (int s = 0; s < a.splits; ++s) max_m = fmaxf(max_m, partials[s * partial_stride(kHeadDim) + kHeadDim]);
    float numerator = 0.0f, denominator = 0.0f;
    for (int s = 0; s < a.splits; ++s) {
        const float *p = partials + s * partial_stride(kHeadDim);
        const float m = p[kHeadDim];
        if (m == -INFINITY) continue;  // an empty split (past the context's end)
        const float w = expf(m - max_m);
        numerator += w * p[d];
        denominator += w * p[kHeadDim + 1];
    }
    a.out[head * kHeadDim + d] = numerator / denominator;
}

template <int kHeadDim, int kGroup>
void launch(const AttentionDecodeArgs &a, cudaStream_t stream) {
    const dim3 grid(static_cast<unsigned>(a.splits), static_cast<unsigned>(a.cache.n_kv_heads),
                    static_cast<unsigned>(a.batch));
    split_kernel<kHeadDim, kGroup><<<grid, kThreads, 0, stream>>>(a);
    RESET_CUDA_CHECK(cudaGetLastError());
    if (a.splits > 1) {
        combine_kernel<kHeadDim><<<dim3(static_cast<unsigned>(a.n_heads), static_cast<unsigned>(a.batch)), kHeadDim, 0,
                                   stream>>>(a);
        RESET_CUDA_CHECK(cudaGetLastError());
    }
}

template <int kHeadDim>
void launch_for_group(const AttentionDecodeArgs &a, int group, cudaStream_t stream) {
    if (group == 1) launch<kHeadDim, 1>(a, stream);
    else if (group == 2) launch<kHeadDim, 2>(a, stream);
    else if (group <= 4) launch<kHeadDim, 4>(a, stream);
    else launch<kHeadDim, 8>(a, stream);
}

}  // namespace

int attention_decode_splits(int batch, int n_kv_heads, int capacity) {
    // Four CTAs per multiprocessor at full context keep enough 16-byte loads
    // in flight to stream the cache; more splits only add merge traffic.
    const int ctas_per_split = std::max(1, batch * n_kv_heads);
    const int wanted = (4 * cuda::multiprocessor_count() + ctas_per_split - 1) / ctas_per_split;
    const int tiles = std::max(1, (capacity + kTile - 1) / kTile);
    return std::max(1, std::min(wanted, tiles));
}

size_t attention_decode_workspace_bytes(int batch, int n_heads, int head_dim, int splits) {
    if (splits <= 1) return 0;
    return size_t(batch) * size_t(n_heads) * size_t(splits) * size_t(partial_stride(head_dim)) * sizeof(float);
}

void attention_decode(const AttentionDecodeArgs &a, cudaStream_t stream) {
    const KvCacheLayerView &c = a.cache;
    if (c.head_dim != 64 && c.head_dim != 128)
        fail(RESET_ERR_UNSUPPORTED, "attention decode: head_dim ", c.head_dim, " (64 and 128 are supported)");
    if (a.batch <= 0 || a.n_heads <= 0 || c.n_kv_heads <= 0 || c.capacity <= 0 || a.splits <= 0)
        fail(RESET_ERR_INVALID_ARGUMENT, "attention decode: batch ", a.batch, ", heads ", a.n_heads, "/",
             c.n_kv_heads, ", capacity ", c.capacity, ", splits ", a.splits, " must all be positive");
    if (a.n_heads % c.n_kv_heads != 0)
        fail(RESET_ERR_INVALID_ARGUMENT, "attention decode: ", a.n_heads, " query heads are not a multiple of ",
             c.n_kv_heads, " KV heads");
    const int group = a.n_heads / c.n_kv_heads;
    if (group > kAttentionDecodeMaxGroup)
        fail(RESET_ERR_UNSUPPORTED, "attention decode: ", group, " query heads per KV head (at most ",
             kAttentionDecodeMaxGroup, ")");
    require(a.q, "attention decode: q");
    require(a.lengths, "attention decode: lengths");
    require(a.out, "attention decode: out");
    require(c.keys, "attention decode: cache keys");
    require(c.values, "attention decode: cache values");
    if (reinterpret_cast<uintptr_t>(c.keys) % 16 || reinterpret_cast<uintptr_t>(c.values) % 16)
        fail(RESET_ERR_INVALID_ARGUMENT, "attention decode: the cache must be 16-byte aligned");
    const size_t needed = attention_decode_workspace_bytes(a.batch, a.n_heads, c.head_dim, a.splits);
    if (needed > 0 && (!a.workspace || a.workspace_bytes < needed))
        fail(RESET_ERR_INVALID_ARGUMENT, "attention decode: ", a.splits, " splits need ", needed,
             " bytes of workspace, got ", a.workspace ? a.workspace_bytes : 0);
    if (c.head_dim == 64) launch_for_group<64>(a, group, stream);
    else launch_for_group<128>(a, group, stream);
}

}  // namespace reset
