// test_rms_norm_prepare.cu — the fused RMSNorm + NVFP4 GEMV input preparation
// (kernels/rms_norm_prepare.cu).  Criterion: bit-identical outputs (x16,
// row_scale, codes, scales, normed) to the two separate launches it replaces,
// rms_norm then nvfp4_prepare_activations (FP32 input), run on the device on
// the same data.  Plus CPU checks: the normed row against a double RMSNorm
// (relative L2 <= 5e-6), the W4A4 codes/scales/tensor scale against the CPU
// reference quantizer (engine/nvfp4_linear.h) applied to the device's normed
// row, and the W4A16 values against y / row_scale rounded to FP16 with a
// power-of-two row scale that keeps |x16| <= 32768.  Hidden sizes of the
// models and odd multiples of 16, 1..8 rows (and 13), both modes, W4A4 with a
// calibrated input_scale and dynamic; rows from tiny to beyond FP16's range;
// rows in three layouts (mixed, all 16-byte aligned as in the engine, odd
// strides and base pointers) and past what the kernels hold in registers.
// The standalone nvfp4_prepare_activations is also checked on its own against
// the CPU rules, FP32 and BF16 rows, K up to 33,792, the same layouts.
// Fresh random data (seed printed, argv[1] repeats it); every output poisoned
// first, padding checked untouched.  RESET_GPU_TEST_QUICK=1: small cases only.
#include <cuda_fp16.h>

#include <algorithm>
#include <functional>

#include "api/errors.h"
#include "engine/nvfp4_linear.h"
#include "gpu_test_util.h"
#include "kernels/nvfp4_quantize_activations.h"
#include "kernels/rms_norm.h"
#include "kernels/rms_norm_prepare.h"
#include "rules/nvfp4.h"
#include "rules/w4a16.h"

using namespace gpu_test;

