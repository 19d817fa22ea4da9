// row_rules.cuh — the per-row device rules that rms_norm.cu,
// nvfp4_quantize_activations.cu and the fused rms_norm_prepare.cu must apply
// identically (the fused kernel is tested bit for bit against the other two):
// how a row spreads over a CTA, the RMSNorm inverse, the row maximum and the
// W4A4 quantization of one 16-element block.  The W4A16 FP16 row scale is
// rules/w4a16.h's, shared with the CPU reference.
//
// Why this layout (latency, not bandwidth: a decode row is 4-100 KB):
//  - A row is cut into chunks of 4 consecutive elements (one 16-byte FP32
//    load); chunk c lives on thread c % threads, in register slot c / threads.
//    With kRowSlots slots per thread every chunk of the row is requested by
//    one burst of independent 16-byte loads, so the row costs one L2/DRAM
//    round trip instead of one per strided scalar pass, and it stays in
//    registers between the passes (sum of squares, maximum, output).
//  - The thread count follows the row (row_threads): a multiple of 32 up to
//    1024 that covers the row with kRowSlots chunks per thread, so a 4096-wide
//    row runs 256 threads and a 16384-wide one 1024.  Longer rows (rare:
//    hidden sizes stop at 16384) run 1024 threads that re-read the row from
//    L1/L2 for each pass, chunk by chunk in the same order.  4 chunks a thread
//    was measured against 2 and 1 (H100, graph replay with PDL): the same as
//    2 for the 4096- and 5120-wide fused norm (1.67-1.79 µs), 0.2-0.4 µs
//    faster than 1, and better than 8 for the 12,288-wide preparation (768
//    threads: 1.9 µs, 384 threads of 8: 2.1 µs).
//  - Reductions: a shuffle butterfly per warp (redux.sync for the maximum),
//    then every thread reads the warps' 32 slots with eight 16-byte shared
//    loads instead of a second shuffle tree.
//  - Loads and stores are 16 bytes where the row's address allows it (checked
//    per row on the device, so any leading dimension works) and element by
//    element otherwise, with the same values in the same registers: the
//    results never depend on the alignment.
// The sum of squares, and so the inverse, depends only on the thread count,
// which is a function of the row length alone: rms_norm and rms_norm_prepare
// get the same bits for the same row.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "rules/nvfp4.h"

namespace reset {

constexpr int kRowChunk = 4;           // elements per chunk
constexpr int kRowSlots = 4;           // chunks per thread held in registers
constexpr int kRowMaxThreads = 1024;

// Host and device: the threads of the CTA that processes a row of `cols`
// elements with `slots` chunks per thread: the fewest (a multiple of 32, at
// least 32) that cover the row, or 1024 when no count does (then the row is
// re-read: row_fits_registers is false).
__host__ __device__ constexpr int row_threads(int64_t cols, int slots = kRowSlots) {
    const int64_t chunks = (cols + kRowChunk - 1) / kRowChunk;
    const int64_t per_slot = (chunks + slots - 1) / slots;
    return per_slot > kRowMaxThreads ? kRowMaxThreads : per_slot <= 32 ? 32 : int((per_slot + 31) / 32 * 32);
}
__host__ __device__ constexpr bool row_fits_registers(int64_t cols, int slots = kRowSlots) {
    return (cols + kRowChunk - 1) / kRowChunk <= int64_t(slots) * kRowMaxThreads;
}

// ---------------------------------------------------------------------------
// Chunk loads and stores: elements [4c, 4c + 4) of a row, zeros past `cols`
// (loads) and nothing written past it (stores).  `vec`: the row starts on a
// 16-byte boundary (8 for BF16/FP16) and cols is a multiple of 4, so a chunk
// is inside or outside as a whole and moves in one instruction.

__device__ __forceinline__ bool aligned_to(const void *p, unsigned bytes) {
    return (reinterpret_cast<uintptr_t>(p) & (bytes - 1)) == 0;
}

__device__ __forceinline__ float4 load_chunk(const float *row, int64_t cols, int64_t c, bool vec) {
    const int64_t k = c * kRowChunk;
    if (vec) return k < cols ? *reinterpret_cast<const float4 *>(row + k) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    float4 v;
    v.x = k < cols ? row[k] : 0.0f;
    v.y = k + 1 < cols ? row[k + 1] : 0.0f;
    v.z = k + 2 < cols ? row[k + 2] : 0.0f;
    v.w = k + 3 < cols ? row[k + 3] : 0.0f;
    return v;
}

// Constant data (norm weights), through the read-only path: may be read before
// griddepcontrol.wait (kernels/dependent_launch.cuh).
__device__ __forceinline__ float4 load_constant_chunk(const float *row, int64_t cols, int64_t c, bool vec) {
    const int64_t k = c * kRowChunk;
    if (vec) return k < cols ? __ldg(reinterpret_cast<const float4 *>(row + k)) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    float4 v;
    v.x = k < cols ? __ldg(row + k) : 0.0f;
    v.y = k + 1 < cols ? __ldg(row + k + 1) : 0.0f;
    v.z = k + 2 < cols ? __ldg(row + k + 2) : 0.0f;
    v.w = k + 3 < cols ? __ldg(row + k + 3) : 0.0f;
    return v;
}

__device__ __forceinline__ float4 load_chunk(const __nv_bfloat16 *row, int64_t cols, int64_t c, bool vec) {
    const int64_t k = c * kRowChunk;
    if (vec) {
        if (k >= cols) return make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        const uint2 raw = *reinterpret_cast<const uint2 *>(row + k);
        const float2 lo = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162 *>(&raw.x));
        const float2 hi = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162 *>(&raw.y));
        return make_float4(lo.x, lo.y, hi.x, hi.y);
    }
    float4 v;
    v.x = k < cols ? __bfloat162float(row[k]) : 0.0f;
    v.y = k + 1 < cols ? __bfloat162float(row[k + 1]) : 0.0f;
    v.z = k + 2 < cols ? __bfloat162float(row[k + 2]) : 0.0f;
    v.w = k + 3 < cols ? __bfloat162float(row[k + 3]) : 0.0f;
    return v;
}

