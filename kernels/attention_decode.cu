// attention_decode.cu — split-KV (flash-decoding) GQA attention for decode,
// on the tensor cores, streaming the cache through a cp.async pipeline.
//
// Grid: (split, kv_head, row).  One CTA owns one KV head of one row (a
// sequence, or one position of a prefill chunk; slots[row] names its cache
// slot) over one chunk of the context and serves every query head of that KV
// head, so each K/V byte is read from memory once per step whatever the group
// size.
//
// Why the tensor cores.  With FP32 FMAs a position costs 2 · group · head_dim
// FMAs (1,024 at Qwen3-8B's group 4 and head_dim 128) plus the conversions:
// at 32k with an FP8 cache that is ~12 µs of pure issue against a ~21.6 µs
// memory floor, so the CUDA-core kernel could not overlap it with the loads
// (it reached ~29% of bandwidth).  Here the products are mma.sync.m16n8k16
// (sm_80 and later, so every shipped target), the FLOPs drop out of the
// critical path, and what is left per byte is one conversion (FP8) or none
// (BF16), a few shuffles and the exponentials.
//
// Exactness with 16-bit tensor-core operands.  K and V are exact in the mma
// operand type: BF16 cache -> bf16 mma; FP8 E4M3 -> f16 mma (E4M3 -> FP16 is
// exact).  The FP32 factors are split into 16-bit parts whose sum carries
// (nearly) all of their bits, one mma per part, FP32 accumulation:
//   - q (scale, k_scale and log2(e) folded in): three bf16 parts (24 bits)
//     for BF16, two f16 parts (22 bits) for FP8, after a per-head power of
//     two brings the head's largest |q| to [2^13, 2^14) (f16's range; undone
//     exactly on the scores);
//   - p = 2^(s - m) · 2^15 (the power of two keeps the f16 parts clear of
//     f16's subnormals; l carries the same factor, so it cancels in acc / l):
//     three bf16 / two f16 parts.
// Scores and weights are in the log2 domain (exp2 = one MUFU op).  The result
// differs from the FP32 CUDA-core kernel in the last bits only (tests: per-head
// relative L2 against FP64 <= 2e-5, unchanged).
//
// The mma shapes (heads padded to 8 = kAttentionDecodeMaxGroup rows, so one
// instance serves every group size 1..8; the padded heads get a zero query
// and are never written):
//   S  = Q · K^T:  A = Q (16 rows: heads 0..7, rows 8..15 zero), B = K^T,
//                  8 positions per mma, head_dim / 16 k-steps;
//   O^T += V^T · P^T:  A = V^T (16 of head_dim per mma), B = P^T.
// The accumulator of S (row = head g, columns = positions 2·tig, 2·tig + 1)
// is exactly the B fragment P^T needs, so P never leaves registers; O^T's
// accumulators hold (d, head) with no padding rows.
//
// The pipeline.  Each warp streams its own blocks of kBlock = 16 positions
// (K and V, 2·16·head_dim elements) through a private ring of kStages stages
// in shared memory (16 KiB per warp: 2 stages of 8 KiB at BF16 head_dim 128,
// 4 of 4 KiB at FP8), filled by cp.async (16-byte copies, coalesced; rows past
// the chunk's end are zero-filled so that p = 0 never meets garbage).  While
// block i is computed, blocks i+1 .. i+kStages-1 are in flight.  Warps never
// wait for each other inside the loop: each keeps its own online softmax
// (running max m, sum l, accumulators; Milakov & Gimelshein 2018) over the
// blocks warp, warp + 4, ... of the chunk, and the four are combined once at
// the end through shared memory (exp2(m_w - M) weights, in warp order).
// 64 KiB of ring per CTA (+ 4.5-6.5 KiB static) and <= 168 registers (sm_90a,
// head_dim 128: BF16 148, FP8 124) give 3 CTAs per SM on sm_90: 12 warps and
// 96 KiB (BF16) to 144 KiB (FP8) in flight; fewer where shared memory is
// smaller (cudaOccupancy… decides, see attention_decode_splits).  Shared
// memory is XOR-swizzled in 16-byte chunks (chunk ^ (row or 128-byte line
// mod 8)) so the fragment reads (ldmatrix for BF16, 16/8/4-byte LDS for
// FP8, whose bytes are converted in registers) are free of bank conflicts
// at head_dim 128.
//
// Before the previous kernel finishes (programmatic dependent launch): the
// CTA reads lengths[b] and slots[b], works out its chunk, and asks L2 to
// prefetch its first blocks of K and V (cp.async.bulk.prefetch.L2, sm_90+,
// at most kWarps · kStages blocks = 32 KiB of each: the first round of every
// warp, so the L2 (50 MB) is not flooded at 32k).  Why that is safe:
//   - lengths and slots are written at the start of the step by its input
//     copy (copy_ranges, kernels/range_copy.h), or by the prefill stage's
//     host copy, long before: every kernel waits for its
//     predecessor before it lets its successor start, so when this CTA runs,
//     everything two launches back, copies included, is complete and visible;
//   - the L2 is the point of coherence, so prefetching lines that the previous
//     kernel (qk_norm_rope_kv_append) is still writing (position length-1)
//     cannot serve stale data; nothing is loaded into registers, L1 or shared
//     memory from the cache, q or the workspace before the wait.
//
// The chunk of a split is whole kChunk = 64-position pieces (one block per
// warp), as evenly spread over the splits as pieces allow; it depends on
// lengths[b], read on the device, so the same launch (and a CUDA graph holding
// it) serves every context length.  Splits past the end leave at once, and the
// merge counts only the live ones.  attention_decode_splits picks as many
// splits as fill one wave of resident CTAs (3 per SM on the H100: 49 splits
// for 8 KV heads at batch 1, 6 at batch 8), so no second, ragged wave streams
// alone; measured on the H100 at 32k, two or three waves cost 30-70% more
// time (more partials, more CTA prologues) and fewer splits than a wave up to
// 10%.
//
// The merge (the kernel's tail: the last CTA of each (row, KV head) reads
// every split's partials from L2) issues each round's loads together: every
// thread holds one float4 of kMergeRound = 16 splits (kWideMergeRound = 24 where that saves a
// round) in registers per round trip (one round at 1k context, three at 32k), the first round in flight
// while the merge weights are formed.
//
// The new token (NewTokenInputs, the kNewToken instances; the decode steps
// where it pays: lib/cuda/device_session.cpp, new_token_in_attention_pays).  After the wait every warp loads raw heads from
// the QKV output: query heads warp and warp + 4 of the group, and, in the last
// live split, the warp whose last block holds position length - 1 also the
// new K and V.  The loads go out before the CTA's K/V copies; the transforms
// (qk_norm_rope_rules.cuh, the separate kernel's operations in its order)
// run while the first blocks land.  The queries go to q_s's space for warp 0
// to read; K and V are rounded for the cache, stored there, and written into
// the owning warp's ring stage after that block's copy has landed (the copy
// read whatever the cache held at that row: this CTA stores it concurrently,
// and no other CTA reads it).  The result is the same bits as
// qk_norm_rope_kv_append followed by this kernel (the GPU test compares them).
//
// With one live split the CTA writes out = acc / l; otherwise it writes (acc,
// m, l) and the last live split to arrive merges them all in split order
// (Dao et al., "Flash-Decoding", 2023), so results are deterministic.
#include "kernels/attention_decode.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "kernels/cuda_common.cuh"
#include "kernels/dependent_launch.cuh"
#include "kernels/qk_norm_rope_rules.cuh"
#include "kernels/step_trace.cuh"
#include "rules/w4a16.h"

