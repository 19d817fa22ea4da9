// test_nvfp4_dequantize.cu — the repacked NVFP4 weight to dense FP16
// (kernels/nvfp4_dequantize.cu), bit for bit against e2m1(q) * e4m3(s) * 2^-14
// computed on the CPU from the ModelOpt codes.  Random FP32 matrices are
// quantized with the project's rule (rules/nvfp4.h quantize_block, one
// tensor scale amax / (6 * 448)) and repacked with nvfp4_gemv_repack (both
// decodes); shapes with odd N, fused gate_up (odd halves), K not a multiple
// of 64, zero blocks and tiny negatives (-0 codes); row ranges (inside one
// tile, across tiles, across the gate/up boundary); padded and misaligned
// output.  Fresh random data (seed printed, argv[1] repeats it); the output
// is poisoned with NaN and its padding must stay untouched.
// RESET_GPU_TEST_QUICK=1: small shapes only, no timing (compute-sanitizer).
#include <cuda_fp16.h>

#include <algorithm>
#include <functional>

#include "api/errors.h"
#include "gpu_test_util.h"
#include "kernels/nvfp4_dequantize.h"
#include "kernels/nvfp4_gemv_layout.h"
#include "rules/nvfp4.h"

using namespace gpu_test;

namespace {

bool g_quick = false;

struct Quantized {
    int64_t rows = 0, cols = 0;
    std::vector<uint8_t> codes;   // [rows][cols/2] ModelOpt
    std::vector<uint8_t> scales;  // [rows][cols/16]
};

Quantized quantize(int64_t rows, int64_t cols) {
    std::vector<float> w(size_t(rows) * size_t(cols));
    for (int64_t r = 0; r < rows; ++r) {
        const float sigma = std::pow(10.0f, uniform(-2.0f, 1.0f));  // rows of different magnitude
        for (int64_t k = 0; k < cols; ++k) w[size_t(r * cols + k)] = normal(sigma);
    }
    // Zero blocks (scale 1.0, zero codes) and blocks of tiny negatives (-0 codes).
    for (int i = 0; i < 3 && rows * cols >= 64; ++i) {
        const int64_t r = int64_t(g_rng() % uint64_t(rows)), b = int64_t(g_rng() % uint64_t(cols / 16));
        for (int k = 0; k < 16; ++k) w[size_t(r * cols + 16 * b + k)] = i == 0 ? 0.0f : (k == 0 ? 1.0f : -1e-6f);
    }
    float amax = 0.0f;
    for (float v : w) amax = std::max(amax, std::fabs(v));
    const float tensor_scale = reset::nvfp4::tensor_scale_from_amax(amax);
    Quantized q;
    q.rows = rows;
    q.cols = cols;
    q.codes.assign(size_t(rows) * size_t(cols / 2), 0);
    q.scales.assign(size_t(rows) * size_t(cols / 16), 0);
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t b = 0; b < cols / 16; ++b) {
            uint8_t c[16];
            q.scales[size_t(r * (cols / 16) + b)] =
                reset::nvfp4::quantize_block(&w[size_t(r * cols + 16 * b)], tensor_scale, c);
            for (int k = 0; k < 16; k += 2)
                q.codes[size_t(r * (cols / 2) + 8 * b + k / 2)] = static_cast<uint8_t>(c[k] | (c[k + 1] << 4));
        }
    return q;
}

uint16_t expected_bits(const Quantized &q, int64_t row, int64_t k) {
    const uint8_t code = reset::nvfp4::packed_code(&q.codes[size_t(row * (q.cols / 2))], static_cast<int>(k));
    const float scale = reset::nvfp4::e4m3_to_float(q.scales[size_t(row * (q.cols / 16) + k / 16)]);
    const float v = reset::nvfp4::e2m1_to_float(code) * scale * 0x1p-14f;
    const __half h = __float2half_rn(v);
    const uint16_t bits = static_cast<__half_raw>(h).x;
    // The value must be exact in FP16 (the header's claim): check it here too.
    if (__half2float(h) != v)
        EXPECT(false, "row %lld k %lld: %.9g not exact in FP16", (long long)row, (long long)k, double(v));
    return bits;
}