namespace {

bool g_quick = false;
double g_worst = 0.0;

float half_bits_to_float(uint16_t b) {
    __half_raw raw;
    raw.x = b;
    return __half2float(__half(raw));
}
uint16_t float_to_half_bits(float f) {
    return static_cast<__half_raw>(__float2half_rn(f)).x;
}

template <typename T>
size_t count_diff(const std::vector<T> &a, const std::vector<T> &b) {
    size_t n = 0;
    for (size_t i = 0; i < a.size(); ++i) n += std::memcmp(&a[i], &b[i], sizeof(T)) == 0 ? 0 : 1;
    return n;
}

// Where the rows lie: leading dimensions past K, and base pointers moved by
// a few elements from cudaMalloc's alignment (the kernels move 16 bytes at a
// time where a row's address allows it, element by element elsewhere, with
// the same results).
struct Layout {
    int64_t ldx_extra, ld16_extra, ldn_extra;  // leading dimension - K
    size_t x_off, w_off, x16_off, normed_off, codes_off;  // elements before the first row
    const char *name;
};
const Layout kLayouts[] = {
    {4, 6, 2, 0, 0, 0, 0, 0, "mixed"},  // x rows 16-byte aligned; x16 and normed rows alternately
    {64, 64, 64, 0, 0, 0, 0, 0, "aligned"},  // the engine's: every row 16-byte aligned
    {1, 2, 1, 1, 1, 2, 1, 1, "unaligned"},   // odd strides, bases off 16 bytes (x16 4-byte aligned), odd codes
};

// mode: 0 W4A16, 1 W4A4 dynamic, 2 W4A4 with input_scale.
// nvfp4_prepare_activations (mode 0 W4A16, 1 W4A4 dynamic, 2 W4A4 with
// input_scale) of `rows` rows at x into layout l's places of x16, scale and,
// in W4A4, codes and scales.
void prepare(int mode, int rows, int64_t cols, const void *x, int64_t ldx, reset::Nvfp4ActivationInput input,
             float input_scale, const Layout &l, int64_t ld16, DeviceBuffer &x16, DeviceBuffer &scale,
             DeviceBuffer &codes, DeviceBuffer &scales) {
    reset::Nvfp4PrepareArgs p;
    p.mode = mode == 0 ? reset::Nvfp4ActivationMode::kW4A16 : reset::Nvfp4ActivationMode::kW4A4;
    p.tokens = rows;
    p.cols = cols;
    p.x = x;
    p.ldx = ldx;
    p.input = input;
    p.input_scale = input_scale;
    p.x16 = x16.as<__half>() + l.x16_off;
    p.ld_x16 = ld16;
    p.row_scale = scale.as<float>();
    p.codes = mode ? codes.as<uint8_t>() + l.codes_off : nullptr;
    p.scales = mode ? scales.as<uint8_t>() + l.codes_off : nullptr;
    reset::nvfp4_prepare_activations(p, nullptr);
}

void run_case(int rows, int64_t cols, int mode, const Layout &l = kLayouts[0]) {
    const int64_t ldx = cols + l.ldx_extra, ld16 = cols + l.ld16_extra, ldn = cols + l.ldn_extra;
    std::vector<float> x_all(l.x_off + size_t(rows) * size_t(ldx)), w_all(l.w_off + static_cast<size_t>(cols));
    float *x = x_all.data() + l.x_off, *weight = w_all.data() + l.w_off;
    for (float &v : x_all) v = normal(1.0f);
    for (int r = 0; r < rows; ++r) {
        const float sigma = std::pow(10.0f, uniform(-3.0f, 3.0f));
        for (int64_t i = 0; i < ldx; ++i) x[size_t(r) * size_t(ldx) + size_t(i)] = normal(sigma);
        if (r % 3 == 1) x[size_t(r) * size_t(ldx) + size_t(g_rng() % uint64_t(cols))] = sigma * 300.0f;  // an outlier
    }
    // Norm weights; large ones so that W4A16 needs a row scale > 1 on some rows.
    const float wscale = mode == 0 && (g_rng() % 2) ? 3e4f : 2.0f;
    for (auto &w : w_all) w = uniform(-1.0f, 1.0f) * wscale;
    const float eps = 1e-6f;
    const float input_scale = mode == 2 ? uniform(0.001f, 0.05f) : 0.0f;
    const reset::Nvfp4ActivationMode m = mode == 0 ? reset::Nvfp4ActivationMode::kW4A16 : reset::Nvfp4ActivationMode::kW4A4;

    DeviceBuffer d_x(x_all.size() * 4), d_w(w_all.size() * 4);
    d_x.upload(x_all);
    d_w.upload(w_all);
    // Whole buffers, the offsets before the first row included (poisoned, compared, never written).
    const size_t n16 = l.x16_off + size_t(rows) * size_t(ld16), nn = l.normed_off + size_t(rows) * size_t(ldn);
    const size_t ncodes = l.codes_off + size_t(rows) * size_t(cols / 2),
                 nscales = l.codes_off + size_t(rows) * size_t(cols / 16);
    // [0] the fused kernel, [1] the two-launch reference.
    DeviceBuffer f16(n16 * 2), fscale(size_t(rows) * 4), fcodes(ncodes), fscales(nscales), fnorm(nn * 4);
    DeviceBuffer r16(n16 * 2), rscale(size_t(rows) * 4), rcodes(ncodes), rscales(nscales), rnorm(nn * 4);
    for (DeviceBuffer *b : {&f16, &fscale, &fcodes, &fscales, &fnorm, &r16, &rscale, &rcodes, &rscales, &rnorm})
        b->poison();

    reset::RmsNormPrepareArgs a;
    a.rows = rows;
    a.cols = cols;
    a.x = d_x.as<float>() + l.x_off;
    a.ldx = ldx;
    a.weight = d_w.as<float>() + l.w_off;
    a.eps = eps;
    a.mode = m;
    a.input_scale = input_scale;
    a.x16 = f16.as<__half>() + l.x16_off;
    a.ld_x16 = ld16;
    a.row_scale = fscale.as<float>();
    a.codes = mode ? fcodes.as<uint8_t>() + l.codes_off : nullptr;
    a.scales = mode ? fscales.as<uint8_t>() + l.codes_off : nullptr;
    a.normed = fnorm.as<float>() + l.normed_off;
    a.ld_normed = ldn;
    // Either order of the kernel's wait and its release of the next kernel: the same bits.
    a.place_next_early = (g_rng() & 1) != 0;
    reset::rms_norm_prepare(a, nullptr);

    reset::RmsNormArgs n;
    n.rows = rows;
    n.cols = cols;
    n.x = d_x.as<float>() + l.x_off;
    n.ldx = ldx;
    n.weight = d_w.as<float>() + l.w_off;
    n.eps = eps;
    n.out = rnorm.as<float>() + l.normed_off;
    n.ld_out = ldn;
    reset::rms_norm(n, nullptr);
    prepare(mode, rows, cols, rnorm.as<float>() + l.normed_off, ldn, reset::Nvfp4ActivationInput::kFloat32,
            input_scale, l, ld16, r16, rscale, rcodes, rscales);
    CUDA_OK(cudaDeviceSynchronize());

    const auto g16 = f16.download<uint16_t>(n16), e16 = r16.download<uint16_t>(n16);
    const auto gs = fscale.download<float>(size_t(rows)), es = rscale.download<float>(size_t(rows));
    const auto gn = fnorm.download<float>(nn), en = rnorm.download<float>(nn);
    const char *mode_name[3] = {"W4A16", "W4A4 dynamic", "W4A4 input_scale"};
    EXPECT(count_diff(g16, e16) == 0, "rows %d cols %lld %s %s: %zu x16 values differ from rms_norm + prepare", rows,
           (long long)cols, mode_name[mode], l.name, count_diff(g16, e16));
    EXPECT(count_diff(gs, es) == 0, "rows %d cols %lld %s %s: row_scale differs", rows, (long long)cols,
           mode_name[mode], l.name);
    EXPECT(count_diff(gn, en) == 0, "rows %d cols %lld %s %s: %zu normed values differ from rms_norm", rows,
           (long long)cols, mode_name[mode], l.name, count_diff(gn, en));
    std::vector<uint8_t> gc, ec, gsc, esc;
    if (mode) {
        gc = fcodes.download<uint8_t>(ncodes);
        ec = rcodes.download<uint8_t>(ncodes);
        gsc = fscales.download<uint8_t>(nscales);
        esc = rscales.download<uint8_t>(nscales);
        EXPECT(count_diff(gc, ec) == 0 && count_diff(gsc, esc) == 0, "rows %d cols %lld %s %s: codes/scales differ",
               rows, (long long)cols, mode_name[mode], l.name);
    }

    // CPU checks on the fused outputs.
    size_t padding = 0, bad = 0;
    for (int r = 0; r < rows; ++r) {
        const float *xr = &x[size_t(r) * size_t(ldx)];
        const size_t o16 = l.x16_off + size_t(r) * size_t(ld16), on = l.normed_off + size_t(r) * size_t(ldn);
        double ss = 0.0;
        for (int64_t i = 0; i < cols; ++i) ss += double(xr[i]) * xr[i];
        const double inverse = 1.0 / std::sqrt(ss / double(cols) + double(eps));
        std::vector<double> ref(static_cast<size_t>(cols));
        std::vector<float> y(gn.begin() + int64_t(on), gn.begin() + int64_t(on) + cols);
        for (int64_t i = 0; i < cols; ++i) ref[size_t(i)] = double(weight[size_t(i)]) * double(xr[i]) * inverse;
        const double err = relative_l2(y, ref);
        g_worst = std::max(g_worst, err);
        EXPECT(err <= 5e-6, "rows %d cols %lld %s row %d: normed relative L2 %.3g", rows, (long long)cols, l.name, r,
               err);
        for (int64_t i = cols; i < ld16; ++i) padding += g16[o16 + size_t(i)] == 0xFFFF ? 0 : 1;
        for (int64_t i = cols; i < ldn; ++i) padding += std::isnan(gn[on + size_t(i)]) ? 0 : 1;
        const uint16_t *h = &g16[o16];
        if (mode == 0) {
            float amax = 0.0f;
            for (float v : y) amax = std::max(amax, std::fabs(v));
            const float s = gs[size_t(r)];
            int e = 0;
            const bool pow2 = std::frexp(s, &e) == 0.5f && s >= 1.0f;
            const bool minimal = amax / s <= 32768.0f && (s == 1.0f || amax / (s / 2) >= 32768.0f);
            EXPECT(pow2 && minimal, "rows %d cols %lld row %d: W4A16 row scale %g for amax %g", rows, (long long)cols,
                   r, double(s), double(amax));
            for (int64_t i = 0; i < cols; ++i) bad += h[i] == float_to_half_bits(y[size_t(i)] / s) ? 0 : 1;
        } else {
            std::vector<uint8_t> codes(static_cast<size_t>(cols)), scales(static_cast<size_t>(cols / 16));
            const float ts = reset::nvfp4_quantize_activations(y.data(), cols, input_scale, codes.data(), scales.data());
            EXPECT(ts == gs[size_t(r)], "rows %d cols %lld row %d: tensor scale %g vs CPU %g", rows, (long long)cols,
                   r, double(gs[size_t(r)]), double(ts));
            for (int64_t i = 0; i < cols; ++i) {
                const uint8_t q = reset::nvfp4::packed_code(&gc[l.codes_off + size_t(r) * size_t(cols / 2)], int(i));
                const float v = reset::nvfp4::e2m1_to_float(codes[size_t(i)]) *
                                reset::nvfp4::e4m3_to_float(scales[size_t(i / 16)]);
                bad += (q == codes[size_t(i)] && half_bits_to_float(h[i]) == v) ? 0 : 1;
            }
            for (int64_t b = 0; b < cols / 16; ++b)
                bad += gsc[l.codes_off + size_t(r) * size_t(cols / 16) + size_t(b)] == scales[size_t(b)] ? 0 : 1;
        }
    }
    EXPECT(bad == 0, "rows %d cols %lld %s %s: %zu values differ from the CPU", rows, (long long)cols,
           mode_name[mode], l.name, bad);
    EXPECT(padding == 0, "rows %d cols %lld %s: %zu padding elements written", rows, (long long)cols, l.name,
           padding);
    // Nothing before the first row either.
    size_t front = 0;
    for (size_t i = 0; i < l.x16_off; ++i) front += g16[i] == 0xFFFF ? 0 : 1;
    for (size_t i = 0; i < l.normed_off; ++i) front += std::isnan(gn[i]) ? 0 : 1;
    for (size_t i = 0; mode && i < l.codes_off; ++i) front += gc[i] == 0xFF && gsc[i] == 0xFF ? 0 : 1;
    EXPECT(front == 0, "rows %d cols %lld %s: %zu elements before the first row written", rows, (long long)cols,
           l.name, front);
}

// The standalone preparation (nvfp4_prepare_activations) of FP32 or BF16
// rows against the CPU rules directly: W4A16's power-of-two row scale and
// FP16 values, W4A4's tensor scale, codes, scales and FP16 values.  Row
// lengths past the registers (K > 32,768: the row is read twice) included.
void run_prepare_case(int rows, int64_t cols, int mode, bool bf16, const Layout &l) {
    const int64_t ldx = cols + l.ldx_extra, ld16 = cols + l.ld16_extra;
    std::vector<float> x(static_cast<size_t>(rows * ldx));  // the values as the kernel reads them
    for (int r = 0; r < rows; ++r) {
        const float sigma = std::pow(10.0f, uniform(-3.0f, mode == 0 ? 6.0f : 3.0f));  // W4A16: beyond FP16 too
        for (int64_t i = 0; i < ldx; ++i) {
            float v = normal(sigma);
            if (bf16) v = bf16_to_float(float_to_bf16(v));
            x[size_t(r * ldx + i)] = v;
        }
    }
    const float input_scale = mode == 2 ? uniform(0.001f, 0.05f) : 0.0f;
    DeviceBuffer d_x((l.x_off + x.size()) * (bf16 ? 2 : 4));
    if (bf16) {
        std::vector<uint16_t> xb(l.x_off + x.size(), 0);
        for (size_t i = 0; i < x.size(); ++i) xb[l.x_off + i] = float_to_bf16(x[i]);
        d_x.upload(xb);
    } else {
        std::vector<float> xf(l.x_off, 0.0f);
        xf.insert(xf.end(), x.begin(), x.end());
        d_x.upload(xf);
    }
    const size_t n16 = l.x16_off + size_t(rows) * size_t(ld16);
    const size_t ncodes = l.codes_off + size_t(rows) * size_t(cols / 2),
                 nscales = l.codes_off + size_t(rows) * size_t(cols / 16);
    DeviceBuffer d16(n16 * 2), dscale(size_t(rows) * 4), dcodes(ncodes), dscales(nscales);
    for (DeviceBuffer *b : {&d16, &dscale, &dcodes, &dscales}) b->poison();
    prepare(mode, rows, cols,
            bf16 ? static_cast<const void *>(d_x.as<uint16_t>() + l.x_off)
                 : static_cast<const void *>(d_x.as<float>() + l.x_off),
            ldx, bf16 ? reset::Nvfp4ActivationInput::kBFloat16 : reset::Nvfp4ActivationInput::kFloat32, input_scale, l,
            ld16, d16, dscale, dcodes, dscales);
    CUDA_OK(cudaDeviceSynchronize());
    const auto g16 = d16.download<uint16_t>(n16);
    const auto gs = dscale.download<float>(size_t(rows));
    const auto gc = dcodes.download<uint8_t>(ncodes), gsc = dscales.download<uint8_t>(nscales);
    const char *mode_name[3] = {"W4A16", "W4A4 dynamic", "W4A4 input_scale"};
    size_t bad = 0, padding = 0;
    for (int r = 0; r < rows; ++r) {
        const float *xr = &x[size_t(r * ldx)];
        const uint16_t *h = &g16[l.x16_off + size_t(r) * size_t(ld16)];
        for (int64_t i = cols; i < ld16; ++i) padding += h[i] == 0xFFFF ? 0 : 1;
        if (mode == 0) {
            float amax = 0.0f;
            for (int64_t i = 0; i < cols; ++i) amax = std::max(amax, std::fabs(xr[i]));
            const float s = gs[size_t(r)];
            EXPECT(s == reset::w4a16::fp16_row_scale(amax), "prepare rows %d cols %lld %s bf16 %d %s row %d: row scale "
                   "%g for amax %g", rows, (long long)cols, mode_name[mode], int(bf16), l.name, r, double(s),
                   double(amax));
            for (int64_t i = 0; i < cols; ++i) bad += h[i] == float_to_half_bits(xr[i] / s) ? 0 : 1;
        } else {
            std::vector<uint8_t> codes(static_cast<size_t>(cols)), scales(static_cast<size_t>(cols / 16));
            const float ts = reset::nvfp4_quantize_activations(xr, cols, input_scale, codes.data(), scales.data());
            EXPECT(ts == gs[size_t(r)], "prepare rows %d cols %lld %s bf16 %d %s row %d: tensor scale %g vs CPU %g",
                   rows, (long long)cols, mode_name[mode], int(bf16), l.name, r, double(gs[size_t(r)]), double(ts));
            for (int64_t i = 0; i < cols; ++i) {
                const uint8_t q = reset::nvfp4::packed_code(&gc[l.codes_off + size_t(r) * size_t(cols / 2)], int(i));
                const float v = reset::nvfp4::e2m1_to_float(codes[size_t(i)]) *
                                reset::nvfp4::e4m3_to_float(scales[size_t(i / 16)]);
                bad += (q == codes[size_t(i)] && half_bits_to_float(h[i]) == v) ? 0 : 1;
            }
            for (int64_t b = 0; b < cols / 16; ++b)
                bad += gsc[l.codes_off + size_t(r) * size_t(cols / 16) + size_t(b)] == scales[size_t(b)] ? 0 : 1;
        }
    }
    for (size_t i = 0; i < l.x16_off; ++i) padding += g16[i] == 0xFFFF ? 0 : 1;
    for (size_t i = 0; mode && i < l.codes_off; ++i) padding += gc[i] == 0xFF && gsc[i] == 0xFF ? 0 : 1;
    EXPECT(bad == 0, "prepare rows %d cols %lld %s bf16 %d %s: %zu values differ from the CPU", rows, (long long)cols,
           mode_name[mode], int(bf16), l.name, bad);
    EXPECT(padding == 0, "prepare rows %d cols %lld %s bf16 %d %s: %zu padding elements written", rows,
           (long long)cols, mode_name[mode], int(bf16), l.name, padding);
}

void timing() {
    const int64_t cols = 4096;  // Qwen3-8B hidden
    DeviceBuffer d_x(8 * cols * 4), d_w(cols * 4), d16(8 * cols * 2), ds(8 * 4), dn(8 * cols * 4);
    std::vector<float> x(static_cast<size_t>(8 * cols)), w(static_cast<size_t>(cols));
    for (auto &v : x) v = normal(1.0f);
    for (auto &v : w) v = uniform(-1.0f, 1.0f);
    d_x.upload(x);
    d_w.upload(w);
    for (int mode = 0; mode < 2; ++mode)
        for (int rows : {1, 8}) {
            const auto m = mode ? reset::Nvfp4ActivationMode::kW4A4 : reset::Nvfp4ActivationMode::kW4A16;
            reset::RmsNormPrepareArgs a;
            a.rows = rows;
            a.cols = cols;
            a.x = d_x.as<float>();
            a.ldx = cols;
            a.weight = d_w.as<float>();
            a.eps = 1e-6f;
            a.mode = m;
            a.x16 = d16.ptr;
            a.ld_x16 = cols;
            a.row_scale = ds.as<float>();
            const float fused = median_us([&] { reset::rms_norm_prepare(a, nullptr); }, 50);
            reset::RmsNormArgs n;
            n.rows = rows;
            n.cols = cols;
            n.x = d_x.as<float>();
            n.ldx = cols;
            n.weight = d_w.as<float>();
            n.eps = 1e-6f;
            n.out = dn.as<float>();
            n.ld_out = cols;
            reset::Nvfp4PrepareArgs p;
            p.mode = m;
            p.tokens = rows;
            p.cols = cols;
            p.x = dn.ptr;
            p.ldx = cols;
            p.x16 = d16.ptr;
            p.ld_x16 = cols;
            p.row_scale = ds.as<float>();
            const float two = median_us(
                [&] {
                    reset::rms_norm(n, nullptr);
                    reset::nvfp4_prepare_activations(p, nullptr);
                },
                50);
            std::printf("timing: rms_norm_prepare hidden %lld rows %d %s: fused median %.2f us, rms_norm + prepare "
                        "median %.2f us\n",
                        (long long)cols, rows, mode ? "W4A4 dynamic" : "W4A16", fused, two);
        }
}

}  // namespace

