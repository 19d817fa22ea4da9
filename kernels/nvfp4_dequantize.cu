// nvfp4_dequantize.cu — one warp per (tile, super) run of the repacked layout:
// lane 4g + t reads its 16 code bytes (the run's 512 bytes, coalesced) and its
// two block scales, and writes 16 FP16 of tile rows g and g + 8 (columns
// 64s + 16t .. + 15, one 16-element block), each 32 contiguous bytes.
#include "kernels/nvfp4_dequantize.h"

#include <cuda_fp16.h>

#include "kernels/cuda_common.cuh"
#include "kernels/dependent_launch.cuh"
#include "rules/nvfp4.h"

namespace reset {
namespace {

constexpr int kThreads = 256;

struct DequantParams {
    const uint4 *codes;
    const uint8_t *scales;
    int64_t rows;
    int64_t cols;
    int64_t k_supers;
    int64_t quad_stride;  // nvfp4_gemv_layout.h: records between quads / tiles
    int64_t tile_stride;
    int64_t tile_begin;
    int64_t runs;        // (tile_end - tile_begin) * k_supers
    int64_t row_begin;
    int64_t row_end;
    __half *out;
    int64_t ld_out;
    int gate_up;
    int native;
};

// nvfp4_gemv_tile_row on the device.
__device__ __forceinline__ int64_t tile_row(const DequantParams &p, int64_t tile, int r) {
    if (p.gate_up) {
        const int64_t half = p.rows / 2;
        const int64_t i = 8 * tile + (r & 7);
        if (i >= half) return -1;
        return r < 8 ? i : half + i;
    }
    const int64_t row = 16 * tile + r;
    return row < p.rows ? row : -1;
}

// kNvfp4MagnitudeBit / kNvfp4SignBit as device constants (j is unrolled).
__host__ __device__ constexpr int magnitude_bit(int j) { return j == 0 ? 9 : j == 1 ? 6 : j == 2 ? 0 : 3; }
__host__ __device__ constexpr int sign_bit(int j) { return j == 0 ? 15 : j == 1 ? 12 : j == 2 ? 14 : 13; }
static_assert(magnitude_bit(0) == kNvfp4MagnitudeBit[0] && magnitude_bit(1) == kNvfp4MagnitudeBit[1] &&
                  magnitude_bit(2) == kNvfp4MagnitudeBit[2] && magnitude_bit(3) == kNvfp4MagnitudeBit[3],
              "integer decode magnitude bits");
static_assert(sign_bit(0) == kNvfp4SignBit[0] && sign_bit(1) == kNvfp4SignBit[1] && sign_bit(2) == kNvfp4SignBit[2] &&
                  sign_bit(3) == kNvfp4SignBit[3],
              "integer decode sign bits");

// The 4-bit code (sign in bit 3) of register j, element e of a word.
__device__ __forceinline__ uint8_t code_of(const DequantParams &p, uint32_t word, int j, int e) {
    if (p.native) return static_cast<uint8_t>((word >> (8 * j + 4 * e)) & 0xf);
    const uint32_t magnitude = (word >> (magnitude_bit(j) + 16 * e)) & 7u;
    const uint32_t sign = (word >> (sign_bit(j) + 16 * e)) & 1u;
    return static_cast<uint8_t>((sign << 3) | magnitude);
}

template <bool kVector>
__global__ void __launch_bounds__(kThreads) dequantize_kernel(const __grid_constant__ DequantParams p) {
    cuda::begin_dependent_kernel();
    const int64_t run = (static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x) >> 5;
    if (run >= p.runs) return;
    const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    const int64_t tile = p.tile_begin + run / p.k_supers;
    const int64_t s = run % p.k_supers;
    const int64_t k_first = 64 * s + 16 * t;  // the lane's block: 4s + t
    if (k_first >= p.cols) return;            // padding super/block (K is a multiple of 16)
    // nvfp4_gemv_code_offset / nvfp4_gemv_scale_offset, in 16-byte words and bytes.
    const int64_t record = (s / 4) * p.quad_stride + tile * p.tile_stride;
    const uint4 words = __ldg(p.codes + record * 128 + (s % 4) * 32 + lane);
    const uint8_t *scale_word = p.scales + record * 256 + lane * 8 + 2 * (s % 4);
    const uint32_t w[4] = {words.x, words.y, words.z, words.w};
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        const int64_t row = tile_row(p, tile, g + 8 * h);
        if (row < p.row_begin || row >= p.row_end) continue;  // also padding rows (-1)
        const float scale = nvfp4::e4m3_to_float(scale_word[h]);
        // Column 4b + 2i + e of the block comes from register j = 2i + h of word b, element e.
        __half v[16];
#pragma unroll
        for (int b = 0; b < 4; ++b)
#pragma unroll
            for (int i = 0; i < 2; ++i)
#pragma unroll
                for (int e = 0; e < 2; ++e) {
                    const uint8_t q = code_of(p, w[b], 2 * i + h, e);
                    // Exact: <= 6 significant bits, a multiple of 2^-24, below 65504.
                    v[4 * b + 2 * i + e] = __float2half_rn(nvfp4::e2m1_to_float(q) * scale * 0x1p-14f);
                }
        __half *dst = p.out + (row - p.row_begin) * p.ld_out + k_first;
        if constexpr (kVector) {
            uint4 packed[2];
            static_assert(sizeof(packed) == sizeof(v), "16 halves");
            memcpy(packed, v, sizeof(v));
            reinterpret_cast<uint4 *>(dst)[0] = packed[0];
            reinterpret_cast<uint4 *>(dst)[1] = packed[1];
        } else {
#pragma unroll
            for (int c = 0; c < 16; ++c) dst[c] = v[c];
        }
    }
}

}  // namespace