namespace reset {
namespace {

constexpr int kThreads = 128;
constexpr int kWarps = kThreads / 32;
constexpr int kBlock = 16;               // positions per warp step: two 8-position S tiles, one 16-deep PV k-step
constexpr int kChunk = kWarps * kBlock;  // granularity of a split's chunk: one block per warp
constexpr int kHeadRows = 8;             // query heads per mma (the group, padded)
static_assert(kAttentionDecodeMaxGroup == kHeadRows, "the mma tiles hold 8 query heads");
constexpr int kWarpRingBytes = 16384;    // shared memory per warp for its stages
constexpr int kMinBlocks = 3;            // resident CTAs per SM the register budget is set for (<= 168)
constexpr float kLog2e = 1.4426950408889634f;
constexpr float kPScale = 32768.0f;      // 2^15: p's f16 parts stay normal (see the top)

// Splits one merge can weigh (its weights sit in shared memory);
// attention_decode_splits never picks more, and attention_decode refuses more.
constexpr int kMaxMergeSplits = 256;
// Splits whose partial accumulators (a float4 chunk each) a merging thread holds in registers at
// once: one round trip serves up to this many (16 float4 = 64 registers, free after the loop).
constexpr int kMergeRound = 16;
// The wider round, taken only where it saves a round: 17-24 live splits, as a 1k step's contexts
// have (1025-1088 positions: 17 pieces), merge in one round of 24 (96 registers; 32 spill under
// the 3-CTA budget) instead of two of 16.  Measured on the H200 (session 51, alone): a round of
// 24 everywhere (run 4) made 17 live splits 6% faster (8.04 -> 7.51 µs a layer, FP8) but 16
// (1024 positions) 4% and 32 (2048) 5% slower (the loads past the live splits cost), and what it
// did at 43-47 (8k-32k: two rounds instead of three) was not clear in the step (-0.7% at 8k,
// +1.4% at 32k); so only 17-24 take it (run 5: 17 live splits 8.02 -> 7.63 FP8, 8.15 -> 7.79
// BF16, the rest within 1%; the 1k decode step 2.317 -> 2.286 ms, -1.3%).
constexpr int kWideMergeRound = 24;

// The workspace: kMergeCounters arrival counters, one per (row, KV head),
// which the merging CTA sets back to zero, then the partials
// [batch][n_heads][splits][partial_stride].  The counters sit at the same
// place whatever the batch and the splits, so one workspace serves every
// launch of a session in stream order (decode steps and prefill chunks):
// partials never land where a later launch expects zero counters.
constexpr int kMergeCounters = 65536;
// AttentionDecodeArgs::prefetch is asked for only where a launch's K/V are at most this many bytes:
// below it attention is latency-bound (at batch 1, 1k context, 4 MB in ~10 µs, where the DRAM could
// move 30 MB).  Measured on the H100 with the Qwen3-8B shape and 16 MB of gate_up asked for
// (docs/history/cuda-engine-sessions.md, session 10): the step 1.3-1.5% faster at 1k, batch 1 and 2 (4 and 8 MB of
// K/V); 0.5% slower at batch 8 (32 MB) and 2.1% at 32k with FP8 (67 MB), where the cache
// streams at the full bandwidth and the prefetch only delays it.
constexpr int64_t kPrefetchKvBytes = int64_t(16) << 20;

// Partial result of one (row, query head, split): head_dim accumulators,
// then the running max m (log2 domain) and the sum l, padded to whole 16-byte
// words so that the merge loads the accumulators 16 bytes at a time (its
// copies of 8 bytes spent ~3 µs issuing 56 per thread at 49 splits, H100 trace).
__host__ __device__ constexpr int64_t partial_stride(int head_dim) { return head_dim + 4; }
__host__ __device__ inline int64_t partial_floats(int batch, int n_heads, int head_dim, int splits) {
    return int64_t(batch) * n_heads * splits * partial_stride(head_dim);
}
__device__ inline unsigned *attention_counters(const AttentionDecodeArgs &a) {
    return reinterpret_cast<unsigned *>(a.workspace);
}
__device__ inline float *attention_partials(const AttentionDecodeArgs &a) { return a.workspace + kMergeCounters; }

// Shapes of one instance: head_dim 16, 32, 64 or 128, BF16 or FP8 cache.
template <int kHeadDim, bool kFp8>
struct Tiles {
    static constexpr int kBytes = kFp8 ? 1 : 2;
    static constexpr int kRowBytes = kHeadDim * kBytes;  // 16 .. 256: whole 16-byte chunks
    static constexpr int kRowChunks = kRowBytes / 16;
    static constexpr int kBlockBytes = kBlock * kRowBytes;  // K (or V) of one block
    static constexpr int kStageBytes = 2 * kBlockBytes;
    static constexpr int kStages = std::min(8, std::max(2, kWarpRingBytes / kStageBytes));
    static constexpr int kWarpBytes = kStages * kStageBytes;
    static constexpr int kCopies = 2 * kBlock * kRowChunks / 32;  // 16-byte cp.async per lane per block
    static constexpr int kSteps = kHeadDim / 16;  // k-steps of S = m-tiles of O^T
    static constexpr int kParts = kFp8 ? 2 : 3;   // 16-bit parts of q and p
    static constexpr int kKeyBytes = kHeadDim / 4;          // FP8: bytes of a K row per thread (4 per row)
    static constexpr int kValueBytes = kHeadDim / 8;        // FP8: bytes of a V row per thread (8 per row)
    static constexpr int kValueWords = (kValueBytes + 3) / 4;
    // Swizzle key: the row (rows of >= 8 chunks) or the 128-byte line (shorter rows) mod 8.
    static constexpr int kSwizzleShift = kRowChunks > 8 ? 4 : 3;
    // The ring, reused after the loop for each warp's accumulators ([8 heads][head_dim] floats)
    // and by the merge for its weights ([8][kMaxMergeSplits] floats).
    static constexpr int kSharedBytes = std::max(kWarps * kWarpBytes, int(sizeof(float)) * kHeadRows * kMaxMergeSplits);
    static_assert(kRowBytes % 16 == 0 && kCopies >= 1 && (kStages & (kStages - 1)) == 0 && kKeyBytes >= 4 &&
                      kValueWords >= 1,
                  "attention decode tiles");
    // A warp's accumulators after the loop: [head][kAccStride] floats (the padding of 4 makes the
    // stores of the mma layout free of bank conflicts for BF16, 2-way for FP8's float2 stores).
    static constexpr int kAccStride = kHeadDim + 4;
    static_assert(kWarpBytes >= int(sizeof(float)) * kHeadRows * kAccStride, "a warp's accumulators fit its ring");
};

// Byte offset of 16-byte chunk `index` (row-major: row * kRowChunks + chunk) of a K or V block.
template <class T>
__device__ __forceinline__ int swizzle(int index) {
    return 16 * (index ^ ((index >> T::kSwizzleShift) & 7));
}

__device__ __forceinline__ uint32_t shared_address(const void *p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// 16 bytes global -> shared, bypassing L1, with an L2 policy; `valid` false
// zero-fills without reading.
__device__ __forceinline__ void cp_async_16(uint32_t dst, const void *src, bool valid, uint64_t policy) {
    asm volatile("cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, %2, %3;\n" ::"r"(dst), "l"(src),
                 "r"(valid ? 16 : 0), "l"(policy)
                 : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
}

__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t address) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(address)
                 : "memory");
}
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], uint32_t address) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(address)
                 : "memory");
}

// D += A · B, m16n8k16, FP32 accumulators; bf16 or f16 operands (PTX ISA fragment layouts).
template <bool kF16>
__device__ __forceinline__ void mma(float (&d)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3, uint32_t b0,
                                    uint32_t b1) {
    if constexpr (kF16) {
        asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
            "{%0, %1, %2, %3};\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
            : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    } else {
        asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
            "{%0, %1, %2, %3};\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
            : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    }
}

template <typename T>
__device__ __forceinline__ uint32_t bits(const T &v) {
    static_assert(sizeof(T) == 4, "32-bit");
    uint32_t u;
    memcpy(&u, &v, 4);
    return u;
}

// Two E4M3 values (the low byte first) as an f16x2 word, exactly (native cvt on sm_89+).
__device__ __forceinline__ uint32_t e4m3x2_to_f16x2(uint32_t pair) {
    const __half2_raw h = __nv_cvt_fp8x2_to_halfraw2(static_cast<__nv_fp8x2_storage_t>(pair & 0xffffu), __NV_E4M3);
    return uint32_t(h.x) | (uint32_t(h.y) << 16);
}

