// gpu_test_util.h — the few helpers every GPU test program shares: a check
// counter, CUDA error checks, device buffers, BF16 rounding, NaN poison and a
// seeded generator.  Each test is a plain program (no framework) so the GPU
// machine builds it from the kernel sources alone.
#pragma once

#include <cuda_runtime.h>

#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "api/errors.h"

namespace gpu_test {

inline int g_failures = 0;
inline int g_checks = 0;
inline std::mt19937_64 g_rng;

#define EXPECT(cond, ...)                                                       \
    do {                                                                        \
        ++::gpu_test::g_checks;                                                 \
        if (!(cond)) {                                                          \
            ++::gpu_test::g_failures;                                           \
            std::fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
            std::fprintf(stderr, __VA_ARGS__);                                  \
            std::fprintf(stderr, "\n");                                         \
        }                                                                       \
    } while (0)

inline void cuda_ok(cudaError_t e, const char *what) {
    if (e != cudaSuccess) {
        std::fprintf(stderr, "CUDA error in %s: %s\n", what, cudaGetErrorString(e));
        std::exit(1);
    }
}
#define CUDA_OK(call) ::gpu_test::cuda_ok((call), #call)

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
    template <typename T>
    void upload(const std::vector<T> &v) { CUDA_OK(cudaMemcpy(ptr, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice)); }
    template <typename T>
    std::vector<T> download(size_t count) const {
        std::vector<T> v(count);
        CUDA_OK(cudaMemcpy(v.data(), ptr, count * sizeof(T), cudaMemcpyDeviceToHost));
        return v;
    }
    // Fill with 0xFF bytes: NaN as FP32 and as BF16, so an unwritten output shows.
    void poison() { CUDA_OK(cudaMemset(ptr, 0xFF, bytes)); }
};

// An attention_decode workspace as the engine holds it: the merge's arrival
// counters (its first batch * n_kv_heads words) zeroed once, the rest
// poisoned so that a partial read before it is written shows as NaN.
inline void prepare_attention_workspace(DeviceBuffer &workspace, int batch, int n_kv_heads) {
    workspace.poison();
    const size_t counters = std::min(workspace.bytes, size_t(batch) * size_t(n_kv_heads) * sizeof(unsigned));
    if (counters > 0) CUDA_OK(cudaMemset(workspace.ptr, 0, counters));
}

// Round-to-nearest-even FP32 -> BF16 bits, and back.
inline uint16_t float_to_bf16(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    u += 0x7FFFu + ((u >> 16) & 1u);
    return static_cast<uint16_t>(u >> 16);
}
inline float bf16_to_float(uint16_t h) {
    const uint32_t u = uint32_t(h) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

inline float uniform(float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(g_rng); }
inline float normal(float sigma) { return std::normal_distribution<float>(0.0f, sigma)(g_rng); }

// ‖a − b‖ / ‖b‖ in double; NaN in `a` makes it NaN, which fails any "<=" check.
inline double relative_l2(const std::vector<float> &a, const std::vector<double> &b) {
    double num = 0.0, den = 0.0;
    for (size_t i = 0; i < b.size(); ++i) {
        const double d = double(a[i]) - b[i];
        num += d * d;
        den += b[i] * b[i];
    }
    return std::sqrt(num / (den > 0.0 ? den : 1.0));
}

inline size_t count_nan(const std::vector<float> &v) {
    size_t n = 0;
    for (float f : v) n += std::isnan(f) ? 1 : 0;
    return n;
}

// The common start of every test program: skip without a device, seed the
// generator from argv[1] or at random, and print both.  False = skipped.
inline bool start(const char *name, int argc, char **argv) {
    // Line-buffered even into a file: a test killed by a time limit still shows how far it got.
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        std::printf("%s: skipped (no CUDA device)\n", name);
        return false;
    }
    const uint64_t seed = argc > 1 ? std::strtoull(argv[1], nullptr, 0) : std::random_device{}();
    g_rng.seed(seed);
    cudaDeviceProp prop;
    CUDA_OK(cudaGetDeviceProperties(&prop, 0));
    std::printf("%s: %s (sm_%d%d), seed %" PRIu64 "\n", name, prop.name, prop.major, prop.minor, seed);
    return true;
}

