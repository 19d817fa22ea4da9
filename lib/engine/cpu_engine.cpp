// cpu_engine.cpp — the FP32 reference decoder (Qwen3, Qwen2, Llama).
//
// One token through one layer:
//   h = RMSNorm(x);  q, k, v = Wq h (+b), Wk h (+b), Wv h (+b)
//   qwen3: q, k = RMSNorm per head;  q, k = RoPE(q, k, position)
//   attention over the cache (grouped-query);  x += Wo attn (+b)
//   h = RMSNorm(x);  x += Wdown (silu(Wgate h) * Wup h)
// and at the end logits = lm_head RMSNorm(x).
#include "engine/cpu_engine.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <new>

#include "api/errors.h"
#include "model/weights.h"
#include "rules/nvfp4.h"
#include "util/threads.h"

namespace reset {

// ---------------------------------------------------------------------------
// The KV cache
// ---------------------------------------------------------------------------

std::vector<KvCacheScale> kv_cache_scales(const ModelWeights &weights) {
    std::vector<KvCacheScale> scales;
    for (const LayerWeights &layer : weights.layers) scales.push_back({layer.k_cache_scale, layer.v_cache_scale});
    return scales;
}

KvCache::KvCache(const ModelConfig &config, int32_t sequences, int32_t capacity, reset_kv_cache type,
                 std::vector<KvCacheScale> fp8_scales)
    : layers_(config.n_layers), sequences_(sequences), capacity_(capacity),
      kv_dim_(config.n_kv_heads * config.head_dim), head_dim_(config.head_dim), type_(type),
      scales_(size_t(config.n_layers)) {
    if (type == RESET_KV_CACHE_FP8 && !fp8_scales.empty()) {
        if (fp8_scales.size() != scales_.size())
            fail(RESET_ERR_INTERNAL, "KvCache: ", fp8_scales.size(), " FP8 scales for ", layers_, " layers");
        scales_ = std::move(fp8_scales);
    }
    const uint64_t elements = uint64_t(layers_) * uint64_t(sequences_) * uint64_t(capacity_) * uint64_t(kv_dim_);
    try {
        keys_.assign(elements, 0.0f);
        values_.assign(elements, 0.0f);
    } catch (const std::bad_alloc &) {
        fail(RESET_ERR_OUT_OF_MEMORY, "the KV cache needs ", 2 * elements * sizeof(float) / (1 << 20),
             " MiB of host memory (", sequences, " sequences x ", capacity, " tokens); lower max_context or sequences");
    }
}

size_t KvCache::offset(int32_t layer, int32_t sequence, int32_t position) const {
    return ((size_t(layer) * sequences_ + size_t(sequence)) * capacity_ + size_t(position)) * kv_dim_;
}

float *KvCache::mutable_keys(int32_t layer, int32_t sequence, int32_t position) {
    return keys_.data() + offset(layer, sequence, position);
}

float *KvCache::mutable_values(int32_t layer, int32_t sequence, int32_t position) {
    return values_.data() + offset(layer, sequence, position);
}

const float *KvCache::keys(int32_t layer, int32_t sequence, int32_t position) const {
    return keys_.data() + offset(layer, sequence, position);
}

const float *KvCache::values(int32_t layer, int32_t sequence, int32_t position) const {
    return values_.data() + offset(layer, sequence, position);
}

namespace {

// What the cache keeps of x: the value the CUDA backend's append kernel stores
// (qk_norm_rope_kv_append.cu: __float2bfloat16_rn, or FP8 E4M3 round-to-nearest-even
// of x / scale with saturation to +-448, read back as stored · scale; FP32 keeps x).
float round_to_bf16(float x) { return bf16_to_float(float_to_bf16(x)); }

float round_to_fp8(float x) {
    if (x != x) return x;
    const float magnitude = nvfp4::e4m3_to_float(nvfp4::float_to_e4m3(std::fabs(x)));
    return x < 0.0f ? -magnitude : magnitude;
}

template <typename Round>
void store_rounded(const float *k, const float *v, int32_t n, float *keys_out, float *values_out, Round round) {
    for (int32_t i = 0; i < n; ++i) {
        keys_out[i] = round(k[i]);
        values_out[i] = round(v[i]);
    }
}

}  // namespace

void KvCache::store(int32_t layer, int32_t sequence, int32_t position, const float *k, const float *v) {
    float *keys_out = mutable_keys(layer, sequence, position), *values_out = mutable_values(layer, sequence, position);
    // The type is chosen once per row, not per element.
    switch (type_) {
    case RESET_KV_CACHE_BF16:
        store_rounded(k, v, kv_dim_, keys_out, values_out, round_to_bf16);
        break;
    case RESET_KV_CACHE_FP8: {
        const KvCacheScale s = scales_[size_t(layer)];
        for (int32_t i = 0; i < kv_dim_; ++i) {
            keys_out[i] = round_to_fp8(k[i] / s.k) * s.k;
            values_out[i] = round_to_fp8(v[i] / s.v) * s.v;
        }
        break;
    }
    default:
        store_rounded(k, v, kv_dim_, keys_out, values_out, [](float x) { return x; });
    }
}

void KvCache::copy_sequence(int32_t from, int32_t to, int32_t length) {
    for (int32_t layer = 0; layer < layers_; ++layer) {
        std::copy_n(keys(layer, from, 0), size_t(length) * kv_dim_, mutable_keys(layer, to, 0));
        std::copy_n(values(layer, from, 0), size_t(length) * kv_dim_, mutable_values(layer, to, 0));
    }
}

size_t KvCache::kv_element_bytes() const {
    return type_ == RESET_KV_CACHE_FP8 ? 1 : type_ == RESET_KV_CACHE_BF16 ? 2 : 4;
}

namespace {

// A cached value in its type's encoding (the value is already rounded to the type).  FP8: the
// byte of x / scale, the one the append kernel stored (x is e4m3 · scale rounded to FP32, and
// dividing it by the scale lands within an FP32 ulp of the E4M3 value, which rounds back to it).
void encode_element(reset_kv_cache type, float x, float scale, uint8_t *out) {
    if (type == RESET_KV_CACHE_BF16) {
        const uint16_t bits = float_to_bf16(x);
        std::memcpy(out, &bits, 2);
    } else if (type == RESET_KV_CACHE_FP8) {
        // The sign bit even of a zero: the append kernel's conversion keeps it (a tiny negative K is 0x80).
        x /= scale;
        *out = x != x ? uint8_t(0x7f) : uint8_t((std::signbit(x) ? 0x80 : 0) | nvfp4::float_to_e4m3(std::fabs(x)));
    } else {
        std::memcpy(out, &x, 4);
    }
}

float decode_element(reset_kv_cache type, float scale, const uint8_t *in) {
    if (type == RESET_KV_CACHE_BF16) {
        uint16_t bits;
        std::memcpy(&bits, in, 2);
        return bf16_to_float(bits);
    }
    if (type == RESET_KV_CACHE_FP8) return nvfp4::e4m3_to_float(*in) * scale;
    float x;
    std::memcpy(&x, in, 4);
    return x;
}

}  // namespace

size_t KvCache::file_offset(int32_t i, int32_t position, int32_t length) const {
    // Element i of a position is head i / head_dim, component i % head_dim.
    return ((size_t(i / head_dim_) * size_t(length) + size_t(position)) * size_t(head_dim_) + size_t(i % head_dim_)) *
           kv_element_bytes();
}

void KvCache::export_layer(int32_t layer, int32_t sequence, int32_t length, uint8_t *keys_out,
                           uint8_t *values_out) const {
    for (int32_t position = 0; position < length; ++position) {
        const float *k = keys(layer, sequence, position), *v = values(layer, sequence, position);
        for (int32_t i = 0; i < kv_dim_; ++i) {
            const size_t at = file_offset(i, position, length);
            encode_element(type_, k[i], scales_[size_t(layer)].k, keys_out + at);
            encode_element(type_, v[i], scales_[size_t(layer)].v, values_out + at);
        }
    }
}

void KvCache::import_layer(int32_t layer, int32_t sequence, int32_t length, const uint8_t *keys_in,
                           const uint8_t *values_in) {
    for (int32_t position = 0; position < length; ++position) {
        float *k = mutable_keys(layer, sequence, position), *v = mutable_values(layer, sequence, position);
        for (int32_t i = 0; i < kv_dim_; ++i) {
            const size_t at = file_offset(i, position, length);
            k[i] = decode_element(type_, scales_[size_t(layer)].k, keys_in + at);
            v[i] = decode_element(type_, scales_[size_t(layer)].v, values_in + at);
        }
    }
}

ForwardScratch::ForwardScratch(const ModelConfig &c, int32_t capacity)
    : x(size_t(kCpuForwardChunk) * c.hidden_size), normed(x.size()),
      q(size_t(kCpuForwardChunk) * c.n_heads * c.head_dim), k(size_t(kCpuForwardChunk) * c.n_kv_heads * c.head_dim),
      v(k.size()), attention(q.size()), projected(x.size()), gate(size_t(kCpuForwardChunk) * c.intermediate_size),
      up(gate.size()), padded(), scores(size_t(c.n_heads) * size_t(capacity)) {}

// ---------------------------------------------------------------------------
// Building blocks
// ---------------------------------------------------------------------------

namespace {

int thread_count(const LoadedModel &model) { return openmp_threads(model.threads); }

// RMSNorm as Hugging Face computes it in FP32: x * rsqrt(mean(x^2) + eps) * w.
void rms_norm(const float *x, const float *weight, int64_t n, double eps, float *out) {
    float sum_squares = 0.0f;
    for (int64_t i = 0; i < n; ++i) sum_squares += x[i] * x[i];
    const float inverse = 1.0f / std::sqrt(sum_squares / static_cast<float>(n) + static_cast<float>(eps));
    for (int64_t i = 0; i < n; ++i) out[i] = weight[i] * (x[i] * inverse);
}

// RoPE, "rotate half" layout: pairs (i, i + d/2) rotate by position * inv_freq[i].  YaRN scales the
// cosine and sine by its attention factor (1 otherwise: the product is then exact), in FP32 as
// transformers does.
void apply_rope(float *head, int32_t head_dim, int32_t position, const std::vector<float> &inv_freq,
                float attention_factor) {
    const int32_t half = head_dim / 2;
    for (int32_t i = 0; i < half; ++i) {
        // The angle in double: FP32 position * frequency loses digits at long contexts.
        const double angle = double(position) * double(inv_freq[size_t(i)]);
        const float c = static_cast<float>(std::cos(angle)) * attention_factor,
                    s = static_cast<float>(std::sin(angle)) * attention_factor;
        const float a = head[i], b = head[i + half];
        head[i] = a * c - b * s;
        head[i + half] = b * c + a * s;
    }
}

// Below this many multiply-adds a matrix is done on one thread: waking the
// team costs more than it saves, and a busy core stalls every other thread at
// the join (decode of a small model collapsed from ~110 to ~5 tokens/s when
// another process took a core).
constexpr int64_t kParallelMinimumWork = int64_t(1) << 20;

// One row: 8 independent partial sums, so the compiler can keep them in
// vector registers (the loop-carried dependence of a single sum cannot be
// vectorised without reassociating, which FP32 reference code must not do
// silently).  The order is fixed, so results are reproducible.
float bf16_row_dot(const uint16_t *row, const float *x, int64_t n) {
    constexpr int kLanes = 8;
    float partial[kLanes] = {};
    int64_t c = 0;
    for (; c + kLanes <= n; c += kLanes)
        for (int lane = 0; lane < kLanes; ++lane) partial[lane] += bf16_to_float(row[c + lane]) * x[c + lane];
    float sum = 0.0f;
    for (int lane = 0; lane < kLanes; ++lane) sum += partial[lane];
    for (; c < n; ++c) sum += bf16_to_float(row[c]) * x[c];
    return sum;
}

// y_t = W x_t for `tokens` rows of x (stride ldx) and y (stride ldy): each weight row is read
// once for all of them (it stays in the cache), each (row, token) sum as bf16_row_dot makes it.
void bf16_matmul(const Bf16Matrix &m, const float *x, int64_t ldx, int32_t tokens, float *y, int64_t ldy,
                 int threads) {
    const bool parallel = m.rows * m.cols * tokens >= kParallelMinimumWork;
#pragma omp parallel for schedule(static) num_threads(threads) if (parallel)
    for (int64_t r = 0; r < m.rows; ++r)
        for (int32_t t = 0; t < tokens; ++t) y[t * ldy + r] = bf16_row_dot(m.data + r * m.cols, x + t * ldx, m.cols);
}

float silu(float x) { return x / (1.0f + std::exp(-x)); }

}  // namespace

void cpu_linear_rows(const LoadedModel &model, const Linear &linear, const float *x, int64_t ldx, int32_t tokens,
                     float *y, int64_t ldy, std::vector<float> &padded) {
    if (linear.format == LinearFormat::BF16) {
        bf16_matmul(linear.dense, x, ldx, tokens, y, ldy, thread_count(model));
    } else {
        const float *input = x;
        int64_t ld_input = ldx;
        if (linear.padded_in != linear.in_features) {
            padded.assign(size_t(tokens) * size_t(linear.padded_in), 0.0f);  // zero padding along K is exact
            for (int32_t t = 0; t < tokens; ++t)
                std::copy_n(x + t * ldx, linear.in_features, padded.begin() + t * linear.padded_in);
            input = padded.data();
            ld_input = linear.padded_in;
        }
        const Nvfp4Weight view = linear.nvfp4_view();
        if (model.weights_format == RESET_WEIGHTS_NVFP4_W4A4)
            nvfp4_matmul_w4a4(view, input, ld_input, tokens, y, ldy, model.threads);
        else nvfp4_matmul_w4a16(view, input, ld_input, tokens, y, ldy, model.w4a16_activations, model.threads);
    }
    for (int32_t t = 0; t < tokens; ++t)
        for (size_t i = 0; i < linear.bias.size(); ++i) y[t * ldy + int64_t(i)] += linear.bias[i];
}

void cpu_linear(const LoadedModel &model, const Linear &linear, const float *x, float *y, std::vector<float> &padded) {
    cpu_linear_rows(model, linear, x, linear.in_features, 1, y, linear.out_features, padded);
}

// ---------------------------------------------------------------------------
// The forward pass of a chunk of tokens
// ---------------------------------------------------------------------------

void cpu_forward_chunk(const LoadedModel &model, const int32_t *tokens, int32_t n, int32_t position,
                       int32_t sequence, KvCache &cache, ForwardScratch &s, float *logits,
                       const std::function<void()> &between_layers) {
    if (n < 1 || n > kCpuForwardChunk)
        fail(RESET_ERR_INTERNAL, "cpu_forward_chunk: ", n, " tokens (1..", kCpuForwardChunk, ")");
    const ModelConfig &c = model.config;
    const ModelWeights &w = model.weights;
    const int64_t hidden = c.hidden_size, head_dim = c.head_dim;
    const int64_t q_dim = int64_t(c.n_heads) * head_dim, kv_stride = int64_t(c.n_kv_heads) * head_dim;
    const int64_t inter = c.intermediate_size;
    const int32_t group = c.n_heads / c.n_kv_heads;  // query heads per KV head
    const float softmax_scale = 1.0f / std::sqrt(static_cast<float>(head_dim));

    for (int32_t t = 0; t < n; ++t) {
        const uint16_t *embedding = w.embed.data + int64_t(tokens[t]) * hidden;
        for (int64_t i = 0; i < hidden; ++i) s.x[size_t(t * hidden + i)] = bf16_to_float(embedding[i]);
    }

    for (int32_t l = 0; l < c.n_layers; ++l) {
        if (between_layers) between_layers();
        const LayerWeights &layer = w.layers[size_t(l)];

        // Attention block.
        for (int32_t t = 0; t < n; ++t)
            rms_norm(s.x.data() + t * hidden, layer.input_norm.data(), hidden, c.rms_norm_eps, s.normed.data() + t * hidden);
        cpu_linear_rows(model, layer.q, s.normed.data(), hidden, n, s.q.data(), q_dim, s.padded);
        cpu_linear_rows(model, layer.k, s.normed.data(), hidden, n, s.k.data(), kv_stride, s.padded);
        cpu_linear_rows(model, layer.v, s.normed.data(), hidden, n, s.v.data(), kv_stride, s.padded);
        // Every token's K and V go into the cache first: a token's attention reads only the
        // positions up to its own, as when the tokens come one at a time.
        for (int32_t t = 0; t < n; ++t) {
            for (int32_t h = 0; h < c.n_heads; ++h) {
                float *qh = s.q.data() + t * q_dim + h * head_dim;
                if (c.qk_norm) rms_norm(qh, layer.q_norm.data(), head_dim, c.rms_norm_eps, qh);
                apply_rope(qh, c.head_dim, position + t, model.rope_inv_freq, model.rope_attention_factor);
            }
            for (int32_t h = 0; h < c.n_kv_heads; ++h) {
                float *kh = s.k.data() + t * kv_stride + h * head_dim;
                if (c.qk_norm) rms_norm(kh, layer.k_norm.data(), head_dim, c.rms_norm_eps, kh);
                apply_rope(kh, c.head_dim, position + t, model.rope_inv_freq, model.rope_attention_factor);
            }
            cache.store(l, sequence, position + t, s.k.data() + t * kv_stride, s.v.data() + t * kv_stride);
        }

        const float *keys = cache.keys(l, sequence, 0);
        const float *values = cache.values(l, sequence, 0);
        for (int32_t t = 0; t < n; ++t) {
            const int32_t length = position + t + 1;
            const bool parallel_heads = int64_t(length) * kv_stride >= kParallelMinimumWork / 8;
#pragma omp parallel for schedule(static) num_threads(thread_count(model)) if (parallel_heads)
            for (int32_t h = 0; h < c.n_heads; ++h) {
                const int32_t kv_head = h / group;
                const float *qh = s.q.data() + t * q_dim + h * head_dim;
                float *scores = s.scores.data() + size_t(h) * size_t(cache.capacity());
                float max_score = -INFINITY;
                for (int32_t p = 0; p < length; ++p) {
                    const float *kp = keys + p * kv_stride + kv_head * head_dim;
                    float dot = 0.0f;
                    for (int64_t d = 0; d < head_dim; ++d) dot += qh[d] * kp[d];
                    scores[p] = dot * softmax_scale;
                    max_score = std::max(max_score, scores[p]);
                }
                float denominator = 0.0f;
                for (int32_t p = 0; p < length; ++p) {
                    scores[p] = std::exp(scores[p] - max_score);
                    denominator += scores[p];
                }
                float *out = s.attention.data() + t * q_dim + h * head_dim;
                std::fill_n(out, head_dim, 0.0f);
                for (int32_t p = 0; p < length; ++p) {
                    const float weight = scores[p] / denominator;
                    const float *vp = values + p * kv_stride + kv_head * head_dim;
                    for (int64_t d = 0; d < head_dim; ++d) out[d] += weight * vp[d];
                }
            }
        }
        cpu_linear_rows(model, layer.o, s.attention.data(), q_dim, n, s.projected.data(), hidden, s.padded);
        for (int64_t i = 0; i < n * hidden; ++i) s.x[size_t(i)] += s.projected[size_t(i)];

        // MLP block.
        for (int32_t t = 0; t < n; ++t)
            rms_norm(s.x.data() + t * hidden, layer.post_attention_norm.data(), hidden, c.rms_norm_eps,
                     s.normed.data() + t * hidden);
        cpu_linear_rows(model, layer.gate, s.normed.data(), hidden, n, s.gate.data(), inter, s.padded);
        cpu_linear_rows(model, layer.up, s.normed.data(), hidden, n, s.up.data(), inter, s.padded);
        for (int64_t i = 0; i < n * inter; ++i) s.gate[size_t(i)] = silu(s.gate[size_t(i)]) * s.up[size_t(i)];
        cpu_linear_rows(model, layer.down, s.gate.data(), inter, n, s.projected.data(), hidden, s.padded);
        for (int64_t i = 0; i < n * hidden; ++i) s.x[size_t(i)] += s.projected[size_t(i)];
    }

    if (!logits) return;
    if (between_layers) between_layers();
    const float *last = s.x.data() + (n - 1) * hidden;
    rms_norm(last, w.final_norm.data(), hidden, c.rms_norm_eps, s.normed.data());
    cpu_linear(model, w.lm_head, s.normed.data(), logits, s.padded);
}

void cpu_forward(const LoadedModel &model, int32_t token, int32_t position, int32_t sequence, KvCache &cache,
                 ForwardScratch &s, float *logits, const std::function<void()> &between_layers) {
    cpu_forward_chunk(model, &token, 1, position, sequence, cache, s, logits, between_layers);
}

}  // namespace reset