// x0, x1 (x0 in the low half) as 16-bit parts whose sum is x to 22 (f16, two
// parts) or 24 (bf16, three parts) bits.
template <bool kF16, int kParts>
__device__ __forceinline__ void split_pair(float x0, float x1, uint32_t (&part)[kParts]) {
#pragma unroll
    for (int t = 0; t < kParts; ++t) {
        float2 back;
        if constexpr (kF16) {
            const __half2 h = __floats2half2_rn(x0, x1);
            part[t] = bits(h);
            back = __half22float2(h);
        } else {
            const __nv_bfloat162 h = __floats2bfloat162_rn(x0, x1);
            part[t] = bits(h);
            back = __bfloat1622float2(h);
        }
        x0 -= back.x;  // exact: the residual of a round to nearest
        x1 -= back.y;
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

// AttentionDecodeArgs::out_amax: every thread of the CTA calls this with the
// max |out| it stored (0 if none); one atomic per warp, only where the warp's
// maximum is past the FP16 row limit (the only maxima the o GEMV's row scale
// depends on; rules/w4a16.h).
__device__ __forceinline__ void raise_out_amax(const AttentionDecodeArgs &a, int b, float stored_max) {
    if (!a.out_amax) return;
    stored_max = warp_max(stored_max);
    if (threadIdx.x % 32 == 0 && stored_max > w4a16::kFp16RowLimit)
        atomicMax(reinterpret_cast<unsigned *>(a.out_amax + b), __float_as_uint(stored_max));
}

// The splits that hold positions for a context of `length` (whole kChunk
// pieces, as evenly spread as pieces allow; the later splits are empty).
__device__ __forceinline__ int live_split_count(int length, int splits) {
    const int pieces = (length + kChunk - 1) / kChunk;
    const int per_split = (pieces + splits - 1) / splits;
    return (pieces + per_split - 1) / per_split;
}

// Element u (= 4·step + 2·half + e) of the query slice thread (g, tig) holds
// for the S mma: the head_dim index it multiplies.  BF16: the natural order of
// ldmatrix fragments; FP8: the thread's own kKeyBytes contiguous K bytes.
template <class T, bool kFp8>
__device__ __forceinline__ int query_index(int tig, int u) {
    if constexpr (kFp8) return T::kKeyBytes * tig + u;
    else return 16 * (u / 4) + 8 * ((u / 2) % 2) + 2 * tig + u % 2;
}

// FP8: kBytes (16, 8, 4 or 2) bytes at byte `offset` of 16-byte chunk `chunk`
// of row `row` of a swizzled block, as words into w (2 bytes fill the low
// half of w[0]).
template <class T, int kBytes>
__device__ __forceinline__ void load_row_bytes(const unsigned char *block, int row, int chunk, int offset,
                                               uint32_t *w) {
    const unsigned char *p = block + swizzle<T>(row * T::kRowChunks + chunk) + offset;
    if constexpr (kBytes == 16) {
        const uint4 v = *reinterpret_cast<const uint4 *>(p);
        w[0] = v.x;
        w[1] = v.y;
        w[2] = v.z;
        w[3] = v.w;
    } else if constexpr (kBytes == 8) {
        const uint2 v = *reinterpret_cast<const uint2 *>(p);
        w[0] = v.x;
        w[1] = v.y;
    } else if constexpr (kBytes == 4) {
        w[0] = *reinterpret_cast<const uint32_t *>(p);
    } else {
        static_assert(kBytes == 2, "a row slice is 2, 4, 8 or 16 bytes, or 16-byte chunks");
        w[0] = *reinterpret_cast<const uint16_t *>(p);
    }
}

// FP8: the kKeyBytes bytes of K row `row` thread tig owns, as words (word s feeds k-step s).
template <class T>
__device__ __forceinline__ void load_key_words(const unsigned char *block, int row, int tig, uint32_t (&w)[T::kSteps]) {
    if constexpr (T::kKeyBytes >= 16) {
#pragma unroll
        for (int p = 0; p < T::kKeyBytes / 16; ++p)
            load_row_bytes<T, 16>(block, row, (T::kKeyBytes / 16) * tig + p, 0, w + 4 * p);
    } else {
        const int byte = T::kKeyBytes * tig;
        load_row_bytes<T, T::kKeyBytes>(block, row, byte / 16, byte % 16, w);
    }
}

// FP8: the kValueBytes bytes of V row `row` thread g owns (head_dim indices kValueBytes·g ..).
template <class T>
__device__ __forceinline__ void load_value_words(const unsigned char *block, int row, int g,
                                                 uint32_t (&w)[T::kValueWords]) {
    const int byte = T::kValueBytes * g;
    load_row_bytes<T, T::kValueBytes>(block, row, byte / 16, byte % 16, w);
}

// Warp 0: query head `head` of row b, the elements thread tig multiplies (query_index), in 16-byte
// (FP8: 4 consecutive) or 8-byte (BF16: pairs) loads where q's alignment allows, else one by one.
template <class T, bool kFp8>
__device__ __forceinline__ void load_query(const AttentionDecodeArgs &a, int b, int head, int tig,
                                           float (&q)[T::kSteps * 4]) {
    const float *q_head = a.q + (int64_t(b) * a.n_heads + head) * (T::kSteps * 16);
    const uintptr_t alignment = reinterpret_cast<uintptr_t>(a.q) | uintptr_t(a.n_heads * T::kSteps * 64);
    if (alignment % (kFp8 ? 16 : 8) == 0) {
#pragma unroll
        for (int u = 0; u < T::kSteps * 4; u += kFp8 ? 4 : 2) {
            if constexpr (kFp8) {
                const float4 v = *reinterpret_cast<const float4 *>(q_head + query_index<T, kFp8>(tig, u));
                q[u] = v.x;
                q[u + 1] = v.y;
                q[u + 2] = v.z;
                q[u + 3] = v.w;
            } else {
                const float2 v = *reinterpret_cast<const float2 *>(q_head + query_index<T, kFp8>(tig, u));
                q[u] = v.x;
                q[u + 1] = v.y;
            }
        }
    } else {
#pragma unroll
        for (int u = 0; u < T::kSteps * 4; ++u) q[u] = q_head[query_index<T, kFp8>(tig, u)];
    }
}

#ifdef RESET_ATTENTION_TRACE
// Debug-only per-CTA timeline (tests/bench/attention_decode_bench.cu, trace mode): thread 0 of
// CTA blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z) < kTraceCtas writes
// [0] entry, [1] after the PDL wait, [2] loop start (query split), [3] after the loop and the
// barrier that follows it, [4] partials written and arrival counted (or out written with one
// live split), [5] merge end (the merging CTA; 0 otherwise), all %globaltimer ns; [6] %smid;
// [7] positions (end - begin).  The merging CTA also writes: [8] every thread's first round of
// loads issued (a barrier added in this build), [9] the merge weights of every head in shared
// memory (after the merge's barrier), [10] thread 0's first round summed (its loads landed: the
// first round trip), [15] thread 0's last round issued (= [10] with one round), [11] every
// thread's rounds summed and out stored (a barrier added in this build), all ns; [12] rounds
// the merge took and [13] splits per round, plain numbers.  [14] (every CTA that writes
// partials, so live > 1) the partials' stores issued (the barrier before the fence), ns;
// [4] - [14] is the fence and the arrival atomic.  Every launch overwrites the records, so after a
// chain they hold the last launch.  Nothing but an early-leaving CTA's record is stored before the PDL wait (the
// previous launch's CTAs may still be writing theirs); its record equals the previous launch's
// but for the entry stamp, which is a later time.
constexpr int kTraceCtas = 4096;
constexpr int kTraceWords = 16;  // per CTA
__device__ unsigned long long g_attention_trace[kTraceCtas][kTraceWords];

__device__ __forceinline__ unsigned long long trace_clock() { return cuda::global_timer_ns(); }
__device__ __forceinline__ unsigned trace_smid() {
    unsigned id;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
    return id;
}
// This CTA's record for thread 0, nullptr for every other thread and past kTraceCtas.
__device__ __forceinline__ unsigned long long *trace_record() {
    const unsigned cta = cuda::linear_cta();
    return threadIdx.x == 0 && cta < unsigned(kTraceCtas) ? g_attention_trace[cta] : nullptr;
}
__device__ __forceinline__ void trace_stamp(int k) {
    if (unsigned long long *r = trace_record()) r[k] = trace_clock();
}

#endif
template <int kHeadDim, bool kFp8, bool kNewToken>
__global__ void __launch_bounds__(kThreads, kMinBlocks) split_kernel(const AttentionDecodeArgs a) {
    [[maybe_unused]] const trace::EndMark end_mark;
    using T = Tiles<kHeadDim, kFp8>;
    constexpr int kSteps = T::kSteps, kParts = T::kParts;
    extern __shared__ __align__(128) unsigned char ring_s[];
    __shared__ float m_s[kWarps][kHeadRows];
    __shared__ float l_s[kWarps][kHeadRows];
    // The S mma's A registers 0 and 2, per k-step, part and lane.  With a new token (kNewToken) it
    // first holds the group's transformed queries, [kHeadRows][kHeadDim] floats, which warp 0 reads
    // before it writes the A registers over them.
    __shared__ __align__(16) uint2 q_s[kSteps][kParts][32];
    static_assert(sizeof(q_s) >= sizeof(float) * kHeadRows * kHeadDim, "the new token's queries fit q_s");
    __shared__ float score_scale_s[kHeadRows];
    __shared__ int last;
#ifdef RESET_ATTENTION_TRACE
    const unsigned long long trace_entry = threadIdx.x == 0 ? trace_clock() : 0;
#endif

    const int split = blockIdx.x, kv_head = blockIdx.y, b = blockIdx.z;
    const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    const int g = lane / 4, tig = lane % 4;  // the mma fragments' groupID and thread-in-group

    // --- Before the previous kernel is done: lengths, slots and the L2 prefetch only (see the top).
    const int length = a.lengths[b];
    const int live = live_split_count(length, a.splits);
    // The weight prefetch (AttentionDecodeArgs::prefetch) only where the launch's K/V, estimated
    // from this row's length, leave the DRAM mostly idle.
    const bool prefetch = attention_kv_bytes_estimate(a.cache, length, a.batch) <= kPrefetchKvBytes;
    const unsigned ctas = gridDim.x * gridDim.y * gridDim.z;
    if (split >= live) {  // past the context's end: nothing to do (the merge counts live splits)
#ifdef RESET_ATTENTION_TRACE
        if (unsigned long long *r = trace_record()) {
            r[0] = trace_entry;
            for (int k = 1; k < kTraceWords; ++k) r[k] = 0;
        }
#endif
        if (tid == 0 && prefetch) issue_weight_prefetch(a.prefetch, cuda::linear_cta(), ctas);
        return;
    }
    const int pieces_per_split = ((length + kChunk - 1) / kChunk + a.splits - 1) / a.splits;
    const int begin = split * pieces_per_split * kChunk;
    const int end = min(length, begin + pieces_per_split * kChunk);
    const int64_t slot = a.slots ? a.slots[b] : b;
    const int64_t row0 = (slot * a.cache.n_kv_heads + kv_head) * a.cache.capacity;
    const char *keys = static_cast<const char *>(a.cache.keys) + row0 * T::kRowBytes;
    const char *values = static_cast<const char *>(a.cache.values) + row0 * T::kRowBytes;
    if (tid == 0) {
        const int first_round = min(end - begin, kWarps * T::kStages * kBlock);
        cuda::prefetch_l2(keys + int64_t(begin) * T::kRowBytes, uint32_t(first_round) * T::kRowBytes);
        cuda::prefetch_l2(values + int64_t(begin) * T::kRowBytes, uint32_t(first_round) * T::kRowBytes);
    }
    trace::begin_dependent_kernel(trace::kAttention, unsigned(a.splits));
#ifdef RESET_ATTENTION_TRACE
    if (unsigned long long *r = trace_record()) {
        r[1] = trace_clock();
        r[0] = trace_entry;
        r[4] = r[5] = 0;
        r[6] = trace_smid();
        r[7] = unsigned(end - begin);
        for (int k = 8; k < kTraceWords; ++k) r[k] = 0;
    }
#endif

    // --- q first: warp 0's loads of the group's queries go out before the CTA's burst of K/V
    // copies, which would otherwise queue ahead of them (q is needed before the first product).
    const int group = a.n_heads / a.cache.n_kv_heads;
    const int first_head = kv_head * group;
    const int blocks = (end - begin + kBlock - 1) / kBlock;
    float q[kHeadDim / 4];  // warp 0: head g's slice for the S mma, element u = 4·step + 2·half + e
    // With a new token every warp loads raw heads instead: query heads warp and warp + kWarps of the
    // group, and, in the last live split, the warp whose last block holds position length - 1 also
    // the new K and V (it writes them into that block's stage once the block has landed, below).
    // Lane `lane` transforms elements lane + 32 j of a head, as qk_norm_rope_kv_append's kernels
    // do, so that its sums of squares add in the same order and the same bits come out.  The norm
    // weights are loaded with the heads (one round trip), and the cosines and sines are formed
    // while they arrive.  (Formed before the wait instead, into shared memory, they cost the step
    // 2.6-2.9% at 1k, batch 1 on the H100: attention's CTAs are placed only as the QKV GEMV's
    // leave, so that work and its barrier sat on the path; session 44, runs 1-2.)
    constexpr int kLaneElements = (kHeadDim + 31) / 32;
    constexpr int kLaneRotations = kHeadDim >= 64 ? kHeadDim / 64 : 1;  // distinct frequencies a lane uses
    constexpr int kQueryItems = kHeadRows / kWarps;
    const bool new_row_here = kNewToken && split == live - 1 && warp == (blocks - 1) % kWarps;
    // Whether this warp has item i (warp-uniform).
    const auto has_item = [&](int i) { return i < kQueryItems ? warp + kWarps * i < group : new_row_here; };
    float fresh[kQueryItems + 2][kLaneElements];    // q items, then K, then V: elements lane + 32 j
    float partner[kQueryItems + 1][kLaneElements];  // q items and K: the RoPE partners, elements (lane + 32 j) ^ d/2
    float norm[2][2][kLaneElements];                // q and k norm weights of elements lane + 32 j and their partners
    float cosine[kLaneRotations], sine[kLaneRotations];
    if constexpr (kNewToken) {
        const NewTokenInputs &t = a.new_token;
        const float *in = t.qkv + int64_t(b) * t.ld_qkv;
#pragma unroll
        for (int i = 0; i < kQueryItems + 2; ++i) {
            const bool used = has_item(i);
            const int column = i < kQueryItems ? (first_head + warp + kWarps * i) * kHeadDim
                                               : (a.n_heads + (i - kQueryItems) * a.cache.n_kv_heads + kv_head) * kHeadDim;
#pragma unroll
            for (int j = 0; j < kLaneElements; ++j) {
                const int e = lane + 32 * j;
                const bool ok = used && e < kHeadDim;
                fresh[i][j] = ok ? in[column + e] : 0.0f;
                if (i <= kQueryItems) partner[i][j] = ok ? in[column + (e ^ (kHeadDim / 2))] : 0.0f;
            }
        }
#pragma unroll
        for (int k = 0; k < 2; ++k) {
            const float *weights = k == 0 ? t.q_norm : t.k_norm;
            const bool used = weights && has_item(k == 0 ? 0 : kQueryItems);
#pragma unroll
            for (int j = 0; j < kLaneElements; ++j) {
                const int e = min(lane + 32 * j, kHeadDim - 1);
                norm[k][0][j] = used ? __ldg(weights + e) : 1.0f;
                norm[k][1][j] = used ? __ldg(weights + (e ^ (kHeadDim / 2))) : 1.0f;
            }
        }
#pragma unroll
        for (int r = 0; r < kLaneRotations; ++r)
            qk_rules::rotation(length - 1, __ldg(t.inv_freq + (lane + 32 * r) % (kHeadDim / 2)), t.rope_attention_factor,
                               cosine[r], sine[r]);
    } else if (warp == 0) {
        load_query<T, kFp8>(a, b, first_head + min(g, group - 1), tig, q);
    }

    // --- This warp's blocks: warp, warp + kWarps, ... of the chunk, each through its ring.
    const int my_blocks = blocks > warp ? (blocks - warp + kWarps - 1) / kWarps : 0;
    unsigned char *ring = ring_s + warp * T::kWarpBytes;
    const uint32_t ring_address = shared_address(ring);
    // The K/V cache is read once per step and first out of the L2
    // (cuda::evict_first_policy): at long contexts a layer's cache (67 MB at
    // 32k with FP8) is larger than the L2, and with the default policy it
    // evicts the partials the early splits wrote, which the merge then
    // fetches from memory behind the streams of the other heads.
    const uint64_t stream_policy = cuda::evict_first_policy();
    const auto issue = [&](int i) {
        const int first = begin + (warp + i * kWarps) * kBlock;
        const int valid = min(kBlock, end - first);
        const char *k_src = keys + int64_t(first) * T::kRowBytes;
        const char *v_src = values + int64_t(first) * T::kRowBytes;
        const uint32_t dst = ring_address + (i % T::kStages) * T::kStageBytes;
#pragma unroll
        for (int c = 0; c < T::kCopies; ++c) {
            const int index = lane + 32 * c;
            const bool is_v = index >= kBlock * T::kRowChunks;
            const int chunk = is_v ? index - kBlock * T::kRowChunks : index;
            const bool ok = chunk / T::kRowChunks < valid;
            cp_async_16(dst + (is_v ? T::kBlockBytes : 0) + swizzle<T>(chunk), (is_v ? v_src : k_src) + (ok ? 16 * chunk : 0),
                        ok, stream_policy);
        }
    };
#pragma unroll
    for (int i = 0; i < T::kStages - 1; ++i) {
        if (i < my_blocks) issue(i);
        cp_async_commit();
    }

    // --- The new token's transforms, while the first blocks stream in: the q heads into q_s's space,
    // K and V rounded for the cache and stored there (new_key, new_value: their bits, kept for the ring).
    uint16_t new_key[kLaneElements], new_value[kLaneElements];
    if constexpr (kNewToken) {
        const NewTokenInputs &t = a.new_token;
        float *queries = reinterpret_cast<float *>(q_s);  // [kHeadRows][kHeadDim]
#pragma unroll
        for (int i = 0; i <= kQueryItems; ++i) {
            if (!has_item(i)) continue;
            float *x = fresh[i], *y = partner[i];
            const int k = i < kQueryItems ? 0 : 1;  // q or k norm
            if (t.q_norm) {
                float sum = 0.0f;
#pragma unroll
                for (int j = 0; j < kLaneElements; ++j)
                    if (lane + 32 * j < kHeadDim) sum = qk_rules::add_square(sum, x[j]);
#pragma unroll
                for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
                const float inverse = qk_rules::rms_inverse(sum, kHeadDim, t.eps);
#pragma unroll
                for (int j = 0; j < kLaneElements; ++j) {
                    x[j] = qk_rules::normed(x[j], norm[k][0][j], inverse);
                    y[j] = qk_rules::normed(y[j], norm[k][1][j], inverse);
                }
            }
#pragma unroll
            for (int j = 0; j < kLaneElements; ++j) {
                const int e = lane + 32 * j;
                if (e >= kHeadDim) continue;
                const float c = cosine[j % kLaneRotations], s = sine[j % kLaneRotations];
                x[j] = e < kHeadDim / 2 ? qk_rules::rotated_first(x[j], y[j], c, s)
                                        : qk_rules::rotated_second(y[j], x[j], c, s);
                if (i < kQueryItems) queries[(warp + kWarps * i) * kHeadDim + e] = x[j];
                else new_key[j] = kFp8 ? qk_rules::e4m3_bits(x[j], a.cache.k_scale) : qk_rules::bf16_bits(x[j]);
            }
        }
        if (new_row_here) {
            const int64_t at = kv_cache_offset(a.cache, slot, kv_head, length - 1);
#pragma unroll
            for (int j = 0; j < kLaneElements; ++j) {
                const int e = lane + 32 * j;
                const float v = fresh[kQueryItems + 1][j];
                new_value[j] = kFp8 ? qk_rules::e4m3_bits(v, a.cache.v_scale) : qk_rules::bf16_bits(v);
                if (e >= kHeadDim) continue;
                if constexpr (kFp8) {
                    static_cast<uint8_t *>(a.cache.keys)[at + e] = uint8_t(new_key[j]);
                    static_cast<uint8_t *>(a.cache.values)[at + e] = uint8_t(new_value[j]);
                } else {
                    static_cast<uint16_t *>(a.cache.keys)[at + e] = new_key[j];
                    static_cast<uint16_t *>(a.cache.values)[at + e] = new_value[j];
                }
            }
        }
        __syncthreads();  // every query head is in q_s's space
        if (warp == 0) {
            const float *head = queries + min(g, group - 1) * kHeadDim;
#pragma unroll
            for (int u = 0; u < kHeadDim / 4; ++u) q[u] = head[query_index<T, kFp8>(tig, u)];
        }
        __syncwarp();  // warp 0 has read the queries before it writes the A registers over them
    }

    // --- The group's queries, as the S mma's A fragments in 16-bit parts: warp 0 builds them (thread
    // (g, tig): head g's slice) into shared memory, where every warp reads them per k-step (registers
    // would cost 32-48 per thread at head_dim 128 and spill under the 3-CTA budget).
    const float out_scale = kFp8 ? a.cache.v_scale : 1.0f;
    if (warp == 0) {
        const float q_scale = a.scale * (kFp8 ? a.cache.k_scale : 1.0f) * kLog2e;
#pragma unroll
        for (int u = 0; u < kHeadDim / 4; ++u) q[u] = g < group ? q[u] * q_scale : 0.0f;
        if constexpr (kFp8) {
            // A power of two brings head g's largest |q| into [2^13, 2^14), inside f16's range;
            // the scores are scaled back by its inverse (both exact).
            float largest = 0.0f;
#pragma unroll
            for (int u = 0; u < kHeadDim / 4; ++u) largest = fmaxf(largest, fabsf(q[u]));
            largest = fmaxf(largest, __shfl_xor_sync(0xffffffffu, largest, 1));
            largest = fmaxf(largest, __shfl_xor_sync(0xffffffffu, largest, 2));
            // largest in [2^(e-127), 2^(e-126)): 2^(140-e) brings it to [2^13, 2^14).
            const int e = int((__float_as_uint(largest) >> 23) & 0xffu);
            const int shift = largest > 0.0f && e < 255 ? max(-100, min(100, 140 - e)) : 0;
            const float up = __uint_as_float(uint32_t(127 + shift) << 23);
#pragma unroll
            for (int u = 0; u < kHeadDim / 4; ++u) q[u] *= up;
            if (tig == 0) score_scale_s[g] = __uint_as_float(uint32_t(127 - shift) << 23);
        } else {
            if (tig == 0) score_scale_s[g] = 1.0f;
        }
#pragma unroll
        for (int s = 0; s < kSteps; ++s) {
            uint32_t r0[kParts], r2[kParts];  // A registers 0 (k 2·tig..) and 2 (k 2·tig + 8..)
            split_pair<kFp8, kParts>(q[4 * s], q[4 * s + 1], r0);
            split_pair<kFp8, kParts>(q[4 * s + 2], q[4 * s + 3], r2);
#pragma unroll
            for (int t = 0; t < kParts; ++t) q_s[s][t][lane] = make_uint2(r0[t], r2[t]);
        }
    }
    __syncthreads();
#ifdef RESET_ATTENTION_TRACE
    trace_stamp(2);
#endif
    const float score_scale = score_scale_s[g];

    // FP8: the high part of the queries' A fragments in registers for the whole loop (16 at
    // head_dim 128), not reloaded from shared memory for every 16-position block, whose chain
    // bounds attention at 32k (session 49 run 5): 32k batch 1 24.76 -> 24.41 us a layer, 8k
    // 12.70 -> 12.38, 1k level on the H200.  Both parts (32 registers) spill at the 3-CTA budget
    // and ran slower (25.15 at 32k; session 50 run 2).
    uint2 q_high[kFp8 ? kSteps : 1];
    if constexpr (kFp8) {
#pragma unroll
        for (int s = 0; s < kSteps; ++s) q_high[s] = q_s[s][0][lane];
    }
    float m = -INFINITY, l = 0.0f;  // head g's running max (log2 domain) and this thread's share of the sum
    float acc[kSteps][4];           // O^T: (d rows of m-tile, heads 2·tig, 2·tig + 1)
#pragma unroll
    for (int s = 0; s < kSteps; ++s)
#pragma unroll
        for (int i = 0; i < 4; ++i) acc[s][i] = 0.0f;

    // ldmatrix lane addressing (BF16): rows 0-7 / 8-15 and 16-byte chunks 2k / 2k + 1 of a 16-row block.
    const int ld_chunk = ((lane & 7) + 8 * (lane >> 4)) * T::kRowChunks + ((lane >> 3) & 1);

    for (int i = 0; i < my_blocks; ++i) {
        cp_async_wait<T::kStages - 2>();  // this lane's copies of block i are done
        __syncwarp();                     // ... and every lane's are visible; the stage refilled below is free
        if (i + T::kStages - 1 < my_blocks) issue(i + T::kStages - 1);
        cp_async_commit();

        const unsigned char *k_block = ring + (i % T::kStages) * T::kStageBytes;
        const unsigned char *v_block = k_block + T::kBlockBytes;
        const int valid = min(kBlock, end - (begin + (warp + i * kWarps) * kBlock));
        if constexpr (kNewToken) {
            // The new token's row, last of this block: its copy brought whatever the cache held
            // (this CTA stores the row concurrently), so the stage gets the row's bits now.
            if (new_row_here && i == my_blocks - 1) {
                unsigned char *stage = ring + (i % T::kStages) * T::kStageBytes;
#pragma unroll
                for (int j = 0; j < kLaneElements; ++j) {
                    const int e = lane + 32 * j;
                    if (e >= kHeadDim) continue;
                    const int byte = e * T::kBytes;
                    const int at = swizzle<T>((valid - 1) * T::kRowChunks + byte / 16) + byte % 16;
                    if constexpr (kFp8) {
                        stage[at] = uint8_t(new_key[j]);
                        stage[T::kBlockBytes + at] = uint8_t(new_value[j]);
                    } else {
                        *reinterpret_cast<uint16_t *>(stage + at) = new_key[j];
                        *reinterpret_cast<uint16_t *>(stage + T::kBlockBytes + at) = new_value[j];
                    }
                }
                __syncwarp();
            }
        }

        // S = Q · K^T for the block's two 8-position tiles, one accumulator per part (short chains).
        float c[kParts][2][4];
#pragma unroll
        for (int t = 0; t < kParts; ++t)
#pragma unroll
            for (int j = 0; j < 2; ++j)
#pragma unroll
                for (int r = 0; r < 4; ++r) c[t][j][r] = 0.0f;
        if constexpr (kFp8) {
            uint32_t key[2][kSteps];
            load_key_words<T>(k_block, g, tig, key[0]);
            load_key_words<T>(k_block, 8 + g, tig, key[1]);
#pragma unroll
            for (int s = 0; s < kSteps; ++s)
#pragma unroll
                for (int j = 0; j < 2; ++j) {
                    const uint32_t b0 = e4m3x2_to_f16x2(key[j][s]), b1 = e4m3x2_to_f16x2(key[j][s] >> 16);
#pragma unroll
                    for (int t = 0; t < kParts; ++t) {
                        const uint2 qa = t == 0 ? q_high[s] : q_s[s][t][lane];
                        mma<true>(c[t][j], qa.x, 0u, qa.y, 0u, b0, b1);
                    }
                }
        } else {
            const uint32_t k_address = shared_address(k_block);
#pragma unroll
            for (int s = 0; s < kSteps; ++s) {
                uint32_t kb[4];  // tile 0: b0, b1; tile 1: b0, b1
                ldmatrix_x4(kb, k_address + swizzle<T>(ld_chunk + 2 * s));
#pragma unroll
                for (int t = 0; t < kParts; ++t) {
                    const uint2 qa = q_s[s][t][lane];
                    mma<false>(c[t][0], qa.x, 0u, qa.y, 0u, kb[0], kb[1]);
                    mma<false>(c[t][1], qa.x, 0u, qa.y, 0u, kb[2], kb[3]);
                }
            }
        }

        // Online softmax for head g over the block's 16 positions (thread: 8j + 2·tig + e).
        float p[2][2];
        float block_max = -INFINITY;
#pragma unroll
        for (int j = 0; j < 2; ++j)
#pragma unroll
            for (int e = 0; e < 2; ++e) {
                float v = c[kParts - 1][j][e];
#pragma unroll
                for (int t = kParts - 2; t >= 0; --t) v += c[t][j][e];  // smallest part first
                v *= score_scale;
                p[j][e] = 8 * j + 2 * tig + e < valid ? v : -INFINITY;
                block_max = fmaxf(block_max, p[j][e]);
            }
        block_max = fmaxf(block_max, __shfl_xor_sync(0xffffffffu, block_max, 1));
        block_max = fmaxf(block_max, __shfl_xor_sync(0xffffffffu, block_max, 2));
        const float new_m = fmaxf(m, block_max);  // finite: position 0 of a block is always valid
        const float alpha = exp2f(m - new_m);     // 0 on the first block (m = -inf)
        m = new_m;
        float block_sum = 0.0f;
#pragma unroll
        for (int j = 0; j < 2; ++j)
#pragma unroll
            for (int e = 0; e < 2; ++e) {
                p[j][e] = exp2f(p[j][e] - new_m) * kPScale;
                block_sum += p[j][e];
            }
        l = l * alpha + block_sum;
        // The accumulators hold heads 2·tig and 2·tig + 1: their alphas live in lanes 8·tig and 8·tig + 4.
        const float alpha0 = __shfl_sync(0xffffffffu, alpha, 8 * tig), alpha1 = __shfl_sync(0xffffffffu, alpha, 8 * tig + 4);
#pragma unroll
        for (int s = 0; s < kSteps; ++s) {
            acc[s][0] *= alpha0;
            acc[s][1] *= alpha1;
            acc[s][2] *= alpha0;
            acc[s][3] *= alpha1;
        }

        // O^T += V^T · P^T: S's accumulators are P^T's B fragments (tile 0 -> b0, tile 1 -> b1).
        uint32_t pb[2][kParts];
        split_pair<kFp8, kParts>(p[0][0], p[0][1], pb[0]);
        split_pair<kFp8, kParts>(p[1][0], p[1][1], pb[1]);
        if constexpr (kFp8) {
            // Rows 2·tig, 2·tig + 1 (k 2·tig..) and 2·tig + 8, 2·tig + 9 (k 2·tig + 8..); bytes paired
            // across positions (prmt), then E4M3 -> f16.
            uint32_t vw[4][T::kValueWords];
            load_value_words<T>(v_block, 2 * tig, g, vw[0]);
            load_value_words<T>(v_block, 2 * tig + 1, g, vw[1]);
            load_value_words<T>(v_block, 2 * tig + 8, g, vw[2]);
            load_value_words<T>(v_block, 2 * tig + 9, g, vw[3]);
#pragma unroll
            for (int s = 0; s < kSteps; ++s) {
                const uint32_t select = s % 2 ? 0x7362u : 0x5140u;  // bytes 2(s%2), 2(s%2)+1 of both words
                const uint32_t lo = __byte_perm(vw[0][s / 2], vw[1][s / 2], select);
                const uint32_t hi = __byte_perm(vw[2][s / 2], vw[3][s / 2], select);
                const uint32_t a0 = e4m3x2_to_f16x2(lo), a1 = e4m3x2_to_f16x2(lo >> 16);
                const uint32_t a2 = e4m3x2_to_f16x2(hi), a3 = e4m3x2_to_f16x2(hi >> 16);
#pragma unroll
                for (int t = 0; t < kParts; ++t) mma<true>(acc[s], a0, a1, a2, a3, pb[0][t], pb[1][t]);
            }
        } else {
            const uint32_t v_address = shared_address(v_block);
#pragma unroll
            for (int s = 0; s < kSteps; ++s) {
                uint32_t va[4];
                ldmatrix_x4_trans(va, v_address + swizzle<T>(ld_chunk + 2 * s));
#pragma unroll
                for (int t = 0; t < kParts; ++t) mma<false>(acc[s], va[0], va[1], va[2], va[3], pb[0][t], pb[1][t]);
            }
        }
    }
    cp_async_wait<0>();  // only empty groups can be left; the ring is reused below
    if (tid == 0 && prefetch) issue_weight_prefetch(a.prefetch, cuda::linear_cta(), ctas);  // K/V reads done

    // --- Combine the four warps (in warp order): M = max m_w, weights exp2(m_w - M).
    l += __shfl_xor_sync(0xffffffffu, l, 1);
    l += __shfl_xor_sync(0xffffffffu, l, 2);
    if (tig == 0) {
        m_s[warp][g] = m;
        l_s[warp][g] = l;
    }
    __syncwarp();  // every lane is done with the ring before it holds the accumulators
    float *acc_w = reinterpret_cast<float *>(ring);  // [head][kAccStride]
#pragma unroll
    for (int s = 0; s < kSteps; ++s) {
        // Rows g and g + 8 of m-tile s are head_dim indices d0 and d0 + 1 (FP8) or d0 + 8 (BF16).
        if constexpr (kFp8) {
            const int d0 = T::kValueBytes * g + 2 * s;
            *reinterpret_cast<float2 *>(acc_w + (2 * tig) * T::kAccStride + d0) = make_float2(acc[s][0], acc[s][2]);
            *reinterpret_cast<float2 *>(acc_w + (2 * tig + 1) * T::kAccStride + d0) = make_float2(acc[s][1], acc[s][3]);
        } else {
            const int d0 = 16 * s + g;
            acc_w[(2 * tig) * T::kAccStride + d0] = acc[s][0];
            acc_w[(2 * tig + 1) * T::kAccStride + d0] = acc[s][1];
            acc_w[(2 * tig) * T::kAccStride + d0 + 8] = acc[s][2];
            acc_w[(2 * tig + 1) * T::kAccStride + d0 + 8] = acc[s][3];
        }
    }
    __syncthreads();
#ifdef RESET_ATTENTION_TRACE
    trace_stamp(3);
#endif
    float stored_max = 0.0f;  // max |out| this thread stored (out_amax; fmaxf drops NaN)
    for (int i = tid; i < group * kHeadDim; i += kThreads) {
        const int h = i / kHeadDim, d = i % kHeadDim;
        float max_m = m_s[0][h];
#pragma unroll
        for (int w = 1; w < kWarps; ++w) max_m = fmaxf(max_m, m_s[w][h]);  // finite: warp 0 has a block
        float total = 0.0f, sum = 0.0f;
#pragma unroll
        for (int w = 0; w < kWarps; ++w) {
            const float weight = exp2f(m_s[w][h] - max_m);  // 0 for a warp without blocks
            total += weight * reinterpret_cast<const float *>(ring_s + w * T::kWarpBytes)[h * T::kAccStride + d];
            sum += weight * l_s[w][h];
        }
        total *= out_scale;
        const int64_t head = int64_t(b) * a.n_heads + first_head + h;
        if (live == 1) {
            const float value = total / sum;
            a.out[head * kHeadDim + d] = value;
            if (a.out16)
                static_cast<__half *>(a.out16)[int64_t(b) * a.ld_out16 + (first_head + h) * kHeadDim + d] =
                    __float2half_rn(value);
            stored_max = fmaxf(stored_max, fabsf(value));
        } else {
            float *partial = attention_partials(a) + (head * a.splits + split) * partial_stride(kHeadDim);
            __stcg(partial + d, total);
            if (d == 0) {
                __stcg(partial + kHeadDim, max_m);
                __stcg(partial + kHeadDim + 1, sum);
            }
        }
    }
    if (live == 1) {
#ifdef RESET_ATTENTION_TRACE
        __syncthreads();  // every thread has issued its stores of out
        trace_stamp(4);
#endif
        raise_out_amax(a, b, stored_max);
        return;
    }

    // The last live split of this (row, KV head) to finish merges them all
    // (Dao et al., "Flash-Decoding", 2023: weights exp2(m_s - M)), in split
    // order whatever the order of arrival, so the result is deterministic.
    // The merge weights of the group's heads sit in the ring (free now).
    auto &weight_s = *reinterpret_cast<float (*)[kHeadRows][kMaxMergeSplits]>(ring_s);
    // One thread fences for the CTA after the barrier (as cooperative groups' grid sync does): the
    // fence is cumulative over the partials the barrier ordered before it, so they are visible before
    // the arrival; the last arrival's second fence orders its reads of every split's partials after.
    __syncthreads();  // every partial is stored, and every thread is done with the ring
    unsigned *counter = attention_counters(a) + int64_t(b) * a.cache.n_kv_heads + kv_head;
    if (tid == 0) {
#ifdef RESET_ATTENTION_TRACE
        trace_stamp(14);  // after the barrier above: every thread has issued its stores of the partials
#endif
        __threadfence();
        last = atomicAdd(counter, 1u) == static_cast<unsigned>(live - 1);
        if (last) __threadfence();
#ifdef RESET_ATTENTION_TRACE
        trace_stamp(4);  // after the branch on the atomic's result: the arrival is done
#endif
    }
    __syncthreads();
    if (!last) return;
    const float *head_partials =
        attention_partials(a) + (int64_t(b) * a.n_heads + first_head) * a.splits * partial_stride(kHeadDim);
    // The merge is the kernel's tail: a chain of L2 round trips that the o GEMV waits for, run by a
    // CTA whose merge code is rarely in the instruction cache.  So it is short, and issues its loads
    // before their first use: each thread sums float4 chunks of the group's outputs (chunk c: head
    // 4c / head_dim), holding the partials of kMergeRound splits of a chunk in registers; the first
    // round's loads go out before the merge weights are worked out, so both share one round trip.
    // (Staging the partials in shared memory by cp.async, as before, took ~5 µs of a 10 µs launch at
    // 1k context, batch 1: docs/history/cuda-engine-sessions.md, session 15.)  Plain __ldcg loads: thread 0's fence
    // after the arrival count and the barrier order them after the other splits' partials.
    const int chunks = group * kHeadDim / 4;  // float4 chunks of the outputs, per split
    const int64_t split_stride = partial_stride(kHeadDim), head_stride = int64_t(a.splits) * split_stride;
    // Rows start on 16-byte boundaries when the workspace does (cudaMalloc's; head_dim + 4 floats per row).
    const bool whole_words = reinterpret_cast<uintptr_t>(head_partials) % 16 == 0;
    float4 round_values[kWideMergeRound];
    // A round's loads are straight-line code, one 16-byte load per split and no branch: the merge
    // runs cold (its code is fetched as it runs), and a branch per split made each later round
    // cost ~3 µs at 8k-32k (traces: docs/history/cuda-engine-sessions.md, session 15).  Splits past the live ones
    // re-read the last live split, whose merge weight there is 0.  One branch per round picks its width.
    const bool wide = live > kMergeRound && live <= kWideMergeRound;
    const int merge_round = wide ? kWideMergeRound : kMergeRound;
    const auto load_round_of = [&](auto width, int chunk, int s0) {
        constexpr int kWidth = decltype(width)::value;
        const float *p = head_partials + (4 * chunk / kHeadDim) * head_stride + (4 * chunk) % kHeadDim;
        if (whole_words) {
#pragma unroll
            for (int u = 0; u < kWidth; ++u)
                round_values[u] = __ldcg(reinterpret_cast<const float4 *>(p + min(s0 + u, live - 1) * split_stride));
        } else {
#pragma unroll
            for (int u = 0; u < kWidth; ++u) {
                const float *q = p + min(s0 + u, live - 1) * split_stride;
                round_values[u] = make_float4(__ldcg(q), __ldcg(q + 1), __ldcg(q + 2), __ldcg(q + 3));
            }
        }
    };
    const auto load_round = [&](int chunk, int s0) {
        if (wide) load_round_of(std::integral_constant<int, kWideMergeRound>{}, chunk, s0);
        else load_round_of(std::integral_constant<int, kMergeRound>{}, chunk, s0);
    };
    // total += the round's weighted partials, in split order (a round of 24 adds the same terms in
    // the same order as two of 16: the same bits).
    const auto sum_round_of = [&](auto width, const float *weights, float4 &total) {
#pragma unroll
        for (int u = 0; u < decltype(width)::value; ++u) {
            const float w = weights[u];  // 0 past the live splits
            total.x += w * round_values[u].x;
            total.y += w * round_values[u].y;
            total.z += w * round_values[u].z;
            total.w += w * round_values[u].w;
        }
    };
    if (tid < chunks) load_round(tid, 0);
#ifdef RESET_ATTENTION_TRACE
    __syncthreads();  // every thread has issued its first round's loads
    trace_stamp(8);
#endif
    // Each head's splits: M = max m_s, then w_s = exp2(m_s - M) / sum_s exp2(m_s - M) l_s.
    constexpr int kSplitsPerLane = kMaxMergeSplits / 32;
    for (int h = warp; h < group; h += kWarps) {
        const float *p = head_partials + int64_t(h) * head_stride;
        float m_v[kSplitsPerLane], l_v[kSplitsPerLane];
#pragma unroll
        for (int k = 0; k < kSplitsPerLane; ++k) {
            const int s = lane + 32 * k;
            m_v[k] = s < live ? __ldcg(p + s * split_stride + kHeadDim) : -INFINITY;
            l_v[k] = s < live ? __ldcg(p + s * split_stride + kHeadDim + 1) : 0.0f;
        }
        float max_m = -INFINITY;
#pragma unroll
        for (int k = 0; k < kSplitsPerLane; ++k) max_m = fmaxf(max_m, m_v[k]);
        max_m = warp_max(max_m);
        float denominator = 0.0f;
#pragma unroll
        for (int k = 0; k < kSplitsPerLane; ++k) {
            m_v[k] = exp2f(m_v[k] - max_m);  // 0 past the live splits
            denominator += m_v[k] * l_v[k];
        }
        // One division: a division per weight takes its slow path (a call into cold code, ~1.3 µs at
        // batch 1: docs/history/cuda-engine-sessions.md, session 15) for the zero weights past the live splits.
        const float inverse = 1.0f / warp_sum(denominator);
#pragma unroll
        for (int k = 0; k < kSplitsPerLane; ++k) weight_s[h][lane + 32 * k] = m_v[k] * inverse;  // 0 past live
    }
    __syncthreads();  // every head's weights are in shared memory
#ifdef RESET_ATTENTION_TRACE
    trace_stamp(9);
#endif
    float *out = a.out + (int64_t(b) * a.n_heads + first_head) * kHeadDim;
    for (int chunk = tid; chunk < chunks; chunk += kThreads) {
        const float *weights = weight_s[4 * chunk / kHeadDim];
        float4 total = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        for (int s0 = 0; s0 < live; s0 += merge_round) {
            if (s0 > 0 || chunk != tid) load_round(chunk, s0);
#ifdef RESET_ATTENTION_TRACE
            if (s0 > 0 && s0 + merge_round >= live) trace_stamp(15);  // a later round, the last, is issued
#endif
            if (wide) sum_round_of(std::integral_constant<int, kWideMergeRound>{}, weights + s0, total);
            else sum_round_of(std::integral_constant<int, kMergeRound>{}, weights + s0, total);
#ifdef RESET_ATTENTION_TRACE
            if (s0 == 0) trace_stamp(10);  // the first round is summed
            if (s0 == 0 && merge_round >= live) trace_stamp(15);  // one round: [15] = [10]
#endif
        }
        float *o = out + 4 * chunk;
        o[0] = total.x;
        o[1] = total.y;
        o[2] = total.z;
        o[3] = total.w;
        if (a.out16) {
            __half *o16 = static_cast<__half *>(a.out16) + int64_t(b) * a.ld_out16 + first_head * kHeadDim + 4 * chunk;
            o16[0] = __float2half_rn(total.x);
            o16[1] = __float2half_rn(total.y);
            o16[2] = __float2half_rn(total.z);
            o16[3] = __float2half_rn(total.w);
        }
        stored_max = fmaxf(stored_max, fmaxf(fmaxf(fabsf(total.x), fabsf(total.y)), fmaxf(fabsf(total.z), fabsf(total.w))));
    }
#ifdef RESET_ATTENTION_TRACE
    __syncthreads();  // every thread has summed every round
    trace_stamp(11);
    if (unsigned long long *r = trace_record()) {
        r[12] = unsigned((live + merge_round - 1) / merge_round);
        r[13] = unsigned(merge_round);
    }
    trace_stamp(5);  // = [11]: the stores of out are issued inside the loop
#endif
    if (tid == 0) *counter = 0;  // ready for the next launch or graph replay
    raise_out_amax(a, b, stored_max);
}

// Host: raise the instance's dynamic shared-memory limit (above the default
// 48 KiB), once per device.
template <int kHeadDim, bool kFp8, bool kNewToken>
void allow_shared_memory() {
    static std::atomic<uint64_t> done{0};
    int device = 0;
    cuda::check(cudaGetDevice(&device), "cudaGetDevice");
    const uint64_t bit = device >= 0 && device < 64 ? uint64_t(1) << device : 0;
    if (bit && (done.load(std::memory_order_relaxed) & bit)) return;
    cuda::check(cudaFuncSetAttribute(split_kernel<kHeadDim, kFp8, kNewToken>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     Tiles<kHeadDim, kFp8>::kSharedBytes),
                "attention_decode: cudaFuncSetAttribute");
    done.fetch_or(bit, std::memory_order_relaxed);
}

template <int kHeadDim>
void allow_shared_memory_all() {
    allow_shared_memory<kHeadDim, false, false>();
    allow_shared_memory<kHeadDim, true, false>();
    allow_shared_memory<kHeadDim, false, true>();
    allow_shared_memory<kHeadDim, true, true>();
}

template <bool kFp8, bool kNewToken>
int occupancy() {
    int ctas = 0;
    cuda::check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&ctas, split_kernel<128, kFp8, kNewToken>, kThreads,
                                                              Tiles<128, kFp8>::kSharedBytes),
                "attention_decode: occupancy");
    return ctas;
}

