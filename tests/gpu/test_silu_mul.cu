// test_silu_mul.cu — out = silu(gate) * up (kernels/silu_mul.cu) against the
// CPU expression in double and in FP32: intermediate sizes of the models and
// odd ones, 1..8 rows (and a prefill-sized batch), separate buffers, a fused
// [gate | up] buffer, in place over gate, misaligned pointers (element-wise
// path), inputs from tiny to large (exp over/underflow).  Fresh random data
// (seed printed, argv[1] repeats it); outputs poisoned with NaN first.
// RESET_GPU_TEST_QUICK=1: small cases only, no timing (compute-sanitizer).
#include <algorithm>
#include <functional>

#include "api/errors.h"
#include "gpu_test_util.h"
#include "kernels/silu_mul.h"

using namespace gpu_test;

namespace {

bool g_quick = false;
double g_worst = 0.0;       // relative L2 per row vs double
double g_worst_ulp = 0.0;   // largest element error vs the FP32 CPU expression, in units of |ref| * 2^-23

enum class Layout { kSeparate, kFused, kInPlace, kMisaligned };

void run_case(int rows, int64_t cols, Layout layout) {
    // One buffer holding gate and up: fused = [gate | up] per row; otherwise
    // two regions.  Out is its own buffer unless in place.
    const int off = layout == Layout::kMisaligned ? 1 : 0;
    const int64_t ld = layout == Layout::kFused ? 2 * cols + 4 : cols + (layout == Layout::kMisaligned ? 3 : 4);
    const size_t region = size_t(rows) * size_t(ld) + 8;
    std::vector<float> in(layout == Layout::kFused ? region : 2 * region);
    std::vector<float> sigma(size_t(rows) + 1);  // a spread per row, tiny to large
    for (auto &s : sigma) s = std::pow(10.0f, uniform(-2.0f, 1.7f));
    for (size_t i = 0; i < in.size(); ++i) in[i] = normal(sigma[std::min(size_t(rows), (i % region) / size_t(ld))]);
    // A few extreme values: exp(-x) overflows (x << 0) or vanishes (x >> 0).
    // Only in rows of several elements: alone, silu(-120) = -0 in FP32 (exp(120) overflows) against
    // the double's -1e-50 would make the row's relative L2 1 although the FP32 value is right.
    if (cols > 2) {
        in[size_t(off)] = -120.0f;
        in[size_t(off) + 1] = 95.0f;
    }
    DeviceBuffer d_in(in.size() * 4), d_out(region * 4);
    d_in.upload(in);
    d_out.poison();
    const float *base = d_in.as<float>() + off;
    reset::SiluMulArgs a;
    a.rows = rows;
    a.cols = cols;
    a.gate = base;
    a.ld_gate = ld;
    a.up = layout == Layout::kFused ? base + cols : base + region;
    a.ld_up = ld;
    a.out = layout == Layout::kInPlace ? const_cast<float *>(a.gate) : d_out.as<float>() + off;
    a.ld_out = ld;
    reset::silu_mul(a, nullptr);
    CUDA_OK(cudaDeviceSynchronize());
    const std::vector<float> got = (layout == Layout::kInPlace ? d_in : d_out).download<float>(region);
    const size_t up_base = layout == Layout::kFused ? size_t(cols) : region;
    size_t padding_written = 0, bad_fp32 = 0;
    for (int r = 0; r < rows; ++r) {
        std::vector<double> ref(static_cast<size_t>(cols));
        std::vector<float> row(static_cast<size_t>(cols));
        for (int64_t i = 0; i < cols; ++i) {
            const size_t at = size_t(off) + size_t(r) * size_t(ld) + size_t(i);
            const float g = in[at], u = in[up_base + at];
            ref[size_t(i)] = double(g) / (1.0 + std::exp(-double(g))) * double(u);
            row[size_t(i)] = got[at];
            const float cpu = g / (1.0f + std::exp(-g)) * u;  // cpu_engine.cpp's silu, then * up
            const double err = std::fabs(double(got[at]) - double(cpu));
            const double scale = std::max(std::fabs(double(cpu)), 1e-30) * std::ldexp(1.0, -23);
            g_worst_ulp = std::max(g_worst_ulp, err / scale);
            bad_fp32 += (err <= 8.0 * scale || (cpu == 0.0f && got[at] == 0.0f)) ? 0 : 1;
        }
        const double e = relative_l2(row, ref);
        g_worst = std::max(g_worst, e);
        EXPECT(e <= 1e-6, "rows %d cols %lld layout %d row %d: relative L2 %.3g", rows, (long long)cols, int(layout),
               r, e);
        if (layout != Layout::kInPlace && layout != Layout::kFused)
            for (int64_t i = cols; i < ld; ++i)
                padding_written += std::isnan(got[size_t(off) + size_t(r) * size_t(ld) + size_t(i)]) ? 0 : 1;
        if (layout == Layout::kFused)
            for (int64_t i = cols; i < ld; ++i)  // the up half and the padding of out stay poisoned
                padding_written += std::isnan(got[size_t(r) * size_t(ld) + size_t(i)]) ? 0 : 1;
        if (layout == Layout::kInPlace)  // in place: up and the padding keep their input values
            for (int64_t i = cols; i < ld; ++i) {
                const size_t at = size_t(r) * size_t(ld) + size_t(i);
                padding_written += got[at] == in[at] ? 0 : 1;
            }
    }
    EXPECT(bad_fp32 == 0, "rows %d cols %lld layout %d: %zu elements more than 8 ulp from the FP32 CPU expression",
           rows, (long long)cols, int(layout), bad_fp32);
    EXPECT(padding_written == 0, "rows %d cols %lld layout %d: %zu padding elements written", rows, (long long)cols,
           int(layout), padding_written);
    if (off) EXPECT(std::isnan(got[0]), "element before out written");
}

void timing() {
    const int64_t inter = 12288;  // Qwen3-8B intermediate size
    for (int rows : {1, 8, 512}) {
        DeviceBuffer d_in(size_t(rows) * size_t(2 * inter) * 4), d_out(size_t(rows) * size_t(inter) * 4);
        CUDA_OK(cudaMemset(d_in.ptr, 0, d_in.bytes));
        reset::SiluMulArgs a;
        a.rows = rows;
        a.cols = inter;
        a.gate = d_in.as<float>();
        a.ld_gate = 2 * inter;
        a.up = d_in.as<float>() + inter;
        a.ld_up = 2 * inter;
        a.out = d_out.as<float>();
        a.ld_out = inter;
        const float us = median_us([&] { reset::silu_mul(a, nullptr); }, 50);
        std::printf("timing: silu_mul intermediate %lld rows %d (fused [gate|up]): median %.2f us\n",
                    (long long)inter, rows, us);
    }
}

void expect_status(const reset::SiluMulArgs &a, reset_status want, const char *what) {
    try {
        reset::silu_mul(a, nullptr);
        EXPECT(false, "%s: accepted", what);
    } catch (const reset::Error &e) {
        EXPECT(e.status() == want, "%s: status %d, expected %d", what, int(e.status()), int(want));
    }
}

}  // namespace

