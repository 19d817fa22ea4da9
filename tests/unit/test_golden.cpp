// Golden tests: the CPU reference engine against transformers (FP32 on the
// BF16 weights) and against an independent PyTorch implementation of
// nvfp4.md, on the fixture models made by tests/fixtures/make_fixtures.py.
//
// Tolerances: both sides compute in FP32 with different summation orders, so
// logits agree to ~1e-6 relative; 1e-3 (the bound) catches any
// semantic error (a wrong norm, RoPE pair or scale moves logits by >1e-2).
#include <doctest/doctest.h>

#include <cmath>
#include <cstddef>
#include <cstring>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/loaded_model.h"
#include "engine/sequence_file.h"
#include "model/safetensors.h"
#include "reset.h"
#include "rules/nvfp4.h"
#include "test_support.h"
#include "tests/patched_checkpoint.h"
#include "util/files.h"

using namespace reset;

namespace {

const std::string kFixtures = std::string(RESET_SOURCE_DIR) + "/tests/fixtures/models/";
const char *kModels[] = {"qwen3-tied", "qwen2-bias-sharded", "llama3-scaled", "qwen3-yarn"};

std::vector<float> floats_of(const TensorView &t) {
    REQUIRE(t.dtype == Dtype::F32);
    std::vector<float> out(static_cast<size_t>(t.numel()));
    std::memcpy(out.data(), t.data, t.nbytes);
    return out;
}

std::vector<int32_t> ints_of(const TensorView &t) {
    REQUIRE(t.dtype == Dtype::I32);
    std::vector<int32_t> out(static_cast<size_t>(t.numel()));
    std::memcpy(out.data(), t.data, t.nbytes);
    return out;
}

double relative_l2(const float *a, const float *b, size_t n) {
    double num = 0, den = 0;
    for (size_t i = 0; i < n; ++i) {
        num += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
        den += double(b[i]) * b[i];
    }
    return std::sqrt(num / den);
}

struct Loaded {
    reset_model *model = nullptr;
    reset_session *session = nullptr;
    Loaded(const std::string &dir, reset_weights weights, bool quantize_lm_head = false,
           reset_kv_cache kv_cache = RESET_KV_CACHE_FP32) {
        reset_model_options options;
        reset_model_options_init(&options);
        options.weights = weights;
        options.quantize_lm_head = quantize_lm_head;
        options.backend = RESET_BACKEND_CPU;  // the reference engine; FP32 activations and cache are CPU-only
        // The NVFP4 references multiply FP32 activations: compare W4A16 without the GPU's FP16 rounding.
        options.w4a16_activations = RESET_ACTIVATIONS_FP32;
        const reset_status status = reset_model_load(dir.c_str(), &options, &model);
        INFO(reset_last_error());
        REQUIRE(status == RESET_OK);
        // The fixtures are transformers in FP32, KV cache included: compare the FP32 cache (unless a
        // reference quantized its cache too).
        reset_session_options session_options;
        reset_session_options_init(&session_options);
        session_options.kv_cache = kv_cache;
        REQUIRE(reset_session_create(model, &session_options, &session) == RESET_OK);
    }
    ~Loaded() {
        reset_session_free(session);
        reset_model_free(model);
    }
};

// A model loaded on the CPU backend with the default options, as the engine holds it.
std::shared_ptr<LoadedModel> cpu_model(const std::string &dir) {
    reset_model_options options;
    reset_model_options_init(&options);
    options.backend = RESET_BACKEND_CPU;
    return load_model(dir, options);
}

// Feed the prompt one token at a time and compare the logits at every position.
void check_logits(const std::string &dir, reset_weights weights, const std::vector<int32_t> &ids,
                  const std::vector<float> &reference, double tolerance, bool quantize_lm_head = false,
                  reset_kv_cache kv_cache = RESET_KV_CACHE_FP32) {
    Loaded m(dir, weights, quantize_lm_head, kv_cache);
    const size_t vocab = reference.size() / ids.size();
    std::vector<float> logits(vocab);
    for (size_t t = 0; t < ids.size(); ++t) {
        REQUIRE(reset_prefill(m.session, &ids[t], 1) == RESET_OK);
        REQUIRE(reset_session_logits(m.session, 0, logits.data(), vocab) == RESET_OK);
        const double error = relative_l2(logits.data(), reference.data() + t * vocab, vocab);
        CAPTURE(t);
        CHECK(error <= tolerance);
    }
}

// Greedy continuation, token for token.  The reference does not stop at EOS;
// the engine does, so an EOS there must be the reference's token too.
void check_greedy(const std::string &dir, reset_weights weights, const std::vector<int32_t> &ids,
                  const std::vector<int32_t> &expected, bool quantize_lm_head = false) {
    Loaded m(dir, weights, quantize_lm_head);
    reset_policy_params greedy;
    reset_policy_params_init(&greedy);
    greedy.kind = RESET_POLICY_GREEDY;  // the fixtures' generation_config may ask for sampling
    REQUIRE(reset_set_policy(m.session, &greedy) == RESET_OK);
    REQUIRE(reset_prefill(m.session, ids.data(), ids.size()) == RESET_OK);
    for (size_t i = 0; i < expected.size(); ++i) {
        reset_step step;
        reset_step_init(&step, 1);
        REQUIRE(reset_decode_step(m.session, &step, 1, nullptr) == RESET_OK);
        CAPTURE(i);
        CHECK(step.token == expected[i]);
        if (step.end_of_generation) break;
    }
}

bool have_fixtures() { return file_exists(kFixtures + "qwen3-tied/reference.safetensors"); }

}  // namespace

TEST_CASE("golden: BF16 logits and greedy continuations match transformers") {
    REQUIRE_MESSAGE(have_fixtures(), "fixtures missing: run tests/fixtures/make_fixtures.py (see its README)");
    for (const char *name : kModels) {
        CAPTURE(std::string(name));
        const std::string dir = kFixtures + name;
        const TensorStore ref = TensorStore::open_file(dir + "/reference.safetensors");
        const auto ids = ints_of(ref.get("input_ids"));
        check_logits(dir, RESET_WEIGHTS_BF16, ids, floats_of(ref.get("logits_bf16")), 1e-3);
        check_greedy(dir, RESET_WEIGHTS_BF16, ids, ints_of(ref.get("greedy_bf16")));
    }
}