// Host: resident CTAs per SM of the head_dim-128 instances (the smaller head
// dims need less), read once per device: the wave attention_decode_splits fills.
// It raises every instance's shared-memory limit on the way (the session asks
// for its splits before it captures a graph, so no launch inside a capture is
// the first of its instance on the device).
int resident_ctas_per_multiprocessor() {
    constexpr int kMaxDevices = 64;
    static std::atomic<int> cached[kMaxDevices] = {};
    int device = 0;
    cuda::check(cudaGetDevice(&device), "cudaGetDevice");
    if (device >= 0 && device < kMaxDevices) {
        const int known = cached[device].load(std::memory_order_relaxed);
        if (known > 0) return known;
    }
    allow_shared_memory_all<16>();
    allow_shared_memory_all<32>();
    allow_shared_memory_all<64>();
    allow_shared_memory_all<128>();
    const int resident = std::max(1, std::min({occupancy<false, false>(), occupancy<true, false>(),
                                               occupancy<false, true>(), occupancy<true, true>()}));
    if (device >= 0 && device < kMaxDevices) cached[device].store(resident, std::memory_order_relaxed);
    return resident;
}

template <int kHeadDim, bool kFp8, bool kNewToken>
void launch_instance(const AttentionDecodeArgs &a, cudaStream_t stream) {
    const dim3 grid(static_cast<unsigned>(a.splits), static_cast<unsigned>(a.cache.n_kv_heads),
                    static_cast<unsigned>(a.batch));
    allow_shared_memory<kHeadDim, kFp8, kNewToken>();
    cuda::launch_kernel("attention_decode", split_kernel<kHeadDim, kFp8, kNewToken>, grid, dim3(kThreads),
                        Tiles<kHeadDim, kFp8>::kSharedBytes, stream, a);
}

