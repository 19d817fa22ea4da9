// test_cpu_forward.cpp — the CPU forward pass stopped between layers (its
// between_layers hook: the session's cancellation check) leaves nothing that a
// later pass at the same position sees; a chunk of tokens in one pass
// (cpu_forward_chunk, the prefill's) gives the K/V and logits of one pass per
// token, to the bit, in every weight format.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/cpu_engine.h"
#include "engine/loaded_model.h"
#include "reset.h"

using namespace reset;

namespace {

struct Stopped : std::runtime_error {
    Stopped() : std::runtime_error("stopped between layers") {}
};

}  // namespace

TEST_CASE("a CPU forward pass stopped between layers leaves the same logits after the pass is run again") {
    reset_model_options options;
    reset_model_options_init(&options);
    options.backend = RESET_BACKEND_CPU;
    const auto model = load_model(std::string(RESET_SOURCE_DIR) + "/tests/fixtures/chat-model", options);
    const ModelConfig &config = model->config;
    REQUIRE(config.n_layers >= 2);
    const std::vector<int32_t> ids = {17, 301, 5, 88, 240, 19};
    const size_t vocab = size_t(config.vocab_size);
    const int32_t last = int32_t(ids.size()) - 1;

    // Uninterrupted: every position in order; the hook runs before each layer and the head.
    KvCache plain_cache(config, 1, 16, RESET_KV_CACHE_BF16);
    ForwardScratch plain_scratch(config, 16);
    std::vector<float> expected(vocab);
    int calls = 0;
    for (int32_t p = 0; p <= last; ++p)
        cpu_forward(*model, ids[size_t(p)], p, 0, plain_cache, plain_scratch, p == last ? expected.data() : nullptr,
                    [&] { ++calls; });
    CHECK(calls == int(ids.size()) * config.n_layers + 1);

    // Stopped at every possible point of the last position's pass (before layer k, or before
    // the head), then run again: the same logits to the bit, and the stopped pass left the
    // logits buffer as it was.
    for (int stop_at = 0; stop_at <= config.n_layers; ++stop_at) {
        CAPTURE(stop_at);
        KvCache cache(config, 1, 16, RESET_KV_CACHE_BF16);
        ForwardScratch scratch(config, 16);
        for (int32_t p = 0; p < last; ++p) cpu_forward(*model, ids[size_t(p)], p, 0, cache, scratch, nullptr);
        std::vector<float> logits(vocab, -7.0f);  // the buffer a stopped pass must leave alone
        int seen = 0;
        CHECK_THROWS_AS(cpu_forward(*model, ids[size_t(last)], last, 0, cache, scratch, logits.data(),
                                    [&] {
                                        if (seen++ == stop_at) throw Stopped();
                                    }),
                        Stopped);
        CHECK(std::vector<float>(vocab, -7.0f) == logits);
        // The pass again, this time with a different token first at that position (what a
        // cancelled step's redo may bring), then the real one: only the last pass counts.
        cpu_forward(*model, ids[0], last, 0, cache, scratch, nullptr);
        cpu_forward(*model, ids[size_t(last)], last, 0, cache, scratch, logits.data());
        CHECK(std::memcmp(logits.data(), expected.data(), vocab * sizeof(float)) == 0);
    }
}

namespace {

// The K/V a sequence file holds of `length` positions, every layer: the bytes to compare.
std::vector<uint8_t> kv_bytes(const KvCache &cache, const ModelConfig &config, int32_t length) {
    const size_t layer_bytes = size_t(length) * size_t(config.n_kv_heads) * size_t(config.head_dim) *
                               cache.kv_element_bytes();
    std::vector<uint8_t> out(2 * layer_bytes * size_t(config.n_layers));
    for (int32_t l = 0; l < config.n_layers; ++l)
        cache.export_layer(l, 0, length, out.data() + 2 * size_t(l) * layer_bytes,
                           out.data() + (2 * size_t(l) + 1) * layer_bytes);
    return out;
}

}  // namespace