// YaRN (qwen3-yarn: factor 4 over an original context of 64, head_dim 32): the inverse frequencies and
// the attention factor the loader derives are the ones transformers' rotary embedding holds, bit for
// bit (both are FP32 arithmetic in the same order: powers, reciprocals, the ramp and the blend).  The
// logits above then check that the CPU engine applies them as transformers does.
TEST_CASE("golden: YaRN's frequencies and attention factor are transformers'") {
    REQUIRE(have_fixtures());
    const std::string dir = kFixtures + "qwen3-yarn";
    const TensorStore ref = TensorStore::open_file(dir + "/reference.safetensors");
    const ModelConfig config = read_model_config(dir);
    REQUIRE(config.yarn.enabled);
    const std::vector<float> want = floats_of(ref.get("rope_inv_freq"));
    const std::vector<float> got = rope_inverse_frequencies(config);
    REQUIRE(got.size() == want.size());
    int blended = 0;  // dimensions strictly between kept and slowed: the ramp is exercised
    for (size_t i = 0; i < got.size(); ++i) {
        CAPTURE(i);
        CHECK(got[i] == want[i]);
        const float plain = 1.0f / std::pow(1000000.0f, float(2 * i) / 32.0f);
        if (want[i] != plain && want[i] != 1.0f / (4.0f * std::pow(1000000.0f, float(2 * i) / 32.0f))) ++blended;
    }
    CHECK(blended == 2);
    CHECK(float(config.yarn.attention_factor) == floats_of(ref.get("rope_attention_scaling"))[0]);
}

TEST_CASE("golden: NVFP4 W4A16 and W4A4 logits match the PyTorch NVFP4 reference") {
    REQUIRE(have_fixtures());
    for (const char *name : kModels) {
        CAPTURE(std::string(name));
        const std::string dir = kFixtures + name;
        const TensorStore ref = TensorStore::open_file(dir + "/reference.safetensors");
        const auto ids = ints_of(ref.get("input_ids"));
        check_logits(dir, RESET_WEIGHTS_NVFP4_W4A16, ids, floats_of(ref.get("logits_w4a16")), 1e-3);
        check_logits(dir, RESET_WEIGHTS_NVFP4_W4A4, ids, floats_of(ref.get("logits_w4a4")), 1e-3);
        check_greedy(dir, RESET_WEIGHTS_NVFP4_W4A16, ids, ints_of(ref.get("greedy_w4a16")));
        check_greedy(dir, RESET_WEIGHTS_NVFP4_W4A4, ids, ints_of(ref.get("greedy_w4a4")));
    }
}

// The lm_head quantized on load as well (quantize_lm_head), against numpy_reference.py's forward with
// the lm_head (or the tied embeddings) quantized by nvfp4_ref.py: make_nvfp4_head_reference.py.  The
// NVFP4 head moves these logits by 9-14% relative L2 from the BF16-head references (and changes the
// greedy continuations), so the 1e-3 bound tells the two apart; the smallest W4A16 greedy margin
// there is 1.2e-3, three orders above the FP32-against-FP64 differences.  W4A4 is checked on the
// prompt's logits only: its greedy tokens are not well defined between FP32 and FP64 (the script
// says why).
TEST_CASE("golden: an NVFP4 lm_head (quantize_lm_head) matches the numpy NVFP4 reference") {
    REQUIRE(have_fixtures());
    for (const char *name : kModels) {
        CAPTURE(std::string(name));
        const std::string dir = kFixtures + name;
        REQUIRE_MESSAGE(file_exists(dir + "/reference_nvfp4_head.safetensors"),
                        "run tests/fixtures/make_nvfp4_head_reference.py");
        const TensorStore ref = TensorStore::open_file(dir + "/reference_nvfp4_head.safetensors");
        const auto ids = ints_of(TensorStore::open_file(dir + "/reference.safetensors").get("input_ids"));
        {
            Loaded m(dir, RESET_WEIGHTS_NVFP4_W4A16, true);
            reset_model_info info;
            reset_model_info_init(&info);
            REQUIRE(reset_model_get_info(m.model, &info) == RESET_OK);
            CHECK(info.lm_head_nvfp4 == 1);
            CHECK(info.n_bf16_linears == 0);
        }
        check_logits(dir, RESET_WEIGHTS_NVFP4_W4A16, ids, floats_of(ref.get("logits_w4a16")), 1e-3, true);
        check_logits(dir, RESET_WEIGHTS_NVFP4_W4A4, ids, floats_of(ref.get("logits_w4a4")), 1e-3, true);
        check_greedy(dir, RESET_WEIGHTS_NVFP4_W4A16, ids, ints_of(ref.get("greedy_w4a16")), true);
    }
}

TEST_CASE("quantize_lm_head: refused with BF16 weights; quantizes a ModelOpt export's BF16 lm_head") {
    REQUIRE(have_fixtures());
    reset_model_options options;
    reset_model_options_init(&options);
    options.backend = RESET_BACKEND_CPU;
    options.quantize_lm_head = 1;
    reset_model *model = nullptr;
    options.weights = RESET_WEIGHTS_BF16;
    CHECK(reset_model_load((kFixtures + "qwen3-tied").c_str(), &options, &model) == RESET_ERR_INVALID_ARGUMENT);
    CHECK(model == nullptr);
    CHECK(std::string(reset_last_error()).find("quantize_lm_head") != std::string::npos);
    options.weights = RESET_WEIGHTS_AUTO;  // a BF16 checkpoint: AUTO is BF16, refused alike
    CHECK(reset_model_load((kFixtures + "qwen3-tied").c_str(), &options, &model) == RESET_ERR_INVALID_ARGUMENT);
    const std::string modelopt = kFixtures + "modelopt-qwen3";  // its export keeps lm_head in BF16
    for (int32_t quantize : {0, 1}) {
        CAPTURE(quantize);
        options.quantize_lm_head = quantize;
        REQUIRE(reset_model_load(modelopt.c_str(), &options, &model) == RESET_OK);
        reset_model_info info;
        reset_model_info_init(&info);
        REQUIRE(reset_model_get_info(model, &info) == RESET_OK);
        CHECK(info.weights == RESET_WEIGHTS_NVFP4_W4A16);
        CHECK(info.lm_head_nvfp4 == quantize);
        CHECK(info.n_bf16_linears == 1 - quantize);
        reset_model_free(model);
        model = nullptr;
    }
}

