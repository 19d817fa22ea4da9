// test_prefill_epilogue.cu — the in-place GEMM epilogue (kernels/prefill_epilogue.cu)
// against the same FP32 expression on the CPU, bit for bit (the kernel rounds
// each step separately): every combination of scale / row_scale / bias /
// residual / residual == y, 1..1024 rows (and 70,000 rows: the grid's row
// stride), vector and element-wise paths.  Fresh random data (seed printed,
// argv[1] repeats it); the padding of y holds NaN and must stay untouched.
// RESET_GPU_TEST_QUICK=1: small cases only, no timing (compute-sanitizer).
#include <algorithm>
#include <functional>

#include "api/errors.h"
#include "gpu_test_util.h"
#include "kernels/prefill_epilogue.h"

using namespace gpu_test;

namespace {

bool g_quick = false;

// The header's expression with one rounding per step (volatile: no FMA contraction).
float expected(float y, float factor, float bias, float residual) {
    volatile float v = y * factor;
    volatile float w = v + bias;
    volatile float z = w + residual;
    return z;
}

void run_case(int rows, int64_t cols, int flags, bool misaligned) {
    const bool use_scale = flags & 1, use_row = flags & 2, use_bias = flags & 4, use_res = flags & 8,
               alias = flags & 16, into_residual = flags & 32;  // 32: out = residual (the engine's residual GEMMs)
    const int off = misaligned ? 1 : 0;
    const int64_t ldy = cols + (misaligned ? 3 : 4);
    const int64_t ldr = alias ? ldy : cols + 8;
    std::vector<float> y(size_t(rows) * size_t(ldy) + size_t(off), NAN), res(size_t(rows) * size_t(ldr) + size_t(off)),
        bias(size_t(cols) + size_t(off)), row_scale(static_cast<size_t>(rows));
    for (int r = 0; r < rows; ++r)
        for (int64_t i = 0; i < cols; ++i) y[size_t(off) + size_t(r) * size_t(ldy) + size_t(i)] = normal(3.0f);
    for (auto &v : res) v = normal(1.0f);
    for (auto &v : bias) v = normal(0.3f);
    for (auto &v : row_scale) v = std::ldexp(uniform(0.5f, 1.0f), int(g_rng() % 9) - 4);
    const float scale = use_scale ? uniform(1e-4f, 1e-2f) * 16384.0f : 1.0f;
    DeviceBuffer d_y(y.size() * 4), d_res(res.size() * 4), d_bias(bias.size() * 4), d_rs(row_scale.size() * 4);
    d_y.upload(y);
    d_res.upload(res);
    d_bias.upload(bias);
    d_rs.upload(row_scale);
    reset::PrefillEpilogueArgs a;
    a.rows = rows;
    a.cols = cols;
    a.y = d_y.as<float>() + off;
    a.ldy = ldy;
    a.scale = scale;
    a.row_scale = use_row ? d_rs.as<float>() : nullptr;
    a.bias = use_bias ? d_bias.as<float>() + off : nullptr;
    a.residual = alias ? a.y : (use_res ? d_res.as<float>() + off : nullptr);
    a.ld_residual = alias ? ldy : (use_res ? ldr : 0);
    if (into_residual) {
        a.out = d_res.as<float>() + off;
        a.ld_out = ldr;
    }
    reset::prefill_epilogue(a, nullptr);
    CUDA_OK(cudaDeviceSynchronize());
    const std::vector<float> got_y = d_y.download<float>(y.size()), got_res = d_res.download<float>(res.size());
    size_t wrong = 0, padding = 0;
    for (int r = 0; r < rows; ++r) {
        const float factor = use_row ? scale * row_scale[size_t(r)] : scale;
        for (int64_t i = 0; i < ldy; ++i) {
            const size_t at = size_t(off) + size_t(r) * size_t(ldy) + size_t(i);
            const size_t res_at = size_t(off) + size_t(r) * size_t(ldr) + size_t(i);
            if (i >= cols) {
                padding += std::isnan(got_y[at]) ? 0 : 1;
                continue;
            }
            const float b = use_bias ? bias[size_t(off) + size_t(i)] : 0.0f;
            const float re = alias ? y[at] : (use_res ? res[res_at] : 0.0f);
            const float want = expected(y[at], factor, b, re);
            const float got = into_residual ? got_res[res_at] : got_y[at];
            wrong += std::memcmp(&want, &got, 4) == 0 ? 0 : 1;
            // With a separate out, y is left as it was.
            if (into_residual) wrong += std::memcmp(&y[at], &got_y[at], 4) == 0 ? 0 : 1;
        }
    }
    EXPECT(wrong == 0, "rows %d cols %lld flags %d misaligned %d: %zu elements differ", rows, (long long)cols, flags,
           int(misaligned), wrong);
    EXPECT(padding == 0, "rows %d cols %lld flags %d: %zu padding elements written", rows, (long long)cols, flags,
           padding);
}

void timing() {
    for (int64_t cols : {int64_t(4096), int64_t(6144), int64_t(24576)}) {
        const int rows = 1024;
        DeviceBuffer d_y(size_t(rows) * size_t(cols) * 4), d_r(size_t(rows) * size_t(cols) * 4), d_b(size_t(cols) * 4),
            d_s(size_t(rows) * 4);
        CUDA_OK(cudaMemset(d_y.ptr, 0, d_y.bytes));
        CUDA_OK(cudaMemset(d_r.ptr, 0, d_r.bytes));
        CUDA_OK(cudaMemset(d_b.ptr, 0, d_b.bytes));
        CUDA_OK(cudaMemset(d_s.ptr, 0, d_s.bytes));
        reset::PrefillEpilogueArgs a;
        a.rows = rows;
        a.cols = cols;
        a.y = d_y.as<float>();
        a.ldy = cols;
        a.scale = 2.0f;
        a.row_scale = d_s.as<float>();
        a.bias = d_b.as<float>();
        a.residual = d_r.as<float>();
        a.ld_residual = cols;
        const float us = median_us([&] { reset::prefill_epilogue(a, nullptr); }, 30);
        const double bytes = 3.0 * rows * double(cols) * 4;
        std::printf("timing: prefill_epilogue rows %d cols %lld (scale, row_scale, bias, residual): median %.2f us, "
                    "%.0f GB/s\n",
                    rows, (long long)cols, us, bytes / (us * 1e3));
    }
}

void expect_status(const reset::PrefillEpilogueArgs &a, reset_status want, const char *what) {
    expect_error(want, what, [&] { reset::prefill_epilogue(a, nullptr); });
}

}  // namespace