template <int kHeadDim>
void launch(const AttentionDecodeArgs &a, cudaStream_t stream) {
    const bool fp8 = a.cache.type == KvCacheType::kFp8E4M3;
    if (a.new_token.qkv) {
        if (fp8) launch_instance<kHeadDim, true, true>(a, stream);
        else launch_instance<kHeadDim, false, true>(a, stream);
    } else {
        if (fp8) launch_instance<kHeadDim, true, false>(a, stream);
        else launch_instance<kHeadDim, false, false>(a, stream);
    }
}

}  // namespace

#ifdef RESET_ATTENTION_TRACE
// Debug-only (see g_attention_trace), declared by their users, not in the public header; both
// synchronize the device first (the launches may sit on a non-blocking stream).
// attention_decode_trace_read copies the first `ctas` records (kTraceWords = 16 words each, at most kTraceCtas)
// to `host` and returns the cudaError_t as an int; attention_decode_trace_clear zeroes them all.
int attention_decode_trace_read(unsigned long long *host, int ctas);
void attention_decode_trace_clear();

int attention_decode_trace_read(unsigned long long *host, int ctas) {
    cudaError_t status = cudaDeviceSynchronize();
    const size_t n = size_t(std::max(0, std::min(ctas, kTraceCtas)));
    if (status == cudaSuccess && n > 0)
        status = cudaMemcpyFromSymbol(host, g_attention_trace, n * sizeof(g_attention_trace[0]));
    return static_cast<int>(status);
}