TEST_CASE("release_host_weights frees the quantized host copies and keeps the model's description") {
    REQUIRE(have_fixtures());
    const std::string dir = kFixtures + std::string("qwen3-tied");
    reset_model_options options;
    reset_model_options_init(&options);
    options.weights = RESET_WEIGHTS_NVFP4_W4A4;
    options.backend = RESET_BACKEND_CPU;
    const auto model = load_model(dir, options);
    ModelWeights &w = model->weights;
    REQUIRE(w.owned_bytes > 0);
    const float tensor_scale = w.layers[0].q.tensor_scale;
    const int64_t out_features = w.layers[0].gate.out_features;
    release_host_weights(w);
    CHECK(w.owned_bytes == 0);
    CHECK(w.embed.data == nullptr);
    for (const auto &layer : w.layers)
        for (const Linear *l : {&layer.q, &layer.k, &layer.v, &layer.o, &layer.gate, &layer.up, &layer.down}) {
            CHECK((l->codes.empty() && l->codes.data() == nullptr && l->codes.owned_bytes() == 0));
            CHECK((l->scales.empty() && l->scales.data() == nullptr && l->scales.owned_bytes() == 0));
            CHECK(l->format == LinearFormat::NVFP4);
        }
    CHECK(w.layers[0].q.tensor_scale == tensor_scale);
    CHECK(w.layers[0].gate.out_features == out_features);
    CHECK(w.layers.size() == size_t(model->config.n_layers));
}

TEST_CASE("golden: the quantizer is bit-exact against the reference script") {
    REQUIRE(have_fixtures());
    for (const char *name : kModels) {
        CAPTURE(std::string(name));
        const std::string dir = kFixtures + name;
        const TensorStore quantized = TensorStore::open_file(dir + "/quantized.safetensors");
        reset_model_options options;
        reset_model_options_init(&options);
        options.weights = RESET_WEIGHTS_NVFP4_W4A16;
        const auto model = load_model(dir, options);
        int checked = 0;
        for (const auto &layer : model->weights.layers) {
            for (const Linear *l : {&layer.q, &layer.k, &layer.v, &layer.o, &layer.gate, &layer.up, &layer.down}) {
                CAPTURE(l->name);
                const TensorView &codes = quantized.get(l->name + ".codes");
                const TensorView &scales = quantized.get(l->name + ".scales");
                REQUIRE(codes.nbytes == l->codes.size());
                REQUIRE(scales.nbytes == l->scales.size());
                CHECK(std::memcmp(codes.data, l->codes.data(), codes.nbytes) == 0);
                CHECK(std::memcmp(scales.data, l->scales.data(), scales.nbytes) == 0);
                CHECK(floats_of(quantized.get(l->name + ".tensor_scale"))[0] == l->tensor_scale);
                ++checked;
            }
        }
        CHECK(checked == 7 * model->config.n_layers);
    }
}

// Session 37: the exported codes and scales are read in place, as BF16 weights are, not copied
// (an 8B model's 4.4 GB); the model's host memory counts only what it owns.
TEST_CASE("a ModelOpt export's codes and scales are the mapped checkpoint's bytes, not a copy") {
    const std::string dir = kFixtures + "modelopt-qwen3";
    REQUIRE(file_exists(dir + "/config.json"));
    const auto model = cpu_model(dir);
    const ModelWeights &w = model->weights;
    uint64_t owned = w.embed.owned.size() * 2 + w.final_norm.size() * 4;
    for (const auto &layer : w.layers) {
        for (const auto *norm : {&layer.input_norm, &layer.post_attention_norm, &layer.q_norm, &layer.k_norm})
            owned += norm->size() * 4;
        for (const Linear *l : {&layer.q, &layer.k, &layer.v, &layer.o, &layer.gate, &layer.up, &layer.down}) {
            CAPTURE(l->name);
            const TensorView &codes = model->store.get(l->name + ".weight");
            const TensorView &scales = model->store.get(l->name + ".weight_scale");
            CHECK(l->codes.data() == codes.data);
            CHECK(l->codes.size() == codes.nbytes);
            CHECK(l->scales.data() == scales.data);
            CHECK(l->scales.size() == scales.nbytes);
            CHECK(l->codes.owned_bytes() == 0);
            owned += l->bias.size() * 4 + l->dense.owned.size() * 2;
        }
    }
    if (w.lm_head.format == LinearFormat::BF16 && w.lm_head.dense.data != w.embed.data)
        owned += w.lm_head.dense.owned.size() * 2 + w.lm_head.bias.size() * 4;
    CHECK(w.owned_bytes == owned);
}

// The scan that refuses a NaN block scale runs on every core now (session 37); it must still find
// one anywhere, here in the last byte of a middle layer's up_proj scales (E4M3 NaN: 0x7f, or 0xff
// with the sign), and say where.
TEST_CASE("a ModelOpt export with a NaN block scale is refused, naming the tensor and the byte") {
    const std::string source = kFixtures + "modelopt-qwen3";
    const std::string name = "model.layers.1.mlp.up_proj.weight_scale";
    for (const char nan : {char(0x7f), char(0xff)}) {
        const std::string dir = test_support::temp_directory("modelopt-nan-scale");
        const uint64_t bytes = test_support::copy_checkpoint_with_last_byte(source, dir, name, nan);
        reset_model_options options;
        reset_model_options_init(&options);
        options.backend = RESET_BACKEND_CPU;
        reset_model *model = nullptr;
        CHECK(reset_model_load(dir.c_str(), &options, &model) == RESET_ERR_FORMAT);
        CHECK(model == nullptr);
        CHECK(test_support::last_error().find("tensor '" + name + "' holds a NaN block scale (byte " + std::to_string(bytes - 1) +
                                ")") != std::string::npos);
    }
}

TEST_CASE("WeightBytes: a copy of owned bytes points at its own, a copy of mapped ones at the mapping") {
    const uint8_t mapped[3] = {7, 8, 9};
    WeightBytes borrowed;
    borrowed.borrow(mapped, 3);
    WeightBytes owned;
    uint8_t *writable = owned.own(2);
    writable[0] = 5;
    writable[1] = 6;
    const WeightBytes borrowed_copy = borrowed, owned_copy = owned;
    CHECK(borrowed_copy.data() == mapped);
    CHECK(borrowed_copy.owned_bytes() == 0);
    CHECK(owned_copy.data() != owned.data());
    CHECK(owned_copy.owned_bytes() == 2);
    CHECK((owned_copy[0] == 5 && owned_copy[1] == 6));
    WeightBytes moved = std::move(owned);
    CHECK(moved.data() == writable);  // a move keeps the buffer
    moved.release();
    CHECK((moved.data() == nullptr && moved.empty() && moved.owned_bytes() == 0));
    CHECK(std::vector<uint8_t>(borrowed.begin(), borrowed.end()) == std::vector<uint8_t>{7, 8, 9});
}