void nvfp4_dequantize(const Nvfp4GemvWeight &weight, const Nvfp4DequantizeArgs &args, cudaStream_t stream) {
    const Nvfp4GemvLayout &L = weight.layout;
    if (L.rows <= 0 || L.cols <= 0 || L.cols % nvfp4::kBlock != 0 || (L.gate_up && L.rows % 2 != 0))
        fail(RESET_ERR_INVALID_ARGUMENT, "nvfp4_dequantize: layout ", L.rows, " x ", L.cols, " is not valid");
    const int64_t expected_tiles = L.gate_up ? (L.rows / 2 + 7) / 8 : (L.rows + 15) / 16;
    if (L.row_tiles != expected_tiles || L.k_supers != (L.cols + 63) / 64)
        fail(RESET_ERR_INVALID_ARGUMENT, "nvfp4_dequantize: layout tiles ", L.row_tiles, " x ", L.k_supers,
             " do not match ", L.rows, " x ", L.cols, " (build it with nvfp4_gemv_layout)");
    if (L.decode != Nvfp4GemvDecode::kInteger && L.decode != Nvfp4GemvDecode::kNativeE2M1)
        fail(RESET_ERR_INVALID_ARGUMENT, "nvfp4_dequantize: unknown decode");
    require(weight.codes, "nvfp4_dequantize: codes");
    require(weight.scales, "nvfp4_dequantize: scales");
    require(args.out, "nvfp4_dequantize: out");
    const int64_t row_begin = args.row_begin;
    const int64_t row_end = args.row_end < 0 ? L.rows : args.row_end;
    if (row_begin < 0 || row_begin >= row_end || row_end > L.rows)
        fail(RESET_ERR_INVALID_ARGUMENT, "nvfp4_dequantize: row range [", row_begin, ", ", row_end,
             ") is not a non-empty part of [0, ", L.rows, ")");
    if (args.ld_out < L.cols)
        fail(RESET_ERR_INVALID_ARGUMENT, "nvfp4_dequantize: ld_out ", args.ld_out, " < K = ", L.cols);
    if (reinterpret_cast<uintptr_t>(weight.codes) % 16 || reinterpret_cast<uintptr_t>(weight.scales) % 8 ||
        reinterpret_cast<uintptr_t>(args.out) % 2)
        fail(RESET_ERR_INVALID_ARGUMENT, "nvfp4_dequantize: codes must be 16-byte, scales 8-byte, out 2-byte aligned");

    // Tiles holding rows of the range: plain tiles hold 16 consecutive rows;
    // gate_up tiles hold gate rows 8i.. and up rows half + 8i.., so the range's
    // gate part and up part each give a tile interval; take their hull.
    int64_t tile_begin = 0, tile_end = 0;
    if (L.gate_up) {
        const int64_t half = L.rows / 2;
        int64_t lo = INT64_MAX, hi = -1;
        const int64_t gate_lo = row_begin, gate_hi = row_end < half ? row_end : half;  // [gate_lo, gate_hi)
        if (gate_lo < gate_hi) {
            lo = gate_lo / 8;
            hi = (gate_hi + 7) / 8;
        }
        const int64_t up_lo = (row_begin > half ? row_begin : half) - half, up_hi = row_end - half;
        if (up_lo < up_hi) {
            lo = up_lo / 8 < lo ? up_lo / 8 : lo;
            hi = (up_hi + 7) / 8 > hi ? (up_hi + 7) / 8 : hi;
        }
        tile_begin = lo;
        tile_end = hi;
    } else {
        tile_begin = row_begin / 16;
        tile_end = (row_end + 15) / 16;
    }
    DequantParams p{};
    p.codes = static_cast<const uint4 *>(weight.codes);
    p.scales = static_cast<const uint8_t *>(weight.scales);
    p.rows = L.rows;
    p.cols = L.cols;
    p.k_supers = L.k_supers;
    p.quad_stride = nvfp4_gemv_quad_stride(L);
    p.tile_stride = nvfp4_gemv_tile_stride(L);
    p.tile_begin = tile_begin;
    p.runs = (tile_end - tile_begin) * L.k_supers;
    p.row_begin = row_begin;
    p.row_end = row_end;
    p.out = static_cast<__half *>(args.out);
    p.ld_out = args.ld_out;
    p.gate_up = L.gate_up;
    p.native = L.decode == Nvfp4GemvDecode::kNativeE2M1;
    const int64_t blocks = (p.runs * 32 + kThreads - 1) / kThreads;
    if (blocks > 0x7fffffff) fail(RESET_ERR_UNSUPPORTED, "nvfp4_dequantize: weight too large");
    const bool vector = args.ld_out % 8 == 0 && reinterpret_cast<uintptr_t>(args.out) % 16 == 0;
    cuda::launch_kernel("nvfp4_dequantize", vector ? dequantize_kernel<true> : dequantize_kernel<false>,
                        dim3(static_cast<unsigned>(blocks)), dim3(kThreads), 0, stream, p);
}

}  // namespace reset