// kN chunks first, first + stride, ...: the alignment test outside the loop,
// so the loads of both forms issue back to back (one round trip).  kConstant:
// constant data through the read-only path (load_constant_chunk).
template <int kN, bool kConstant = false, typename T>
__device__ __forceinline__ void load_chunks(const T *row, int64_t cols, int64_t first, int64_t stride, bool vec,
                                            float4 (&v)[kN]) {
    const auto load = [&](int64_t c, bool vector) {
        if constexpr (kConstant) return load_constant_chunk(row, cols, c, vector);
        else return load_chunk(row, cols, c, vector);
    };
    if (vec) {
#pragma unroll
        for (int i = 0; i < kN; ++i) v[i] = load(first + i * stride, true);
    } else {
#pragma unroll
        for (int i = 0; i < kN; ++i) v[i] = load(first + i * stride, false);
    }
}

__device__ __forceinline__ void store_chunk(float *row, int64_t cols, int64_t c, bool vec, float4 v) {
    const int64_t k = c * kRowChunk;
    if (vec) {
        if (k < cols) *reinterpret_cast<float4 *>(row + k) = v;
        return;
    }
    if (k < cols) row[k] = v.x;
    if (k + 1 < cols) row[k + 1] = v.y;
    if (k + 2 < cols) row[k + 2] = v.z;
    if (k + 3 < cols) row[k + 3] = v.w;
}

// FP16 rows: cols is a multiple of 16 and the row 4-byte aligned (the
// callers' contract), so a chunk is two half2 stores, or one 8-byte store
// where the row is 8-byte aligned.
__device__ __forceinline__ void store_chunk(__half *row, int64_t cols, int64_t c, bool vec, __half2 lo, __half2 hi) {
    const int64_t k = c * kRowChunk;
    if (k >= cols) return;
    if (vec) {
        uint2 raw;
        raw.x = *reinterpret_cast<const uint32_t *>(&lo);
        raw.y = *reinterpret_cast<const uint32_t *>(&hi);
        *reinterpret_cast<uint2 *>(row + k) = raw;
        return;
    }
    *reinterpret_cast<__half2 *>(row + k) = lo;
    *reinterpret_cast<__half2 *>(row + k + 2) = hi;
}

// ---------------------------------------------------------------------------
// CTA reductions (blockDim.x a multiple of 32).  Each warp reduces its lanes,
// its first lane writes the warp's value to `slots` (a __shared__ float[32],
// 16-byte aligned, one per reduction in a kernel: not fenced for reuse; the
// slots past the last warp get the identity), and after the barrier every
// thread reads the 32 slots with eight 16-byte shared loads and combines them
// in one fixed order: every thread ends with the same bits, in an order fixed
// by the thread count.  (A second shuffle tree over the warps' values, 5
// dependent shuffles, costs more than 8 broadcast loads issued together.)

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// Sum: slot 4g + j into accumulator j, g = 0..7 in order, then
// (a0 + a1) + (a2 + a3).  Identity slots add an exact 0.
__device__ __forceinline__ float block_sum(float v, float *slots) {
    v = warp_sum(v);
    const unsigned warps = blockDim.x / 32, lane = threadIdx.x % 32;
    if (lane == 0) slots[threadIdx.x / 32] = v;
    if (threadIdx.x >= warps && threadIdx.x < 32) slots[threadIdx.x] = 0.0f;
    __syncthreads();
    const float4 *groups = reinterpret_cast<const float4 *>(slots);
    float4 a = groups[0];
#pragma unroll
    for (int g = 1; g < 8; ++g) {
        const float4 p = groups[g];
        a.x += p.x;
        a.y += p.y;
        a.z += p.z;
        a.w += p.w;
    }
    return (a.x + a.y) + (a.z + a.w);
}