TEST_CASE("golden: a ModelOpt export loads to ModelOpt's own dequantized weights and fake-quant logits") {
    const std::string dir = kFixtures + "modelopt-qwen3";
    REQUIRE_MESSAGE(file_exists(dir + "/reference.safetensors"),
                    "ModelOpt fixture missing: run tests/fixtures/make_modelopt_fixture.py (see its README)");
    const TensorStore ref = TensorStore::open_file(dir + "/reference.safetensors");
    reset_model_options options;
    reset_model_options_init(&options);
    const auto model = load_model(dir, options);
    CHECK(model->weights.checkpoint_format == CheckpointFormat::ModelOpt);
    CHECK(model->weights_format == RESET_WEIGHTS_NVFP4_W4A16);
    int checked = 0;
    size_t fake_quant_code_differences = 0, elements = 0;
    for (const auto &layer : model->weights.layers) {
        for (const Linear *l : {&layer.q, &layer.k, &layer.v, &layer.o, &layer.gate, &layer.up, &layer.down}) {
            CAPTURE(l->name);
            REQUIRE(l->format == LinearFormat::NVFP4);
            CHECK(l->input_scale > 0.0f);  // calibrated by ModelOpt
            // ModelOpt's NVFP4QTensor.dequantize of the exported tensors.
            const std::vector<float> exported = floats_of(ref.get("dequant_export." + l->name));
            // ModelOpt's fake quantization of the same weights (its Triton kernel).
            const std::vector<float> fake = floats_of(ref.get("dequant." + l->name));
            REQUIRE(exported.size() == size_t(l->out_features * l->in_features));
            size_t mismatches = 0, beyond_one_ulp = 0;
            for (int64_t n = 0; n < l->out_features; ++n)
                for (int64_t k = 0; k < l->in_features; ++k) {
                    const float code = nvfp4::e2m1_to_float(nvfp4::packed_code(l->codes.data() + n * l->padded_in / 2, int(k)));
                    const float scale = nvfp4::e4m3_to_float(l->scales[size_t(n * l->padded_in / 16 + k / 16)]);
                    const size_t i = size_t(n * l->in_features + k);
                    // ModelOpt multiplies the two scales first; decoded in its order
                    // the values must be identical, bit for bit.
                    if (code * (scale * l->tensor_scale) != exported[i]) ++mismatches;
                    // Our rule rounds once (e2m1 * scale is exact): at most 1 ulp away.
                    const float ours = nvfp4::dequantize_element(
                        nvfp4::packed_code(l->codes.data() + n * l->padded_in / 2, int(k)), scale, l->tensor_scale);
                    if (std::fabs(ours - exported[i]) > std::fabs(exported[i]) * 1.2e-7f) ++beyond_one_ulp;
                    if (ours != fake[i] && code * (scale * l->tensor_scale) != fake[i]) ++fake_quant_code_differences;
                    ++elements;
                }
            CHECK(mismatches == 0);
            CHECK(beyond_one_ulp == 0);
            ++checked;
        }
    }
    CHECK(checked == 7 * model->config.n_layers);
    // ModelOpt's fake-quant kernel and its exporter disagree near rounding
    // thresholds (25 of 98,304 codes in this fixture, see tests/fixtures/README.md);
    // the checkpoint is the exporter's, so we hold the exporter's codes.
    CHECK(fake_quant_code_differences <= elements / 1000);

    const auto ids = ints_of(ref.get("input_ids"));
    // The exported checkpoint run by the fixture script's own FP32 NVFP4
    // forward (static input_scale in W4A4): FP32 reordering only, 1e-3.
    check_logits(dir, RESET_WEIGHTS_NVFP4_W4A16, ids, floats_of(ref.get("logits_export_w4a16")), 1e-3);
    check_logits(dir, RESET_WEIGHTS_NVFP4_W4A4, ids, floats_of(ref.get("logits_export_w4a4")), 1e-3);
    // ModelOpt's own fake-quant forward differs from its exported checkpoint by
    // those few codes, which W4A4 on a random model amplifies (~0.16 relative
    // L2).  The tolerance is therefore ModelOpt's own exporter-vs-fake-quant
    // gap, measured on the reference itself, plus 1e-3: we are as close to its
    // fake quantization as its own checkpoint is.
    const std::vector<float> fake_logits = floats_of(ref.get("logits_fakequant"));
    const std::vector<float> export_logits = floats_of(ref.get("logits_export_w4a4"));
    const size_t vocab = fake_logits.size() / ids.size();
    Loaded m(dir, RESET_WEIGHTS_NVFP4_W4A4);
    std::vector<float> logits(vocab);
    for (size_t t = 0; t < ids.size(); ++t) {
        REQUIRE(reset_prefill(m.session, &ids[t], 1) == RESET_OK);
        REQUIRE(reset_session_logits(m.session, 0, logits.data(), vocab) == RESET_OK);
        const double gap = relative_l2(export_logits.data() + t * vocab, fake_logits.data() + t * vocab, vocab);
        CAPTURE(t);
        CHECK(relative_l2(logits.data(), fake_logits.data() + t * vocab, vocab) <= gap + 1e-3);
    }
}

