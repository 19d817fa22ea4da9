// test_kv_cache.cpp — the CPU KV cache keeps what the CUDA backend's cache
// keeps: values rounded to BF16 or FP8 E4M3 on write (FP32: unrounded).
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "engine/cpu_engine.h"

using namespace reset;

namespace {

ModelConfig tiny_config() {
    ModelConfig c;
    c.n_layers = 2;
    c.n_kv_heads = 1;
    c.head_dim = 8;
    return c;
}

// Store k = values, v = -values at layer 1, sequence 1, position 2 and read them back.
std::vector<float> round_trip(reset_kv_cache type, const std::vector<float> &values, bool keys) {
    KvCache cache(tiny_config(), 2, 4, type);
    std::vector<float> negated(values.size());
    for (size_t i = 0; i < values.size(); ++i) negated[i] = -values[i];
    cache.store(1, 1, 2, values.data(), negated.data());
    const float *p = keys ? cache.keys(1, 1, 2) : cache.values(1, 1, 2);
    return std::vector<float>(p, p + values.size());
}

}  // namespace

TEST_CASE("KV cache: FP32 keeps values, BF16 rounds to nearest even, FP8 to E4M3 with saturation") {
    // 1 + 2^-8 is the BF16 tie between 1 and 1 + 2^-7: even -> 1.  1 + 3*2^-8 ties up to 1 + 2^-6.
    // 0.1 is not representable in either format.  E4M3 near 1 has steps of 1/8 (1.0625 ties to
    // 1.0, 1.1875 ties up to 1.25); 500 saturates to 448; 2^-10 is a subnormal (2^-9 steps:
    // the tie rounds to even, 0).
    const std::vector<float> in = {1.0f + 0x1p-8f, 1.0f + 3 * 0x1p-8f, 0.1f, 1.0625f,
                                   1.1875f,        500.0f,             0x1p-10f, 3.0f};
    CHECK(round_trip(RESET_KV_CACHE_FP32, in, true) == in);

    const std::vector<float> bf16 = round_trip(RESET_KV_CACHE_BF16, in, true);
    CHECK(bf16[0] == 1.0f);
    CHECK(bf16[1] == 1.0f + 0x1p-6f);
    CHECK(bf16[2] == 0.10009765625f);  // 0x3dcd
    CHECK(bf16[5] == 500.0f);
    CHECK(bf16[7] == 3.0f);

    const std::vector<float> fp8 = round_trip(RESET_KV_CACHE_FP8, in, true);
    CHECK(fp8[3] == 1.0f);
    CHECK(fp8[4] == 1.25f);
    CHECK(fp8[2] == 0.1015625f);  // 13/128
    CHECK(fp8[5] == 448.0f);
    CHECK(fp8[6] == 0.0f);
    CHECK(fp8[7] == 3.0f);

    // Values round the same way with the sign mirrored.
    const std::vector<float> fp8_values = round_trip(RESET_KV_CACHE_FP8, in, false);
    for (size_t i = 0; i < in.size(); ++i) CHECK(fp8_values[i] == -fp8[i]);
    const std::vector<float> bf16_values = round_trip(RESET_KV_CACHE_BF16, in, false);
    for (size_t i = 0; i < in.size(); ++i) CHECK(bf16_values[i] == -bf16[i]);
}

TEST_CASE("KV cache: copy_sequence copies the stored (rounded) values") {
    KvCache cache(tiny_config(), 2, 4, RESET_KV_CACHE_BF16);
    // None of these is a BF16 value, so every stored one differs from its input.
    const std::vector<float> k = {0.1f, 0.2f, 0.3f, 0.4f, 0.55f, 0.6f, 0.7f, 0.8f}, v = k;
    for (int32_t layer = 0; layer < 2; ++layer)
        for (int32_t position = 0; position < 3; ++position) cache.store(layer, 0, position, k.data(), v.data());
    cache.copy_sequence(0, 1, 3);
    for (int32_t layer = 0; layer < 2; ++layer)
        for (int32_t position = 0; position < 3; ++position)
            for (int i = 0; i < 8; ++i) {
                CHECK(cache.keys(layer, 1, position)[i] == cache.keys(layer, 0, position)[i]);
                CHECK(cache.keys(layer, 1, position)[i] != k[size_t(i)]);  // rounded, not the input
            }
}
