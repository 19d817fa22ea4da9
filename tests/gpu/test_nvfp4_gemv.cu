// test_nvfp4_gemv.cu — the NVFP4 GEMV and activation kernels against the CPU
// reference (engine/nvfp4_linear.h) and an FP64 sum of the same products.
//
// A plain program (no test framework), so it builds on the GPU machine from
// the kernel sources alone.  Every run draws fresh random data (the seed is
// printed; pass one as argv[1] to repeat a run), poisons every output with
// NaN bytes and checks that exactly the outputs that should be written were.
// Without a CUDA device it prints that it skipped and exits 0.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "api/errors.h"
#include "engine/nvfp4_linear.h"
#include "kernels/nvfp4_gemv.h"
#include "kernels/nvfp4_quantize_activations.h"
#include "rules/nvfp4.h"
#include "rules/w4a16.h"

namespace {

int g_failures = 0;
int g_checks = 0;
double g_worst_w4a16 = 0.0;  // largest W4A16 error seen, relative to the sum of |products|
double g_worst_w4a4 = 0.0;   // largest W4A4 error vs the CPU reference, same measure

#define EXPECT(cond, ...)                                              \
    do {                                                               \
        ++g_checks;                                                    \
        if (!(cond)) {                                                 \
            ++g_failures;                                              \
            std::fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
            std::fprintf(stderr, __VA_ARGS__);                         \
            std::fprintf(stderr, "\n");                                \
        }                                                              \
    } while (0)

void cuda_ok(cudaError_t e, const char *what) {
    if (e != cudaSuccess) {
        std::fprintf(stderr, "CUDA error in %s: %s\n", what, cudaGetErrorString(e));
        std::exit(1);
    }
}
#define CUDA_OK(call) cuda_ok((call), #call)

std::mt19937_64 g_rng;
// Nvfp4GemvArgs::pipeline of every run_gemv launch: main runs the shape tests with the
// automatic choice (which takes the pipelined loop for every local-plan launch of these small
// shapes) and again with the pipelined loop turned off.
int g_pipeline = 0;

// A device buffer freed on scope exit.
struct DeviceBuffer {
    void *ptr = nullptr;
    size_t bytes = 0;
    explicit DeviceBuffer(size_t n) : bytes(n) { CUDA_OK(cudaMalloc(&ptr, n ? n : 1)); }
    ~DeviceBuffer() { cudaFree(ptr); }
    DeviceBuffer(const DeviceBuffer &) = delete;
    DeviceBuffer &operator=(const DeviceBuffer &) = delete;
    template <typename T>
    T *as() const { return static_cast<T *>(ptr); }
    void upload(const void *src, size_t n) { CUDA_OK(cudaMemcpy(ptr, src, n, cudaMemcpyHostToDevice)); }
    void download(void *dst, size_t n) const { CUDA_OK(cudaMemcpy(dst, ptr, n, cudaMemcpyDeviceToHost)); }
};

// A random NVFP4 weight in the ModelOpt layout.  Scales cover the whole
// non-negative E4M3 range a checkpoint can hold, subnormals and zero included.
struct HostWeight {
    int64_t rows, cols;
    std::vector<uint8_t> codes, scales;
    float tensor_scale;
};

HostWeight random_weight(int64_t rows, int64_t cols) {
    HostWeight w{rows, cols, {}, {}, 0.0f};
    w.codes.resize(static_cast<size_t>(rows * cols / 2));
    w.scales.resize(static_cast<size_t>(rows * cols / 16));
    std::uniform_int_distribution<int> byte(0, 255);
    for (auto &c : w.codes) c = static_cast<uint8_t>(byte(g_rng));
    std::uniform_int_distribution<int> normal_scale(0x20, 0x60);  // 2^-3 .. 2^5
    std::uniform_int_distribution<int> any_scale(0x00, 0x7e);
    std::uniform_int_distribution<int> pick(0, 15);
    for (auto &s : w.scales) s = static_cast<uint8_t>(pick(g_rng) == 0 ? any_scale(g_rng) : normal_scale(g_rng));
    w.tensor_scale = std::uniform_real_distribution<float>(1e-3f, 1e-2f)(g_rng);
    return w;
}

// Activations that are exactly representable in FP16 (W4A16 inputs).
std::vector<float> random_fp16_values(size_t n, float spread) {
    std::normal_distribution<float> normal(0.0f, spread);
    std::vector<float> v(n);
    for (auto &x : v) x = __half2float(__float2half_rn(normal(g_rng)));
    return v;
}

std::vector<__half> to_half(const std::vector<float> &v) {
    std::vector<__half> h(v.size());
    for (size_t i = 0; i < v.size(); ++i) h[i] = __float2half_rn(v[i]);
    return h;
}

reset::Nvfp4Weight reference_view(const HostWeight &w, float input_scale = 0.0f) {
    reset::Nvfp4Weight r;
    r.rows = w.rows;
    r.cols = w.cols;
    r.codes = w.codes.data();
    r.scales = w.scales.data();
    r.tensor_scale = w.tensor_scale;
    r.input_scale = input_scale;
    return r;
}

// FP64 sum of the W4A16 products of one row, and the sum of their magnitudes
// (the scale the FP32 summation error is proportional to).
void fp64_row(const HostWeight &w, int64_t row, const float *x, double &sum, double &magnitude) {
    sum = 0.0;
    magnitude = 0.0;
    for (int64_t k = 0; k < w.cols; ++k) {
        const double v = static_cast<double>(reset::nvfp4::e2m1_to_float(
                             reset::nvfp4::packed_code(w.codes.data() + row * w.cols / 2, static_cast<int>(k)))) *
                         reset::nvfp4::e4m3_to_float(w.scales[row * w.cols / 16 + k / 16]) * w.tensor_scale * x[k];
        sum += v;
        magnitude += std::fabs(v);
    }
}

struct Device {
    reset::Nvfp4GemvWeight weight;
    DeviceBuffer codes, scales, workspace;
    Device(const HostWeight &w, bool gate_up, reset::Nvfp4GemvDecode decode)
        : codes(reset::nvfp4_gemv_layout(w.rows, w.cols, gate_up, decode).code_bytes()),
          scales(reset::nvfp4_gemv_layout(w.rows, w.cols, gate_up, decode).scale_bytes()),
          workspace(reset::nvfp4_gemv_workspace_bytes(
              reset::nvfp4_gemv_layout(w.rows, w.cols, gate_up, decode),
              static_cast<int>(reset::nvfp4_gemv_layout(w.rows, w.cols, gate_up, decode).k_supers))) {
        weight.layout = reset::nvfp4_gemv_layout(w.rows, w.cols, gate_up, decode);
        std::vector<uint8_t> c(weight.layout.code_bytes()), s(weight.layout.scale_bytes());
        reset::nvfp4_gemv_repack(weight.layout, w.codes.data(), w.scales.data(), c.data(), s.data());
        codes.upload(c.data(), c.size());
        scales.upload(s.data(), s.size());
        CUDA_OK(cudaMemset(workspace.ptr, 0, workspace.bytes));
        weight.codes = codes.ptr;
        weight.scales = scales.ptr;
        weight.tensor_scale = w.tensor_scale;
    }
};

constexpr uint8_t kPoison = 0xff;  // NaN in FP32 and BF16

bool is_poison(const void *p, size_t bytes) {
    const uint8_t *b = static_cast<const uint8_t *>(p);
    for (size_t i = 0; i < bytes; ++i)
        if (b[i] != kPoison) return false;
    return true;
}

// Run the GEMV into a poisoned [tokens + 1][ldy] buffer; return the values of
// [tokens][outputs] as float after checking the rest stayed poisoned.
std::vector<float> run_gemv(const Device &d, int tokens, const DeviceBuffer &x, int64_t ldx, const float *x_row_scale,
                            const float *bias, const void *residual, reset::Nvfp4GemvOutput output, int splits,
                            const char *label, const DeviceBuffer *workspace = nullptr, const float *x_amax = nullptr,
                            float *y_amax = nullptr, const reset::WeightPrefetch &prefetch = {},
                            const std::function<void(reset::Nvfp4GemvArgs &)> &more = nullptr) {
    if (!workspace) workspace = &d.workspace;
    const int64_t outputs = d.weight.layout.outputs();
    const int64_t ldy = outputs + 3;  // a gap after each row must stay untouched
    const size_t elem = output == reset::Nvfp4GemvOutput::kBFloat16 ? 2 : 4;
    const size_t bytes = static_cast<size_t>((tokens + 1) * ldy) * elem;
    DeviceBuffer y(bytes);
    CUDA_OK(cudaMemset(y.ptr, kPoison, bytes));
    std::vector<uint8_t> host(bytes);
    reset::Nvfp4GemvArgs a;
    a.tokens = tokens;
    a.x = x.ptr;
    a.ldx = ldx;
    a.x_row_scale = x_row_scale;
    a.x_amax = x_amax;
    a.y_amax = y_amax;
    a.bias = bias;
    a.y = y.ptr;
    a.ldy = ldy;
    a.output = output;
    a.splits = splits;
    a.workspace = workspace->ptr;
    a.workspace_bytes = workspace->bytes;
    a.prefetch = prefetch;
    a.pipeline = g_pipeline;
    DeviceBuffer res(residual ? bytes : 0);
    if (residual) {
        res.upload(residual, bytes);
        a.residual = res.ptr;
        a.ld_residual = ldy;
    }
    if (more) more(a);
    reset::nvfp4_gemv(d.weight, a, nullptr);
    CUDA_OK(cudaDeviceSynchronize());
    y.download(host.data(), bytes);
    std::vector<float> out(static_cast<size_t>(tokens * outputs));
    bool untouched = true;
    for (int m = 0; m <= tokens; ++m)
        for (int64_t n = 0; n < ldy; ++n) {
            const uint8_t *p = host.data() + (m * ldy + n) * elem;
            const bool inside = m < tokens && n < outputs;
            if (!inside) {
                untouched = untouched && is_poison(p, elem);
                continue;
            }
            float v;
            if (elem == 2) {
                __nv_bfloat16 b;
                std::memcpy(&b, p, 2);
                v = __bfloat162float(b);
            } else {
                std::memcpy(&v, p, 4);
            }
            out[static_cast<size_t>(m * outputs + n)] = v;
        }
    EXPECT(untouched, "%s: an element outside [tokens][outputs] was written", label);
    return out;
}

// W4A16 over one shape at every token count, with several split-K factors.
void test_w4a16_shape(int64_t rows, int64_t cols) {
    const HostWeight w = random_weight(rows, cols);
    Device d(w, false, reset::nvfp4_gemv_device_decode());
    const int max_splits = static_cast<int>(d.weight.layout.k_supers);
    for (int tokens = 1; tokens <= 8; ++tokens) {
        // A row stride wider than K: a multiple of 8 (16-byte activation
        // loads) for odd token counts, K + 2 (the 4-byte fallback) for even.
        const int64_t ldx = cols + (tokens % 2 ? 16 : 2);
        std::vector<float> x = random_fp16_values(static_cast<size_t>(tokens * ldx), 1.0f);
        DeviceBuffer xd(x.size() * 2);
        xd.upload(to_half(x).data(), x.size() * 2);
        std::vector<double> exact(static_cast<size_t>(tokens * rows)), magnitude(exact.size());
        std::vector<float> reference(exact.size());
        for (int m = 0; m < tokens; ++m) {
            // x holds FP16 values below 32768: the FP16 mode's rounding and row scale leave it as it is.
            reset::nvfp4_matvec_w4a16(reference_view(w), x.data() + m * ldx, reference.data() + m * rows,
                                      RESET_ACTIVATIONS_FP16);
            for (int64_t n = 0; n < rows; ++n)
                fp64_row(w, n, x.data() + m * ldx, exact[m * rows + n], magnitude[m * rows + n]);
        }
        // 0: the automatic plan; 1, 2, max: every tile cut into that many runs of
        // warps (reduced through the workspace); -3, -5: runs of 3 or 5 quads
        // that cross tile boundaries (a warp finishes one tile and starts the next).
        for (int splits : {0, 1, 2, max_splits, -3, -5}) {
            char label[128];
            std::snprintf(label, sizeof label, "w4a16 N=%" PRId64 " K=%" PRId64 " M=%d splits=%d", rows, cols,
                          tokens, splits);
            const std::vector<float> y = run_gemv(d, tokens, xd, ldx, nullptr, nullptr, nullptr,
                                                  reset::Nvfp4GemvOutput::kFloat32, splits, label);
            double worst = 0.0, worst_vs_cpu = 0.0;
            bool finite = true;
            for (size_t i = 0; i < y.size(); ++i) {
                finite = finite && std::isfinite(y[i]);
                const double scale = magnitude[i] > 0 ? magnitude[i] : 1e-30;
                worst = std::max(worst, std::fabs(y[i] - exact[i]) / scale);
                worst_vs_cpu = std::max(worst_vs_cpu, std::fabs(y[i] - reference[i]) / scale);
            }
            // Exact products, FP32 accumulation on the tensor cores: the error is a
            // few FP32 ulps of the magnitude sum (measured <= 2.4e-6 at K = 4096).
            EXPECT(finite, "%s: non-finite output", label);
            EXPECT(worst < 1e-5, "%s: error vs FP64 %.3g of the magnitude sum", label, worst);
            EXPECT(worst_vs_cpu < 1e-5, "%s: error vs CPU reference %.3g", label, worst_vs_cpu);
            g_worst_w4a16 = std::max(g_worst_w4a16, worst);
        }
    }
}

// Bias, residual, BF16 output, per-token row scale, and the gate+up epilogue.
void test_epilogues() {
    const int64_t inter = 45, cols = 208;  // odd intermediate size; K = 3*64 + 16
    const HostWeight w = random_weight(2 * inter, cols);
    std::vector<float> bias(static_cast<size_t>(2 * inter));
    for (auto &b : bias) b = std::uniform_real_distribution<float>(-1.0f, 1.0f)(g_rng);
    DeviceBuffer bias_d(bias.size() * 4);
    bias_d.upload(bias.data(), bias.size() * 4);
    for (bool gate_up : {false, true}) {
        Device d(w, gate_up, reset::nvfp4_gemv_device_decode());
        const int64_t outputs = d.weight.layout.outputs();
        for (int tokens : {1, 3, 8}) {
            std::vector<float> x = random_fp16_values(static_cast<size_t>(tokens * cols), 0.5f);
            DeviceBuffer xd(x.size() * 2);
            xd.upload(to_half(x).data(), x.size() * 2);
            std::vector<float> row_scale(static_cast<size_t>(tokens));
            for (auto &s : row_scale) s = std::uniform_real_distribution<float>(0.5f, 2.0f)(g_rng);
            DeviceBuffer rs(row_scale.size() * 4);
            rs.upload(row_scale.data(), row_scale.size() * 4);
            for (auto output : {reset::Nvfp4GemvOutput::kFloat32, reset::Nvfp4GemvOutput::kBFloat16}) {
                const bool bf16 = output == reset::Nvfp4GemvOutput::kBFloat16;
                const int64_t ldy = outputs + 3;
                const size_t bytes = static_cast<size_t>((tokens + 1) * ldy) * (bf16 ? 2 : 4);
                std::vector<uint8_t> residual(bytes);
                std::vector<float> residual_value(static_cast<size_t>(tokens * outputs));
                for (int m = 0; m < tokens; ++m)
                    for (int64_t n = 0; n < outputs; ++n) {
                        float r = std::uniform_real_distribution<float>(-2.0f, 2.0f)(g_rng);
                        if (bf16) {
                            const __nv_bfloat16 b = __float2bfloat16_rn(r);
                            r = __bfloat162float(b);
                            std::memcpy(residual.data() + (m * ldy + n) * 2, &b, 2);
                        } else {
                            std::memcpy(residual.data() + (m * ldy + n) * 4, &r, 4);
                        }
                        residual_value[static_cast<size_t>(m * outputs + n)] = r;
                    }
                for (int splits : {1, 3, -3}) {
                    char label[128];
                    std::snprintf(label, sizeof label, "epilogue gate_up=%d M=%d bf16=%d splits=%d", gate_up, tokens,
                                  bf16, splits);
                    const std::vector<float> y = run_gemv(d, tokens, xd, cols, rs.as<float>(), bias_d.as<float>(),
                                                          residual.data(), output, splits, label);
                    double worst = 0.0;
                    for (int m = 0; m < tokens; ++m) {
                        std::vector<double> lin(static_cast<size_t>(2 * inter)), mag(lin.size());
                        for (int64_t n = 0; n < 2 * inter; ++n) {
                            fp64_row(w, n, x.data() + m * cols, lin[n], mag[n]);
                            lin[n] = lin[n] * row_scale[m] + bias[n];
                        }
                        for (int64_t n = 0; n < outputs; ++n) {
                            double expect, tol;
                            if (gate_up) {
                                const double g = lin[n], u = lin[inter + n];
                                expect = g / (1.0 + std::exp(-g)) * u;
                                tol = 1e-4 * (std::fabs(u) + std::fabs(g)) + 1e-5;
                            } else {
                                expect = lin[n];
                                tol = 1e-5 * (mag[n] * row_scale[m] + std::fabs(bias[n])) + 1e-6;
                            }
                            expect += residual_value[static_cast<size_t>(m * outputs + n)];
                            if (bf16) tol += std::fabs(expect) * (1.0 / 256);  // one BF16 rounding
                            const double got = y[static_cast<size_t>(m * outputs + n)];
                            worst = std::max(worst, std::fabs(got - expect) / tol);
                            if (!(std::fabs(got - expect) <= tol)) {
                                EXPECT(false, "%s: token %d output %" PRId64 ": got %.8g want %.8g", label, m, n,
                                       got, expect);
                                return;
                            }
                        }
                    }
                    ++g_checks;
                }
            }
        }
    }
}

// The fused activation quantizer must reproduce the CPU rule bit for bit,
// and the W4A4 GEMV the CPU reference.
void test_w4a4(int64_t rows, int64_t cols) {
    const HostWeight w = random_weight(rows, cols);
    Device d(w, false, reset::nvfp4_gemv_device_decode());
    for (int tokens : {1, 2, 5, 8}) {
        for (bool bf16_input : {false, true}) {
            for (float input_scale : {0.0f, 0.004f}) {
                std::vector<float> x(static_cast<size_t>(tokens * cols));
                std::normal_distribution<float> normal(0.0f, 2.0f);
                for (auto &v : x) v = normal(g_rng);
                if (input_scale > 0) x[3] = 100.0f;  // beyond the calibrated range: clamps to +-6 * 448 * scale
                std::vector<uint8_t> x_bytes;
                if (bf16_input) {
                    x_bytes.resize(x.size() * 2);
                    for (size_t i = 0; i < x.size(); ++i) {
                        const __nv_bfloat16 b = __float2bfloat16_rn(x[i]);
                        x[i] = __bfloat162float(b);
                        std::memcpy(x_bytes.data() + 2 * i, &b, 2);
                    }
                } else {
                    x_bytes.resize(x.size() * 4);
                    std::memcpy(x_bytes.data(), x.data(), x_bytes.size());
                }
                DeviceBuffer xd(x_bytes.size()), x16(static_cast<size_t>(tokens * cols) * 2),
                    row_scale(static_cast<size_t>(tokens) * 4), codes(static_cast<size_t>(tokens * cols / 2)),
                    scales(static_cast<size_t>(tokens * cols / 16));
                xd.upload(x_bytes.data(), x_bytes.size());
                CUDA_OK(cudaMemset(x16.ptr, kPoison, x16.bytes));
                CUDA_OK(cudaMemset(row_scale.ptr, kPoison, row_scale.bytes));
                reset::Nvfp4PrepareArgs pa;
                pa.mode = reset::Nvfp4ActivationMode::kW4A4;
                pa.tokens = tokens;
                pa.cols = cols;
                pa.x = xd.ptr;
                pa.ldx = cols;
                pa.input = bf16_input ? reset::Nvfp4ActivationInput::kBFloat16 : reset::Nvfp4ActivationInput::kFloat32;
                pa.input_scale = input_scale;
                pa.x16 = x16.ptr;
                pa.ld_x16 = cols;
                pa.row_scale = row_scale.as<float>();
                pa.codes = codes.as<uint8_t>();
                pa.scales = scales.as<uint8_t>();
                reset::nvfp4_prepare_activations(pa, nullptr);
                CUDA_OK(cudaDeviceSynchronize());
                std::vector<uint8_t> got_codes(codes.bytes), got_scales(scales.bytes);
                std::vector<float> got_ts(static_cast<size_t>(tokens));
                std::vector<__half> got_x16(static_cast<size_t>(tokens * cols));
                codes.download(got_codes.data(), codes.bytes);
                scales.download(got_scales.data(), scales.bytes);
                row_scale.download(got_ts.data(), row_scale.bytes);
                x16.download(got_x16.data(), x16.bytes);
                char label[128];
                std::snprintf(label, sizeof label, "w4a4 N=%" PRId64 " K=%" PRId64 " M=%d bf16=%d input_scale=%g",
                              rows, cols, tokens, bf16_input, input_scale);
                bool same = true, dequantized = true;
                for (int m = 0; m < tokens; ++m) {
                    std::vector<uint8_t> ref_codes(static_cast<size_t>(cols)), ref_scales(static_cast<size_t>(cols / 16));
                    const float ts = reset::nvfp4_quantize_activations(x.data() + m * cols, cols, input_scale,
                                                                       ref_codes.data(), ref_scales.data());
                    same = same && std::memcmp(&ts, &got_ts[m], 4) == 0;
                    for (int64_t b = 0; b < cols / 16; ++b) same = same && ref_scales[b] == got_scales[m * cols / 16 + b];
                    for (int64_t k = 0; k < cols; ++k) {
                        const uint8_t packed = got_codes[static_cast<size_t>(m * cols / 2 + k / 2)];
                        const uint8_t code = (k & 1) ? packed >> 4 : packed & 15;
                        same = same && code == ref_codes[k];
                        const float value = reset::nvfp4::e2m1_to_float(ref_codes[k]) *
                                            reset::nvfp4::e4m3_to_float(ref_scales[k / 16]);
                        dequantized = dequantized && __half2float(got_x16[m * cols + k]) == value;
                    }
                }
                EXPECT(same, "%s: codes, scales or tensor scale differ from the CPU quantizer", label);
                EXPECT(dequantized, "%s: FP16 activations are not e2m1 * scale exactly", label);

                const std::vector<float> y = run_gemv(d, tokens, x16, cols, row_scale.as<float>(), nullptr, nullptr,
                                                      reset::Nvfp4GemvOutput::kFloat32, 0, label);
                std::vector<float> reference(static_cast<size_t>(rows));
                double worst = 0.0;
                for (int m = 0; m < tokens; ++m) {
                    reset::nvfp4_matvec_w4a4(reference_view(w, input_scale), x.data() + m * cols, reference.data());
                    // Magnitude scale of row n: sum |w * x_hat| * ts_x.
                    for (int64_t n = 0; n < rows; ++n) {
                        double magnitude = 0.0;
                        for (int64_t k = 0; k < cols; ++k)
                            magnitude += std::fabs(
                                static_cast<double>(reset::nvfp4::e2m1_to_float(reset::nvfp4::packed_code(
                                    w.codes.data() + n * cols / 2, static_cast<int>(k)))) *
                                reset::nvfp4::e4m3_to_float(w.scales[n * cols / 16 + k / 16]) *
                                __half2float(got_x16[m * cols + k]));
                        magnitude *= static_cast<double>(w.tensor_scale) * got_ts[m];
                        const double err = std::fabs(y[static_cast<size_t>(m * rows + n)] - reference[n]);
                        worst = std::max(worst, err / (magnitude > 0 ? magnitude : 1e-30));
                    }
                }
                EXPECT(worst < 1e-5, "%s: GEMV error vs CPU W4A4 reference %.3g", label, worst);
                g_worst_w4a4 = std::max(g_worst_w4a4, worst);
            }
        }
    }
}

// W4A16 preparation of [tokens][ldx] rows into FP16 [tokens][cols] x16 and the row scales rs.
void prepare_w4a16(const DeviceBuffer &x, int64_t ldx, reset::Nvfp4ActivationInput input, int tokens, int64_t cols,
                   const DeviceBuffer &x16, const DeviceBuffer &rs) {
    reset::Nvfp4PrepareArgs pa;
    pa.mode = reset::Nvfp4ActivationMode::kW4A16;
    pa.tokens = tokens;
    pa.cols = cols;
    pa.x = x.ptr;
    pa.ldx = ldx;
    pa.input = input;
    pa.x16 = x16.ptr;
    pa.ld_x16 = cols;
    pa.row_scale = rs.as<float>();
    reset::nvfp4_prepare_activations(pa, nullptr);
}

// W4A16 preparation of BF16 rows beyond the FP16 range: the power-of-two row
// scale keeps them finite and the GEMV result right.
void test_w4a16_prepare_large() {
    const int64_t rows = 37, cols = 96;
    const HostWeight w = random_weight(rows, cols);
    Device d(w, false, reset::nvfp4_gemv_device_decode());
    const int tokens = 3;
    std::vector<float> x(static_cast<size_t>(tokens * cols));
    std::vector<__nv_bfloat16> xb(x.size());
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (size_t i = 0; i < x.size(); ++i) {
        const float spread = (i / cols == 1) ? 3e5f : 1.0f;  // token 1 overflows FP16
        xb[i] = __float2bfloat16_rn(normal(g_rng) * spread);
        x[i] = __bfloat162float(xb[i]);
    }
    DeviceBuffer xd(xb.size() * 2), x16(x.size() * 2), rs(static_cast<size_t>(tokens) * 4);
    xd.upload(xb.data(), xd.bytes);
    prepare_w4a16(xd, cols, reset::Nvfp4ActivationInput::kBFloat16, tokens, cols, x16, rs);
    const std::vector<float> y = run_gemv(d, tokens, x16, cols, rs.as<float>(), nullptr, nullptr,
                                          reset::Nvfp4GemvOutput::kFloat32, 0, "w4a16 prepare large");
    double worst = 0.0;
    for (int m = 0; m < tokens; ++m)
        for (int64_t n = 0; n < rows; ++n) {
            double exact, magnitude;
            fp64_row(w, n, x.data() + m * cols, exact, magnitude);
            // FP16 keeps 11 significant bits of each BF16 (8): the values are exact.
            worst = std::max(worst, std::fabs(y[static_cast<size_t>(m * rows + n)] - exact) / magnitude);
        }
    EXPECT(worst < 1e-5, "w4a16 prepare large: error %.3g", worst);
}

// FP32 input (x_amax): the GEMV converts x as it loads it, which must give
// exactly the prepare launch + FP16 GEMV result (the same FP16 values, the
// same products, the same summation), rows past FP16's range included; and
// y_amax must be exactly the largest |y| stored per token where that exceeds
// 32768 and untouched (0) where it does not.  A producer's FP16 copy
// (x_fallback, the x it rounds to FP16 unscaled) gives that result too: read
// where every row fits FP16 unscaled, multiplied again from the FP32 rows
// where one does not (token 1's rows of 3e6).  Both read the row maxima as
// the producers leave them (0 below 32768) as well as exact ones.  y16 is y
// rounded to FP16.
void test_float_input() {
    for (bool gate_up : {false, true}) {
        const int64_t rows = gate_up ? 2 * 53 : 77, cols = 4128;  // K = 16 quads + 32: the tail quad too
        const HostWeight w = random_weight(rows, cols);
        Device d(w, gate_up, reset::nvfp4_gemv_device_decode());
        const int64_t outputs = d.weight.layout.outputs();
        for (auto [tokens, large] : {std::pair{1, false}, {3, true}, {8, true}, {8, false}}) {
            const int64_t ldx = cols + 4;  // FP32 rows 16-byte aligned, wider than K
            std::vector<float> x(static_cast<size_t>(tokens * ldx));
            std::normal_distribution<float> normal(0.0f, 1.0f);
            std::vector<float> amax(static_cast<size_t>(tokens), 0.0f);
            for (int m = 0; m < tokens; ++m)
                for (int64_t k = 0; k < ldx; ++k) {
                    const float spread = m == 1 && large ? 3e6f : 2.0f;  // token 1 needs a row scale > 1
                    const float v = normal(g_rng) * spread;
                    x[static_cast<size_t>(m * ldx + k)] = v;
                    if (k < cols) amax[static_cast<size_t>(m)] = std::max(amax[static_cast<size_t>(m)], std::fabs(v));
                }
            // The maxima as a producer's y_amax / out_amax leave them: raised only past the FP16 row limit.
            std::vector<float> amax_left(amax);
            for (float &a : amax_left)
                if (!(a > reset::w4a16::kFp16RowLimit)) a = 0.0f;
            DeviceBuffer xd(x.size() * 4), amax_exact(amax.size() * 4), amax_producers(amax.size() * 4),
                x16(static_cast<size_t>(tokens * cols) * 2), rs(static_cast<size_t>(tokens) * 4),
                y_amax(static_cast<size_t>(tokens) * 4);
            xd.upload(x.data(), xd.bytes);
            amax_exact.upload(amax.data(), amax_exact.bytes);
            amax_producers.upload(amax_left.data(), amax_producers.bytes);
            const int64_t ld_copy = cols + 8;  // the copy's own row stride
            std::vector<float> copy_rows(static_cast<size_t>(tokens * ld_copy), 0.0f);
            for (int m = 0; m < tokens; ++m)
                for (int64_t k = 0; k < cols; ++k)
                    copy_rows[static_cast<size_t>(m * ld_copy + k)] = x[static_cast<size_t>(m * ldx + k)];
            DeviceBuffer copy(copy_rows.size() * 2), y16(static_cast<size_t>(tokens * (outputs + 5)) * 2);
            copy.upload(to_half(copy_rows).data(), copy.bytes);
            prepare_w4a16(xd, ldx, reset::Nvfp4ActivationInput::kFloat32, tokens, cols, x16, rs);
            for (auto [splits, exact] : {std::pair{0, true}, {-3, true}, {0, false}, {-3, false}}) {
                const DeviceBuffer &amax_d = exact ? amax_exact : amax_producers;
                char label[160];
                std::snprintf(label, sizeof label, "fp32 input gate_up=%d M=%d splits=%d %s maxima", gate_up, tokens,
                              splits, exact ? "exact" : "producers'");
                const std::vector<float> prepared = run_gemv(d, tokens, x16, cols, rs.as<float>(), nullptr, nullptr,
                                                             reset::Nvfp4GemvOutput::kFloat32, splits, label);
                CUDA_OK(cudaMemset(y_amax.ptr, 0, y_amax.bytes));
                const std::vector<float> direct =
                    run_gemv(d, tokens, xd, ldx, nullptr, nullptr, nullptr, reset::Nvfp4GemvOutput::kFloat32, splits,
                             label, nullptr, amax_d.as<float>(), y_amax.as<float>());
                EXPECT(std::memcmp(prepared.data(), direct.data(), prepared.size() * 4) == 0,
                       "%s: differs from prepare + FP16 GEMV", label);
                CUDA_OK(cudaMemset(y16.ptr, kPoison, y16.bytes));
                const std::vector<float> copied = run_gemv(
                    d, tokens, copy, ld_copy, nullptr, nullptr, nullptr, reset::Nvfp4GemvOutput::kFloat32, splits,
                    label, nullptr, amax_d.as<float>(), nullptr, {}, [&](reset::Nvfp4GemvArgs &a) {
                        a.x_fallback = xd.as<float>();
                        a.ld_x_fallback = ldx;
                        a.y16 = y16.ptr;
                        a.ld_y16 = outputs + 5;
                    });
                EXPECT(std::memcmp(prepared.data(), copied.data(), prepared.size() * 4) == 0,
                       "%s: the FP16 copy (large rows %d) differs from prepare + FP16 GEMV", label, int(large));
                std::vector<__half> got16(y16.bytes / 2);
                y16.download(got16.data(), y16.bytes);
                bool rounded = true, untouched = true;
                for (int m = 0; m < tokens; ++m)
                    for (int64_t n = 0; n < outputs + 5; ++n) {
                        const __half h = got16[static_cast<size_t>(m * (outputs + 5) + n)];
                        if (n >= outputs) {
                            untouched = untouched && is_poison(&h, 2);
                            continue;
                        }
                        const __half want = __float2half_rn(copied[static_cast<size_t>(m * outputs + n)]);
                        rounded = rounded && std::memcmp(&h, &want, 2) == 0;
                    }
                EXPECT(rounded, "%s: y16 is not y rounded to FP16", label);
                EXPECT(untouched, "%s: y16 written past the outputs", label);
                std::vector<float> got(static_cast<size_t>(tokens));
                y_amax.download(got.data(), y_amax.bytes);
                for (int m = 0; m < tokens; ++m) {
                    float max_y = 0.0f;
                    for (int64_t n = 0; n < outputs; ++n)
                        max_y = std::max(max_y, std::fabs(direct[static_cast<size_t>(m * outputs + n)]));
                    const float want = max_y > reset::w4a16::kFp16RowLimit ? max_y : 0.0f;
                    EXPECT(got[static_cast<size_t>(m)] == want, "%s: y_amax[%d] = %.9g, max |y| = %.9g", label, m,
                           got[static_cast<size_t>(m)], max_y);
                    // Both sides of the limit are asserted: token 1's rows of 3e6 give |y| far past it.
                    if (large && m == 1)
                        EXPECT(max_y > reset::w4a16::kFp16RowLimit, "%s: token 1's max |y| %.9g does not pass the limit",
                               label, max_y);
                }
            }
        }
    }
}

// The L2 prefetch of the next weight (Nvfp4GemvArgs::prefetch) is a hint:
// the same bits with it as without, in both plans, whatever its size; its
// ranges are whole leading quads of the other weight, inside its buffers.
void test_prefetch() {
    const int64_t cols = 4128;  // 16 full quads and the tail quad
    const HostWeight w = random_weight(77, cols), next = random_weight(2 * 45, cols);
    Device d(w, false, reset::nvfp4_gemv_device_decode()), n(next, true, reset::nvfp4_gemv_device_decode());
    const reset::Nvfp4GemvLayout &nl = n.weight.layout;
    const size_t quad_bytes = static_cast<size_t>(nl.row_tiles) * (2048 + 256);
    for (size_t budget : {size_t(0), quad_bytes, 3 * quad_bytes + 100, size_t(1) << 30}) {
        const reset::WeightPrefetch pf = reset::nvfp4_gemv_weight_prefetch(n.weight, budget);
        const size_t quads = budget == 0 ? 0 : std::min<size_t>(static_cast<size_t>(nl.k_quads()), budget / quad_bytes);
        EXPECT(pf.bytes[0] == quads * static_cast<size_t>(nl.row_tiles) * 2048 &&
                   (budget == 0 || pf.first[0] == n.weight.codes),
               "prefetch of %zu bytes: %llu code bytes, want %zu whole quads", budget,
               static_cast<unsigned long long>(pf.bytes[0]), quads);
        const auto s0 = reinterpret_cast<uintptr_t>(n.weight.scales), f1 = reinterpret_cast<uintptr_t>(pf.first[1]);
        EXPECT(pf.bytes[1] == 0 || (f1 % 16 == 0 && pf.bytes[1] % 16 == 0 && f1 >= s0 &&
                                    f1 + pf.bytes[1] <= s0 + quads * static_cast<size_t>(nl.row_tiles) * 256),
               "prefetch of %zu bytes: scale range outside the leading quads", budget);
        for (int tokens : {1, 8}) {
            std::vector<float> x(static_cast<size_t>(tokens * cols));
            std::normal_distribution<float> normal(0.0f, 1.0f);
            for (float &v : x) v = normal(g_rng);
            const std::vector<__half> xh = to_half(x);
            DeviceBuffer xd(xh.size() * 2);
            xd.upload(xh.data(), xd.bytes);
            for (int splits : {0, 2, -3}) {
                char label[128];
                std::snprintf(label, sizeof label, "prefetch %zu bytes M=%d splits=%d", budget, tokens, splits);
                const std::vector<float> plain = run_gemv(d, tokens, xd, cols, nullptr, nullptr, nullptr,
                                                          reset::Nvfp4GemvOutput::kFloat32, splits, label);
                const std::vector<float> hinted =
                    run_gemv(d, tokens, xd, cols, nullptr, nullptr, nullptr, reset::Nvfp4GemvOutput::kFloat32, splits,
                             label, nullptr, nullptr, nullptr, pf);
                EXPECT(std::memcmp(plain.data(), hinted.data(), plain.size() * 4) == 0, "%s: differs without it",
                       label);
            }
        }
    }
}

template <typename Body>
void expect_error(reset_status want, const char *label, Body body) {
    try {
        body();
        EXPECT(false, "%s: no error raised", label);
    } catch (const reset::Error &e) {
        EXPECT(e.status() == want, "%s: status %d (%s)", label, static_cast<int>(e.status()), e.what());
    }
}

__device__ unsigned long long global_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// Another stream's kernel that keeps SMs from the pair, as a second session on
// the GPU or another process under MPS would: one CTA per SM (each takes all
// of an SM's shared memory), until the host sets flags[0]; flags[1] counts the
// CTAs started; a CTA that waits longer than limit_ns sets flags[2] and leaves.
__global__ void hold_sms(volatile unsigned *flags, unsigned long long limit_ns) {
    if (threadIdx.x != 0) return;
    atomicAdd_system(const_cast<unsigned *>(flags + 1), 1u);
    const unsigned long long start = global_ns();
    while (flags[0] == 0) {
        if (global_ns() - start > limit_ns) {
            flags[2] = 1;
            return;
        }
        __nanosleep(2000);
    }
}

// Runs launch(stream) while hold_sms keeps all but two SMs of the device, and
// checks that it finished there: a launch whose CTAs had to be resident at
// once (a grid barrier) would wait for the held SMs.  Returns false, having
// said why, where the SMs could not be held.
bool beside_held_sms(const char *label, const std::function<void(cudaStream_t)> &launch) {
    int device = 0, sms = 0, shared_optin = 0;
    CUDA_OK(cudaGetDevice(&device));
    CUDA_OK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    CUDA_OK(cudaDeviceGetAttribute(&shared_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    CUDA_OK(cudaFuncSetAttribute(hold_sms, cudaFuncAttributeMaxDynamicSharedMemorySize, shared_optin));
    unsigned *flags = nullptr, *device_flags = nullptr;
    CUDA_OK(cudaHostAlloc(&flags, 3 * sizeof(unsigned), cudaHostAllocMapped));
    CUDA_OK(cudaHostGetDevicePointer(&device_flags, flags, 0));
    volatile unsigned *f = flags;
    f[0] = f[1] = f[2] = 0;
    cudaStream_t hold_stream, pair_stream;
    CUDA_OK(cudaStreamCreateWithFlags(&hold_stream, cudaStreamNonBlocking));
    CUDA_OK(cudaStreamCreateWithFlags(&pair_stream, cudaStreamNonBlocking));
    CUDA_OK(cudaDeviceSynchronize());
    const unsigned held = static_cast<unsigned>(sms - 2);
    hold_sms<<<held, 32, shared_optin, hold_stream>>>(device_flags, 5'000'000'000ull);
    CUDA_OK(cudaGetLastError());
    const auto t0 = std::chrono::steady_clock::now();
    while (f[1] < held && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(3)) {
    }
    const bool holding = f[1] == held;
    if (holding) {
        launch(pair_stream);
        CUDA_OK(cudaStreamSynchronize(pair_stream));
    }
    const bool gave_up = f[2] != 0;  // read before the release: did the held SMs free themselves first?
    f[0] = 1;
    CUDA_OK(cudaStreamSynchronize(hold_stream));
    if (holding)
        EXPECT(!gave_up, "%s: the pair did not finish on the 2 SMs another stream left free", label);
    else
        std::printf("%s: skipped the held-SM launch (only %u of %u holding CTAs started)\n", label, f[1], held);
    CUDA_OK(cudaStreamDestroy(hold_stream));
    CUDA_OK(cudaStreamDestroy(pair_stream));
    CUDA_OK(cudaFreeHost(flags));
    return holding;
}

// nvfp4_gemv_pair: gate_up (SiLU·up and its row maxima into act) then down
// (reading act, adding into y) in one launch must leave exactly the bits of
// the two launches, in every combination of the two plans, at M = 1, 3 and 8,
// with one shared workspace; launched again, replayed from a CUDA graph, and
// run on two SMs while another stream holds the rest (every unit then taken
// by few CTAs, each claiming again and again), the state must serve every
// launch and be back at zero (same bits each time), and nothing outside
// [tokens][outputs] of act and y may be written.
struct PairRun {
    std::vector<uint8_t> act, amax, y;  // whole buffers, gaps included
};

void test_pair(bool quick) {
    const reset::Nvfp4GemvDecode decode = reset::nvfp4_gemv_device_decode();
    struct Shape {
        int64_t gate_up_outputs, hidden, down_rows;
    };
    // K of down = gate_up's outputs: 208 = 3 quads + a tail super; 1040 = 4 quads + 16.
    const Shape shapes[] = {{208, 4128, 77}, {1040, 1024, 999}};
    for (const Shape &shape : shapes) {
        if (quick && &shape != shapes) break;  // compute-sanitizer runs: the first shape
        const HostWeight wg = random_weight(2 * shape.gate_up_outputs, shape.hidden);
        const HostWeight wd = random_weight(shape.down_rows, shape.gate_up_outputs);
        Device dg(wg, true, decode), dd(wd, false, decode);
        DeviceBuffer workspace(std::max(dg.workspace.bytes, dd.workspace.bytes));
        CUDA_OK(cudaMemset(workspace.ptr, 0, workspace.bytes));
        DeviceBuffer state(reset::kNvfp4GemvPairStateBytes);
        CUDA_OK(cudaMemset(state.ptr, 0, state.bytes));
        const int64_t ld_act = shape.gate_up_outputs + 4;  // FP32 rows 16-byte aligned, a gap after each
        const int64_t ldy = shape.down_rows + 3;
        for (int tokens : {1, 3, 8}) {
            const std::vector<float> x = random_fp16_values(static_cast<size_t>(tokens * shape.hidden), 1.0f);
            DeviceBuffer xd(x.size() * 2);
            xd.upload(to_half(x).data(), xd.bytes);
            std::vector<float> residual(static_cast<size_t>((tokens + 1) * ldy));
            std::normal_distribution<float> normal(0.0f, 1.0f);
            for (float &v : residual) v = normal(g_rng);
            const size_t act_bytes = static_cast<size_t>((tokens + 1) * ld_act) * 4;
            const size_t y_bytes = residual.size() * 4;
            DeviceBuffer act(act_bytes), amax(static_cast<size_t>(tokens) * 4), y(y_bytes);
            for (int splits_gate_up : {0, -3})
                for (int splits_down : {0, -2}) {
                    char label[160];
                    std::snprintf(label, sizeof label, "pair %" PRId64 "x%" PRId64 " -> %" PRId64 " M=%d splits %d/%d",
                                  2 * shape.gate_up_outputs, shape.hidden, shape.down_rows, tokens, splits_gate_up,
                                  splits_down);
                    reset::Nvfp4GemvArgs first, second;
                    first.tokens = second.tokens = tokens;
                    first.x = xd.ptr;
                    first.ldx = shape.hidden;
                    first.y = act.ptr;
                    first.ldy = ld_act;
                    first.y_amax = amax.as<float>();
                    first.splits = splits_gate_up;
                    second.x = act.ptr;
                    second.ldx = ld_act;
                    second.x_amax = amax.as<float>();
                    second.residual = y.ptr;
                    second.ld_residual = ldy;
                    second.y = y.ptr;
                    second.ldy = ldy;
                    second.splits = splits_down;
                    for (reset::Nvfp4GemvArgs *a : {&first, &second}) {
                        a->workspace = workspace.ptr;
                        a->workspace_bytes = workspace.bytes;
                    }
                    auto reset_buffers = [&] {
                        CUDA_OK(cudaMemset(act.ptr, kPoison, act_bytes));
                        CUDA_OK(cudaMemset(amax.ptr, 0, amax.bytes));
                        y.upload(residual.data(), y_bytes);
                    };
                    auto collect = [&] {
                        CUDA_OK(cudaDeviceSynchronize());
                        PairRun r{std::vector<uint8_t>(act_bytes), std::vector<uint8_t>(amax.bytes),
                                  std::vector<uint8_t>(y_bytes)};
                        act.download(r.act.data(), act_bytes);
                        amax.download(r.amax.data(), amax.bytes);
                        y.download(r.y.data(), y_bytes);
                        return r;
                    };
                    reset_buffers();
                    reset::nvfp4_gemv(dg.weight, first, nullptr);
                    reset::nvfp4_gemv(dd.weight, second, nullptr);
                    const PairRun two = collect();
                    EXPECT(reset::nvfp4_gemv_pair_runs(dg.weight, first, dd.weight, second),
                           "%s: the pair does not run as one launch", label);
                    bool written = true;  // act: every [tokens][outputs] element, nothing else
                    for (int64_t i = 0; i < (tokens + 1) * ld_act; ++i) {
                        const bool inside = i / ld_act < tokens && i % ld_act < shape.gate_up_outputs;
                        written = written && inside != is_poison(two.act.data() + i * 4, 4);
                    }
                    EXPECT(written, "%s: two launches did not write exactly act's [tokens][outputs]", label);
                    // Twice in a row, from a graph replayed twice, then beside held SMs (not under
                    // compute-sanitizer, the quick set, which runs one kernel at a time): one state for all.
                    for (int launch = 0; launch < (quick ? 4 : 5); ++launch) {
                        reset_buffers();
                        if (launch < 2) {
                            reset::nvfp4_gemv_pair(dg.weight, first, dd.weight, second, state.ptr, nullptr);
                        } else if (launch == 4) {
                            auto pair = [&](cudaStream_t stream) {
                                reset::nvfp4_gemv_pair(dg.weight, first, dd.weight, second, state.ptr, stream);
                            };
                            if (!beside_held_sms(label, pair)) pair(nullptr);
                        } else {
                            cudaStream_t stream;
                            cudaGraph_t graph;
                            cudaGraphExec_t exec;
                            CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
                            CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
                            reset::nvfp4_gemv_pair(dg.weight, first, dd.weight, second, state.ptr, stream);
                            CUDA_OK(cudaStreamEndCapture(stream, &graph));
                            CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
                            CUDA_OK(cudaGraphLaunch(exec, stream));
                            CUDA_OK(cudaStreamSynchronize(stream));
                            reset_buffers();
                            CUDA_OK(cudaGraphLaunch(exec, stream));
                            CUDA_OK(cudaStreamSynchronize(stream));
                            CUDA_OK(cudaGraphExecDestroy(exec));
                            CUDA_OK(cudaGraphDestroy(graph));
                            CUDA_OK(cudaStreamDestroy(stream));
                        }
                        const PairRun one = collect();
                        EXPECT(one.act == two.act && one.amax == two.amax && one.y == two.y,
                               "%s, launch %d: act %s, amax %s, y %s", label, launch,
                               one.act == two.act ? "same" : "DIFFERENT", one.amax == two.amax ? "same" : "DIFFERENT",
                               one.y == two.y ? "same" : "DIFFERENT");
                    }
                }
        }
        // Every launch sets the three counters back to zero (kernels/claimed_work.cuh: claims,
        // units done, CTAs passed; each at the start of a 128-byte line).
        std::vector<unsigned> words(reset::kNvfp4GemvPairStateBytes / sizeof(unsigned));
        state.download(words.data(), state.bytes);
        for (size_t i = 0; i < words.size(); ++i)
            EXPECT(words[i] == 0, "pair state: word %zu is %u after the launches", i, words[i]);
    }
    // What the pair does not take: refused before anything is launched.
    const HostWeight w = random_weight(64, 512);
    Device d(w, false, decode);
    DeviceBuffer x(8 * 512 * 4), y(8 * 64 * 4), amax(8 * 4), state(reset::kNvfp4GemvPairStateBytes);
    reset::Nvfp4GemvArgs first, second;
    first.tokens = second.tokens = 2;
    first.x = second.x = x.ptr;
    first.ldx = second.ldx = 512;
    first.y = second.y = y.ptr;
    first.ldy = second.ldy = 64;
    second.x_amax = amax.as<float>();
    reset::Nvfp4GemvArgs bad = first;
    bad.x_amax = amax.as<float>();
    expect_error(RESET_ERR_UNSUPPORTED, "pair: FP32 first input",
                 [&] { reset::nvfp4_gemv_pair(d.weight, bad, d.weight, second, state.ptr, nullptr); });
    bad = second;
    bad.x_amax = nullptr;
    expect_error(RESET_ERR_UNSUPPORTED, "pair: FP16 second input",
                 [&] { reset::nvfp4_gemv_pair(d.weight, first, d.weight, bad, state.ptr, nullptr); });
    bad = second;
    bad.tokens = 3;
    expect_error(RESET_ERR_UNSUPPORTED, "pair: token counts differ",
                 [&] { reset::nvfp4_gemv_pair(d.weight, first, d.weight, bad, state.ptr, nullptr); });
    EXPECT(!reset::nvfp4_gemv_pair_runs(d.weight, first, d.weight, bad), "pair_runs: token counts differ");
    expect_error(RESET_ERR_INVALID_ARGUMENT, "pair: no state",
                 [&] { reset::nvfp4_gemv_pair(d.weight, first, d.weight, second, nullptr, nullptr); });
    bad = second;
    bad.x_fallback = x.as<float>();
    bad.ld_x_fallback = 512;
    expect_error(RESET_ERR_UNSUPPORTED, "pair: an FP16 copy as the second input",
                 [&] { reset::nvfp4_gemv_pair(d.weight, first, d.weight, bad, state.ptr, nullptr); });
    // A producer's FP16 copy needs x_amax and aligned rows on both sides; y16 FP32 output and room.
    reset::Nvfp4GemvArgs copy = first;
    copy.x_fallback = x.as<float>();
    copy.ld_x_fallback = 512;
    expect_error(RESET_ERR_INVALID_ARGUMENT, "FP16 copy without x_amax",
                 [&] { reset::nvfp4_gemv(d.weight, copy, nullptr); });
    copy.x_amax = amax.as<float>();
    copy.ld_x_fallback = 510;
    expect_error(RESET_ERR_INVALID_ARGUMENT, "FP16 copy with an FP32 stride not a multiple of 4",
                 [&] { reset::nvfp4_gemv(d.weight, copy, nullptr); });
    copy.ld_x_fallback = 512;
    copy.ldx = 516;
    expect_error(RESET_ERR_INVALID_ARGUMENT, "FP16 copy with a stride not a multiple of 8",
                 [&] { reset::nvfp4_gemv(d.weight, copy, nullptr); });
    reset::Nvfp4GemvArgs out16 = first;
    out16.y16 = y.ptr;
    out16.ld_y16 = 63;
    expect_error(RESET_ERR_INVALID_ARGUMENT, "y16 shorter than the outputs",
                 [&] { reset::nvfp4_gemv(d.weight, out16, nullptr); });
    out16.ld_y16 = 64;
    out16.output = reset::Nvfp4GemvOutput::kBFloat16;
    expect_error(RESET_ERR_INVALID_ARGUMENT, "y16 with BF16 output",
                 [&] { reset::nvfp4_gemv(d.weight, out16, nullptr); });
}

// The repack is a bijection onto the documented bit positions (both decodes).
void test_repack_layout() {
    for (auto decode : {reset::Nvfp4GemvDecode::kInteger, reset::Nvfp4GemvDecode::kNativeE2M1})
        for (bool gate_up : {false, true}) {
            const HostWeight w = random_weight(34, 144);
            const reset::Nvfp4GemvLayout layout = reset::nvfp4_gemv_layout(w.rows, w.cols, gate_up, decode);
            std::vector<uint8_t> c(layout.code_bytes()), s(layout.scale_bytes());
            reset::nvfp4_gemv_repack(layout, w.codes.data(), w.scales.data(), c.data(), s.data());
            bool ok = true;
            for (int64_t tile = 0; tile < layout.row_tiles; ++tile)
                for (int64_t sup = 0; sup < layout.k_supers; ++sup)
                    for (int lane = 0; lane < 32; ++lane)
                        for (int b = 0; b < 4; ++b) {
                            uint32_t word;
                            std::memcpy(&word, c.data() + reset::nvfp4_gemv_code_offset(layout, tile, sup) + lane * 16 + b * 4, 4);
                            const int g = lane >> 2, t = lane & 3;
                            for (int j = 0; j < 4; ++j)
                                for (int e = 0; e < 2; ++e) {
                                    uint8_t code;
                                    if (decode == reset::Nvfp4GemvDecode::kNativeE2M1) {
                                        code = (word >> (8 * j + 4 * e)) & 15;
                                    } else {
                                        code = static_cast<uint8_t>(
                                            ((word >> (reset::kNvfp4MagnitudeBit[j] + 16 * e)) & 7) |
                                            (((word >> (reset::kNvfp4SignBit[j] + 16 * e)) & 1) << 3));
                                    }
                                    const int64_t row = reset::nvfp4_gemv_tile_row(layout, tile, g + 8 * (j & 1));
                                    const int64_t k = sup * 64 + 16 * t + 4 * b + 2 * (j >> 1) + e;
                                    const uint8_t want =
                                        (row < 0 || k >= w.cols)
                                            ? 0
                                            : reset::nvfp4::packed_code(w.codes.data() + row * w.cols / 2,
                                                                        static_cast<int>(k));
                                    ok = ok && code == want;
                                }
                        }
            // The supers that pad the last quad hold zero codes (exact zeros whatever their scale).
            for (int64_t tile = 0; tile < layout.row_tiles; ++tile)
                for (int64_t sup = layout.k_supers; sup < 4 * layout.k_quads(); ++sup)
                    for (int byte = 0; byte < 512; ++byte)
                        ok = ok && c[reset::nvfp4_gemv_code_offset(layout, tile, sup) + byte] == 0;
            EXPECT(ok, "repack decode=%d gate_up=%d: a code is not where the layout says", static_cast<int>(decode),
                   gate_up);
            // Scales: lane 4g+t, quad q, byte 2u + h = row g + 8h, block 4(4q + u) + t; 1.0 in the padding.
            bool scales_ok = true;
            for (int64_t tile = 0; tile < layout.row_tiles; ++tile)
                for (int64_t q = 0; q < layout.k_quads(); ++q)
                    for (int lane = 0; lane < 32; ++lane)
                        for (int u = 0; u < 4; ++u)
                            for (int h = 0; h < 2; ++h) {
                                const int g = lane >> 2, t = lane & 3;
                                const int64_t row = reset::nvfp4_gemv_tile_row(layout, tile, g + 8 * h);
                                const int64_t block = 4 * (4 * q + u) + t;
                                const uint8_t want = (row < 0 || block >= w.cols / 16)
                                                         ? reset::nvfp4::kE4M3One
                                                         : w.scales[row * (w.cols / 16) + block];
                                scales_ok = scales_ok && s[reset::nvfp4_gemv_scale_offset(layout, tile, q) + lane * 8 + 2 * u + h] == want;
                            }
            EXPECT(scales_ok, "repack decode=%d gate_up=%d: a scale is not where the layout says",
                   static_cast<int>(decode), gate_up);
        }
}

// One workspace, zeroed once, for launches on two weights of different tile
// counts in turn (as a session holds it for every linear of a model): each
// launch that cuts tiles between warps must find its counters at zero,
// whatever the other weight's partials left behind.
void test_shared_workspace() {
    const HostWeight a = random_weight(257, 1040), b = random_weight(999, 4096);
    Device da(a, false, reset::nvfp4_gemv_device_decode()), db(b, false, reset::nvfp4_gemv_device_decode());
    DeviceBuffer workspace(std::max(da.workspace.bytes, db.workspace.bytes));
    CUDA_OK(cudaMemset(workspace.ptr, 0, workspace.bytes));
    const int tokens = 3;
    for (int round = 0; round < 2; ++round)
        for (const auto &[w, d, splits] : {std::tuple<const HostWeight *, const Device *, int>{&a, &da, -3},
                                          {&b, &db, -5}, {&a, &da, 2}}) {
            std::vector<float> x = random_fp16_values(static_cast<size_t>(tokens * w->cols), 1.0f);
            DeviceBuffer xd(x.size() * 2);
            xd.upload(to_half(x).data(), x.size() * 2);
            char label[96];
            std::snprintf(label, sizeof label, "shared workspace N=%" PRId64 " splits=%d round %d", w->rows, splits,
                          round);
            const std::vector<float> y = run_gemv(*d, tokens, xd, w->cols, nullptr, nullptr, nullptr,
                                                  reset::Nvfp4GemvOutput::kFloat32, splits, label, &workspace);
            double worst = 0.0;
            for (int m = 0; m < tokens; ++m)
                for (int64_t n = 0; n < w->rows; ++n) {
                    double exact, magnitude;
                    fp64_row(*w, n, x.data() + m * w->cols, exact, magnitude);
                    worst = std::max(worst, std::fabs(y[m * w->rows + n] - exact) / std::max(magnitude, 1e-30));
                }
            // The same bound as test_w4a16_shape (exact products, FP32 accumulation); NaN fails it.
            EXPECT(worst < 1e-5, "%s: error vs FP64 %.3g of the magnitude sum", label, worst);
        }
}

// Shapes and arguments the kernels do not support fail loudly, launching nothing.
void test_rejections() {
    expect_error(RESET_ERR_UNSUPPORTED, "K = 24",
                 [] { reset::nvfp4_gemv_layout(16, 24, false, reset::Nvfp4GemvDecode::kInteger); });
    expect_error(RESET_ERR_UNSUPPORTED, "odd gate_up",
                 [] { reset::nvfp4_gemv_layout(15, 64, true, reset::Nvfp4GemvDecode::kInteger); });
    // K = 512 is two 256-element quads, the split-K granularity: a forced split is possible.
    const HostWeight w = random_weight(32, 512);
    Device d(w, false, reset::nvfp4_gemv_device_decode());
    DeviceBuffer x(8 * 512 * 2), y(9 * 32 * 4);
    reset::Nvfp4GemvArgs a;
    a.x = x.ptr;
    a.ldx = 512;
    a.y = y.ptr;
    a.ldy = 32;
    for (int tokens : {0, 9}) {
        a.tokens = tokens;
        expect_error(RESET_ERR_UNSUPPORTED, "token count", [&] { reset::nvfp4_gemv(d.weight, a, nullptr); });
    }
    a.tokens = 1;
    a.splits = 4;
    expect_error(RESET_ERR_INVALID_ARGUMENT, "split-K without workspace", [&] { reset::nvfp4_gemv(d.weight, a, nullptr); });
    a.splits = 0;
    a.ldx = 511;
    expect_error(RESET_ERR_INVALID_ARGUMENT, "odd ldx", [&] { reset::nvfp4_gemv(d.weight, a, nullptr); });
    a.ldx = 512;
    DeviceBuffer amax(8 * 4);
    a.x_amax = amax.as<float>();
    a.ldx = 514;  // FP32 input needs ldx % 4 == 0
    expect_error(RESET_ERR_INVALID_ARGUMENT, "FP32 input ldx", [&] { reset::nvfp4_gemv(d.weight, a, nullptr); });
    a.ldx = 512;
    a.x_row_scale = amax.as<float>();  // the kernel derives the row scale from x_amax
    expect_error(RESET_ERR_INVALID_ARGUMENT, "FP32 input with a row scale",
                 [&] { reset::nvfp4_gemv(d.weight, a, nullptr); });
    a.x_row_scale = nullptr;
    a.x_amax = nullptr;
    a.y_amax = amax.as<float>();
    a.output = reset::Nvfp4GemvOutput::kBFloat16;
    expect_error(RESET_ERR_INVALID_ARGUMENT, "y_amax with BF16 output", [&] { reset::nvfp4_gemv(d.weight, a, nullptr); });
    a.y_amax = nullptr;
    a.output = reset::Nvfp4GemvOutput::kFloat32;
    reset::Nvfp4GemvWeight other = d.weight;
    other.layout.decode = reset::nvfp4_gemv_device_decode() == reset::Nvfp4GemvDecode::kInteger
                              ? reset::Nvfp4GemvDecode::kNativeE2M1
                              : reset::Nvfp4GemvDecode::kInteger;
    expect_error(RESET_ERR_INVALID_ARGUMENT, "layout for another decode", [&] { reset::nvfp4_gemv(other, a, nullptr); });
    // An unaligned bulk prefetch would be an illegal instruction: refused before the launch.
    a.prefetch.first[0] = static_cast<const uint8_t *>(d.weight.codes) + 8;
    a.prefetch.bytes[0] = 4096;
    expect_error(RESET_ERR_INVALID_ARGUMENT, "unaligned prefetch", [&] { reset::nvfp4_gemv(d.weight, a, nullptr); });
    a.prefetch.first[0] = d.weight.codes;
    a.prefetch.bytes[0] = 4100;
    expect_error(RESET_ERR_INVALID_ARGUMENT, "prefetch size", [&] { reset::nvfp4_gemv(d.weight, a, nullptr); });
    a.prefetch = {};
    a.pipeline = 2;
    expect_error(RESET_ERR_INVALID_ARGUMENT, "pipeline 2", [&] { reset::nvfp4_gemv(d.weight, a, nullptr); });
    a.pipeline = 0;
    std::vector<uint8_t> bad_scales = w.scales;
    bad_scales[5] = 0x7f;  // NaN
    const reset::Nvfp4GemvLayout layout = d.weight.layout;
    std::vector<uint8_t> c(layout.code_bytes()), s(layout.scale_bytes());
    expect_error(RESET_ERR_FORMAT, "NaN block scale",
                 [&] { reset::nvfp4_gemv_repack(layout, w.codes.data(), bad_scales.data(), c.data(), s.data()); });
}

}  // namespace

int main(int argc, char **argv) {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        std::printf("test_nvfp4_gemv: skipped (no CUDA device)\n");
        return 0;
    }
    const uint64_t seed = argc > 1 ? std::strtoull(argv[1], nullptr, 0) : std::random_device{}();
    g_rng.seed(seed);
    cudaDeviceProp prop;
    CUDA_OK(cudaGetDeviceProperties(&prop, 0));
    std::printf("test_nvfp4_gemv: %s (sm_%d%d), decode %s, seed %" PRIu64 "\n", prop.name, prop.major, prop.minor,
                reset::nvfp4_gemv_device_decode() == reset::Nvfp4GemvDecode::kNativeE2M1 ? "native" : "integer", seed);
    const bool quick = std::getenv("RESET_GPU_TEST_QUICK") != nullptr;  // for compute-sanitizer runs
    try {
        test_repack_layout();
        test_rejections();
        // Odd N; K at every alignment modulo the 64-element step (0, 16, 32, 48).
        const std::vector<std::pair<int64_t, int64_t>> shapes =
            quick ? std::vector<std::pair<int64_t, int64_t>>{{7, 48}, {33, 208}}
                  : std::vector<std::pair<int64_t, int64_t>>{{1, 16},    {7, 48},     {33, 80},   {17, 96},
                                                             {257, 1040}, {129, 3120}, {999, 4096}, {515, 4128}};
        for (int pipeline : {0, -1}) {
            g_pipeline = pipeline;
            for (const auto &[n, k] : shapes) test_w4a16_shape(n, k);
            test_float_input();
        }
        g_pipeline = 0;
        test_epilogues();
        test_shared_workspace();
        test_w4a4(quick ? 19 : 301, quick ? 160 : 2064);
        test_w4a16_prepare_large();
        test_prefetch();
        test_pair(quick);
    } catch (const reset::Error &e) {
        std::fprintf(stderr, "FAIL: unexpected reset::Error %d: %s\n", static_cast<int>(e.status()), e.what());
        return 1;
    }
    std::printf("test_nvfp4_gemv: largest error relative to sum|products|: W4A16 vs FP64 %.3g, W4A4 vs CPU %.3g\n",
                g_worst_w4a16, g_worst_w4a4);
    std::printf("test_nvfp4_gemv: %d checks, %d failures\n", g_checks, g_failures);
    return g_failures == 0 ? 0 : 1;
}