namespace {

// compressed-tensors' own dequantization of each NVFP4 linear (dequant.<name> in the fixture's
// reference), against ours: e2m1 · f32(f32(s) / global_scale) there, e2m1 · s · (1 / global_scale)
// here.  Three roundings of half an ulp at most between the two (s / g; 1 / g and the product), so
// within 1.5 ulp, checked as 2 ulp (2^-22 relative).  Returns the linears checked.
int check_compressed_tensors_weights(const LoadedModel &model, const TensorStore &ref) {
    std::vector<const Linear *> linears;
    for (const auto &layer : model.weights.layers)
        for (const Linear *l : {&layer.q, &layer.k, &layer.v, &layer.o, &layer.gate, &layer.up, &layer.down}) linears.push_back(l);
    if (model.weights.lm_head.format == LinearFormat::NVFP4) linears.push_back(&model.weights.lm_head);
    for (const Linear *l : linears) {
        CAPTURE(l->name);
        REQUIRE(l->format == LinearFormat::NVFP4);
        // Read in place from the mapping, as ModelOpt's codes are.
        CHECK(l->codes.data() == model.store.get(l->name + ".weight_packed").data);
        CHECK(l->codes.owned_bytes() == 0);
        // The reciprocals of the stored global scales (6 · 448 / amax); input_scale 0 (dynamic) without
        // an input_global_scale.
        CHECK(l->tensor_scale == 1.0f / floats_of(model.store.get(l->name + ".weight_global_scale"))[0]);
        const TensorView *input = model.store.find(l->name + ".input_global_scale");
        CHECK(l->input_scale == (input ? 1.0f / floats_of(*input)[0] : 0.0f));
        const std::vector<float> theirs = floats_of(ref.get("dequant." + l->name));
        REQUIRE(theirs.size() == size_t(l->out_features * l->in_features));
        size_t beyond_two_ulp = 0, nonzero = 0;
        for (int64_t n = 0; n < l->out_features; ++n)
            for (int64_t k = 0; k < l->in_features; ++k) {
                const uint8_t code = nvfp4::packed_code(l->codes.data() + n * l->padded_in / 2, int(k));
                const float scale = nvfp4::e4m3_to_float(l->scales[size_t(n * l->padded_in / 16 + k / 16)]);
                const float ours = nvfp4::dequantize_element(code, scale, l->tensor_scale);
                const float expected = theirs[size_t(n * l->in_features + k)];
                if (std::fabs(ours - expected) > std::fabs(expected) * 0x1p-22f) ++beyond_two_ulp;
                nonzero += expected != 0.0f;
            }
        CHECK(beyond_two_ulp == 0);
        CHECK(nonzero > theirs.size() / 2);  // a real weight, not zeros
    }
    return int(linears.size());
}

// One of the checkpoints tests/fixtures/make_compressed_tensors_fixture.py saved with llm-compressor
// and compressed-tensors themselves, loaded on the CPU backend, and its reference.
std::shared_ptr<LoadedModel> load_compressed_tensors_fixture(const std::string &dir, TensorStore &ref) {
    REQUIRE_MESSAGE(file_exists(dir + "/reference.safetensors"),
                    "compressed-tensors fixture missing: run tests/fixtures/make_compressed_tensors_fixture.py");
    ref = TensorStore::open_file(dir + "/reference.safetensors");
    auto model = cpu_model(dir);
    CHECK(model->weights.checkpoint_format == CheckpointFormat::CompressedTensors);
    return model;
}

}  // namespace

// Scheme NVFP4: calibrated input global scales, lm_head in BF16 (ignored).
TEST_CASE("golden: a compressed-tensors checkpoint loads to its own dequantized weights and fake-quant logits") {
    const std::string dir = kFixtures + "ct-nvfp4-qwen3";
    TensorStore ref;
    const auto model = load_compressed_tensors_fixture(dir, ref);
    CHECK(model->weights_format == RESET_WEIGHTS_NVFP4_W4A16);
    CHECK(model->weights.lm_head.format == LinearFormat::BF16);  // ignore: ["lm_head"]
    CHECK(check_compressed_tensors_weights(*model, ref) == 7 * model->config.n_layers);
    for (const auto &layer : model->weights.layers) CHECK(layer.down.input_scale > 0.0f);  // calibrated

    const auto ids = ints_of(ref.get("input_ids"));
    // FP32 transformers forward on those weights, activations exact: FP32 reordering only, 1e-3
    // (measured: at most 8.4e-7, session 39).
    check_logits(dir, RESET_WEIGHTS_NVFP4_W4A16, ids, floats_of(ref.get("logits_w4a16")), 1e-3);
    // W4A4 against compressed-tensors' own fake quantization of weights and inputs (the model
    // llm-compressor calibrated, before it was saved); without the calibrated input scales the
    // logits move by 0.17-0.19.
    check_logits(dir, RESET_WEIGHTS_NVFP4_W4A4, ids, floats_of(ref.get("logits_fakequant")), 1e-3);
}

// Scheme NVFP4A16 (weights only: no input_activations, no input_global_scale) with nothing ignored:
// the lm_head is NVFP4 in the file too.  W4A4 then quantizes activations with each row's own scale,
// as for a checkpoint quantized on load.  And an FP8 kv_cache_scheme: per-layer calibrated scales
// (self_attn.k_scale, v_scale) that an FP8 cache divides by before rounding.
TEST_CASE("golden: a compressed-tensors NVFP4A16 checkpoint with an NVFP4 lm_head") {
    const std::string dir = kFixtures + "ct-nvfp4a16-head-qwen3";
    TensorStore ref;
    const auto model = load_compressed_tensors_fixture(dir, ref);
    CHECK(model->weights.lm_head.format == LinearFormat::NVFP4);
    CHECK(model->weights.n_bf16_linears == 0);
    CHECK(check_compressed_tensors_weights(*model, ref) == 7 * model->config.n_layers + 1);
    CHECK(model->weights.kv_cache_scales);
    for (size_t l = 0; l < model->weights.layers.size(); ++l) {
        const std::string p = "model.layers." + std::to_string(l) + ".self_attn.";
        CHECK(model->weights.layers[l].k_cache_scale == floats_of(model->store.get(p + "k_scale"))[0]);
        CHECK(model->weights.layers[l].v_cache_scale == floats_of(model->store.get(p + "v_scale"))[0]);
    }
    const auto ids = ints_of(ref.get("input_ids"));
    // Without cache rounding: the weights alone (FP32 reordering, 1e-3 as above).
    check_logits(dir, RESET_WEIGHTS_NVFP4_W4A16, ids, floats_of(ref.get("logits_w4a16")), 1e-3);
    // With the FP8 cache: compressed-tensors' own fake quantization of the cached keys and values
    // with its scales.  Measured at most 5.8e-7 (FP32 reordering: E4M3 rounding of x / scale is the
    // same on both sides), so 1e-5; with scale 1 the cache's small values fall into E4M3's
    // subnormals and the logits land 0.04-0.09 away (session 39).
    const std::vector<float> fake = floats_of(ref.get("logits_fakequant"));
    check_logits(dir, RESET_WEIGHTS_NVFP4_W4A16, ids, fake, 1e-5, false, RESET_KV_CACHE_FP8);
    Loaded m(dir, RESET_WEIGHTS_NVFP4_W4A4);
    reset_model_info info;
    reset_model_info_init(&info);
    REQUIRE(reset_model_get_info(m.model, &info) == RESET_OK);
    CHECK(info.dynamic_input_scale == 1);
    CHECK(info.lm_head_nvfp4 == 1);
    CHECK(info.checkpoint_format == RESET_CHECKPOINT_COMPRESSED_TENSORS);
}

