// The GEMV layout's load-time repack (kernels/nvfp4_gemv_layout.h), checked on the host: every
// code and scale read back from where the header says it lies, for whole matrices and for the
// parts of a fused group (q, k, v; gate, up), whose rows the repack takes in place.  The GPU
// tests check the kernel that reads the layout (tests/gpu/test_nvfp4_gemv.cu).
#include <doctest/doctest.h>

#include <random>
#include <vector>

#include "api/errors.h"
#include "kernels/nvfp4_gemv_layout.h"
#include "rules/nvfp4.h"

using namespace reset;

namespace {

struct Source {
    int64_t rows, cols;
    std::vector<uint8_t> codes, scales;  // ModelOpt: [rows][cols/2], [rows][cols/16]
};

Source random_source(int64_t rows, int64_t cols, std::mt19937 &rng) {
    Source s{rows, cols, std::vector<uint8_t>(size_t(rows * cols / 2)), std::vector<uint8_t>(size_t(rows * cols / 16))};
    for (uint8_t &c : s.codes) c = uint8_t(rng());
    for (uint8_t &c : s.scales) c = uint8_t(rng() % 0x7f);  // every non-negative, non-NaN E4M3 code
    return s;
}

// Reads the repacked bytes back by the header's definition and counts the weights and scales
// that are not the source's (padding must hold code 0 and scale 1.0).
size_t misplaced(const Nvfp4GemvLayout &layout, const Source &src, const std::vector<uint8_t> &codes,
                 const std::vector<uint8_t> &scales) {
    size_t wrong = 0;
    for (int64_t tile = 0; tile < layout.row_tiles; ++tile)
        for (int64_t s = 0; s < layout.k_quads() * 4; ++s)
            for (int lane = 0; lane < 32; ++lane) {
                const int g = lane >> 2, t = lane & 3;
                for (int b = 0; b < 4; ++b) {
                    const uint8_t *at = codes.data() + nvfp4_gemv_code_offset(layout, tile, s) + lane * 16 + b * 4;
                    const uint32_t word = uint32_t(at[0]) | uint32_t(at[1]) << 8 | uint32_t(at[2]) << 16 |
                                          uint32_t(at[3]) << 24;
                    for (int j = 0; j < 4; ++j)
                        for (int e = 0; e < 2; ++e) {
                            const int64_t row = nvfp4_gemv_tile_row(layout, tile, g + 8 * (j & 1));
                            const int64_t k = 64 * s + 16 * t + 4 * b + 2 * (j >> 1) + e;
                            const uint8_t want =
                                row >= 0 && k < src.cols ? nvfp4::packed_code(&src.codes[size_t(row * src.cols / 2)], int(k)) : 0;
                            uint8_t got;
                            if (layout.decode == Nvfp4GemvDecode::kNativeE2M1) {
                                got = uint8_t((word >> (8 * j + 4 * e)) & 15);
                            } else {
                                got = uint8_t(((word >> (kNvfp4MagnitudeBit[j] + 16 * e)) & 7) |
                                              ((word >> (kNvfp4SignBit[j] + 16 * e)) & 1) << 3);
                            }
                            wrong += got != want;
                        }
                }
                for (int h = 0; h < 2; ++h) {
                    const int64_t row = nvfp4_gemv_tile_row(layout, tile, g + 8 * h), block = 4 * s + t;
                    const uint8_t want =
                        row >= 0 && block < src.cols / 16 ? src.scales[size_t(row * (src.cols / 16) + block)] : nvfp4::kE4M3One;
                    wrong += scales[nvfp4_gemv_scale_offset(layout, tile, s / 4) + lane * 8 + 2 * (s % 4) + h] != want;
                }
            }
    return wrong;
}

}  // namespace

TEST_CASE("GEMV repack: every code and scale where the layout puts it, whole or from a group's parts") {
    std::mt19937 rng(37);
    int cases = 0;
    for (Nvfp4GemvDecode decode : {Nvfp4GemvDecode::kInteger, Nvfp4GemvDecode::kNativeE2M1})
        for (bool gate_up : {false, true})
            // Rows: one tile, a partial tile, several; K: a partial super, whole supers, a partial quad.
            for (int64_t rows : {2, 16, 30, 48, 130})
                for (int64_t cols : {16, 48, 64, 192, 272, 1024}) {
                    if (gate_up && rows % 2) continue;
                    CAPTURE(rows);
                    CAPTURE(cols);
                    CAPTURE(gate_up);
                    const Source src = random_source(rows, cols, rng);
                    const Nvfp4GemvLayout layout = nvfp4_gemv_layout(rows, cols, gate_up, decode);
                    // Poisoned: every byte must be written.
                    std::vector<uint8_t> codes(layout.code_bytes(), 0xA5), scales(layout.scale_bytes(), 0xA5);
                    nvfp4_gemv_repack(layout, src.codes.data(), src.scales.data(), codes.data(), scales.data());
                    CHECK(misplaced(layout, src, codes, scales) == 0);
                    // The same rows in three parts of uneven sizes, the first possibly empty.
                    const int64_t first = rows / 5, second = rows / 2 - rows / 5;
                    const int64_t part_rows[3] = {first, second, rows - first - second};
                    std::vector<Nvfp4RepackPart> parts;
                    int64_t row = 0;
                    for (int64_t n : part_rows) {
                        parts.push_back({src.codes.data() + row * cols / 2, src.scales.data() + row * cols / 16, n});
                        row += n;
                    }
                    std::vector<uint8_t> part_codes(codes.size(), 0x5A), part_scales(scales.size(), 0x5A);
                    nvfp4_gemv_repack(layout, parts.data(), parts.size(), part_codes.data(), part_scales.data());
                    CHECK(part_codes == codes);
                    CHECK(part_scales == scales);
                    ++cases;
                }
    CHECK(cases == 2 * (6 * 5 + 6 * 5));
}

TEST_CASE("GEMV repack refuses parts that are not the layout's rows, and NaN or negative scales") {
    std::mt19937 rng(38);
    const Source src = random_source(32, 128, rng);
    const Nvfp4GemvLayout layout = nvfp4_gemv_layout(32, 128, false, Nvfp4GemvDecode::kInteger);
    std::vector<uint8_t> codes(layout.code_bytes()), scales(layout.scale_bytes());
    const Nvfp4RepackPart short_part{src.codes.data(), src.scales.data(), 31};
    try {
        nvfp4_gemv_repack(layout, &short_part, 1, codes.data(), scales.data());
        FAIL("31 rows for a 32-row layout were accepted");
    } catch (const Error &e) {
        CHECK(e.status() == RESET_ERR_SHAPE);
    }
    // A bad scale in a whole super (the fast path) and in the last, partial one of another
    // matrix (weight by weight): both refused.
    for (int64_t cols : {128, 144}) {
        Source bad = random_source(32, cols, rng);
        for (uint8_t code : {uint8_t(0x7f), uint8_t(0x80)}) {
            bad.scales[size_t(5 * (cols / 16) + cols / 16 - 1)] = code;
            const Nvfp4GemvLayout l = nvfp4_gemv_layout(32, cols, false, Nvfp4GemvDecode::kInteger);
            std::vector<uint8_t> c(l.code_bytes()), s(l.scale_bytes());
            try {
                nvfp4_gemv_repack(l, bad.codes.data(), bad.scales.data(), c.data(), s.data());
                FAIL("scale code ", int(code), " was accepted");
            } catch (const Error &e) {
                CHECK(e.status() == RESET_ERR_FORMAT);
            }
        }
    }
}