// The maximum of every thread's m, on every thread.  m >= 0 and not NaN (the
// callers start from 0 and fold |x| in with fmaxf, which drops NaN), so the
// float order is the unsigned order of the bits: one redux.sync per warp.
// Exact, so the order does not matter.
__device__ __forceinline__ float row_max(float m) {
    __shared__ __align__(16) float slots[32];
    const unsigned warps = blockDim.x / 32, lane = threadIdx.x % 32;
    const unsigned bits = __reduce_max_sync(0xffffffffu, __float_as_uint(m));
    if (lane == 0) slots[threadIdx.x / 32] = __uint_as_float(bits);
    if (threadIdx.x >= warps && threadIdx.x < 32) slots[threadIdx.x] = 0.0f;
    __syncthreads();
    const float4 *groups = reinterpret_cast<const float4 *>(slots);
    float4 a = groups[0];
#pragma unroll
    for (int g = 1; g < 8; ++g) {
        const float4 p = groups[g];
        a = make_float4(fmaxf(a.x, p.x), fmaxf(a.y, p.y), fmaxf(a.z, p.z), fmaxf(a.w, p.w));
    }
    return fmaxf(fmaxf(a.x, a.y), fmaxf(a.z, a.w));
}

// ---------------------------------------------------------------------------
// RMSNorm: 1 / sqrt(mean(x²) + eps), the CPU's expression in FP32 with only
// the summation order differing: each thread sums its chunks in slot order,
// the 4 elements of a chunk in order, with explicit FMAs; then block_sum.
// Padding chunks hold zeros and add exactly nothing, so the register form and
// the re-reading form (rows past the registers) give the same bits.

__device__ __forceinline__ float sum_squares(float sum, float4 v) {
    sum = __fmaf_rn(v.x, v.x, sum);
    sum = __fmaf_rn(v.y, v.y, sum);
    sum = __fmaf_rn(v.z, v.z, sum);
    return __fmaf_rn(v.w, v.w, sum);
}

__device__ __forceinline__ float rms_inverse_of_sum(float thread_sum, int64_t cols, float eps) {
    __shared__ __align__(16) float slots[32];
    const float total = block_sum(thread_sum, slots);
    return 1.0f / sqrtf(total / static_cast<float>(cols) + eps);
}

// The row held in registers: chunk threadIdx.x + s * blockDim.x in v[s].
template <int kSlots>
__device__ __forceinline__ float row_rms_inverse(const float4 (&v)[kSlots], int64_t cols, float eps) {
    float sum = 0.0f;
#pragma unroll
    for (int s = 0; s < kSlots; ++s) sum = sum_squares(sum, v[s]);
    return rms_inverse_of_sum(sum, cols, eps);
}

// The row read from memory (any length), in the same order.
__device__ __forceinline__ float row_rms_inverse(const float *x, int64_t cols, float eps, bool vec) {
    const int64_t chunks = (cols + kRowChunk - 1) / kRowChunk;
    float sum = 0.0f;
    for (int64_t c = threadIdx.x; c < chunks; c += blockDim.x) sum = sum_squares(sum, load_chunk(x, cols, c, vec));
    return rms_inverse_of_sum(sum, cols, eps);
}

// y = weight ⊙ (x · inverse): two roundings per element, as the CPU.
__device__ __forceinline__ float4 rms_scale(float4 w, float4 x, float inverse) {
    return make_float4(w.x * (x.x * inverse), w.y * (x.y * inverse), w.z * (x.z * inverse), w.w * (x.w * inverse));
}

__device__ __forceinline__ float abs_max(float m, float4 v) {
    return fmaxf(fmaxf(fmaxf(m, fabsf(v.x)), fabsf(v.y)), fmaxf(fabsf(v.z), fabsf(v.w)));
}

// ---------------------------------------------------------------------------
// W4A16: v / row_scale in FP16.  row_scale is a power of two 2^e with
// 0 <= e <= 113 (rules/w4a16.h: amax <= FLT_MAX), so 1 / row_scale is exact
// and v · (1 / row_scale) is the correctly rounded v / row_scale (one rounding
// of the same real number, subnormal results included): the CPU's division
// without its cost.

__device__ __forceinline__ void w4a16_chunk(float4 v, float inverse_scale, __half2 *lo, __half2 *hi) {
    *lo = __floats2half2_rn(v.x * inverse_scale, v.y * inverse_scale);
    *hi = __floats2half2_rn(v.z * inverse_scale, v.w * inverse_scale);
}