namespace {

using QuantizationConfigEdit = std::function<void(nlohmann::json &)>;

// A fixture checkpoint copied to a new directory: its config.json (with its quantization_config
// edited), generation_config.json and hf_quant_config.json where it has them, and its tensors
// filtered and added to.
std::string edited_fixture(const std::string &source, const std::string &tag, const QuantizationConfigEdit &edit_config,
                           const std::function<bool(const std::string &)> &keep_tensor,
                           const std::vector<test_support::RawTensor> &extra) {
    nlohmann::json config = nlohmann::json::parse(read_text_file(source + "/config.json"));
    if (edit_config) edit_config(config["quantization_config"]);
    const TensorStore store = TensorStore::open_file(source + "/model.safetensors");
    std::vector<test_support::RawTensor> tensors;
    for (const auto &[name, view] : store.tensors())
        if (!keep_tensor || keep_tensor(name))
            tensors.push_back({name, dtype_name(view.dtype), view.shape,
                               std::string(reinterpret_cast<const char *>(view.data), view.nbytes)});
    tensors.insert(tensors.end(), extra.begin(), extra.end());
    const std::string dir = test_support::temp_directory(tag);
    test_support::write_file(dir + "/config.json", edit_config ? config.dump(1) : read_text_file(source + "/config.json"));
    for (const char *file : {"generation_config.json", "hf_quant_config.json"})
        if (file_exists(source + "/" + file)) test_support::write_file(dir + "/" + file, read_text_file(source + "/" + file));
    test_support::write_file(dir + "/model.safetensors", test_support::safetensors_bytes(tensors));
    return dir;
}

// The compressed-tensors fixture, edited so.
std::string edited_compressed_tensors(const std::string &tag, const QuantizationConfigEdit &edit_config,
                                      const std::function<bool(const std::string &)> &keep_tensor = nullptr,
                                      const std::vector<test_support::RawTensor> &extra = {}) {
    return edited_fixture(kFixtures + "ct-nvfp4-qwen3", tag, edit_config, keep_tensor, extra);
}

std::string f32_bytes(float value) {
    std::string bytes(4, '\0');
    std::memcpy(bytes.data(), &value, 4);
    return bytes;
}

reset_checkpoint_format checkpoint_format_of(const std::string &dir) {
    reset_model_options options;
    reset_model_options_init(&options);
    options.backend = RESET_BACKEND_CPU;
    reset_model *model = nullptr;
    REQUIRE(reset_model_load(dir.c_str(), &options, &model) == RESET_OK);
    reset_model_info info;
    reset_model_info_init(&info);
    REQUIRE(reset_model_get_info(model, &info) == RESET_OK);
    reset_model_free(model);
    CHECK(info.from_modelopt == (info.checkpoint_format == RESET_CHECKPOINT_MODELOPT));
    return info.checkpoint_format;
}

}  // namespace

TEST_CASE("reset_model_info.checkpoint_format names where the NVFP4 codes came from") {
    REQUIRE(have_fixtures());
    CHECK(checkpoint_format_of(kFixtures + "qwen3-tied") == RESET_CHECKPOINT_UNQUANTIZED);
    CHECK(checkpoint_format_of(kFixtures + "modelopt-qwen3") == RESET_CHECKPOINT_MODELOPT);
    CHECK(checkpoint_format_of(kFixtures + "ct-nvfp4-qwen3") == RESET_CHECKPOINT_COMPRESSED_TENSORS);
    // A caller built against 0.9's header passes a struct without the field: nothing is written past it.
    reset_model *model = nullptr;
    REQUIRE(reset_model_load((kFixtures + "ct-nvfp4-qwen3").c_str(), nullptr, &model) == RESET_OK);
    reset_model_info info;
    std::memset(&info, 0x5a, sizeof info);
    reset_model_info_init_sized(&info, offsetof(reset_model_info, checkpoint_format));
    REQUIRE(reset_model_get_info(model, &info) == RESET_OK);
    int32_t past_the_struct;  // read as bytes: 0x5a5a5a5a is no reset_checkpoint_format (UBSan)
    std::memcpy(&past_the_struct, reinterpret_cast<const char *>(&info) + offsetof(reset_model_info, checkpoint_format), 4);
    CHECK(past_the_struct == 0x5a5a5a5a);
    CHECK(info.n_layers == 2);
    reset_model_free(model);
}

