// test_qk_norm_rope_kv_append.cu — per-head q/k RMSNorm, RoPE (plain and with
// llama3 frequency scaling) and the KV-cache append, BF16 and FP8 E4M3 (kernels/
// qk_norm_rope_kv_append.cu) against a double reference: head_dim
// 16/32/64/128 (16 and 32: the project's small models, whose kernel puts
// 2 or 1 heads in a warp; head counts that leave a warp half used or mix q
// and k heads in one warp), GQA 1/4/8, batch 1..8, positions 0 to 131,071, with and without q/k norm,
// FP8 scales that saturate and that reach the subnormals.  Row -> slot maps:
// rows scattered over a larger cache, and prefill chunks (up to 512 rows of
// one slot at consecutive positions, two sequences interleaved) followed by
// attention_decode over the result (kernels/attention_decode.cu, causal
// lengths position + 1) against a double softmax over the cache as stored.
// The whole cache is poisoned (or, before a chunk, filled) first and checked
// afterwards: exactly the appended rows change.  Fresh random data every run
// (seed printed, argv[1] repeats it).
#include <algorithm>
#include <string>

#include "api/errors.h"
#include "gpu_test_util.h"
#include "kernels/qk_norm_rope_kv_append.h"

using namespace gpu_test;

namespace {

double g_worst_q = 0.0, g_worst_kv = 0.0, g_worst_attention = 0.0;

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
    reset::KvCacheType type = reset::KvCacheType::kBFloat16;
    float k_scale = 1.0f, v_scale = 1.0f;
    float attention_factor = 1.0f;  // YaRN's (QkNormRopeArgs::rope_attention_factor)
};

// Which cache slot and position each row writes, and what else happens.
struct Layout {
    std::vector<int32_t> slots;      // empty: row b writes slot b (no slot map passed)
    std::vector<int32_t> positions;  // empty: random, 0 and capacity - 1 at the edges
    int n_slots = 0;                 // slots in the cache when `slots` is given
    std::vector<int32_t> prefix_ends;  // per slot: positions [0, end) hold random values before the launch
    bool attend = false;             // then attention_decode over the result, lengths = position + 1
};

bool is_fp8(const Case &c) { return c.type == reset::KvCacheType::kFp8E4M3; }

// A case's rows on the device as both kernels take them (q/k norm only where the case has one).
reset::NewTokenInputs token_inputs(const Case &c, const DeviceBuffer &qkv, int64_t ld_qkv, const DeviceBuffer &q_norm,
                                   const DeviceBuffer &k_norm, const DeviceBuffer &inv_freq) {
    reset::NewTokenInputs t;
    t.qkv = qkv.as<float>();
    t.ld_qkv = ld_qkv;
    t.q_norm = c.qk_norm ? q_norm.as<float>() : nullptr;
    t.k_norm = c.qk_norm ? k_norm.as<float>() : nullptr;
    t.eps = 1e-6f;
    t.inv_freq = inv_freq.as<float>();
    t.rope_attention_factor = c.attention_factor;
    return t;
}

// The value a cache element stands for (the scale applied).
double cache_value(const Case &c, const std::vector<uint8_t> &cache, size_t i, bool is_k) {
    if (is_fp8(c)) return e4m3_to_double(cache[i]) * double(is_k ? c.k_scale : c.v_scale);
    uint16_t bits;
    std::memcpy(&bits, cache.data() + 2 * i, 2);
    return bf16_to_float(bits);
}

