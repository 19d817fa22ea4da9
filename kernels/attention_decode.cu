// attention_decode.cu — split-KV (flash-decoding) GQA attention for decode.
//
// Grid: (split, kv_head, row).  One CTA owns one KV head of one row (a
// sequence, or one position of a prefill chunk; slots[row] names its cache
// slot) over one chunk of the context and serves every query head of that KV head,
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
// head_dim 16, 32, 64 and 128 are instances of the same template.  Rows are
// at least 16 bytes (16 FP8 elements), so every K row is whole 16-byte loads
// (1 at FP8 d16 .. 16 at BF16 d128); phase C has head_dim / 8 slices per row
// (2 at d16: 64 position groups of 2 positions per tile), and the merge
// kernel runs head_dim threads (16 at d16: half a warp, no shuffles).
//
// The chunk of a split depends on lengths[b], read on the device, so the same
// launch (and a CUDA graph holding it) serves every context length; splits
// past the end write an empty partial (m = -inf, l = 0).
#include "kernels/attention_decode.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <cmath>

#include "kernels/cuda_common.cuh"
#include "kernels/dependent_launch.cuh"

namespace reset {
namespace {

constexpr int kThreads = 128;
constexpr int kTile = 128;     // positions per tile: one per thread in phase A
constexpr int kVec = 8;        // elements of one phase-C slice (16 bytes of BF16, 8 of FP8)

// Eight BF16 values from a 16-byte word, as FP32 (BF16 is the top half of FP32).
__device__ __forceinline__ void bf16x8_to_float(const uint4 raw, float (&out)[kVec]) {
    const uint32_t words[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        out[2 * i] = __uint_as_float(words[i] << 16);
        out[2 * i + 1] = __uint_as_float(words[i] & 0xffff0000u);
    }
}

// Four E4M3 values (byte i of the word is element i) as FP32, exactly: E4M3 ->
// FP16 is exact (native cvt on sm_89+, cuda_fp8.h's software path below).
__device__ __forceinline__ void fp8x4_to_float(const uint32_t word, float *out) {
    const __half2_raw lo = __nv_cvt_fp8x2_to_halfraw2(static_cast<__nv_fp8x2_storage_t>(word & 0xffffu), __NV_E4M3);
    const __half2_raw hi = __nv_cvt_fp8x2_to_halfraw2(static_cast<__nv_fp8x2_storage_t>(word >> 16), __NV_E4M3);
    const float2 a = __half22float2(__half2(lo)), b = __half22float2(__half2(hi));
    out[0] = a.x;
    out[1] = a.y;
    out[2] = b.x;
    out[3] = b.y;
}

// A 16-byte chunk of a K row as FP32: 8 BF16 or 16 FP8 elements.
template <bool kFp8>
__device__ __forceinline__ void chunk_to_float(const uint4 raw, float (&out)[kFp8 ? 16 : 8]) {
    if constexpr (kFp8) {
        fp8x4_to_float(raw.x, out);
        fp8x4_to_float(raw.y, out + 4);
        fp8x4_to_float(raw.z, out + 8);
        fp8x4_to_float(raw.w, out + 12);
    } else {
        bf16x8_to_float(raw, out);
    }
}

// One phase-C slice (kVec elements of a V row) as loaded: 16 bytes of BF16 or 8 of FP8.
template <bool kFp8>
struct VSlice {
    using Raw = uint4;
    static __device__ __forceinline__ Raw load(const void *p) { return __ldg(static_cast<const uint4 *>(p)); }
    static __device__ __forceinline__ void to_float(const Raw raw, float (&out)[kVec]) { bf16x8_to_float(raw, out); }
};
template <>
struct VSlice<true> {
    using Raw = uint2;
    static __device__ __forceinline__ Raw load(const void *p) { return __ldg(static_cast<const uint2 *>(p)); }
    static __device__ __forceinline__ void to_float(const Raw raw, float (&out)[kVec]) {
        fp8x4_to_float(raw.x, out);
        fp8x4_to_float(raw.y, out + 4);
    }
};

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

// Partial result of one (row, query head, split): head_dim accumulators,
// then the running max m and the sum l.
__host__ __device__ constexpr int64_t partial_stride(int head_dim) { return head_dim + 2; }

// The splits that hold positions for a context of `length` (whole tiles,
// as evenly spread as tiles allow; the later splits are empty).
__device__ __forceinline__ int live_split_count(int length, int splits) {
    const int tiles = (length + kTile - 1) / kTile;
    const int tiles_per_split = (tiles + splits - 1) / splits;
    return (tiles + tiles_per_split - 1) / tiles_per_split;
}

// Splits one merge can weigh (its weights sit in shared memory);
// attention_decode_splits never picks more, and attention_decode refuses more.
constexpr int kMaxMergeSplits = 256;

// The workspace: kMergeCounters arrival counters, one per (row, KV head),
// which the merging CTA sets back to zero, then the partials
// [batch][n_heads][splits][partial_stride].  The counters sit at the same
// place whatever the batch and the splits, so one workspace serves every
// launch of a session in stream order (decode steps and prefill chunks):
// partials never land where a later launch expects zero counters.
constexpr int kMergeCounters = 65536;
__host__ __device__ inline int64_t partial_floats(int batch, int n_heads, int head_dim, int splits) {
    return int64_t(batch) * n_heads * splits * partial_stride(head_dim);
}
__device__ inline unsigned *attention_counters(const AttentionDecodeArgs &a) {
    return reinterpret_cast<unsigned *>(a.workspace);
}
__device__ inline float *attention_partials(const AttentionDecodeArgs &a) { return a.workspace + kMergeCounters; }

// kGroup: the group size rounded up to a power of two (register arrays need a
// compile-time size); the padded heads get a zero query and are never written.
// kFp8: the cache holds E4M3 (scales folded: q · k_scale before the dots,
// v_scale on the output); otherwise BF16.
// Resident CTAs per SM the register budget is set for: 2 (up to 255
// registers) for BF16, 3 (168) for FP8 up to group 4, whose tile is half the
// bytes.
template <bool kFp8, int kGroup>
constexpr int kMinBlocks = kFp8 && kGroup <= 4 ? 3 : 2;

template <int kHeadDim, int kGroup, bool kFp8>
__global__ void __launch_bounds__(kThreads, (kMinBlocks<kFp8, kGroup>)) split_kernel(const AttentionDecodeArgs a) {
    cuda::begin_dependent_kernel();
    constexpr int kBytes = kFp8 ? 1 : 2;                  // per element
    constexpr int kRowChunks = kHeadDim * kBytes / 16;    // 16-byte loads per K row
    constexpr int kChunkElems = 16 / kBytes;
    constexpr int kSlices = kHeadDim / kVec;              // threads per V row in phase C
    constexpr int kPositionGroups = kThreads / kSlices;
    constexpr int kVPerThread = kTile / kPositionGroups;  // V slices per thread per tile
    // V slices loaded together with the K row at the start of a tile (all of
    // them, so a tile's K and V bytes are in flight at once; a quarter with
    // BF16, group 8 and head_dim 64/128, whose accumulators leave fewer
    // registers; head_dim 16/32 have only 2/4 slices per thread, all ahead).
    constexpr int kVAhead = (!kFp8 && kGroup >= 8 && kHeadDim >= 64) ? kVPerThread / 4 : kVPerThread;
    static_assert(kHeadDim % 16 == 0 && kHeadDim * kBytes >= 16 && kTile % kPositionGroups == 0 && kVAhead >= 1 &&
                      kVPerThread % kVAhead == 0,
                  "attention decode: unsupported head_dim");
    constexpr int kWarps = kThreads / 32;
    using V = VSlice<kFp8>;
    __shared__ float4 q_s[kGroup][kHeadDim / 4];
    __shared__ float p_s[kGroup][kTile];
    __shared__ float max_s[kGroup][kWarps];
    __shared__ float sum_s[kGroup][kWarps];
    __shared__ float acc_s[kPositionGroups][kGroup][kHeadDim];

    const int split = blockIdx.x, kv_head = blockIdx.y, b = blockIdx.z;
    const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    const int group = a.n_heads / a.cache.n_kv_heads;
    const int first_head = kv_head * group;
    const float q_scale = kFp8 ? a.scale * a.cache.k_scale : a.scale;
    const float out_scale = kFp8 ? a.cache.v_scale : 1.0f;

    for (int i = tid; i < kGroup * kHeadDim; i += kThreads) {
        const int g = i / kHeadDim, d = i % kHeadDim;
        const float v = g < group ? a.q[(int64_t(b) * a.n_heads + first_head + g) * kHeadDim + d] * q_scale : 0.0f;
        reinterpret_cast<float *>(&q_s[g][0])[d] = v;
    }

    // The chunk: whole tiles, as evenly spread over the splits as tiles allow.
    // Splits past the context's end (a short context in a graph sized for a
    // long one) have nothing to do and leave at once; the merge counts only
    // the live ones.
    const int length = a.lengths[b];
    const int tiles = (length + kTile - 1) / kTile;
    const int tiles_per_split = (tiles + a.splits - 1) / a.splits;
    if (split >= live_split_count(length, a.splits)) return;
    const int begin = split * tiles_per_split * kTile;
    const int end = min(length, begin + tiles_per_split * kTile);

    const int64_t slot = a.slots ? a.slots[b] : b;
    const int64_t row0 = (slot * a.cache.n_kv_heads + kv_head) * a.cache.capacity;
    const char *keys = static_cast<const char *>(a.cache.keys) + row0 * kHeadDim * kBytes;
    const char *values = static_cast<const char *>(a.cache.values) + row0 * kHeadDim * kBytes;

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
        // Loads first: this thread's K row (phase A) and its first kVAhead V slices (phase C).
        uint4 k_raw[kRowChunks];
        typename V::Raw v_raw[kVAhead];
        if (tid < count) {
            const uint4 *row = reinterpret_cast<const uint4 *>(keys + int64_t(tile + tid) * kHeadDim * kBytes);
#pragma unroll
            for (int c = 0; c < kRowChunks; ++c) k_raw[c] = __ldg(row + c);
        }
#pragma unroll
        for (int i = 0; i < kVAhead; ++i) {
            const int t = position_group + i * kPositionGroups;
            if (t < count) v_raw[i] = V::load(values + (int64_t(tile + t) * kHeadDim + slice * kVec) * kBytes);
        }
        // Phase A: scores of position tile + tid.
        float s[kGroup];
#pragma unroll
        for (int g = 0; g < kGroup; ++g) s[g] = 0.0f;
        if (tid < count) {
#pragma unroll
            for (int c = 0; c < kRowChunks; ++c) {
                float k[kChunkElems];
                chunk_to_float<kFp8>(k_raw[c], k);
#pragma unroll
                for (int g = 0; g < kGroup; ++g) {
                    float dot = 0.0f;
#pragma unroll
                    for (int j = 0; j < kChunkElems / 4; ++j) {
                        const float4 q = q_s[g][c * (kChunkElems / 4) + j];
                        dot += q.x * k[4 * j] + q.y * k[4 * j + 1] + q.z * k[4 * j + 2] + q.w * k[4 * j + 3];
                    }
                    s[g] += dot;
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
        // Phase C: acc += p · V over this thread's positions and slice, in
        // batches of kVAhead slices (the first batch loaded above).
#pragma unroll 1
        for (int batch = 0; batch < kVPerThread; batch += kVAhead) {
            if (batch > 0) {
#pragma unroll
                for (int i = 0; i < kVAhead; ++i) {
                    const int t = position_group + (batch + i) * kPositionGroups;
                    if (t < count) v_raw[i] = V::load(values + (int64_t(tile + t) * kHeadDim + slice * kVec) * kBytes);
                }
            }
#pragma unroll
            for (int i = 0; i < kVAhead; ++i) {
                const int t = position_group + (batch + i) * kPositionGroups;
                if (t < count) {
                    float v[kVec];
                    V::to_float(v_raw[i], v);
#pragma unroll
                    for (int g = 0; g < kGroup; ++g) {
                        const float p = p_s[g][t];
#pragma unroll
                        for (int e = 0; e < kVec; ++e) acc[g][e] += p * v[e];
                    }
                }
            }
        }
        __syncthreads();  // p_s, max_s and sum_s are rewritten by the next tile
    }

    // Recomputed here rather than kept live through the loop (registers: the FP8 group-4 instance spills).
    const int live = live_split_count(a.lengths[b], a.splits);

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
        total *= out_scale;
        // m and l are the same in every thread; pick head g's without a dynamic register index.
        float m_g = 0.0f, l_g = 0.0f;
#pragma unroll
        for (int j = 0; j < kGroup; ++j)
            if (j == g) {
                m_g = m[j];
                l_g = l[j];
            }
        const int64_t head = int64_t(b) * a.n_heads + first_head + g;
        if (live == 1) {
            a.out[head * kHeadDim + d] = total / l_g;
        } else {
            float *partial = attention_partials(a) + (head * a.splits + split) * partial_stride(kHeadDim);
            __stcg(partial + d, total);
            if (d == 0) {
                __stcg(partial + kHeadDim, m_g);
                __stcg(partial + kHeadDim + 1, l_g);
            }
        }
    }
    if (live == 1) return;

    // The last live split of this (row, KV head) to finish merges them all
    // (Dao et al., "Flash-Decoding", 2023: weights exp(m_s - M)), in split
    // order whatever the order of arrival, so the result is deterministic.
    __shared__ int last;
    // The merge weights of the group's heads, in acc_s (free once the position groups are summed).
    static_assert(sizeof(acc_s) >= sizeof(float) * kGroup * kMaxMergeSplits, "merge weights fit in acc_s");
    auto &weight_s = *reinterpret_cast<float (*)[kGroup][kMaxMergeSplits]>(&acc_s[0][0][0]);
    __threadfence();  // this CTA's partials are visible before its arrival is
    __syncthreads();  // and every thread is done with acc_s
    unsigned *counter = attention_counters(a) + int64_t(b) * a.cache.n_kv_heads + kv_head;
    if (tid == 0) last = atomicAdd(counter, 1u) == static_cast<unsigned>(live - 1);
    __syncthreads();
    if (!last) return;
    __threadfence();
    const float *head_partials =
        attention_partials(a) + (int64_t(b) * a.n_heads + first_head) * a.splits * partial_stride(kHeadDim);
    // Each head's splits: M = max m_s, then w_s = exp(m_s - M) / sum_s exp(m_s - M) l_s.
    for (int g = warp; g < group; g += kWarps) {
        const float *p = head_partials + int64_t(g) * a.splits * partial_stride(kHeadDim);
        float max_m = -INFINITY;
        for (int s = lane; s < live; s += 32) max_m = fmaxf(max_m, __ldcg(p + s * partial_stride(kHeadDim) + kHeadDim));
        max_m = warp_max(max_m);
        float denominator = 0.0f;
        for (int s = lane; s < live; s += 32) {
            const float w = expf(__ldcg(p + s * partial_stride(kHeadDim) + kHeadDim) - max_m);
            weight_s[g][s] = w;
            denominator += w * __ldcg(p + s * partial_stride(kHeadDim) + kHeadDim + 1);
        }
        denominator = warp_sum(denominator);
        for (int s = lane; s < live; s += 32) weight_s[g][s] /= denominator;
    }
    __syncthreads();
    for (int i = tid; i < group * kHeadDim; i += kThreads) {
        const int g = i / kHeadDim, d = i % kHeadDim;
        const float *p = head_partials + int64_t(g) * a.splits * partial_stride(kHeadDim) + d;
        float total = 0.0f;
#pragma unroll 8
        for (int s = 0; s < live; ++s) total += weight_s[g][s] * __ldcg(p + s * partial_stride(kHeadDim));
        a.out[(int64_t(b) * a.n_heads + first_head + g) * kHeadDim + d] = total;
    }
    if (tid == 0) *counter = 0;  // ready for the next launch or graph replay
}

template <int kHeadDim, int kGroup>
void launch(const AttentionDecodeArgs &a, cudaStream_t stream) {
    const dim3 grid(static_cast<unsigned>(a.splits), static_cast<unsigned>(a.cache.n_kv_heads),
                    static_cast<unsigned>(a.batch));
    cuda::launch_kernel("attention_decode",
                        a.cache.type == KvCacheType::kFp8E4M3 ? split_kernel<kHeadDim, kGroup, true>
                                                               : split_kernel<kHeadDim, kGroup, false>,
                        grid, dim3(kThreads), 0, stream, a);
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
    if (int64_t(batch) * n_kv_heads > kMergeCounters) return 1;  // more (row, KV head) pairs than merge counters
    return std::max(1, std::min({wanted, tiles, kMaxMergeSplits}));
}

size_t attention_decode_workspace_bytes(int batch, int n_heads, int head_dim, int splits) {
    if (splits <= 1) return 0;
    return size_t(kMergeCounters) * sizeof(unsigned) + size_t(partial_floats(batch, n_heads, head_dim, splits)) * sizeof(float);
}

void attention_decode(const AttentionDecodeArgs &a, cudaStream_t stream) {
    const KvCacheLayerView &c = a.cache;
    if (c.head_dim != 16 && c.head_dim != 32 && c.head_dim != 64 && c.head_dim != 128)
        fail(RESET_ERR_UNSUPPORTED, "attention decode: head_dim ", c.head_dim, " (16, 32, 64 and 128 are supported)");
    if (a.batch <= 0 || a.n_heads <= 0 || c.n_kv_heads <= 0 || c.capacity <= 0 || a.splits <= 0)
        fail(RESET_ERR_INVALID_ARGUMENT, "attention decode: batch ", a.batch, ", heads ", a.n_heads, "/",
             c.n_kv_heads, ", capacity ", c.capacity, ", splits ", a.splits, " must all be positive");
    if (a.batch > kAttentionDecodeMaxBatch || c.n_kv_heads > 65535)
        fail(RESET_ERR_INVALID_ARGUMENT, "attention decode: batch ", a.batch, " rows, ", c.n_kv_heads,
             " KV heads (at most ", kAttentionDecodeMaxBatch, " and 65535 per launch)");
    if (a.n_heads % c.n_kv_heads != 0)
        fail(RESET_ERR_INVALID_ARGUMENT, "attention decode: ", a.n_heads, " query heads are not a multiple of ",
             c.n_kv_heads, " KV heads");
    const int group = a.n_heads / c.n_kv_heads;
    if (group > kAttentionDecodeMaxGroup)
        fail(RESET_ERR_UNSUPPORTED, "attention decode: ", group, " query heads per KV head (at most ",
             kAttentionDecodeMaxGroup, ")");
    if (c.type != KvCacheType::kBFloat16 && c.type != KvCacheType::kFp8E4M3)
        fail(RESET_ERR_INVALID_ARGUMENT, "attention decode: unknown KV cache type ", static_cast<int>(c.type));
    if (c.type == KvCacheType::kFp8E4M3 &&
        !(std::isfinite(c.k_scale) && c.k_scale > 0.0f && std::isfinite(c.v_scale) && c.v_scale > 0.0f))
        fail(RESET_ERR_INVALID_ARGUMENT, "attention decode: FP8 cache scales ", c.k_scale, " and ", c.v_scale,
             " must be finite and positive");
    require(a.q, "attention decode: q");
    require(a.lengths, "attention decode: lengths");
    require(a.out, "attention decode: out");
    require(c.keys, "attention decode: cache keys");
    require(c.values, "attention decode: cache values");
    if (reinterpret_cast<uintptr_t>(c.keys) % 16 || reinterpret_cast<uintptr_t>(c.values) % 16)
        fail(RESET_ERR_INVALID_ARGUMENT, "attention decode: the cache must be 16-byte aligned");
    if (a.splits > kMaxMergeSplits)
        fail(RESET_ERR_INVALID_ARGUMENT, "attention decode: ", a.splits, " splits (at most ", kMaxMergeSplits, ")");
    if (a.splits > 1 && int64_t(a.batch) * c.n_kv_heads > kMergeCounters)
        fail(RESET_ERR_INVALID_ARGUMENT, "attention decode: ", a.batch, " rows x ", c.n_kv_heads,
             " KV heads split over the context (at most ", kMergeCounters, " pairs; use one split)");
    const size_t needed = attention_decode_workspace_bytes(a.batch, a.n_heads, c.head_dim, a.splits);
    if (needed > 0 && (!a.workspace || a.workspace_bytes < needed))
        fail(RESET_ERR_INVALID_ARGUMENT, "attention decode: ", a.splits, " splits need ", needed,
             " bytes of workspace, got ", a.workspace ? a.workspace_bytes : 0);
    switch (c.head_dim) {
    case 16: launch_for_group<16>(a, group, stream); break;
    case 32: launch_for_group<32>(a, group, stream); break;
    case 64: launch_for_group<64>(a, group, stream); break;
    default: launch_for_group<128>(a, group, stream); break;
    }
}

}  // namespace reset