TEST_CASE("compressed-tensors features that are not supported are refused, not loaded wrongly") {
    using Edit = std::function<void(nlohmann::json &)>;
    struct Case {
        const char *what;
        Edit edit;
        const char *message;
    };
    const Case cases[] = {
        {"int4 weights", [](nlohmann::json &q) { q["format"] = "pack-quantized"; q["config_groups"]["group_0"]["format"] = "pack-quantized"; },
         "format \"pack-quantized\" is not supported"},
        {"8-bit weights", [](nlohmann::json &q) { q["config_groups"]["group_0"]["weights"]["num_bits"] = 8; },
         "weights: num_bits 8 is not supported"},
        {"integer weights", [](nlohmann::json &q) { q["config_groups"]["group_0"]["weights"]["type"] = "int"; },
         "weights: type \"int\" is not supported"},
        {"MXFP4 groups of 32", [](nlohmann::json &q) { q["config_groups"]["group_0"]["weights"]["group_size"] = 32; },
         "group_size 32 is not supported"},
        {"a per-group strategy", [](nlohmann::json &q) { q["config_groups"]["group_0"]["weights"]["strategy"] = "group"; },
         "strategy \"group\" is not supported"},
        {"asymmetric weights", [](nlohmann::json &q) { q["config_groups"]["group_0"]["weights"]["symmetric"] = false; },
         "symmetric false is not supported"},
        {"8-bit input activations",
         [](nlohmann::json &q) { q["config_groups"]["group_0"]["input_activations"]["num_bits"] = 8; },
         "input_activations: num_bits 8 is not supported"},
        {"quantized outputs",
         [](nlohmann::json &q) { q["config_groups"]["group_0"]["output_activations"] = q["config_groups"]["group_0"]["weights"]; },
         "quantizes output activations"},
        {"weights not stored compressed", [](nlohmann::json &q) { q["quantization_status"] = "frozen"; },
         "quantization_status \"frozen\""},
        {"rotations", [](nlohmann::json &q) { q["transform_config"] = {{"config_groups", {{"u", {{"type", "hadamard"}}}}}}; },
         "transform_config"},
        {"sparse weights", [](nlohmann::json &q) { q["sparsity_config"] = {{"format", "sparse-24-bitmask"}}; },
         "sparsity_config"},
        {"no config groups", [](nlohmann::json &q) { q.erase("config_groups"); }, "no config_groups"},
        {"no format", [](nlohmann::json &q) { q.erase("format"); q["config_groups"]["group_0"].erase("format"); },
         "names no format"},
        {"another quant_method", [](nlohmann::json &q) { q["quant_method"] = "awq"; }, "quant_method \"awq\" is not supported"},
    };
    for (const Case &c : cases) {
        CAPTURE(std::string(c.what));
        const std::string dir = edited_compressed_tensors("ct-refused", c.edit);
        reset_model *model = nullptr;
        const reset_status status = reset_model_load(dir.c_str(), nullptr, &model);
        CHECK((status == RESET_ERR_UNSUPPORTED || status == RESET_ERR_FORMAT));
        CHECK(model == nullptr);
        CHECK(test_support::last_error().find(c.message) != std::string::npos);
        CHECK(test_support::last_error().find("config.json") != std::string::npos);
    }

    const auto keep_all = [](nlohmann::json &) {};
    const std::string down = "model.layers.1.mlp.down_proj";
    reset_model *model = nullptr;
    // Configs that change nothing load: a "dense" sparsity format, transforms without groups.
    for (const auto &edit : std::vector<std::function<void(nlohmann::json &)>>{
             [](nlohmann::json &q) { q["sparsity_config"] = {{"format", "dense"}, {"global_sparsity", 0.0}}; },
             [](nlohmann::json &q) { q["transform_config"] = {{"config_groups", nlohmann::json::object()}}; },
             [](nlohmann::json &q) { q["sparsity_config"] = nullptr; q.erase("transform_config"); }}) {
        const std::string dir = edited_compressed_tensors("ct-inert", edit);
        const reset_status status = reset_model_load(dir.c_str(), nullptr, &model);
        INFO(test_support::last_error());
        CHECK(status == RESET_OK);
        reset_model_free(model);
        model = nullptr;
    }
    // A zero point (asymmetric codes) on one linear.
    std::string dir = edited_compressed_tensors("ct-zero-point", keep_all, nullptr,
                                                {{down + ".weight_zero_point", "F8_E4M3", {64, 8}, std::string(512, '\0')}});
    CHECK(reset_model_load(dir.c_str(), nullptr, &model) == RESET_ERR_UNSUPPORTED);
    CHECK(test_support::last_error().find(down + ".weight_zero_point") != std::string::npos);
    // A global scale without a finite reciprocal.
    for (const float bad : {0.0f, 1e-40f, -2.0f, NAN}) {
        CAPTURE(bad);
        dir = edited_compressed_tensors(
            "ct-bad-global-scale", keep_all, [&](const std::string &name) { return name != down + ".weight_global_scale"; },
            {{down + ".weight_global_scale", "F32", {1}, f32_bytes(bad)}});
        CHECK(reset_model_load(dir.c_str(), nullptr, &model) == RESET_ERR_FORMAT);
        CHECK(test_support::last_error().find(down + ".weight_global_scale") != std::string::npos);
    }
    // A missing global scale is named.
    dir = edited_compressed_tensors("ct-no-global-scale", keep_all,
                                    [&](const std::string &name) { return name != down + ".weight_global_scale"; });
    CHECK(reset_model_load(dir.c_str(), nullptr, &model) == RESET_ERR_SHAPE);
    CHECK(test_support::last_error().find(down + ".weight_global_scale") != std::string::npos);
    // Codes stored under the dense name are not compressed-tensors' layout.
    dir = edited_compressed_tensors("ct-codes-as-weight", keep_all,
                                    [&](const std::string &name) { return name != down + ".weight_packed"; },
                                    {{down + ".weight", "U8", {64, 64}, std::string(64 * 64, '\x11')}});
    CHECK(reset_model_load(dir.c_str(), nullptr, &model) == RESET_ERR_SHAPE);
    CHECK(test_support::last_error().find(down + ".weight_packed") != std::string::npos);
    // Loading it as BF16 would be a silent dequantization.
    reset_model_options options;
    reset_model_options_init(&options);
    options.weights = RESET_WEIGHTS_BF16;
    CHECK(reset_model_load((kFixtures + "ct-nvfp4-qwen3").c_str(), &options, &model) == RESET_ERR_UNSUPPORTED);
    CHECK(test_support::last_error().find("compressed-tensors") != std::string::npos);
    CHECK(model == nullptr);
}

