// nvfp4_gemv_layout.h — the weight layout the NVFP4 GEMV kernel reads, and the
// load-time repack from the ModelOpt layout into it.  Pure C++ (no CUDA
// headers), so the loader can call it.  docs/gemv.md explains the choice.
//
// Why a repack: the kernel multiplies on the tensor cores (mma.m16n8k16, FP16
// inputs, FP32 accumulation), so each thread needs the 8 weights of its A
// fragment.  The repack puts exactly those 8 codes into one 32-bit word, with
// bits placed so that a shift and a mask turn them into FP16 pairs, and puts
// one 64-element super of one 16-row tile into one 512-byte run, so a warp
// reads each run with one coalesced 16-byte load per thread.  The k order
// inside a super is permuted (A and B alike, so the product is unchanged):
// lane t's columns of all four products of a super are the 16 contiguous k of
// block 4s + t, so the lane reads its activations (B fragments) as 32
// contiguous bytes straight from x, and needs one scale per row per super.
//
// The layout, with N_pad = 16 * row_tiles, K_pad = 256 * k_quads, and
// k_quads = ceil(k_supers / 4), quad-major:
//   codes:  [k_quads][row_tiles][4 supers][32 lanes][4 words]  (2048 bytes per quad x tile)
//   scales: [k_quads][row_tiles][32 lanes][4 supers][2 rows]   (256 bytes per quad x tile)
// Quad-major because the kernel's warps (one tile each) walk K together: at
// any moment the GPU reads one contiguous window of each array, as a plain
// copy does, instead of thousands of separate streams (measured: docs/gemv.md).
// Lane l = 4*g + t of tile r, super s, word b (the super's product b; with
// k0 = 64s + 16t + 4b) holds the codes of A-fragment registers
//   a0 = (row g,   k0, k0+1)      a1 = (row g+8, k0, k0+1)
//   a2 = (row g,   k0+2, k0+3)    a3 = (row g+8, k0+2, k0+3)
// where "row" is the tile-local row (see nvfp4_gemv_tile_row).  Integer
// decode: register a_j, element e (0 = lower k, 1 = upper k) keeps its 3
// magnitude bits at kMagnitudeBit[j] + 16e and its sign at kSignBit[j] + 16e.
// Native decode (sm_100a/sm_120a cvt.rn.f16x2.e2m1x2): byte j of the word is
// a_j as a ModelOpt byte (lower-k element in the low nibble).
// The scales of tile r, quad q, lane 4g+t: byte 2u + h is the E4M3 scale of
// row g + 8h, block 4(4q+u) + t.  Padding rows, padding k and padding supers
// get code 0 and scale 1.0, so they add exact zeros.
#pragma once

#include <cstddef>
#include <cstdint>

namespace reset {

enum class Nvfp4GemvDecode : int {
    kInteger = 0,     // shifts and masks into FP16: every GPU from sm_80 on
    kNativeE2M1 = 1,  // cvt.rn.f16x2.e2m1x2: binaries built for sm_100a and sm_120a
};

struct Nvfp4GemvLayout {
    int64_t rows = 0;       // N as stored in the checkpoint (gate+up fused: 2 * intermediate)
    int64_t cols = 0;       // K, a multiple of 16
    int64_t row_tiles = 0;  // 16-row tiles
    int64_t k_supers = 0;   // 64-element runs along K
    bool gate_up = false;   // rows [0, rows/2) are gate, [rows/2, rows) are up: tiles pair them
    Nvfp4GemvDecode decode = Nvfp4GemvDecode::kInteger;