void run_case(const Quantized &q, bool gate_up, reset::Nvfp4GemvDecode decode, int64_t row_begin, int64_t row_end,
              int64_t pad, bool misaligned) {
    const reset::Nvfp4GemvLayout layout = reset::nvfp4_gemv_layout(q.rows, q.cols, gate_up, decode);
    std::vector<uint8_t> codes(layout.code_bytes()), scales(layout.scale_bytes());
    reset::nvfp4_gemv_repack(layout, q.codes.data(), q.scales.data(), codes.data(), scales.data());
    DeviceBuffer d_codes(codes.size()), d_scales(scales.size());
    d_codes.upload(codes);
    d_scales.upload(scales);
    const int64_t end = row_end < 0 ? q.rows : row_end;
    const int64_t out_rows = end - row_begin;
    const int64_t ld = q.cols + pad;
    const int off = misaligned ? 1 : 0;
    const size_t out_elems = size_t(out_rows) * size_t(ld) + size_t(off);
    DeviceBuffer d_out(out_elems * 2);
    d_out.poison();  // 0xFFFF: FP16 NaN
    reset::Nvfp4GemvWeight w;
    w.layout = layout;
    w.codes = d_codes.ptr;
    w.scales = d_scales.ptr;
    w.tensor_scale = 1.0f;
    reset::Nvfp4DequantizeArgs a;
    a.row_begin = row_begin;
    a.row_end = row_end;
    a.out = d_out.as<uint16_t>() + off;
    a.ld_out = ld;
    reset::nvfp4_dequantize(w, a, nullptr);
    CUDA_OK(cudaDeviceSynchronize());
    const std::vector<uint16_t> got = d_out.download<uint16_t>(out_elems);
    size_t wrong = 0, padding = 0;
    if (off) padding += got[0] == 0xFFFF ? 0 : 1;
    for (int64_t r = 0; r < out_rows; ++r)
        for (int64_t k = 0; k < ld; ++k) {
            const uint16_t v = got[size_t(off) + size_t(r * ld + k)];
            if (k >= q.cols) {
                padding += v == 0xFFFF ? 0 : 1;
                continue;
            }
            const uint16_t want = expected_bits(q, row_begin + r, k);
            if (v != want && wrong++ < 5)
                std::fprintf(stderr, "  row %lld k %lld: got 0x%04x, want 0x%04x\n", (long long)(row_begin + r),
                             (long long)k, v, want);
        }
    EXPECT(wrong == 0, "N %lld K %lld gate_up %d decode %d rows [%lld, %lld) pad %lld misaligned %d: %zu wrong",
           (long long)q.rows, (long long)q.cols, int(gate_up), int(decode), (long long)row_begin, (long long)end,
           (long long)pad, int(misaligned), wrong);
    EXPECT(padding == 0, "N %lld K %lld: %zu padding elements written", (long long)q.rows, (long long)q.cols, padding);
}

void timing() {
    struct Shape {
        const char *name;
        int64_t rows, cols;
        bool gate_up;
    };
    const Shape shapes[] = {{"qkv", 6144, 4096, false}, {"gate_up", 24576, 4096, true}, {"down", 4096, 12288, false}};
    for (const Shape &s : shapes) {
        const reset::Nvfp4GemvLayout layout =
            reset::nvfp4_gemv_layout(s.rows, s.cols, s.gate_up, reset::Nvfp4GemvDecode::kInteger);
        DeviceBuffer d_codes(layout.code_bytes()), d_scales(layout.scale_bytes()),
            d_out(size_t(s.rows) * size_t(s.cols) * 2);
        CUDA_OK(cudaMemset(d_codes.ptr, 0x5a, d_codes.bytes));
        CUDA_OK(cudaMemset(d_scales.ptr, 0x38, d_scales.bytes));
        reset::Nvfp4GemvWeight w;
        w.layout = layout;
        w.codes = d_codes.ptr;
        w.scales = d_scales.ptr;
        reset::Nvfp4DequantizeArgs a;
        a.out = d_out.ptr;
        a.ld_out = s.cols;
        const float us = median_us([&] { reset::nvfp4_dequantize(w, a, nullptr); }, 30);
        const double bytes = double(layout.code_bytes() + layout.scale_bytes()) + double(s.rows) * double(s.cols) * 2;
        std::printf("timing: nvfp4_dequantize %-8s N %6lld K %6lld: median %8.2f us, %6.0f GB/s (read + write)\n",
                    s.name, (long long)s.rows, (long long)s.cols, us, bytes / (us * 1e3));
    }
}