int main(int argc, char **argv) {
    if (!start("test_rms_norm_prepare", argc, argv)) return 0;
    g_quick = std::getenv("RESET_GPU_TEST_QUICK") != nullptr;
    try {
        const std::vector<int64_t> sizes = g_quick ? std::vector<int64_t>{16, 1008, 4096}
                                                   : std::vector<int64_t>{16, 64, 1008, 3584, 4096, 5120, 25600};
        const std::vector<int> row_counts = g_quick ? std::vector<int>{1, 3} : std::vector<int>{1, 3, 8, 13};
        for (int64_t cols : sizes)
            for (int rows : row_counts)
                for (int mode = 0; mode < 3; ++mode) run_case(rows, cols, mode);
        // The other row layouts (16-byte aligned as in the engine; odd strides and bases), and rows
        // longer than the registers hold (16,400: the fused kernel re-reads; 33,792: both do).
        const std::vector<int64_t> layout_sizes = g_quick ? std::vector<int64_t>{16, 1008, 4096}
                                                          : std::vector<int64_t>{16, 1008, 4096, 16400, 33792};
        for (const Layout &l : {kLayouts[1], kLayouts[2]})
            for (int64_t cols : layout_sizes)
                for (int rows : {1, 3})
                    for (int mode = 0; mode < 3; ++mode) run_case(rows, cols, mode, l);
        // The standalone preparation against the CPU: the engine's K (attention output, SiLU·up
        // of Qwen3-8B and -32B), odd multiples of 16, past the registers; FP32 and BF16 rows.
        const std::vector<int64_t> prepare_sizes =
            g_quick ? std::vector<int64_t>{16, 1008, 4096}
                    : std::vector<int64_t>{16, 48, 1008, 4096, 12288, 16400, 25600, 33792};
        for (const Layout &l : kLayouts)
            for (int64_t cols : prepare_sizes)
                for (int rows : {1, 3, 8})
                    for (int mode = 0; mode < 3; ++mode)
                        for (bool bf16 : {false, true}) run_prepare_case(rows, cols, mode, bf16, l);
        // Argument errors.
        reset::RmsNormPrepareArgs a;
        try {
            reset::rms_norm_prepare(a, nullptr);
            EXPECT(false, "empty arguments accepted");
        } catch (const reset::Error &e) {
            EXPECT(e.status() == RESET_ERR_INVALID_ARGUMENT, "empty arguments: status %d", int(e.status()));
        }
        a.rows = 1;
        a.cols = 24;
        try {
            reset::rms_norm_prepare(a, nullptr);
            EXPECT(false, "K = 24 accepted");
        } catch (const reset::Error &e) {
            EXPECT(e.status() == RESET_ERR_UNSUPPORTED, "K = 24: status %d", int(e.status()));
        }
        if (!g_quick) timing();
    } catch (const reset::Error &e) {
        std::fprintf(stderr, "FAIL: unexpected reset::Error %d: %s\n", static_cast<int>(e.status()), e.what());
        return 1;
    }
    std::printf("test_rms_norm_prepare: worst normed relative L2 vs FP64: %.3g\n", g_worst);
    return finish("test_rms_norm_prepare");
}
