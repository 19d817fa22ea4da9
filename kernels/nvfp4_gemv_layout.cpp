// nvfp4_gemv_layout.cpp — load-time repack of ModelOpt NVFP4 weights into the
// GEMV kernel's layout (nvfp4_gemv_layout.h says what the layout is).
#include "kernels/nvfp4_gemv_layout.h"

#include <algorithm>
#include <vector>

#include "api/errors.h"
#include "rules/nvfp4.h"

namespace reset {

Nvfp4GemvLayout nvfp4_gemv_layout(int64_t rows, int64_t cols, bool gate_up, Nvfp4GemvDecode decode) {
    if (rows <= 0) fail(RESET_ERR_UNSUPPORTED, "nvfp4 gemv: rows must be positive, got ", rows);
    if (cols <= 0 || cols % nvfp4::kBlock != 0)
        fail(RESET_ERR_UNSUPPORTED, "nvfp4 gemv: K = ", cols,
             " is not a positive multiple of 16 (pad K with zeros at load time or keep the layer BF16)");
    if (gate_up && rows % 2 != 0)
        fail(RESET_ERR_UNSUPPORTED, "nvfp4 gemv: a fused gate+up weight needs an even row count, got ", rows);
    Nvfp4GemvLayout layout;
    layout.rows = rows;
    layout.cols = cols;
    layout.gate_up = gate_up;
    layout.decode = decode;
    layout.row_tiles = gate_up ? (rows / 2 + 7) / 8 : (rows + 15) / 16;
    layout.k_supers = (cols + 63) / 64;
    return layout;
}

int64_t nvfp4_gemv_tile_row(const Nvfp4GemvLayout &layout, int64_t tile, int tile_row) {
    if (layout.gate_up) {
        const int64_t half = layout.rows / 2;
        const int64_t i = 8 * tile + (tile_row & 7);
        if (i >= half) return -1;
        return tile_row < 8 ? i : half + i;
    }
    const int64_t row = 16 * tile + tile_row;
    return row < layout.rows ? row : -1;
}

namespace {

// Place the two 4-bit codes of A-fragment register j into its word.
uint32_t place_pair(const Nvfp4GemvLayout &layout, int j, uint8_t lower, uint8_t upper) {
    if (layout.decode == Nvfp4GemvDecode::kNativeE2M1)
        return static_cast<uint32_t>(lower | (upper << 4)) << (8 * j);
    uint32_t word = 0;
    const uint8_t codes[2] = {lower, upper};
    for (int e = 0; e < 2; ++e) {
        word |= static_cast<uint32_t>(codes[e] & 7) << (kNvfp4MagnitudeBit[j] + 16 * e);
        word |= static_cast<uint32_t>(codes[e] >> 3) << (kNvfp4SignBit[j] + 16 * e);
    }
    return word;
}

}  // namespace

void nvfp4_gemv_repack(const Nvfp4GemvLayout &layout, const Nvfp4RepackPart *parts, size_t n_parts,
                       uint8_t *out_codes, uint8_t *out_scales) {
    require(parts, "nvfp4 gemv repack: parts");
    require(out_codes, "nvfp4 gemv repack: out_codes");
    require(out_scales, "nvfp4 gemv repack: out_scales");
    const int64_t code_stride = layout.cols / 2;
    const int64_t scale_stride = layout.cols / nvfp4::kBlock;
    // Each weight row's codes and scales, wherever its part holds them.
    std::vector<const uint8_t *> row_codes, row_scales;
    row_codes.reserve(size_t(layout.rows));
    row_scales.reserve(size_t(layout.rows));
    for (size_t p = 0; p < n_parts; ++p) {
        require(parts[p].codes, "nvfp4 gemv repack: codes");
        require(parts[p].scales, "nvfp4 gemv repack: scales");
        for (int64_t r = 0; r < parts[p].rows; ++r) {
            row_codes.push_back(parts[p].codes + r * code_stride);
            row_scales.push_back(parts[p].scales + r * scale_stride);
        }
    }
    if (int64_t(row_codes.size()) != layout.rows)
        fail(RESET_ERR_SHAPE, "nvfp4 gemv repack: the parts hold ", row_codes.size(), " rows; the layout has ",
             layout.rows);
    // A ModelOpt byte holds the codes of k and k + 1 (k even): the pair one A-fragment register
    // takes, placed by a table per register instead of nibble by nibble (session 37: the repack
    // was 1.5-2.2 s of a 2.7 s Qwen3-8B load on an H100's host, run 2).
    uint32_t placed[4][256];
    for (int j = 0; j < 4; ++j)
        for (int byte = 0; byte < 256; ++byte)
            placed[j][byte] = place_pair(layout, j, uint8_t(byte & 15), uint8_t(byte >> 4));
    const auto check_scale = [](uint8_t scale, int64_t row, int64_t block) {
        // The kernel decodes scales by shifting the 7 low bits into an FP16; a sign bit or the
        // NaN code would be decoded wrongly, so refuse them here.
        if (scale >= 0x7f)
            fail(RESET_ERR_FORMAT, "nvfp4 gemv repack: block scale code ", static_cast<int>(scale), " at row ", row,
                 ", block ", block, " is negative or NaN");
        return scale;
    };
    // Code of weight (tile row, k); 0 (exact zero) in the padding.
    auto code_at = [&](int64_t row, int64_t k) -> uint8_t {
        if (row < 0 || k >= layout.cols) return 0;
        return nvfp4::packed_code(row_codes[size_t(row)], static_cast<int>(k));
    };
    // Every output byte is written once below (the caller's buffers need no clearing: an 8B
    // model's 5.5 GB were zeroed twice before session 37).
    const int64_t full_supers = layout.cols / 64;  // supers whose 64 k are all inside K
    for (int64_t tile = 0; tile < layout.row_tiles; ++tile) {
        int64_t row_of[16];
        bool all_rows = true;
        for (int r = 0; r < 16; ++r) {
            row_of[r] = nvfp4_gemv_tile_row(layout, tile, r);
            all_rows &= row_of[r] >= 0;
        }
        for (int64_t s = 0; s < layout.k_quads() * 4; ++s) {
            uint8_t *code_run = out_codes + nvfp4_gemv_code_offset(layout, tile, s);
            // Scales: one 8-byte word per lane per 4 supers (a quad); byte 2 * (s % 4) + h is
            // the scale of row g + 8h in the lane's block 4s + t.
            uint8_t *scale_word = out_scales + nvfp4_gemv_scale_offset(layout, tile, s / 4) + 2 * (s % 4);
            if (s >= layout.k_supers) {
                // Supers past K in a tile's last quad: zero codes and 1.0 scales, exact zeros.
                std::fill(code_run, code_run + 512, uint8_t{0});
                for (int lane = 0; lane < 32; ++lane)
                    scale_word[lane * 8] = scale_word[lane * 8 + 1] = nvfp4::kE4M3One;
                continue;
            }
            if (all_rows && s < full_supers) {
                // Every weight of the super is inside the matrix: bytes straight from the rows.
                for (int lane = 0; lane < 32; ++lane) {
                    const int g = lane >> 2, t = lane & 3;
                    // Product b's k columns are 64s + 16t + 4b + {0,1} (a0 of row g, a1 of row
                    // g + 8) and + {2,3} (a2, a3): bytes 32s + 8t + 2b and the one after it.
                    const uint8_t *low = row_codes[size_t(row_of[g])] + 32 * s + 8 * t;
                    const uint8_t *high = row_codes[size_t(row_of[g + 8])] + 32 * s + 8 * t;
                    for (int b = 0; b < 4; ++b) {
                        const uint32_t word = placed[0][low[2 * b]] | placed[1][high[2 * b]] |
                                              placed[2][low[2 * b + 1]] | placed[3][high[2 * b + 1]];
                        uint8_t *out = code_run + lane * 16 + b * 4;
                        // Little-endian bytes, as the GPU reads the word.
                        for (int byte = 0; byte < 4; ++byte) out[byte] = static_cast<uint8_t>(word >> (8 * byte));
                    }
                    for (int h = 0; h < 2; ++h) {
                        const int64_t row = row_of[g + 8 * h], block = 4 * s + t;
                        scale_word[lane * 8 + h] = check_scale(row_scales[size_t(row)][block], row, block);
                    }
                }
                continue;
            }
            // A tile with padding rows, or a super reaching past K: weight by weight.
            for (int lane = 0; lane < 32; ++lane) {
                const int g = lane >> 2, t = lane & 3;
                for (int b = 0; b < 4; ++b) {
                    const int64_t k0 = 64 * s + 16 * t + 4 * b;
                    uint32_t word = 0;
                    for (int j = 0; j < 4; ++j) {
                        const int64_t row = row_of[g + 8 * (j & 1)];
                        const int64_t k = k0 + 2 * (j >> 1);
                        word |= place_pair(layout, j, code_at(row, k), code_at(row, k + 1));
                    }
                    for (int byte = 0; byte < 4; ++byte)
                        code_run[lane * 16 + b * 4 + byte] = static_cast<uint8_t>(word >> (8 * byte));
                }
                for (int h = 0; h < 2; ++h) {
                    const int64_t row = row_of[g + 8 * h], block = 4 * s + t;
                    // Padding rows and blocks past K: scale 1.0 over zero codes.
                    scale_word[lane * 8 + h] = row >= 0 && block < scale_stride
                                                   ? check_scale(row_scales[size_t(row)][block], row, block)
                                                   : nvfp4::kE4M3One;
                }
            }
        }
    }
}

void nvfp4_gemv_repack(const Nvfp4GemvLayout &layout, const uint8_t *codes, const uint8_t *scales,
                       uint8_t *out_codes, uint8_t *out_scales) {
    const Nvfp4RepackPart whole{codes, scales, layout.rows};  // checked there, as every part is
    nvfp4_gemv_repack(layout, &whole, 1, out_codes, out_scales);
}

}  // namespace reset