void attention_decode_trace_clear() {
    void *address = nullptr;
    cuda::check(cudaDeviceSynchronize(), "attention_decode_trace_clear: cudaDeviceSynchronize");
    cuda::check(cudaGetSymbolAddress(&address, g_attention_trace),
                "attention_decode_trace_clear: cudaGetSymbolAddress");
    cuda::check(cudaMemset(address, 0, sizeof(g_attention_trace)), "attention_decode_trace_clear: cudaMemset");
    cuda::check(cudaDeviceSynchronize(), "attention_decode_trace_clear: cudaDeviceSynchronize");
}

#endif
void check_new_token_inputs(const NewTokenInputs &t, int n_heads, const KvCacheLayerView &cache, const char *who) {
    if (!t.qkv) fail(RESET_ERR_INVALID_ARGUMENT, who, ": qkv is NULL");
    if (t.ld_qkv < int64_t(n_heads + 2 * cache.n_kv_heads) * cache.head_dim)
        fail(RESET_ERR_INVALID_ARGUMENT, who, ": ld_qkv ", t.ld_qkv, " < (heads ", n_heads, " + 2 x ",
             cache.n_kv_heads, " KV heads) x head_dim ", cache.head_dim);
    if ((t.q_norm == nullptr) != (t.k_norm == nullptr))
        fail(RESET_ERR_INVALID_ARGUMENT, who, ": q_norm and k_norm go together");
    if (!t.inv_freq) fail(RESET_ERR_INVALID_ARGUMENT, who, ": inv_freq is NULL");
    if (!(std::isfinite(t.rope_attention_factor) && t.rope_attention_factor > 0.0f))
        fail(RESET_ERR_INVALID_ARGUMENT, who, ": rope_attention_factor ", t.rope_attention_factor,
             " must be finite and positive");
}

