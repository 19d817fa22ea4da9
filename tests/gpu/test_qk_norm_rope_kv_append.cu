// test_qk_norm_rope_kv_append.cu — per-head q/k RMSNorm, RoPE (plain and with
// llama3 frequency scaling) and the BF16 KV-cache append (kernels/
// qk_norm_rope_kv_append.cu) against a double reference: head_dim 64/128,
// GQA 1/4/8, batch 1..8, positions 0 to 131,071, with and without q/k norm.
// The whole cache is poisoned first and checked afterwards: exactly the
// appended rows change.  Fresh random data every run (seed printed, argv[1]
// repeats it).
#include <algorithm>

#include "api/errors.h"
#include "gpu_test_util.h"
#include "kernels/qk_norm_rope_kv_append.h"

using namespace gpu_test;

namespace {

double g_worst_q = 0.0, g_worst_kv = 0.0;

// Inverse frequencies 1/θ^(2i/d), optionally with Llama 3.1's scaling
// (factor 8, low/high frequency factors 1 and 4, original context 8192).
std::vector<float> inverse_frequencies(int head_dim, double theta, bool llama3) {
    std::vector<float> f(static_cast<size_t>(head_dim / 2));
    for (int i = 0; i < head_dim / 2; ++i) {
        double v = 1.0 / std::pow(theta, double(2 * i) / head_dim);
        if (llama3) {
            const double factor = 8.0, low = 1.0, high = 4.0, old = 8192.0;
            const double wavelen = 2.0 * M_PI / v;
            if (wavelen > old / low) v /= factor;
            else if (wavelen >= old / high) {
                const double smooth = (old / wavelen - low) / (high - low);
                v = (1.0 - smooth) * v / factor + smooth * v;
            }
        }
        f[size_t(i)] = float(v);
    }
    return f;
}

struct Case {
    int batch, n_heads, n_kv_heads, head_dim, capacity;
    bool qk_norm, llama3;
};

void run_case(const Case &c) {
    const int d = c.head_dim, heads = c.n_heads + 2 * c.n_kv_heads;
    const int64_t ld = int64_t(heads) * d + 5;
    std::vector<float> qkv(static_cast<size_t>(c.batch * ld)), q_norm(static_cast<size_t>(d)), k_norm(static_cast<size_t>(d));
    for (auto &v : qkv) v = normal(uniform(0.1f, 20.0f));
    for (auto &v : q_norm) v = uniform(0.2f, 2.0f);
    for (auto &v : k_norm) v = uniform(0.2f, 2.0f);
    const std::vector<float> inv_freq = inverse_frequencies(d, c.llama3 ? 500000.0 : 1000000.0, c.llama3);
    std::vector<int32_t> positions(static_cast<size_t>(c.batch));
    for (auto &p : positions) p = std::uniform_int_distribution<int32_t>(0, c.capacity - 1)(g_rng);
    positions[0] = 0;
    if (c.batch > 1) positions[size_t(c.batch) - 1] = c.capacity - 1;

    const size_t cache_elements = size_t(c.batch) * c.n_kv_heads * c.capacity * d;
    DeviceBuffer d_qkv(qkv.size() * 4), d_qn(size_t(d) * 4), d_kn(size_t(d) * 4), d_freq(inv_freq.size() * 4),
        d_pos(positions.size() * 4), d_q(size_t(c.batch) * c.n_heads * d * 4), d_keys(cache_elements * 2),
        d_values(cache_elements * 2);
    d_qkv.upload(qkv);
    d_qn.upload(q_norm);
    d_kn.upload(k_norm);
    d_freq.upload(inv_freq);
    d_pos.upload(positions);
    d_q.poison();
    d_keys.poison();
    d_values.poison();

    reset::QkNormRopeArgs a;
    a.batch = c.batch;
    a.n_heads = c.n_heads;
    a.qkv = d_qkv.as<float>();
    a.ld_qkv = ld;
    a.q_norm = c.qk_norm ? d_qn.as<float>() : nullptr;
    a.k_norm = c.qk_norm ? d_kn.as<float>() : nullptr;
    a.eps = 1e-6f;
    a.inv_freq = d_freq.as<float>();
    a.positions = d_pos.as<int32_t>();
    a.q_out = d_q.as<float>();
    a.cache.keys = d_keys.ptr;
    a.cache.values = d_values.ptr;
    a.cache.capacity = c.capacity;
    a.cache.n_kv_heads = c.n_kv_heads;
    a.cache.head_dim = d;
    reset::qk_norm_rope_kv_append(a, nullptr);
    CUDA_OK(cudaDeviceSynchronize());
    const std::vector<float> q = d_q.download<float>(size_t(c.batch) * c.n_heads * d);
    const std::vector<uint16_t> keys = d_keys.download<uint16_t>(cache_elements);
    const std::vector<uint16_t> values = d_values.download<uint16_t>(cache_elements);

    // The reference transform of one head, in double.
    auto transform = [&](const float *in, const float *norm, int position) {
        std::vector<double> x(in, in + d);
        if (norm) {
            double ss = 0.0;
            for (double v : x) ss += v * v;
            const double inverse = 1.0 / std::sqrt(ss / d + 1e-6);
            for (int i = 0; i < d; ++i) x[size_t(i)] = norm[i] * x[size_t(i)] * inverse;
        }
        for (int i = 0; i < d / 2; ++i) {
            const double angle = double(position) * double(inv_freq[size_t(i)]);
            const double a0 = x[size_t(i)], b0 = x[size_t(i + d / 2)];
            x[size_t(i)] = a0 * std::cos(angle) - b0 * std::sin(angle);
            x[size_t(i + d / 2)] = b0 * std::cos(angle) + a0 * std::sin(angle);
        }
        return x;
    };
    std::vector<bool> appended(cache_elements, false);
    for (int b = 0; b < c.batch; ++b) {
        const float *row = qkv.data() + size_t(b) * ld;
        for (int h = 0; h < c.n_heads; ++h) {
            const std::vector<double> ref = transform(row + size_t(h) * d, c.qk_norm ? q_norm.data() : nullptr, positions[size_t(b)]);
            std::vector<float> got(q.begin() + (size_t(b) * c.n_heads + h) * d, q.begin() + (size_t(b) * c.n_heads + h + 1) * d);
            const double err = relative_l2(got, ref);
            g_worst_q = std::max(g_worst_q, std::isnan(err) ? 1.0 : err);
            EXPECT(err <= 2e-6, "q: batch %d head %d position %d: relative L2 %.3g", b, h, positions[size_t(b)], err);
        }
        for (int h = 0; h < 2 * c.n_kv_heads; ++h) {
            const bool is_k = h < c.n_kv_heads;
            const int kv = is_k ? h : h - c.n_kv_heads;
            const float *in = row + size_t(c.n_heads + h) * d;
            const std::vector<double> ref =
                is_k ? transform(in, c.qk_norm ? k_norm.data() : nullptr, positions[size_t(b)])
                     : std::vector<double>(in, in + d);
            const size_t base = ((size_t(b) * c.n_kv_heads + kv) * c.capacity + positions[size_t(b)]) * d;
            const std::vector<uint16_t> &cache = is_k ? keys : values;
            double largest = 0.0;
            for (double v : ref) largest = std::max(largest, std::fabs(v));
            for (int i = 0; i < d; ++i) {
                appended[base + size_t(i)] = true;
                const uint16_t bits = cache[base + size_t(i)];
                if (!is_k) {
                    // V is stored unchanged: exactly its BF16 rounding.
                    EXPECT(bits == float_to_bf16(in[i]), "v: batch %d kv head %d dim %d: %04x vs %04x", b, kv, i,
                           unsigned(bits), unsigned(float_to_bf16(in[i])));
                    continue;
                }
                // K: within half a BF16 unit in the last place of the exact value, plus the FP32
                // steps' error, which is absolute (a rotation's cancellation can leave an element
                // near zero).
                const double got = bf16_to_float(bits), exact = ref[size_t(i)];
                int exponent = 0;
                std::frexp(exact, &exponent);
                const double half_ulp = 0.5 * std::ldexp(1.0, exponent - 8);
                const double err = std::fabs(got - exact) / (half_ulp + 4e-6 * largest);
                g_worst_kv = std::max(g_worst_kv, std::isnan(err) ? 1e9 : err);
                EXPECT(err <= 1.0, "k: batch %d kv head %d dim %d: %.8g vs %.8g", b, kv, i, got, exact);
            }
        }
    }
    size_t stray = 0;
    for (size_t i = 0; i < cache_elements; ++i)
        if (!appended[i] && (keys[i] != 0xFFFF || values[i] != 0xFFFF)) ++stray;
    EXPECT(stray == 0, "%zu cache elements outside the appended rows were written", stray);
}

}  // namespace