void expect_status(const reset::Nvfp4GemvWeight &w, const reset::Nvfp4DequantizeArgs &a, reset_status want,
                   const char *what) {
    try {
        reset::nvfp4_dequantize(w, a, nullptr);
        EXPECT(false, "%s: accepted", what);
    } catch (const reset::Error &e) {
        EXPECT(e.status() == want, "%s: status %d, expected %d", what, int(e.status()), int(want));
    }
}

void argument_errors() {
    DeviceBuffer d(1 << 16);
    reset::Nvfp4GemvWeight w;
    reset::Nvfp4DequantizeArgs a;
    expect_status(w, a, RESET_ERR_INVALID_ARGUMENT, "empty arguments");
    w.layout = reset::nvfp4_gemv_layout(32, 64, false, reset::Nvfp4GemvDecode::kInteger);
    w.codes = d.ptr;
    w.scales = d.ptr;
    a.out = d.ptr;
    a.ld_out = 32;
    expect_status(w, a, RESET_ERR_INVALID_ARGUMENT, "ld_out < K");
    a.ld_out = 64;
    a.row_begin = 10;
    a.row_end = 10;
    expect_status(w, a, RESET_ERR_INVALID_ARGUMENT, "empty row range");
    a.row_end = 33;
    expect_status(w, a, RESET_ERR_INVALID_ARGUMENT, "row range past N");
    a.row_begin = 0;
    a.row_end = -1;
    w.layout.row_tiles = 3;
    expect_status(w, a, RESET_ERR_INVALID_ARGUMENT, "inconsistent layout");
}

}  // namespace

int main(int argc, char **argv) {
    if (!start("test_nvfp4_dequantize", argc, argv)) return 0;
    g_quick = std::getenv("RESET_GPU_TEST_QUICK") != nullptr;
    try {
        using D = reset::Nvfp4GemvDecode;
        struct Shape {
            int64_t rows, cols;
            bool gate_up;
        };
        std::vector<Shape> shapes = {{1, 16, false}, {37, 80, false}, {26, 48, true}, {17, 1008, false}};
        if (!g_quick) {
            const std::vector<Shape> more = {{16, 64, false},   {333, 4112, false}, {2 * 77, 1040, true},
                                             {1024, 4096, true}, {4096, 4096, false}, {5, 12288, false}};
            shapes.insert(shapes.end(), more.begin(), more.end());
        }
        for (const Shape &s : shapes) {
            const Quantized q = quantize(s.rows, s.cols);
            for (D decode : {D::kInteger, D::kNativeE2M1}) {
                run_case(q, s.gate_up, decode, 0, -1, 0, false);
                run_case(q, s.gate_up, decode, 0, -1, 8, false);
                run_case(q, s.gate_up, decode, 0, -1, 3, true);  // element-wise stores
                if (s.rows >= 3) {
                    // A range inside, one across tiles, and (gate_up) one across the gate/up boundary.
                    run_case(q, s.gate_up, decode, 1, 2, 0, false);
                    run_case(q, s.gate_up, decode, s.rows / 3, s.rows - 1, 8, false);
                    if (s.gate_up) run_case(q, s.gate_up, decode, s.rows / 2 - 3, s.rows / 2 + 5, 0, false);
                    if (s.gate_up) run_case(q, s.gate_up, decode, s.rows / 2, s.rows, 0, false);
                }
            }
        }
        argument_errors();
        if (!g_quick) timing();
    } catch (const reset::Error &e) {
        std::fprintf(stderr, "FAIL: unexpected reset::Error %d: %s\n", static_cast<int>(e.status()), e.what());
        return 1;
    }
    return finish("test_nvfp4_dequantize");
}
