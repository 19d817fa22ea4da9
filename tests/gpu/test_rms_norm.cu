// test_rms_norm.cu — RMSNorm rows (kernels/rms_norm.cu) against a double
// reference: the hidden sizes of the supported models and odd ones, 1..8 rows,
// activations from tiny to large (the residual stream grows with depth),
// separate and in-place output; rows held in registers and rows longer than
// that (re-read), 16-byte aligned rows and rows that are not (the leading
// dimension is odd).  Fresh random data every run (seed printed,
// argv[1] repeats it); outputs poisoned with NaN first.
#include <algorithm>

#include "api/errors.h"
#include "gpu_test_util.h"
#include "kernels/rms_norm.h"

using namespace gpu_test;

namespace {

double g_worst = 0.0;

void run_case(int rows, int64_t cols, bool in_place) {
    const int64_t ld = cols + 3;  // a leading dimension larger than the row
    std::vector<float> x(static_cast<size_t>(rows * ld)), weight(static_cast<size_t>(cols));
    for (int r = 0; r < rows; ++r) {
        const float sigma = std::pow(10.0f, uniform(-3.0f, 3.0f));
        for (int64_t i = 0; i < ld; ++i) x[size_t(r * ld + i)] = normal(sigma);
    }
    for (auto &w : weight) w = uniform(-2.0f, 2.0f);
    const float eps = 1e-6f;
    DeviceBuffer d_x(x.size() * 4), d_w(weight.size() * 4), d_out(x.size() * 4);
    d_x.upload(x);
    d_w.upload(weight);
    d_out.poison();
    reset::RmsNormArgs a;
    a.rows = rows;
    a.cols = cols;
    a.x = d_x.as<float>();
    a.ldx = ld;
    a.weight = d_w.as<float>();
    a.eps = eps;
    a.out = in_place ? d_x.as<float>() : d_out.as<float>();
    a.ld_out = ld;
    reset::rms_norm(a, nullptr);
    CUDA_OK(cudaDeviceSynchronize());
    const std::vector<float> got = (in_place ? d_x : d_out).download<float>(x.size());
    for (int r = 0; r < rows; ++r) {
        double ss = 0.0;
        for (int64_t i = 0; i < cols; ++i) ss += double(x[size_t(r * ld + i)]) * x[size_t(r * ld + i)];
        const double inverse = 1.0 / std::sqrt(ss / double(cols) + double(eps));
        std::vector<double> ref(static_cast<size_t>(cols));
        std::vector<float> row(static_cast<size_t>(cols));
        for (int64_t i = 0; i < cols; ++i) {
            ref[size_t(i)] = double(weight[size_t(i)]) * double(x[size_t(r * ld + i)]) * inverse;
            row[size_t(i)] = got[size_t(r * ld + i)];
        }
        const double err = relative_l2(row, ref);
        g_worst = std::max(g_worst, err);
        EXPECT(err <= 5e-6, "rows %d cols %lld in_place %d row %d: relative L2 %.3g", rows, (long long)cols,
               int(in_place), r, err);
        // The padding past cols is never written (in place it keeps x, else the NaN poison).
        for (int64_t i = cols; i < ld; ++i) {
            const float v = got[size_t(r * ld + i)];
            EXPECT(in_place ? v == x[size_t(r * ld + i)] : std::isnan(v), "padding element %lld written",
                   (long long)i);
        }
    }
}

}  // namespace

int main(int argc, char **argv) {
    if (!start("test_rms_norm", argc, argv)) return 0;
    try {
        // 16384: the longest row held in registers (1024 threads); 16388 and 25600 re-read the row
        // (kernels/row_rules.cuh), 16385 with a partial last chunk.
        for (int64_t cols : {int64_t(1), int64_t(64), int64_t(1000), int64_t(3584), int64_t(4096), int64_t(5120),
                             int64_t(16384), int64_t(16385), int64_t(16388), int64_t(25600)})
            for (int rows : {1, 3, 8})
                for (bool in_place : {false, true}) run_case(rows, cols, in_place);
        try {
            reset::RmsNormArgs a;
            reset::rms_norm(a, nullptr);
            EXPECT(false, "empty arguments accepted");
        } catch (const reset::Error &e) {
            EXPECT(e.status() == RESET_ERR_INVALID_ARGUMENT, "empty arguments: status %d", int(e.status()));
        }
    } catch (const reset::Error &e) {
        std::fprintf(stderr, "FAIL: unexpected reset::Error %d: %s\n", static_cast<int>(e.status()), e.what());
        return 1;
    }
    std::printf("test_rms_norm: worst relative L2 vs FP64: %.3g\n", g_worst);
    return finish("test_rms_norm");
}