int attention_decode_splits(int batch, int n_kv_heads, int capacity) {
    if (int64_t(batch) * n_kv_heads > kMergeCounters) return 1;  // more (row, KV head) pairs than merge counters
    // One full wave of resident CTAs at full capacity: every CTA streams from
    // the start to the end of the kernel, with no ragged second wave; more
    // splits would only add merge traffic and a wave.
    const int64_t pairs = std::max<int64_t>(1, int64_t(batch) * n_kv_heads);
    const int64_t slots = int64_t(resident_ctas_per_multiprocessor()) * cuda::multiprocessor_count();
    const int64_t wanted = std::max<int64_t>(1, slots / pairs);
    const int64_t pieces = std::max(1, (capacity + kChunk - 1) / kChunk);
    return int(std::max<int64_t>(1, std::min<int64_t>({wanted, pieces, kMaxMergeSplits})));
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
    check_weight_prefetch(a.prefetch, "attention decode");
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
    if (a.new_token.qkv) check_new_token_inputs(a.new_token, a.n_heads, c, "attention decode: new token");
    else require(a.q, "attention decode: q");
    require(a.lengths, "attention decode: lengths");
    require(a.out, "attention decode: out");
    if (a.out16 && a.ld_out16 < int64_t(a.n_heads) * c.head_dim)
        fail(RESET_ERR_INVALID_ARGUMENT, "attention decode: ld_out16 ", a.ld_out16, " is shorter than a row (",
             int64_t(a.n_heads) * c.head_dim, ")");
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
    case 16: launch<16>(a, stream); break;
    case 32: launch<32>(a, stream); break;
    case 64: launch<64>(a, stream); break;
    default: launch<128>(a, stream); break;
    }
}

}  // namespace reset
