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

// A checkpoint's calibrated FP8 scales (LayerWeights::k_cache_scale, v_cache_scale): the cache keeps
// e4m3(x / scale) · scale, per layer and for K and V apart, as the append kernel stores e4m3(x / scale)
// and attention reads stored · scale; a sequence file holds the E4M3 bytes, which read back exactly.
TEST_CASE("KV cache: FP8 with calibrated scales rounds x / scale, per layer, and its file bytes round-trip") {
    const std::vector<KvCacheScale> scales = {{1.0f, 1.0f}, {0.0078125f, 0.3f}};  // layer 1: K 2^-7, V 0.3
    KvCache cache(tiny_config(), 2, 4, RESET_KV_CACHE_FP8, scales);
    // 3 / 2^-7 = 384 (an E4M3 value); 4 / 2^-7 = 512 saturates at 448 -> 3.5; 2^-10 / 2^-7 = 1/8 is
    // normal now (scale 1: a subnormal tie to 0); 1.0625 / 2^-7 = 136 ties between 128 and 144 -> 128.
    const std::vector<float> k = {3.0f, 4.0f, 0x1p-10f, 1.0625f, -3.0f, 0.0f, -0x1p-12f, 1.0f};
    const std::vector<float> v = {0.3f, 0.6f, 134.4f, 200.0f, 0.0f, -0.3f, 0.03f, 1.0f};
    cache.store(1, 1, 2, k.data(), v.data());
    const float *keys = cache.keys(1, 1, 2), *values = cache.values(1, 1, 2);
    CHECK(keys[0] == 3.0f);
    CHECK(keys[1] == 3.5f);
    CHECK(keys[2] == 0x1p-10f);
    CHECK(keys[3] == 1.0f);
    CHECK(keys[4] == -3.0f);
    CHECK(keys[6] == -0x1p-12f);  // 2^-12 / 2^-7 = 2^-5: normal
    CHECK(values[0] == 1.0f * 0.3f);   // 0.3 / 0.3 = 1
    CHECK(values[2] == 448.0f * 0.3f); // 134.4 / 0.3 = 448
    CHECK(values[3] == 448.0f * 0.3f); // saturated
    // Layer 0 at scale 1 is the cache as before.
    cache.store(0, 1, 2, k.data(), v.data());
    CHECK(cache.keys(0, 1, 2)[1] == 4.0f);
    CHECK(cache.keys(0, 1, 2)[2] == 0.0f);

    // The file holds the bytes of x / scale; importing them gives the same floats back.
    std::vector<uint8_t> key_bytes(8 * 3), value_bytes(8 * 3);
    cache.export_layer(1, 1, 3, key_bytes.data(), value_bytes.data());
    CHECK(key_bytes[2 * 8 + 0] == 0x7c);  // 384 = 1.5 · 2^8: exponent 15, mantissa 4
    CHECK(value_bytes[2 * 8 + 2] == 0x7e); // 448
    KvCache other(tiny_config(), 2, 4, RESET_KV_CACHE_FP8, scales);
    other.import_layer(1, 0, 3, key_bytes.data(), value_bytes.data());
    for (int i = 0; i < 8; ++i) {
        CHECK(other.keys(1, 0, 2)[i] == keys[i]);
        CHECK(other.values(1, 0, 2)[i] == values[i]);
    }
    // Other cache types ignore the scales.
    KvCache bf16(tiny_config(), 2, 4, RESET_KV_CACHE_BF16, scales);
    bf16.store(1, 0, 0, k.data(), v.data());
    CHECK(bf16.keys(1, 0, 0)[1] == 4.0f);
}