// attention_decode over the appended cache (each row attends to positions
// [0, position]) against a double softmax over the cache as stored and the
// kernel's own q.
void check_attention(const Case &c, const Layout &l, const std::vector<int32_t> &positions, const DeviceBuffer &d_q,
                     const std::vector<float> &q, const reset::KvCacheLayerView &view, const DeviceBuffer &d_slots,
                     const std::vector<uint8_t> &keys, const std::vector<uint8_t> &values) {
    const int d = c.head_dim, group = c.n_heads / c.n_kv_heads;
    std::vector<int32_t> lengths(positions.size());
    for (size_t b = 0; b < positions.size(); ++b) lengths[b] = positions[b] + 1;
    DeviceBuffer d_lengths(lengths.size() * 4), d_out(size_t(c.batch) * c.n_heads * d * 4);
    d_lengths.upload(lengths);
    d_out.poison();
    reset::AttentionDecodeArgs a;
    a.batch = c.batch;
    a.n_heads = c.n_heads;
    a.scale = 1.0f / std::sqrt(float(d));
    a.q = d_q.as<float>();
    a.cache = view;
    a.lengths = d_lengths.as<int32_t>();
    a.slots = l.slots.empty() ? nullptr : d_slots.as<int32_t>();
    a.out = d_out.as<float>();
    a.splits = reset::attention_decode_splits(c.batch, c.n_kv_heads, c.capacity);
    DeviceBuffer workspace(reset::attention_decode_workspace_bytes(c.batch, c.n_heads, d, a.splits));
    prepare_attention_workspace(workspace, c.batch, c.n_kv_heads);
    a.workspace = workspace.as<float>();
    a.workspace_bytes = workspace.bytes;
    reset::attention_decode(a, nullptr);
    CUDA_OK(cudaDeviceSynchronize());
    const std::vector<float> out = d_out.download<float>(size_t(c.batch) * c.n_heads * d);
    EXPECT(count_nan(out) == 0, "attention after append: %zu outputs NaN or unwritten", count_nan(out));
    std::vector<double> worst(size_t(c.batch), 0.0);
#if defined(_OPENMP)
#pragma omp parallel for schedule(dynamic)
#endif
    for (int b = 0; b < c.batch; ++b) {
        const int slot = l.slots.empty() ? b : l.slots[size_t(b)];
        for (int h = 0; h < c.n_heads; ++h) {
            const size_t base = (size_t(slot) * c.n_kv_heads + size_t(h / group)) * c.capacity * d;
            const float *qh = q.data() + (size_t(b) * c.n_heads + h) * d;
            std::vector<double> p(static_cast<size_t>(lengths[size_t(b)])), o(static_cast<size_t>(d), 0.0);
            double max_score = -INFINITY, total = 0.0;
            for (size_t t = 0; t < p.size(); ++t) {
                double dot = 0.0;
                for (int i = 0; i < d; ++i) dot += double(qh[i]) * cache_value(c, keys, base + t * d + size_t(i), true);
                p[t] = dot / std::sqrt(double(d));
                max_score = std::max(max_score, p[t]);
            }
            for (double &x : p) total += (x = std::exp(x - max_score));
            for (size_t t = 0; t < p.size(); ++t)
                for (int i = 0; i < d; ++i) o[size_t(i)] += p[t] / total * cache_value(c, values, base + t * d + size_t(i), false);
            const std::vector<float> got(out.begin() + (size_t(b) * c.n_heads + h) * d,
                                         out.begin() + (size_t(b) * c.n_heads + h + 1) * d);
            const double err = relative_l2(got, o);
            worst[size_t(b)] = std::max(worst[size_t(b)], std::isnan(err) ? 1.0 : err);
        }
    }
    const double w = *std::max_element(worst.begin(), worst.end());
    g_worst_attention = std::max(g_worst_attention, w);
    EXPECT(w <= 2e-5, "attention after append (batch %d, heads %d/%d, head_dim %d, %s cache): worst per-head relative L2 %.3g",
           c.batch, c.n_heads, c.n_kv_heads, d, is_fp8(c) ? "FP8" : "BF16", w);
}