int main(int argc, char **argv) {
    if (!start("test_silu_mul", argc, argv)) return 0;
    g_quick = std::getenv("RESET_GPU_TEST_QUICK") != nullptr;
    try {
        const std::vector<int64_t> sizes = g_quick ? std::vector<int64_t>{1, 5, 64, 1000}
                                                   : std::vector<int64_t>{1, 3, 4, 64, 1000, 3072, 12288, 18944, 25600};
        for (int64_t cols : sizes)
            for (int rows : {1, 3, 8})
                for (Layout l : {Layout::kSeparate, Layout::kFused, Layout::kInPlace, Layout::kMisaligned})
                    run_case(rows, cols, l);
        if (!g_quick) run_case(300, 1000, Layout::kFused);

        DeviceBuffer d(256);
        reset::SiluMulArgs a;
        expect_status(a, RESET_ERR_INVALID_ARGUMENT, "empty arguments");
        a.rows = 1;
        a.cols = 8;
        a.gate = d.as<float>();
        a.up = d.as<float>() + 16;
        a.out = d.as<float>() + 32;
        a.ld_gate = a.ld_up = a.ld_out = 8;
        a.ld_up = 7;
        expect_status(a, RESET_ERR_INVALID_ARGUMENT, "ld_up < cols");
        a.ld_up = 8;
        a.out = d.as<float>();
        a.ld_out = 12;
        expect_status(a, RESET_ERR_INVALID_ARGUMENT, "in place with another leading dimension");
        a.ld_out = 8;
        a.rows = 70000;
        expect_status(a, RESET_ERR_UNSUPPORTED, "70,000 rows");
        if (!g_quick) timing();
    } catch (const reset::Error &e) {
        std::fprintf(stderr, "FAIL: unexpected reset::Error %d: %s\n", static_cast<int>(e.status()), e.what());
        return 1;
    }
    std::printf("test_silu_mul: worst relative L2 vs FP64 %.3g, worst element vs FP32 CPU %.2f ulp\n", g_worst,
                g_worst_ulp);
    return finish("test_silu_mul");
}