TEST_CASE("a chunk of tokens in one CPU pass gives one pass per token's K/V and logits, to the bit") {
    struct Format {
        const char *dir;
        reset_weights weights;
        reset_activations activations;
        reset_kv_cache kv;
    };
    const std::string fixtures = std::string(RESET_SOURCE_DIR) + "/tests/fixtures/";
    // BF16 weights, NVFP4 quantized on load (both activation rules, and W4A4), a ModelOpt export
    // with q/k norms, a bias-carrying Qwen2 (FP32 cache) and a scaled-RoPE Llama (FP8 cache).
    const Format formats[] = {
        {"chat-model", RESET_WEIGHTS_BF16, RESET_ACTIVATIONS_FP16, RESET_KV_CACHE_BF16},
        {"chat-model", RESET_WEIGHTS_NVFP4_W4A16, RESET_ACTIVATIONS_FP16, RESET_KV_CACHE_BF16},
        {"chat-model", RESET_WEIGHTS_NVFP4_W4A16, RESET_ACTIVATIONS_FP32, RESET_KV_CACHE_FP32},
        {"chat-model", RESET_WEIGHTS_NVFP4_W4A4, RESET_ACTIVATIONS_FP16, RESET_KV_CACHE_BF16},
        {"models/modelopt-qwen3", RESET_WEIGHTS_AUTO, RESET_ACTIVATIONS_FP16, RESET_KV_CACHE_BF16},
        {"models/qwen2-bias-sharded", RESET_WEIGHTS_BF16, RESET_ACTIVATIONS_FP16, RESET_KV_CACHE_FP32},
        {"models/llama3-scaled", RESET_WEIGHTS_BF16, RESET_ACTIVATIONS_FP16, RESET_KV_CACHE_FP8},
    };
    for (const Format &f : formats) {
        CAPTURE(f.dir);
        CAPTURE(int(f.weights));
        CAPTURE(int(f.activations));
        reset_model_options options;
        reset_model_options_init(&options);
        options.backend = RESET_BACKEND_CPU;
        options.weights = f.weights;
        options.w4a16_activations = f.activations;
        const auto model = load_model(fixtures + f.dir, options);
        const ModelConfig &config = model->config;
        const size_t vocab = size_t(config.vocab_size);
        // 37 tokens after 3 already held: chunks of 16, 16 and 5 (4 + 1 tokens through the NVFP4
        // products), starting at position 3.
        std::vector<int32_t> ids(40);
        for (size_t i = 0; i < ids.size(); ++i) ids[i] = int32_t((i * 7919 + 13) % std::min<size_t>(vocab, 500));
        const int32_t capacity = 64, held = 3, length = int32_t(ids.size());

        KvCache one_cache(config, 1, capacity, f.kv);
        ForwardScratch one_scratch(config, capacity);
        std::vector<float> one_logits(vocab);
        for (int32_t p = 0; p < length; ++p)
            cpu_forward(*model, ids[size_t(p)], p, 0, one_cache, one_scratch, p + 1 == length ? one_logits.data() : nullptr);

        KvCache chunk_cache(config, 1, capacity, f.kv);
        ForwardScratch chunk_scratch(config, capacity);
        std::vector<float> chunk_logits(vocab, -7.0f);
        for (int32_t p = 0; p < held; ++p) cpu_forward(*model, ids[size_t(p)], p, 0, chunk_cache, chunk_scratch, nullptr);
        for (int32_t p = held; p < length; p += kCpuForwardChunk) {
            const int32_t n = std::min(kCpuForwardChunk, length - p);
            cpu_forward_chunk(*model, ids.data() + p, n, p, 0, chunk_cache, chunk_scratch,
                              p + n == length ? chunk_logits.data() : nullptr);
        }
        CHECK(std::memcmp(chunk_logits.data(), one_logits.data(), vocab * sizeof(float)) == 0);
        CHECK(kv_bytes(chunk_cache, config, length) == kv_bytes(one_cache, config, length));
    }
}