// ---------------------------------------------------------------------------
// W4A4: the 16-element block of 4 adjacent lanes, a chunk each (a whole warp
// must call: the shuffles span it; lanes outside the row pass zeros, and rows
// are multiples of 16, so a block is inside or outside as a whole).
// nvfp4::quantize_block's rule in its order (the block maximum is exact in
// any order), so codes are bit-identical to the CPU reference.  The block
// scale goes through nvfp4.h's own functions (once per lane); the per-element
// steps are nvfp4.h's quantize_element, float_to_e2m1 and e2m1_to_float
// written without branches (the same thresholds, the same values): compiled
// from the if-chain and the switch they become branch trees that diverge
// across a warp's lanes, four times per lane.  The tests compare every code
// and value with the CPU's.

// nvfp4::float_to_e2m1: the count of thresholds |x| passes is the code (the
// comparisons are false for NaN: code 0), the sign for every negative x.
__device__ __forceinline__ uint32_t e2m1_code(float x) {
    const float a = fabsf(x);
    const uint32_t code = uint32_t(a > 0.25f) + uint32_t(a >= 0.75f) + uint32_t(a > 1.25f) + uint32_t(a >= 1.75f) +
                          uint32_t(a > 2.5f) + uint32_t(a >= 3.5f) + uint32_t(a > 5.0f);
    return x < 0.0f ? code | 8u : code;
}

// nvfp4::e2m1_to_float: 2·|value| of codes 0..7 (0 1 2 3 4 6 8 12) as nibbles.
__device__ __forceinline__ float e2m1_value(uint32_t code) {
    const float m = static_cast<float>((0xC8643210u >> (4 * (code & 7u))) & 0xFu) * 0.5f;  // exact
    return (code & 8u) ? -m : m;
}

// nvfp4::quantize_element.
__device__ __forceinline__ uint32_t e2m1_quantize(float x, float block_scale, float tensor_scale) {
    const float denominator = block_scale * tensor_scale;
    return denominator == 0.0f ? 0u : e2m1_code(x / denominator);
}

struct Nvfp4Chunk {
    __half2 lo, hi;
    uint16_t codes;  // the chunk's two packed bytes, low nibble first (ModelOpt)
    uint8_t scale_code;
};

// Gives the FP16 values e2m1(q) · s_block (exact: at most 6 significant bits
// in [2^-10, 2688]), the packed codes and the block's scale code.
__device__ __forceinline__ Nvfp4Chunk nvfp4_quantize_chunk(float4 v, float tensor_scale) {
    float block_amax = abs_max(0.0f, v);  // quantize_block's fmax from 0 (drops NaN)
    block_amax = fmaxf(block_amax, __shfl_xor_sync(0xffffffffu, block_amax, 1));
    block_amax = fmaxf(block_amax, __shfl_xor_sync(0xffffffffu, block_amax, 2));
    Nvfp4Chunk out;
    out.scale_code = nvfp4::block_scale_code(block_amax, tensor_scale);
    const float scale = nvfp4::e4m3_to_float(out.scale_code);
    const uint32_t q0 = e2m1_quantize(v.x, scale, tensor_scale), q1 = e2m1_quantize(v.y, scale, tensor_scale),
                   q2 = e2m1_quantize(v.z, scale, tensor_scale), q3 = e2m1_quantize(v.w, scale, tensor_scale);
    out.codes = static_cast<uint16_t>(q0 | (q1 << 4) | (q2 << 8) | (q3 << 12));
    out.lo = __floats2half2_rn(e2m1_value(q0) * scale, e2m1_value(q1) * scale);
    out.hi = __floats2half2_rn(e2m1_value(q2) * scale, e2m1_value(q3) * scale);
    return out;
}

// Stores a quantized chunk c of row `row` (cols a multiple of 16): x16 as
// store_chunk, the two code bytes (one 2-byte store where `codes` is even),
// and the block's scale from the block's first lane.
__device__ __forceinline__ void store_nvfp4_chunk(const Nvfp4Chunk &q, __half *x16_row, bool x16_vec, uint8_t *codes,
                                                  uint8_t *scales, int64_t row, int64_t cols, int64_t c) {
    if (c * kRowChunk >= cols) return;
    store_chunk(x16_row, cols, c, x16_vec, q.lo, q.hi);
    if (codes) {
        uint8_t *p = codes + row * (cols / 2) + c * 2;
        if (aligned_to(codes, 2)) {
            *reinterpret_cast<uint16_t *>(p) = q.codes;
        } else {
            p[0] = static_cast<uint8_t>(q.codes);
            p[1] = static_cast<uint8_t>(q.codes >> 8);
        }
    }
    if (scales && c % (nvfp4::kBlock / kRowChunk) == 0)
        scales[row * (cols / nvfp4::kBlock) + c / (nvfp4::kBlock / kRowChunk)] = q.scale_code;
}

}  // namespace reset