inline int finish(const char *name) {
    std::printf("%s: %d checks, %d failures\n", name, g_checks, g_failures);
    return g_failures == 0 ? 0 : 1;
}

// The times of `reps` launches of `launch` (after one warm-up), in µs, by CUDA
// events on `stream`, sorted.  launch(i) gets the launch's index (0 is the
// warm-up), for benchmarks that rotate through copies of their operands to
// keep the L2 cold.
inline std::vector<float> sorted_us(const std::function<void(int)> &launch, int reps, cudaStream_t stream = nullptr) {
    cudaEvent_t e0, e1;
    CUDA_OK(cudaEventCreate(&e0));
    CUDA_OK(cudaEventCreate(&e1));
    launch(0);
    std::vector<float> times;
    for (int i = 0; i < reps; ++i) {
        CUDA_OK(cudaEventRecord(e0, stream));
        launch(i + 1);
        CUDA_OK(cudaEventRecord(e1, stream));
        CUDA_OK(cudaEventSynchronize(e1));
        float ms = 0.0f;
        CUDA_OK(cudaEventElapsedTime(&ms, e0, e1));
        times.push_back(ms * 1000.0f);
    }
    CUDA_OK(cudaEventDestroy(e0));
    CUDA_OK(cudaEventDestroy(e1));
    std::sort(times.begin(), times.end());
    return times;
}

// Their median.
inline float median_us(const std::function<void(int)> &launch, int reps) {
    const std::vector<float> times = sorted_us(launch, reps);
    return times[times.size() / 2];
}

inline float median_us(const std::function<void()> &launch, int reps) {
    return median_us([&](int) { launch(); }, reps);
}

// FP8 E4M3 on the host, exactly: the references of the FP8 KV cache tests.
// E4M3 ("FN": no infinities, S.1111.111 is NaN, largest finite 448), exactly.
inline double e4m3_to_double(uint8_t bits) {
    const int sign = bits >> 7, exponent = (bits >> 3) & 15, mantissa = bits & 7;
    if (exponent == 15 && mantissa == 7) return NAN;
    const double magnitude = exponent == 0 ? std::ldexp(mantissa, -9) : std::ldexp(8 + mantissa, exponent - 10);
    return sign ? -magnitude : magnitude;
}

// The spacing of E4M3 values around |x| (the binade of |x|; subnormal below 2^-6).
inline double e4m3_quantum(double x) {
    x = std::fabs(x);
    if (x < std::ldexp(1.0, -6)) return std::ldexp(1.0, -9);
    int exponent = 0;
    std::frexp(x, &exponent);  // x = f · 2^exponent, f in [0.5, 1)
    return std::ldexp(1.0, exponent - 4);
}

// Round to nearest even, saturating to ±448 (the kernel's __NV_SATFINITE conversion).
inline uint8_t double_to_e4m3(double x) {
    const uint8_t sign = std::signbit(x) ? 0x80 : 0;
    double a = std::fabs(x);
    if (a > 448.0) a = 448.0;
    const double q = e4m3_quantum(a);
    const double r = std::nearbyint(a / q) * q;  // ties to even: the default rounding mode
    if (r < std::ldexp(1.0, -6)) return uint8_t(sign | uint8_t(r / std::ldexp(1.0, -9)));
    int exponent = 0;
    const double f = std::frexp(r, &exponent);  // r = (2f) · 2^(exponent - 1), 2f in [1, 2)
    const int mantissa = int((2.0 * f - 1.0) * 8.0);
    return uint8_t(sign | ((exponent - 1 + 7) << 3) | mantissa);
}

// Run f and expect it to throw reset::Error with `status` (a shape or an
// argument the launcher must reject); returns the error's message, "" if none.
template <typename F>
std::string expect_error(reset_status status, const char *what, F &&f) {
    try {
        f();
        EXPECT(false, "%s: no error", what);
    } catch (const reset::Error &e) {
        EXPECT(e.status() == status, "%s: status %d (%s)", what, int(e.status()), e.what());
        return e.what();
    }
    return std::string();
}

}  // namespace gpu_test
