// cpu_engine.h — the FP32 reference forward pass: one token of one sequence
// through every layer, with a KV cache.  Clarity beats speed here (it is what
// every GPU kernel is tested against); matrix-vector products use all cores.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "engine/loaded_model.h"
#include "reset.h"

namespace reset {

// One layer's FP8 KV-cache scales (LayerWeights::k_cache_scale, v_cache_scale).
struct KvCacheScale {
    float k = 1.0f, v = 1.0f;
};

// The model's, a layer each (1 where the checkpoint has no calibrated scales).
std::vector<KvCacheScale> kv_cache_scales(const ModelWeights &weights);

// K and V of every layer, sequence and position, in FP32 storage holding values
// rounded to the session's cache type (BF16 or FP8 E4M3, as the CUDA backend
// stores them; FP32: unrounded).  FP8 holds e4m3(x / scale) · scale with the
// layer's scale (kernels/attention_decode.h's KvCacheLayerView::k_scale).
class KvCache {
public:
    // fp8_scales: one per layer, or empty for 1 everywhere; FP8 caches only.
    KvCache(const ModelConfig &config, int32_t sequences, int32_t capacity,
            reset_kv_cache type = RESET_KV_CACHE_FP32,
            std::vector<KvCacheScale> fp8_scales = {});  // throws RESET_ERR_OUT_OF_MEMORY
    // Write one position's K and V (n_kv_heads * head_dim each), rounded to the cache type.
    void store(int32_t layer, int32_t sequence, int32_t position, const float *k, const float *v);
    const float *keys(int32_t layer, int32_t sequence, int32_t position) const;
    const float *values(int32_t layer, int32_t sequence, int32_t position) const;
    // Copy positions [0, length) of one sequence onto another (shared prefill).
    void copy_sequence(int32_t from, int32_t to, int32_t length);
    // One layer's K and V of one sequence as a sequence file holds them
    // (engine/sequence_file.h): positions [0, length) as [kv_head][position]
    // [head_dim], each element in the cache type's encoding (BF16 bits, an
    // E4M3 byte or an FP32 value, little-endian; kv_element_bytes() each).
    // The cache's values are already rounded to its type, so both ways are exact.
    void export_layer(int32_t layer, int32_t sequence, int32_t length, uint8_t *keys, uint8_t *values) const;
    void import_layer(int32_t layer, int32_t sequence, int32_t length, const uint8_t *keys, const uint8_t *values);
    size_t kv_element_bytes() const;
    reset_kv_cache type() const { return type_; }
    int32_t capacity() const { return capacity_; }
    uint64_t bytes() const { return (keys_.size() + values_.size()) * sizeof(float); }

private:
    size_t offset(int32_t layer, int32_t sequence, int32_t position) const;
    // Byte offset of a position's element i in a sequence file's layer of `length` positions.
    size_t file_offset(int32_t i, int32_t position, int32_t length) const;
    float *mutable_keys(int32_t layer, int32_t sequence, int32_t position);
    float *mutable_values(int32_t layer, int32_t sequence, int32_t position);
    int32_t layers_, sequences_, capacity_, kv_dim_, head_dim_;
    reset_kv_cache type_;
    std::vector<KvCacheScale> scales_;  // a layer each; all 1 unless FP8 with calibrated scales
    std::vector<float> keys_, values_;
};

// Tokens one forward pass carries together at most (cpu_forward_chunk): a prefill's chunk.
constexpr int32_t kCpuForwardChunk = 16;

// Scratch buffers of one forward pass (kCpuForwardChunk tokens), allocated once per session.
struct ForwardScratch {
    std::vector<float> x, normed, q, k, v, attention, projected, gate, up, padded;
    std::vector<float> scores;  // [n_heads][capacity]: attention weights, one row per head
    ForwardScratch(const ModelConfig &config, int32_t capacity);
};

// Run `token` at `position` of `sequence`: writes its K/V into the cache and,
// if logits is not null, the vocab_size logits of the next token.
// between_layers, if set, runs before each layer and before the lm_head: the
// session's cancellation check, so that a cancel lands within a layer, not a
// token (a random Qwen3-8B NVFP4 token took ~21.7 s on two cores before the
// NVFP4 product carried rows together, 0.75 s since, and the REPL's Ctrl-C
// waited for it).  If it throws, the pass stops there: logits are
// untouched, and the K/V it stored at `position` for earlier layers stay in the
// cache past the sequence's length, where nothing reads them before a pass at
// that position writes them again.
void cpu_forward(const LoadedModel &model, int32_t token, int32_t position, int32_t sequence, KvCache &cache,
                 ForwardScratch &scratch, float *logits, const std::function<void()> &between_layers = nullptr);

// The same for n (1..kCpuForwardChunk) consecutive tokens at positions position..position+n-1 of
// `sequence`, logits (if not null) those after the last: the K/V stored and the logits are, to
// the bit, what n cpu_forward calls give (each row's and token's sums in the same order), while
// each weight is read once per pass instead of once per token (engine/nvfp4_linear.h's products
// decode it once per 4 tokens).  A stop from between_layers leaves the K/V of all n positions
// for the earlier layers past the sequence's length, as above.
void cpu_forward_chunk(const LoadedModel &model, const int32_t *tokens, int32_t n, int32_t position,
                       int32_t sequence, KvCache &cache, ForwardScratch &scratch, float *logits,
                       const std::function<void()> &between_layers = nullptr);

// y = W x (+ bias) for one linear in the model's weight format.
void cpu_linear(const LoadedModel &model, const Linear &linear, const float *x, float *y, std::vector<float> &padded);
// The same for `tokens` rows of x (stride ldx) into rows of y (stride ldy), each row to the bit
// what cpu_linear gives it.
void cpu_linear_rows(const LoadedModel &model, const Linear &linear, const float *x, int64_t ldx, int32_t tokens,
                     float *y, int64_t ldy, std::vector<float> &padded);

}  // namespace reset
