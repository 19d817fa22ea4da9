// Golden tests: the CPU reference engine against transformers (FP32 on the
// BF16 weights) and against an independent PyTorch implementation of
// nvfp4.md, on the fixture models made by tests/fixtures/make_fixtures.py.
//
// Tolerances: both sides compute in FP32 with different summation orders, so
// logits agree to ~1e-6 relative; 1e-3 (the bound) catches any
// semantic error (a wrong norm, RoPE pair or scale moves logits by >1e-2).
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "engine/loaded_model.h"
#include "model/safetensors.h"
#include "reset.h"
#include "rules/nvfp4.h"
#include "util/files.h"

using namespace reset;

namespace {

const std::string kFixtures = std::string(RESET_SOURCE_DIR) + "/tests/fixtures/models/";
const char *kModels[] = {"qwen3-tied", "qwen2-bias-sharded", "llama3-scaled"};

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
    Loaded(const std::string &dir, reset_weights weights) {
        reset_model_options options;
        reset_model_options_init(&options);
        options.weights = weights;
        const reset_status status = reset_model_load(dir.c_str(), &options, &model);
        INFO(reset_last_error());
        REQUIRE(status == RESET_OK);
        REQUIRE(reset_session_create(model, nullptr, &session) == RESET_OK);
    }
    ~Loaded() {
        reset_session_free(session);
        reset_model_free(model);
    }
};

// Feed the prompt one token at a time and compare the logits at every position.
void check_logits(const std::string &dir, reset_weights weights, const std::vector<int32_t> &ids,
                  const std::vector<float> &reference, double tolerance) {
    Loaded m(dir, weights);
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
                  const std::vector<int32_t> &expected) {
    Loaded m(dir, weights);
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
        CAPTURE(name);
        const std::string dir = kFixtures + name;
        const TensorStore ref = TensorStore::open_file(dir + "/reference.safetensors");
        const auto ids = ints_of(ref.get("input_ids"));
        check_logits(dir, RESET_WEIGHTS_BF16, ids, floats_of(ref.get("logits_bf16")), 1e-3);
        check_greedy(dir, RESET_WEIGHTS_BF16, ids, ints_of(ref.get("greedy_bf16")));
    }
}

TEST_CASE("golden: NVFP4 W4A16 and W4A4 logits match the PyTorch NVFP4 reference") {
    REQUIRE(have_fixtures());
    for (const char *name : kModels) {
        CAPTURE(name);
        const std::string dir = kFixtures + name;
        const TensorStore ref = TensorStore::open_file(dir + "/reference.safetensors");
        const auto ids = ints_of(ref.get("input_ids"));
        check_logits(dir, RESET_WEIGHTS_NVFP4_W4A16, ids, floats_of(ref.get("logits_w4a16")), 1e-3);
        check_logits(dir, RESET_WEIGHTS_NVFP4_W4A4, ids, floats_of(ref.get("logits_w4a4")), 1e-3);
        check_greedy(dir, RESET_WEIGHTS_NVFP4_W4A16, ids, ints_of(ref.get("greedy_w4a16")));
        check_greedy(dir, RESET_WEIGHTS_NVFP4_W4A4, ids, ints_of(ref.get("greedy_w4a4")));
    }
}

TEST_CASE("golden: the quantizer is bit-exact against the reference script") {
    REQUIRE(have_fixtures());
    for (const char *name : kModels) {
        CAPTURE(name);
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

TEST_CASE("golden: a ModelOpt export loads to ModelOpt's own dequantized weights and fake-quant logits") {
    const std::string dir = kFixtures + "modelopt-qwen3";
    REQUIRE_MESSAGE(file_exists(dir + "/reference.safetensors"),
                    "ModelOpt fixture missing: run tests/fixtures/make_modelopt_fixture.py (see its README)");
    const TensorStore ref = TensorStore::open_file(dir + "/reference.safetensors");
    reset_model_options options;
    reset_model_options_init(&options);
    const auto model = load_model(dir, options);
    CHECK(model->weights.from_modelopt);
    CHECK(model->weights_format == RESET_WEIGHTS_NVFP4_W4A16);
    int checked = 0;
    for (const auto &layer : model->weights.layers) {
        for (const Linear *l : {&layer.q, &layer.k, &layer.v, &layer.o, &layer.gate, &layer.up, &layer.down}) {
            CAPTURE(l->name);
            REQUIRE(l->format == LinearFormat::NVFP4);
            const std::vector<float> expected = floats_of(ref.get("dequant." + l->name));
            REQUIRE(expected.size() == size_t(l->out_features * l->in_features));
            size_t mismatches = 0;
            for (int64_t n = 0; n < l->out_features; ++n)
                for (int64_t k = 0; k < l->in_features; ++k) {
                    const float mine = nvfp4::dequantize_element(
                        nvfp4::packed_code(l->codes.data() + n * l->padded_in / 2, int(k)),
                        nvfp4::e4m3_to_float(l->scales[size_t(n * l->padded_in / 16 + k / 16)]), l->tensor_scale);
                    if (mine != expected[size_t(n * l->in_features + k)]) ++mismatches;
                }
            CHECK(mismatches == 0);
            ++checked;
        }
    }
    CHECK(checked == 7 * model->config.n_layers);
    const auto ids = ints_of(ref.get("input_ids"));
    // ModelOpt's fake quantization is W4A4 with its calibrated input scales.
    // Its activation quantizer rounds like ours but sums in another order:
    // 1e-3 bounds FP32 reordering, as for the other NVFP4 references.
    check_logits(dir, RESET_WEIGHTS_NVFP4_W4A4, ids, floats_of(ref.get("logits_fakequant")), 1e-3);
}