void run_case(const Case &c, const Layout &l = {}) {
    const int d = c.head_dim, heads = c.n_heads + 2 * c.n_kv_heads;
    const int64_t ld = int64_t(heads) * d + 5;
    // Attention cases keep the scores moderate (without q/k norm the inputs reach ~80).
    const float max_sigma = l.attend && !c.qk_norm ? 1.5f : 20.0f;
    std::vector<float> qkv(static_cast<size_t>(c.batch * ld)), q_norm(static_cast<size_t>(d)), k_norm(static_cast<size_t>(d));
    for (auto &v : qkv) v = normal(uniform(0.1f, max_sigma));
    for (auto &v : q_norm) v = uniform(0.2f, 2.0f);
    for (auto &v : k_norm) v = uniform(0.2f, 2.0f);
    const std::vector<float> inv_freq = inverse_frequencies(d, c.llama3 ? 500000.0 : 1000000.0, c.llama3);
    std::vector<int32_t> positions = l.positions;
    if (positions.empty()) {
        positions.resize(static_cast<size_t>(c.batch));
        for (auto &p : positions) p = std::uniform_int_distribution<int32_t>(0, c.capacity - 1)(g_rng);
        positions[0] = 0;
        if (c.batch > 1) positions[size_t(c.batch) - 1] = c.capacity - 1;
    }
    const int n_slots = l.slots.empty() ? c.batch : l.n_slots;
    auto slot_of = [&](int b) { return l.slots.empty() ? b : l.slots[size_t(b)]; };

    const size_t element_bytes = size_t(reset::kv_cache_element_bytes(c.type));
    const size_t cache_elements = size_t(n_slots) * c.n_kv_heads * c.capacity * d;
    // The cache before the launch: NaN bytes (0xFF: NaN in BF16 and E4M3), random values in the prefix.
    std::vector<uint8_t> init_keys(cache_elements * element_bytes, 0xFF), init_values(init_keys);
    for (size_t slot = 0; slot < l.prefix_ends.size(); ++slot)
        for (int kv = 0; kv < c.n_kv_heads; ++kv)
            for (size_t i = 0; i < size_t(l.prefix_ends[slot]) * d; ++i)
                for (std::vector<uint8_t> *cache : {&init_keys, &init_values}) {
                    const size_t at = (slot * c.n_kv_heads + kv) * c.capacity * d + i;
                    const float x = normal(1.0f);
                    if (is_fp8(c)) {
                        (*cache)[at] = double_to_e4m3(x / (cache == &init_keys ? c.k_scale : c.v_scale));
                    } else {
                        const uint16_t bits = float_to_bf16(x);
                        std::memcpy(cache->data() + 2 * at, &bits, 2);
                    }
                }

    DeviceBuffer d_qkv(qkv.size() * 4), d_qn(size_t(d) * 4), d_kn(size_t(d) * 4), d_freq(inv_freq.size() * 4),
        d_pos(positions.size() * 4), d_slots(std::max<size_t>(1, l.slots.size()) * 4),
        d_q(size_t(c.batch) * c.n_heads * d * 4), d_keys(init_keys.size()), d_values(init_values.size());
    d_qkv.upload(qkv);
    d_qn.upload(q_norm);
    d_kn.upload(k_norm);
    d_freq.upload(inv_freq);
    d_pos.upload(positions);
    if (!l.slots.empty()) d_slots.upload(l.slots);
    d_q.poison();
    d_keys.upload(init_keys);
    d_values.upload(init_values);

    reset::QkNormRopeArgs a;
    a.batch = c.batch;
    a.n_heads = c.n_heads;
    a.token = token_inputs(c, d_qkv, ld, d_qn, d_kn, d_freq);
    a.positions = d_pos.as<int32_t>();
    a.slots = l.slots.empty() ? nullptr : d_slots.as<int32_t>();
    a.q_out = d_q.as<float>();
    a.cache.keys = d_keys.ptr;
    a.cache.values = d_values.ptr;
    a.cache.capacity = c.capacity;
    a.cache.n_kv_heads = c.n_kv_heads;
    a.cache.head_dim = d;
    a.cache.type = c.type;
    a.cache.k_scale = c.k_scale;
    a.cache.v_scale = c.v_scale;
    reset::qk_norm_rope_kv_append(a, nullptr);
    CUDA_OK(cudaDeviceSynchronize());
    const std::vector<float> q = d_q.download<float>(size_t(c.batch) * c.n_heads * d);
    const std::vector<uint8_t> keys = d_keys.download<uint8_t>(init_keys.size());
    const std::vector<uint8_t> values = d_values.download<uint8_t>(init_values.size());

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
            const double cosine = std::cos(angle) * c.attention_factor, sine = std::sin(angle) * c.attention_factor;
            const double a0 = x[size_t(i)], b0 = x[size_t(i + d / 2)];
            x[size_t(i)] = a0 * cosine - b0 * sine;
            x[size_t(i + d / 2)] = b0 * cosine + a0 * sine;
        }
        return x;
    };
    std::vector<bool> appended(cache_elements, false);
    for (int b = 0; b < c.batch; ++b) {
        const float *row = qkv.data() + size_t(b) * ld;
        const int position = positions[size_t(b)];
        for (int h = 0; h < c.n_heads; ++h) {
            const std::vector<double> ref = transform(row + size_t(h) * d, c.qk_norm ? q_norm.data() : nullptr, position);
            std::vector<float> got(q.begin() + (size_t(b) * c.n_heads + h) * d, q.begin() + (size_t(b) * c.n_heads + h + 1) * d);
            const double err = relative_l2(got, ref);
            g_worst_q = std::max(g_worst_q, std::isnan(err) ? 1.0 : err);
            EXPECT(err <= 2e-6, "q: batch %d head %d position %d: relative L2 %.3g", b, h, position, err);
        }
        for (int h = 0; h < 2 * c.n_kv_heads; ++h) {
            const bool is_k = h < c.n_kv_heads;
            const int kv = is_k ? h : h - c.n_kv_heads;
            const float *in = row + size_t(c.n_heads + h) * d;
            const std::vector<double> ref =
                is_k ? transform(in, c.qk_norm ? k_norm.data() : nullptr, position) : std::vector<double>(in, in + d);
            const size_t base = ((size_t(slot_of(b)) * c.n_kv_heads + kv) * c.capacity + position) * d;
            const std::vector<uint8_t> &cache = is_k ? keys : values;
            double largest = 0.0;
            for (double v : ref) largest = std::max(largest, std::fabs(v));
            for (int i = 0; i < d; ++i) {
                appended[base + size_t(i)] = true;
                if (is_fp8(c)) {
                    const uint8_t bits = cache[base + size_t(i)];
                    if (!is_k) {
                        // V: exactly e4m3(v / v_scale), the division in FP32.
                        const uint8_t want = double_to_e4m3(double(in[i] / c.v_scale));
                        EXPECT(bits == want, "fp8 v: batch %d kv head %d dim %d: %02x vs %02x (%.8g / %g)", b, kv, i,
                               unsigned(bits), unsigned(want), double(in[i]), double(c.v_scale));
                        continue;
                    }
                    // K: within half an E4M3 spacing of the exact k / k_scale (saturated to ±448),
                    // plus the FP32 steps' error.
                    const double exact = std::max(-448.0, std::min(448.0, ref[size_t(i)] / c.k_scale));
                    const double got = e4m3_to_double(bits);
                    const double err =
                        std::fabs(got - exact) / (0.5 * e4m3_quantum(exact) + 4e-6 * largest / c.k_scale);
                    g_worst_kv = std::max(g_worst_kv, std::isnan(err) ? 1e9 : err);
                    EXPECT(err <= 1.0, "fp8 k: batch %d kv head %d dim %d: %.8g vs %.8g", b, kv, i, got, exact);
                    continue;
                }
                uint16_t bits;
                std::memcpy(&bits, cache.data() + 2 * (base + size_t(i)), 2);
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
        if (!appended[i])
            for (size_t j = i * element_bytes; j < (i + 1) * element_bytes; ++j)
                if (keys[j] != init_keys[j] || values[j] != init_values[j]) {
                    ++stray;
                    break;
                }
    EXPECT(stray == 0, "%zu cache elements outside the appended rows were written", stray);
    if (l.attend) check_attention(c, l, positions, d_q, q, a.cache, d_slots, keys, values);
}

// A prefill chunk: `rows` consecutive positions from `first` of slot `slot`
// (of n_slots), the positions before it already in the cache, then attention.
Layout chunk_layout(int rows, int first, int slot, int n_slots) {
    Layout l;
    l.slots.assign(size_t(rows), slot);
    for (int i = 0; i < rows; ++i) l.positions.push_back(first + i);
    l.n_slots = n_slots;
    l.prefix_ends.assign(size_t(n_slots), 0);
    l.prefix_ends[size_t(slot)] = first;
    l.attend = true;
    return l;
}

// Rows mapped to slots: scattered over a larger cache, and prefill chunks.
void test_slot_maps(reset::KvCacheType type, float k_scale, float v_scale) {
    Layout scattered;
    scattered.slots = {3, 0, 6, 2, 5};
    scattered.n_slots = 7;
    run_case({5, 8, 2, 128, 1024, true, false, type, k_scale, v_scale}, scattered);
    // The same with attention: each row's slot holds the positions before its own.
    scattered.attend = true;
    scattered.positions = {0, 1023, 517, 2, 64};
    scattered.prefix_ends.assign(7, 0);
    for (size_t b = 0; b < 5; ++b)
        scattered.prefix_ends[size_t(scattered.slots[b])] = scattered.positions[b];
    run_case({5, 8, 2, 64, 1024, false, true, type, k_scale, v_scale}, scattered);
    run_case({5, 8, 2, 16, 1024, true, false, type, k_scale, v_scale}, scattered);
    run_case({5, 8, 4, 32, 1024, true, false, type, k_scale, v_scale}, scattered);  // reset-arith-4m heads
    for (int rows : {1, 64, 512}) {
        const int capacity = rows + 700;
        const int first = std::uniform_int_distribution<int>(1, capacity - rows)(g_rng);
        run_case({rows, 8, 2, 128, capacity, true, false, type, k_scale, v_scale}, chunk_layout(rows, first, 1, 2));
        run_case({rows, 8, 4, 32, capacity, true, false, type, k_scale, v_scale}, chunk_layout(rows, first, 1, 2));
        run_case({rows, 8, 2, 16, capacity, false, true, type, k_scale, v_scale}, chunk_layout(rows, first, 0, 2));
    }
    run_case({100, 8, 2, 64, 300, false, true, type, k_scale, v_scale}, chunk_layout(100, 0, 0, 3));  // a prompt's first chunk
    run_case({100, 8, 4, 32, 300, true, false, type, k_scale, v_scale}, chunk_layout(100, 0, 0, 3));
    run_case({100, 8, 8, 16, 300, true, false, type, k_scale, v_scale}, chunk_layout(100, 0, 2, 3));
    run_case({48, 32, 8, 128, 4096, true, false, type, k_scale, v_scale}, chunk_layout(48, 4000, 2, 3));  // Qwen3-8B heads
    // Two sequences' chunks interleaved in one launch (slots 1 and 0), each on its own prefix.
    Layout two;
    two.n_slots = 2;
    two.attend = true;
    two.prefix_ends = {0, 37};
    for (int i = 0; i < 40; ++i) {
        two.slots.push_back(i % 2 ? 0 : 1);
        two.positions.push_back(i % 2 ? i / 2 : 37 + i / 2);
    }
    run_case({40, 16, 4, 128, 512, true, false, type, k_scale, v_scale}, two);
    run_case({40, 8, 4, 32, 512, true, false, type, k_scale, v_scale}, two);
    run_case({40, 8, 1, 16, 512, true, false, type, k_scale, v_scale}, two);
}

// AttentionDecodeArgs::new_token: attention_decode taking a decode step's new token from the QKV output itself
// against qk_norm_rope_kv_append followed by attention_decode (both checked against double
// references above), on the same random inputs and cache: the outputs and the whole cache must be
// the same bits (the fused kernel runs the same FP32 operations in the same order,
// kernels/qk_norm_rope_rules.cuh), whatever the row's position in its block, chunk and split.
int g_new_token_cases = 0;

void check_new_token_in_attention(const Case &c, const std::vector<int32_t> &positions) {
    const int d = c.head_dim, heads = c.n_heads + 2 * c.n_kv_heads;
    const int64_t ld = int64_t(heads) * d + 3;
    std::vector<float> qkv(static_cast<size_t>(c.batch * ld)), q_norm(static_cast<size_t>(d)), k_norm(static_cast<size_t>(d));
    // Moderate inputs without the norm keep the scores' softmax from being one-hot.
    for (auto &v : qkv) v = normal(c.qk_norm ? uniform(0.1f, 20.0f) : uniform(0.1f, 1.5f));
    for (auto &v : q_norm) v = uniform(0.2f, 2.0f);
    for (auto &v : k_norm) v = uniform(0.2f, 2.0f);
    const std::vector<float> inv_freq = inverse_frequencies(d, c.llama3 ? 500000.0 : 1000000.0, c.llama3);
    const size_t element_bytes = size_t(reset::kv_cache_element_bytes(c.type));
    const size_t cache_elements = size_t(c.batch) * c.n_kv_heads * c.capacity * d;
    // Random cache contents everywhere (the new rows' old contents too: the fused kernel must not
    // attend to them).
    std::vector<uint8_t> init_keys(cache_elements * element_bytes), init_values(init_keys.size());
    for (auto &byte : init_keys) byte = uint8_t(g_rng());
    for (auto &byte : init_values) byte = uint8_t(g_rng());
    if (!is_fp8(c))  // BF16: finite values of moderate size (random bytes would make NaN and huge ones)
        for (std::vector<uint8_t> *cache : {&init_keys, &init_values})
            for (size_t i = 0; i < cache_elements; ++i) {
                const uint16_t bits = float_to_bf16(normal(1.0f));
                std::memcpy(cache->data() + 2 * i, &bits, 2);
            }
    else  // E4M3: no NaN bytes (0x7F, 0xFF)
        for (std::vector<uint8_t> *cache : {&init_keys, &init_values})
            for (auto &byte : *cache)
                if ((byte & 0x7F) == 0x7F) byte = 0x3F;
    std::vector<int32_t> lengths(positions);
    for (auto &length : lengths) ++length;

    DeviceBuffer d_qkv(qkv.size() * 4), d_qn(size_t(d) * 4), d_kn(size_t(d) * 4), d_freq(inv_freq.size() * 4),
        d_pos(positions.size() * 4), d_lengths(lengths.size() * 4), d_q(size_t(c.batch) * c.n_heads * d * 4),
        d_keys(init_keys.size()), d_values(init_values.size()), d_out(size_t(c.batch) * c.n_heads * d * 4);
    d_qkv.upload(qkv);
    d_qn.upload(q_norm);
    d_kn.upload(k_norm);
    d_freq.upload(inv_freq);
    d_pos.upload(positions);
    d_lengths.upload(lengths);

    reset::KvCacheLayerView view;
    view.keys = d_keys.ptr;
    view.values = d_values.ptr;
    view.capacity = c.capacity;
    view.n_kv_heads = c.n_kv_heads;
    view.head_dim = d;
    view.type = c.type;
    view.k_scale = c.k_scale;
    view.v_scale = c.v_scale;
    reset::AttentionDecodeArgs attention;
    attention.batch = c.batch;
    attention.n_heads = c.n_heads;
    attention.scale = 1.0f / std::sqrt(float(d));
    attention.cache = view;
    attention.lengths = d_lengths.as<int32_t>();
    attention.out = d_out.as<float>();
    attention.splits = reset::attention_decode_splits(c.batch, c.n_kv_heads, c.capacity);
    DeviceBuffer workspace(reset::attention_decode_workspace_bytes(c.batch, c.n_heads, d, attention.splits));
    prepare_attention_workspace(workspace, c.batch, c.n_kv_heads);
    attention.workspace = workspace.as<float>();
    attention.workspace_bytes = workspace.bytes;

    // The pair.
    d_keys.upload(init_keys);
    d_values.upload(init_values);
    d_q.poison();
    d_out.poison();
    reset::QkNormRopeArgs rope;
    rope.batch = c.batch;
    rope.n_heads = c.n_heads;
    rope.token = token_inputs(c, d_qkv, ld, d_qn, d_kn, d_freq);
    rope.positions = d_pos.as<int32_t>();
    rope.q_out = d_q.as<float>();
    rope.cache = view;
    reset::qk_norm_rope_kv_append(rope, nullptr);
    attention.q = d_q.as<float>();
    reset::attention_decode(attention, nullptr);
    CUDA_OK(cudaDeviceSynchronize());
    const std::vector<float> want = d_out.download<float>(size_t(c.batch) * c.n_heads * d);
    const std::vector<uint8_t> want_keys = d_keys.download<uint8_t>(init_keys.size());
    const std::vector<uint8_t> want_values = d_values.download<uint8_t>(init_values.size());

    // The fused launch on the same cache as before, q poisoned and not passed.
    d_keys.upload(init_keys);
    d_values.upload(init_values);
    d_q.poison();
    d_out.poison();
    attention.q = nullptr;
    attention.new_token = rope.token;
    reset::attention_decode(attention, nullptr);
    CUDA_OK(cudaDeviceSynchronize());
    const std::vector<float> got = d_out.download<float>(want.size());
    const std::vector<uint8_t> got_keys = d_keys.download<uint8_t>(init_keys.size());
    const std::vector<uint8_t> got_values = d_values.download<uint8_t>(init_values.size());

    EXPECT(count_nan(want) == 0, "new token: the pair left %zu outputs NaN or unwritten", count_nan(want));
    size_t differ = 0, first = want.size();
    for (size_t i = 0; i < want.size(); ++i)
        if (std::memcmp(&want[i], &got[i], 4) != 0) {
            ++differ;
            first = std::min(first, i);
        }
    EXPECT(differ == 0,
           "new token (batch %d, heads %d/%d, head_dim %d, %s cache, norm %d, splits %d): %zu of %zu outputs differ "
           "from the pair's, the first [%zu] %.9g vs %.9g",
           c.batch, c.n_heads, c.n_kv_heads, d, is_fp8(c) ? "FP8" : "BF16", int(c.qk_norm), attention.splits, differ,
           want.size(), first, first < want.size() ? double(got[first]) : 0.0,
           first < want.size() ? double(want[first]) : 0.0);
    // The pair changes exactly the new rows (run_case checks it), so the same bytes mean the same rows.
    const bool same_cache = got_keys == want_keys && got_values == want_values;
    EXPECT(same_cache, "new token (batch %d, heads %d/%d, head_dim %d, %s cache): the cache differs from the pair's",
           c.batch, c.n_heads, c.n_kv_heads, d, is_fp8(c) ? "FP8" : "BF16");
    ++g_new_token_cases;
}

void test_new_token_in_attention() {
    // Positions at the edges of a warp's block (16), a CTA's chunk (64) and a split, the first, the last.
    const std::vector<int32_t> edges = {0, 1, 14, 15, 16, 17, 63, 64, 65, 127, 128, 1023};
    for (reset::KvCacheType type : {reset::KvCacheType::kBFloat16, reset::KvCacheType::kFp8E4M3})
        for (int d : {16, 32, 64, 128})
            for (int group : {1, 4, 8})
                for (bool norm : {false, true}) {
                    const float scale = type == reset::KvCacheType::kFp8E4M3 ? 0.15f : 1.0f;
                    // Every edge position, one row each (batch 8 at most per launch: the decode step's).
                    for (size_t first = 0; first < edges.size(); first += 8) {
                        const std::vector<int32_t> rows(edges.begin() + long(first),
                                                        edges.begin() + long(std::min(edges.size(), first + 8)));
                        check_new_token_in_attention(
                            {int(rows.size()), 2 * group, 2, d, 1024, norm, !norm, type, scale, scale * 1.5f},
                            rows);
                    }
                }
    // Qwen3-8B heads at long contexts (many splits, several merge rounds), with YaRN's factor.
    const float yarn = 1.1386294f;
    for (reset::KvCacheType type : {reset::KvCacheType::kBFloat16, reset::KvCacheType::kFp8E4M3}) {
        check_new_token_in_attention({1, 32, 8, 128, 32768, true, false, type, 1.0f, 1.0f}, {32767});
        check_new_token_in_attention({1, 32, 8, 128, 32768, true, false, type, 1.0f, 1.0f, yarn}, {20000});
        check_new_token_in_attention({8, 32, 8, 128, 4096, true, false, type}, {0, 4095, 1000, 1023, 1024, 17, 2048, 3333});
        check_new_token_in_attention({3, 64, 8, 128, 8192, true, false, type}, {8191, 5000, 1});  // Qwen3-32B heads
        check_new_token_in_attention({2, 28, 4, 128, 4096, false, false, type}, {4000, 77});      // R1-Distill-Qwen-7B
    }
}

void test_rejections() {
    DeviceBuffer buffer(1 << 16);
    auto good = [&] {
        reset::QkNormRopeArgs a;
        a.batch = 1;
        a.n_heads = 2;
        // Disjoint parts of one zeroed buffer: qkv and inv_freq (reads), q_out, keys, values, positions.
        a.token.qkv = buffer.as<float>();
        a.token.ld_qkv = 4 * 64;
        a.token.inv_freq = buffer.as<float>();
        a.q_out = buffer.as<float>() + 1024;
        a.cache.keys = buffer.as<float>() + 4096;
        a.cache.values = buffer.as<float>() + 8192;
        a.positions = buffer.as<int32_t>() + 12288;
        a.cache.capacity = 8;
        a.cache.n_kv_heads = 1;
        a.cache.head_dim = 64;
        return a;
    };
    for (int head_dim : {0, 8, 24, 48, 80, 96, 256}) {
        const std::string message = expect_error(RESET_ERR_UNSUPPORTED, "unsupported head_dim", [&] {
            auto a = good();
            a.cache.head_dim = head_dim;
            reset::qk_norm_rope_kv_append(a, nullptr);
        });
        EXPECT(message.find("16, 32, 64 and 128") != std::string::npos, "head_dim %d: message \"%s\"", head_dim,
               message.c_str());
    }
    expect_error(RESET_ERR_INVALID_ARGUMENT, "batch 65536", [&] {
        auto a = good();
        a.batch = 65536;
        reset::qk_norm_rope_kv_append(a, nullptr);
    });
    expect_error(RESET_ERR_INVALID_ARGUMENT, "ld_qkv too small", [&] {
        auto a = good();
        a.token.ld_qkv = 4 * 64 - 1;
        reset::qk_norm_rope_kv_append(a, nullptr);
    });
    expect_error(RESET_ERR_INVALID_ARGUMENT, "unknown cache type", [&] {
        auto a = good();
        a.cache.type = static_cast<reset::KvCacheType>(7);
        reset::qk_norm_rope_kv_append(a, nullptr);
    });
    for (float scale : {0.0f, -1.0f, NAN, INFINITY})
        expect_error(RESET_ERR_INVALID_ARGUMENT, "bad fp8 scale", [&] {
            auto a = good();
            a.cache.type = reset::KvCacheType::kFp8E4M3;
            a.cache.v_scale = scale;
            reset::qk_norm_rope_kv_append(a, nullptr);
        });
    {
        // The good arguments do launch (q/k/v from a zeroed buffer, position 0), at every head_dim.
        CUDA_OK(cudaMemset(buffer.ptr, 0, buffer.bytes));
        for (int head_dim : {16, 32, 64, 128}) {
            auto a = good();
            a.cache.head_dim = head_dim;
            a.token.ld_qkv = 4 * head_dim;
            reset::qk_norm_rope_kv_append(a, nullptr);
        }
        CUDA_OK(cudaDeviceSynchronize());
    }
}

}  // namespace

int main(int argc, char **argv) {
    if (!start("test_qk_norm_rope_kv_append", argc, argv)) return 0;
    try {
        // RESET_GPU_TEST_ONLY=new_token: only the fused new-token cases (for the sanitizers' runs).
        const char *only = std::getenv("RESET_GPU_TEST_ONLY");
        if (only && std::string(only) == "new_token") {
            test_new_token_in_attention();
            std::printf("test_qk_norm_rope_kv_append: %d new-token cases against the pair\n", g_new_token_cases);
            return finish("test_qk_norm_rope_kv_append");
        }
        for (int d : {16, 32, 64, 128})
            for (int group : {1, 4, 8})
                for (int batch : {1, 3, 8})
                    for (bool norm : {false, true}) run_case({batch, 2 * group, 2, d, 4096, norm, !norm});
        run_case({8, 32, 8, 128, 2048, true, false});   // Qwen3-8B heads
        run_case({2, 8, 1, 64, 131072, false, true});   // positions up to 131,071 with llama3 scaling
        run_case({2, 28, 4, 128, 40000, false, false}); // R1-Distill-Qwen-7B heads
        run_case({8, 8, 4, 32, 4096, true, false});     // reset-arith-4m heads
        run_case({2, 8, 1, 32, 131072, false, true});   // head_dim 32 at positions up to 131,071
        run_case({2, 8, 1, 16, 131072, true, true});    // head_dim 16 there too
        // YaRN's attention factor (factor 4: 0.1 ln 4 + 1) on the cosines and sines, every head_dim, BF16
        // and FP8, positions up to 131,071 (Qwen3 at 4 x 32,768).
        const float yarn = 1.1386294f;
        for (int d : {16, 32, 64, 128})
            run_case({3, 8, 2, d, 131072, true, false, reset::KvCacheType::kBFloat16, 1.0f, 1.0f, yarn});
        run_case({3, 8, 2, 128, 131072, true, false, reset::KvCacheType::kFp8E4M3, 0.15f, 0.2f, yarn});
        run_case({3, 5, 1, 16, 512, true, false, reset::KvCacheType::kBFloat16, 1.0f, 1.0f, yarn});  // 7 heads
        // head_dim 16 (8 heads per 128-thread block, 2 per warp) and 32 with head counts that leave
        // a warp or block partly past the last head and put a q and a k head (or k and v) in one warp.
        for (int d : {16, 32}) {
            run_case({3, 5, 1, d, 512, true, false});   // 7 heads
            run_case({3, 3, 3, d, 512, true, true});    // 9 heads
            run_case({2, 1, 1, d, 512, false, false});  // 3 heads
        }
        // FP8 E4M3 cache: scale 1 (the default), and scales that make some elements saturate
        // (no norm: inputs reach ~80, / 0.15 > 448) or land in the subnormals (x 40).
        for (int d : {16, 32, 64, 128})
            for (bool norm : {false, true})
                for (float scale : {1.0f, 0.15f, 40.0f})
                    run_case({3, 8, 2, d, 4096, norm, !norm, reset::KvCacheType::kFp8E4M3, scale, scale * 1.5f});
        run_case({8, 32, 8, 128, 2048, true, false, reset::KvCacheType::kFp8E4M3});  // Qwen3-8B heads
        run_case({8, 8, 4, 32, 2048, true, false, reset::KvCacheType::kFp8E4M3});    // reset-arith-4m heads
        run_case({3, 5, 1, 16, 512, true, false, reset::KvCacheType::kFp8E4M3, 0.15f, 0.2f});  // 7 heads
        // Slot maps and prefill chunks (append, then attention over the result), BF16 and FP8.
        test_slot_maps(reset::KvCacheType::kBFloat16, 1.0f, 1.0f);
        test_slot_maps(reset::KvCacheType::kFp8E4M3, 1.0f, 1.0f);
        test_slot_maps(reset::KvCacheType::kFp8E4M3, 0.05f, 0.3f);
        test_new_token_in_attention();
        test_rejections();
    } catch (const reset::Error &e) {
        std::fprintf(stderr, "FAIL: unexpected reset::Error %d: %s\n", static_cast<int>(e.status()), e.what());
        return 1;
    }
    std::printf("test_qk_norm_rope_kv_append: worst q relative L2 %.3g, worst k error in half ulps (BF16 or E4M3) %.3g, "
                "worst attention-after-append relative L2 %.3g; %d new-token cases against the pair\n",
                g_worst_q, g_worst_kv, g_worst_attention, g_new_token_cases);
    return finish("test_qk_norm_rope_kv_append");
}