int main(int argc, char **argv) {
    if (!start("test_qk_norm_rope_kv_append", argc, argv)) return 0;
    try {
        for (int d : {64, 128})
            for (int group : {1, 4, 8})
                for (int batch : {1, 3, 8})
                    for (bool norm : {false, true}) run_case({batch, 2 * group, 2, d, 4096, norm, !norm});
        run_case({8, 32, 8, 128, 2048, true, false});   // Qwen3-8B heads
        run_case({2, 8, 1, 64, 131072, false, true});   // positions up to 131,071 with llama3 scaling
        run_case({2, 28, 4, 128, 40000, false, false}); // R1-Distill-Qwen-7B heads
        try {
            reset::QkNormRopeArgs a;
            a.cache.head_dim = 80;
            reset::qk_norm_rope_kv_append(a, nullptr);
            EXPECT(false, "head_dim 80 accepted");
        } catch (const reset::Error &e) {
            EXPECT(e.status() == RESET_ERR_UNSUPPORTED, "head_dim 80: status %d", int(e.status()));
        }
    } catch (const reset::Error &e) {
        std::fprintf(stderr, "FAIL: unexpected reset::Error %d: %s\n", static_cast<int>(e.status()), e.what());
        return 1;
    }
    std::printf("test_qk_norm_rope_kv_append: worst q relative L2 %.3g, worst k error in half BF16 ulps %.3g\n", g_worst_q,
                g_worst_kv);
    return finish("test_qk_norm_rope_kv_append");
}
