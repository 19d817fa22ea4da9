// test_cpu_forward.cpp — the CPU forward pass stopped between layers (its
// between_layers hook: the session's cancellation check) leaves nothing that a
// later pass at the same position sees.
#include <doctest/doctest.h>

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