int main(int argc, char **argv) {
    if (!start("test_prefill_epilogue", argc, argv)) return 0;
    g_quick = std::getenv("RESET_GPU_TEST_QUICK") != nullptr;
    try {
        const std::vector<int64_t> sizes = g_quick ? std::vector<int64_t>{1, 5, 256}
                                                   : std::vector<int64_t>{1, 5, 256, 1000, 4096, 6144};
        const std::vector<int> row_counts = g_quick ? std::vector<int>{1, 7} : std::vector<int>{1, 7, 64, 300};
        for (int64_t cols : sizes)
            for (int rows : row_counts)
                for (int flags = 0; flags < 64; ++flags) {
                    if ((flags & 16) && (flags & 8)) continue;  // alias replaces the separate residual
                    if ((flags & 32) && !(flags & 8)) continue;  // out = residual needs a residual
                    run_case(rows, cols, flags, false);
                    if (flags % 5 == 0) run_case(rows, cols, flags, true);
                }
        if (!g_quick) {
            run_case(1024, 4096, 15, false);
            run_case(70000, 3, 31 & ~8, false);  // more rows than the grid's y dimension
        }
        DeviceBuffer d(256);
        reset::PrefillEpilogueArgs a;
        expect_status(a, RESET_ERR_INVALID_ARGUMENT, "empty arguments");
        a.rows = 1;
        a.cols = 8;
        a.y = d.as<float>();
        a.ldy = 4;
        expect_status(a, RESET_ERR_INVALID_ARGUMENT, "ldy < cols");
        a.ldy = 8;
        a.residual = a.y;
        a.ld_residual = 12;
        expect_status(a, RESET_ERR_INVALID_ARGUMENT, "residual == y with another leading dimension");
        a.ld_residual = 8;
        a.residual = d.as<float>() + 16;
        a.out = d.as<float>() + 16;
        a.ld_out = 12;
        expect_status(a, RESET_ERR_INVALID_ARGUMENT, "out == residual with another leading dimension");
        a.ld_out = 4;
        expect_status(a, RESET_ERR_INVALID_ARGUMENT, "ld_out < cols");
        if (!g_quick) timing();
    } catch (const reset::Error &e) {
        std::fprintf(stderr, "FAIL: unexpected reset::Error %d: %s\n", static_cast<int>(e.status()), e.what());
        return 1;
    }
    return finish("test_prefill_epilogue");
}