// Calibrated FP8 KV-cache scales under both names vLLM reads: llm-compressor's self_attn.k_scale /
// v_scale (the NVFP4A16 fixture has them) and ModelOpt's self_attn.k_proj.k_scale / v_proj.v_scale;
// every layer has both or none, each finite and positive.
TEST_CASE("KV-cache scales: ModelOpt's names are read; a partial or bad set is refused") {
    const auto scale_tensor = [](const std::string &name, float value, std::vector<int64_t> shape) {
        return test_support::RawTensor{name, "F32", std::move(shape), f32_bytes(value)};
    };
    // ModelOpt: scalar tensors beside k_proj and v_proj.
    std::vector<test_support::RawTensor> scales;
    for (int l = 0; l < 2; ++l) {
        const std::string p = "model.layers." + std::to_string(l) + ".self_attn.";
        scales.push_back(scale_tensor(p + "k_proj.k_scale", 0.25f + float(l), {}));
        scales.push_back(scale_tensor(p + "v_proj.v_scale", 0.5f + float(l), {}));
    }
    const std::string dir = edited_fixture(kFixtures + "modelopt-qwen3", "modelopt-kv-scales", nullptr, nullptr, scales);
    {
        const auto model = cpu_model(dir);
        CHECK(model->weights.kv_cache_scales);
        CHECK(model->weights.layers[1].k_cache_scale == 1.25f);
        CHECK(model->weights.layers[1].v_cache_scale == 1.5f);
    }
    CHECK(checkpoint_format_of(dir) == RESET_CHECKPOINT_MODELOPT);
    reset_model *model = nullptr;
    REQUIRE(reset_model_load((kFixtures + "modelopt-qwen3").c_str(), nullptr, &model) == RESET_OK);
    reset_model_info info;
    reset_model_info_init_sized(&info, sizeof info);
    REQUIRE(reset_model_get_info(model, &info) == RESET_OK);
    CHECK(info.kv_cache_scales == 0);
    reset_model_free(model);

    // compressed-tensors: a partial or bad set.
    const auto keep_all = [](nlohmann::json &) {};
    const std::string k0 = "model.layers.0.self_attn.k_scale", v0 = "model.layers.0.self_attn.v_scale";
    struct Case {
        const char *what;
        std::vector<test_support::RawTensor> extra;
        const char *message;
    };
    const Case cases[] = {
        {"K without V", {scale_tensor(k0, 0.5f, {1})}, "has no V scale beside it"},
        {"layer 0 only", {scale_tensor(k0, 0.5f, {1}), scale_tensor(v0, 0.5f, {1})},
         "layer 1 has no calibrated KV-cache scales"},
        {"a zero scale", {scale_tensor(k0, 0.0f, {1}), scale_tensor(v0, 0.5f, {1})}, "not a positive KV-cache scale"},
        {"an infinite scale", {scale_tensor(k0, INFINITY, {1}), scale_tensor(v0, 0.5f, {1})}, "not a finite"},
        {"two values", {{k0, "F32", {2}, f32_bytes(0.5f) + f32_bytes(0.5f)}, scale_tensor(v0, 0.5f, {1})},
         "expected a scalar F32"},
    };
    for (const Case &c : cases) {
        CAPTURE(std::string(c.what));
        const std::string bad = edited_compressed_tensors("ct-kv-scales", keep_all, nullptr, c.extra);
        const reset_status status = reset_model_load(bad.c_str(), nullptr, &model);
        CHECK((status == RESET_ERR_FORMAT || status == RESET_ERR_SHAPE));
        CHECK(model == nullptr);
        CHECK(test_support::last_error().find(c.message) != std::string::npos);
    }
}

// A sequence saved from an FP8 cache with calibrated scales holds E4M3 bytes of x / scale: it loads
// back to the same logits, bit for bit, and only into a model with the same scales (the identity's
// fingerprint covers them for FP8 caches; a BF16 cache's does not change).
TEST_CASE("KV-cache scales: an FP8 sequence saved and loaded again; the fingerprint covers the scales") {
    const std::string dir = kFixtures + "ct-nvfp4a16-head-qwen3";
    const auto ids = ints_of(TensorStore::open_file(dir + "/reference.safetensors").get("input_ids"));
    Loaded saved(dir, RESET_WEIGHTS_NVFP4_W4A16, false, RESET_KV_CACHE_FP8);
    REQUIRE(reset_prefill(saved.session, ids.data(), ids.size()) == RESET_OK);
    size_t size = 0;
    REQUIRE(reset_save_sequence_to_memory(saved.session, 0, nullptr, 0, &size) == RESET_ERR_BUFFER_TOO_SMALL);
    std::vector<uint8_t> image(size);
    REQUIRE(reset_save_sequence_to_memory(saved.session, 0, image.data(), image.size(), &size) == RESET_OK);
    Loaded loaded(dir, RESET_WEIGHTS_NVFP4_W4A16, false, RESET_KV_CACHE_FP8);
    REQUIRE(reset_load_sequence_from_memory(loaded.session, 0, image.data(), size) == RESET_OK);
    const int32_t next = 7;
    std::vector<float> a(512), b(512);
    REQUIRE(reset_prefill(saved.session, &next, 1) == RESET_OK);
    REQUIRE(reset_prefill(loaded.session, &next, 1) == RESET_OK);
    REQUIRE(reset_session_logits(saved.session, 0, a.data(), a.size()) == RESET_OK);
    REQUIRE(reset_session_logits(loaded.session, 0, b.data(), b.size()) == RESET_OK);
    CHECK(a == b);

    // The same weights without the scales (the fixture's K/V scale tensors dropped).
    const std::string source = kFixtures + "ct-nvfp4-qwen3";
    const auto with_scales = cpu_model(edited_compressed_tensors(
        "ct-kv-scaled", [](nlohmann::json &) {}, nullptr,
        {{"model.layers.0.self_attn.k_scale", "F32", {1}, f32_bytes(0.5f)},
         {"model.layers.0.self_attn.v_scale", "F32", {1}, f32_bytes(0.25f)},
         {"model.layers.1.self_attn.k_scale", "F32", {1}, f32_bytes(0.5f)},
         {"model.layers.1.self_attn.v_scale", "F32", {1}, f32_bytes(0.25f)}}));
    const auto without = cpu_model(source);
    CHECK(with_scales->weights.kv_cache_scales);
    CHECK_FALSE(without->weights.kv_cache_scales);
    CHECK(sequence_file_identity(*with_scales, RESET_KV_CACHE_FP8).fingerprint !=
          sequence_file_identity(*without, RESET_KV_CACHE_FP8).fingerprint);
    CHECK(sequence_file_identity(*with_scales, RESET_KV_CACHE_BF16).fingerprint ==
          sequence_file_identity(*without, RESET_KV_CACHE_BF16).fingerprint);
}

TEST_CASE("ModelOpt features that are not supported are refused, not loaded wrongly") {
    const std::string source = kFixtures + "modelopt-qwen3";
    REQUIRE(file_exists(source + "/model.safetensors"));
    // The real export, plus an AWQ-style pre_quant_scale on one linear.
    const std::string dir = edited_fixture(
        source, "awq", nullptr, nullptr,
        {{"model.layers.1.mlp.down_proj.pre_quant_scale", "BF16", {128}, std::string(256, '\x3f')}});
    reset_model *model = nullptr;
    CHECK(reset_model_load(dir.c_str(), nullptr, &model) == RESET_ERR_UNSUPPORTED);
    CHECK(std::string(reset_last_error()).find("pre_quant_scale") != std::string::npos);
    CHECK(model == nullptr);

    // A ModelOpt checkpoint cannot be loaded as BF16: that would be a silent dequantization.
    reset_model_options options;
    reset_model_options_init(&options);
    options.weights = RESET_WEIGHTS_BF16;
    CHECK(reset_model_load(source.c_str(), &options, &model) == RESET_ERR_UNSUPPORTED);
}