    // Output features the GEMV produces: rows, or rows/2 with the SiLU(gate)*up epilogue.
    int64_t outputs() const { return gate_up ? rows / 2 : rows; }
    int64_t k_quads() const { return (k_supers + 3) / 4; }  // groups of 4 supers sharing a scale word
    size_t code_bytes() const { return static_cast<size_t>(k_quads() * row_tiles) * 2048; }
    size_t scale_bytes() const { return static_cast<size_t>(k_quads() * row_tiles) * 256; }
};

// The (quad, tile) records of both arrays sit at index quad * quad_stride +
// tile * tile_stride: quad-major.  RESET_NVFP4_GEMV_TILE_MAJOR=1 builds the
// earlier tile-major order instead, for the A/B run of docs/gemv.md only (the
// repack and the kernels take the strides from here, so they always agree).
#ifndef RESET_NVFP4_GEMV_TILE_MAJOR
#define RESET_NVFP4_GEMV_TILE_MAJOR 0
#endif
inline int64_t nvfp4_gemv_quad_stride(const Nvfp4GemvLayout &layout) {
    return RESET_NVFP4_GEMV_TILE_MAJOR ? 1 : layout.row_tiles;
}
inline int64_t nvfp4_gemv_tile_stride(const Nvfp4GemvLayout &layout) {
    return RESET_NVFP4_GEMV_TILE_MAJOR ? layout.k_quads() : 1;
}

// Byte offsets into the two arrays: the 512-byte code run of (tile, super)
// and the 256-byte scale run of (tile, quad).  The kernels compute the same
// offsets from the two strides; the repack and the tests use these.
inline size_t nvfp4_gemv_code_offset(const Nvfp4GemvLayout &layout, int64_t tile, int64_t super) {
    const int64_t record = (super / 4) * nvfp4_gemv_quad_stride(layout) + tile * nvfp4_gemv_tile_stride(layout);
    return static_cast<size_t>(record) * 2048 + static_cast<size_t>(super % 4) * 512;
}
inline size_t nvfp4_gemv_scale_offset(const Nvfp4GemvLayout &layout, int64_t tile, int64_t quad) {
    return static_cast<size_t>(quad * nvfp4_gemv_quad_stride(layout) + tile * nvfp4_gemv_tile_stride(layout)) * 256;
}

// Bit positions of the integer decode (see the header comment).  a0 needs only
// a mask and a1 a shift and a mask.  a2 and a3 take their magnitude and their
// sign from two different shifts (no four single-shift patterns tile 32 bits:
// docs/gemv.md); with these positions the two shifted copies of the masked
// word never share a set bit, so one multiply by 2^m + 2^s adds them without
// carries: mask, multiply, mask.  9 integer operations per 8 weights.
constexpr int kNvfp4MagnitudeBit[4] = {9, 6, 0, 3};
constexpr int kNvfp4SignBit[4] = {15, 12, 14, 13};

// Describe the kernel layout of a rows x cols NVFP4 weight.  Throws
// reset::Error (RESET_ERR_UNSUPPORTED) when cols is not a positive multiple
// of 16, rows is not positive, or gate_up is set with an odd rows.
Nvfp4GemvLayout nvfp4_gemv_layout(int64_t rows, int64_t cols, bool gate_up, Nvfp4GemvDecode decode);

// The checkpoint row held by tile-local row `tile_row` (0..15) of tile `tile`,
// or -1 for a padding row.  Plain tiles hold rows 16*tile + tile_row; gate_up
// tiles hold gate rows 8*tile + (0..7) in tile rows 0..7 and the matching up
// rows in tile rows 8..15, so one thread sees both halves of an output.
int64_t nvfp4_gemv_tile_row(const Nvfp4GemvLayout &layout, int64_t tile, int tile_row);

// Repack ModelOpt codes [rows][cols/2] and E4M3 scales [rows][cols/16] into
// out_codes (layout.code_bytes()) and out_scales (layout.scale_bytes()), all
// host memory.  Throws reset::Error (RESET_ERR_FORMAT) on a negative or NaN
// block scale, which the kernel's scale decode does not accept.
void nvfp4_gemv_repack(const Nvfp4GemvLayout &layout, const uint8_t *codes, const uint8_t *scales,
                       uint8_t *out_codes, uint8_t *out_scales);

// The rows of a weight that several linears make together (q, k and v; gate and up), each its
// own ModelOpt codes [rows][cols/2] and scales [rows][cols/16]: repacked in place, without
// first copying them end to end.
struct Nvfp4RepackPart {
    const uint8_t *codes;
    const uint8_t *scales;
    int64_t rows;
};
// As above, the layout's rows being the parts' in order (their rows must add up to layout.rows;
// RESET_ERR_SHAPE otherwise).
void nvfp4_gemv_repack(const Nvfp4GemvLayout &layout, const Nvfp4RepackPart *parts, size_t n_parts,
                       uint8_t *out_codes, uint8_t *out_scales);

}  // namespace reset
