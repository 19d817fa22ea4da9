// config.json / generation_config.json: every family, both RoPE spellings,
// and the errors for what is not supported.
#include <doctest/doctest.h>

#include <cmath>

#include "api/errors.h"
#include "engine/loaded_model.h"
#include "model/config.h"

using namespace reset;

namespace {
reset_status parse_status(const std::string &json, std::string *message = nullptr) {
    try {
        parse_model_config(json, "", "config.json");
    } catch (const Error &e) {
        if (message) *message = e.what();
        return e.status();
    }
    return RESET_OK;
}
const std::string kBase =
    "\"vocab_size\":100,\"hidden_size\":64,\"num_hidden_layers\":2,\"num_attention_heads\":4,"
    "\"intermediate_size\":128";
}  // namespace

TEST_CASE("qwen3: explicit head_dim, q/k norms, no biases") {
    const ModelConfig c = parse_model_config(
        "{\"model_type\":\"qwen3\"," + kBase + ",\"num_key_value_heads\":2,\"head_dim\":24,\"tie_word_embeddings\":true}",
        "{\"eos_token_id\":[5,7],\"do_sample\":true,\"temperature\":0.6,\"top_p\":0.95,\"top_k\":20,"
        "\"repetition_penalty\":1.05}", "config.json");
    CHECK(c.generation.repetition_penalty == doctest::Approx(1.05));
    CHECK(c.head_dim == 24);
    CHECK(c.qk_norm);
    CHECK_FALSE(c.attention_bias);
    CHECK(c.tie_word_embeddings);
    CHECK(c.eos_ids == std::vector<int32_t>{5, 7});
    CHECK(c.generation.do_sample);
    CHECK(c.generation.top_k == 20);
    CHECK(c.generation.temperature == doctest::Approx(0.6));
}

TEST_CASE("qwen2: q/k/v biases, head_dim from hidden/heads") {
    const ModelConfig c = parse_model_config("{\"model_type\":\"qwen2\"," + kBase + "}", "", "config.json");
    CHECK(c.head_dim == 16);
    CHECK(c.attention_bias);
    CHECK_FALSE(c.output_bias);
    CHECK(c.n_kv_heads == 4);
}

TEST_CASE("llama3 rope scaling, in the classic and in the transformers 5 spelling") {
    const std::string scaling =
        "{\"rope_type\":\"llama3\",\"factor\":8.0,\"low_freq_factor\":1.0,\"high_freq_factor\":4.0,"
        "\"original_max_position_embeddings\":64";
    const ModelConfig classic = parse_model_config(
        "{\"model_type\":\"llama\"," + kBase + ",\"rope_theta\":500000,\"rope_scaling\":" + scaling + "}}", "", "c");
    const ModelConfig v5 = parse_model_config(
        "{\"model_type\":\"llama\"," + kBase + ",\"rope_parameters\":" + scaling + ",\"rope_theta\":500000}}", "", "c");
    for (const ModelConfig *c : {&classic, &v5}) {
        CHECK(c->rope_scaling.enabled);
        CHECK(c->rope_theta == 500000.0);
        CHECK(c->rope_scaling.original_max_position_embeddings == 64);
    }
    // Scaling slows the low frequencies by `factor` and keeps the high ones.
    const auto plain = rope_inverse_frequencies(parse_model_config(
        "{\"model_type\":\"llama\"," + kBase + ",\"rope_theta\":500000}", "", "c"));
    const auto scaled = rope_inverse_frequencies(classic);
    CHECK(scaled.front() == plain.front());
    CHECK(scaled.back() == doctest::Approx(plain.back() / 8.0));
}

// YaRN as transformers' _compute_yarn_parameters reads it; the frequencies themselves are checked against
// transformers' own in test_golden.cpp (the qwen3-yarn fixture).
TEST_CASE("yarn rope scaling: Qwen3's recipe, both spellings, the attention factor's rules, the context") {
    const std::string base = "{\"model_type\":\"qwen3\"," + kBase + ",\"head_dim\":128,\"max_position_embeddings\":40960,";
    const std::string qwen3 = R"({"rope_type":"yarn","factor":4.0,"original_max_position_embeddings":32768})";
    const ModelConfig classic = parse_model_config(base + "\"rope_theta\":1000000,\"rope_scaling\":" + qwen3 + "}", "", "c");
    const ModelConfig v5 = parse_model_config(
        base + "\"rope_parameters\":" + qwen3.substr(0, qwen3.size() - 1) + ",\"rope_theta\":1000000}}", "", "c");
    for (const ModelConfig *c : {&classic, &v5}) {
        CHECK(c->yarn.enabled);
        CHECK_FALSE(c->rope_scaling.enabled);
        CHECK(c->yarn.factor == 4.0);
        CHECK(c->yarn.original_max_position_embeddings == 32768);
        CHECK(c->yarn.beta_fast == 32.0);
        CHECK(c->yarn.beta_slow == 1.0);
        CHECK(c->yarn.truncate);
        CHECK(c->yarn.attention_factor == doctest::Approx(0.1 * std::log(4.0) + 1.0).epsilon(1e-15));
        CHECK(c->max_position_embeddings == 131072);  // 4 x 32,768, as vLLM derives max_model_len
    }
    // The ramp: the fastest dimensions keep their frequency, the slowest run `factor` times slower, and
    // the frequencies stay in decreasing order through the blend.
    const auto plain = rope_inverse_frequencies(parse_model_config(base + "\"rope_theta\":1000000}", "", "c"));
    const auto scaled = rope_inverse_frequencies(classic);
    REQUIRE(scaled.size() == 64);
    CHECK(scaled.front() == plain.front());
    CHECK(scaled.back() == doctest::Approx(plain.back() / 4.0).epsilon(1e-6));
    for (size_t i = 1; i < scaled.size(); ++i) CHECK(scaled[i] < scaled[i - 1]);

    const auto parsed = [&](const std::string &scaling) {
        return parse_model_config(base + "\"rope_theta\":10000,\"rope_scaling\":" + scaling + "}", "", "c").yarn;
    };
    // mscale and mscale_all_dim together (DeepSeek's spelling): their ratio.
    const YarnRopeScaling ds = parsed(R"({"type":"yarn","factor":40,"original_max_position_embeddings":4096,)"
                                      R"("mscale":1.0,"mscale_all_dim":0.707,"beta_fast":0,"beta_slow":null})");
    CHECK(ds.attention_factor ==
          doctest::Approx((0.1 * std::log(40.0) + 1.0) / (0.1 * 0.707 * std::log(40.0) + 1.0)).epsilon(1e-15));
    CHECK(ds.beta_fast == 32.0);  // 0 and null are the defaults, as transformers' `or`
    CHECK(ds.beta_slow == 1.0);
    CHECK(parsed(R"({"rope_type":"yarn","factor":2,"attention_factor":1.25,"truncate":false})").attention_factor ==
          1.25);
    // No factor: max_position_embeddings over the original; no original: max_position_embeddings.
    const YarnRopeScaling derived = parsed(R"({"rope_type":"yarn","factor":null,"original_max_position_embeddings":10240})");
    CHECK(derived.factor == 4.0);
    CHECK(parsed(R"({"rope_type":"yarn","factor":2})").original_max_position_embeddings == 40960);
    // A factor of 1 scales nothing and keeps attention at 1.
    CHECK(parsed(R"({"rope_type":"yarn","factor":1})").attention_factor == 1.0);

    std::string message;
    for (const char *bad : {R"({"rope_type":"yarn","factor":0.5})", R"({"rope_type":"yarn","factor":-4})",
                            R"({"rope_type":"yarn","factor":4,"beta_fast":-1})",
                            R"({"rope_type":"yarn","factor":4,"attention_factor":-1})",
                            R"({"rope_type":"yarn","factor":"4"})", R"({"rope_type":"yarn","factor":4,"truncate":1})"}) {
        CAPTURE(bad);
        CHECK(parse_status(base + "\"rope_scaling\":" + bad + "}", &message) == RESET_ERR_FORMAT);
    }
    CHECK(parse_status(base + R"("rope_theta":1,"rope_scaling":{"rope_type":"yarn","factor":4}})", &message) ==
          RESET_ERR_FORMAT);
    CHECK(message.find("rope_theta") != std::string::npos);
    CHECK(parse_status(base + R"("rope_scaling":{"rope_type":"yarn","factor":4,"partial_rotary_factor":0.5}})",
                       &message) == RESET_ERR_UNSUPPORTED);
    CHECK(message.find("partial_rotary_factor") != std::string::npos);
}

TEST_CASE("unsupported architectures and features are named in the error") {
    std::string message;
    CHECK(parse_status("{\"model_type\":\"mistral\"," + kBase + "}", &message) == RESET_ERR_UNSUPPORTED);
    CHECK(message.find("mistral") != std::string::npos);
    CHECK(parse_status("{\"model_type\":\"llama\"," + kBase + ",\"rope_scaling\":{\"type\":\"longrope\",\"factor\":4}}",
                       &message) == RESET_ERR_UNSUPPORTED);
    CHECK(message.find("longrope") != std::string::npos);
    CHECK(message.find("yarn") != std::string::npos);  // among the supported ones it lists
    CHECK(parse_status("{\"model_type\":\"llama\"," + kBase + ",\"hidden_act\":\"gelu\"}") == RESET_ERR_UNSUPPORTED);
}

TEST_CASE("malformed configs are format errors") {
    std::string message;
    CHECK(parse_status("{\"model_type\":\"llama\"", &message) == RESET_ERR_FORMAT);
    CHECK(message.find("not valid JSON") != std::string::npos);
    CHECK(parse_status("{\"model_type\":\"llama\",\"vocab_size\":100}", &message) == RESET_ERR_FORMAT);
    CHECK(message.find("hidden_size") != std::string::npos);
    CHECK(parse_status("{\"model_type\":\"llama\"," + kBase + ",\"num_key_value_heads\":3}") == RESET_ERR_FORMAT);
    CHECK(parse_status("{\"model_type\":\"llama\"," + kBase + ",\"eos_token_id\":100}") == RESET_ERR_FORMAT);
    CHECK(parse_status("[]") == RESET_ERR_FORMAT);
    // A number past double's range: nlohmann::json throws out_of_range, not parse_error, which was
    // reported as an internal error until session 25 (found by tests/fuzz/fuzz_model_load.cpp).
    CHECK(parse_status("{\"model_type\":\"llama\"," + kBase + ",\"rms_norm_eps\":1e506}", &message) ==
          RESET_ERR_FORMAT);
    CHECK(message.find("1e506") != std::string::npos);
    // A sampling generation_config.json with an unusable temperature or top_p names the file (before session
    // 25 session creation failed with "policy parameter top_p is 20", as if the caller had passed it; found
    // by replaying the fuzz corpus on the CUDA backend).  Greedy ones keep the values unused, as transformers.
    const std::string config = "{\"model_type\":\"llama\"," + kBase + "}";
    for (const char *generation : {R"({"do_sample": true, "top_p": 20})", R"({"do_sample": true, "top_p": 0})",
                                   R"({"do_sample": true, "temperature": 0})",
                                   R"({"do_sample": true, "temperature": -1})", R"({"repetition_penalty": 0})",
                                   R"({"do_sample": false, "repetition_penalty": 11})"}) {
        try {
            parse_model_config(config, generation, "config.json");
            FAIL("accepted " << generation);
        } catch (const Error &e) {
            CHECK(e.status() == RESET_ERR_FORMAT);
            CHECK(std::string(e.what()).find("generation_config.json") != std::string::npos);
        }
    }
    CHECK(parse_model_config(config, R"({"do_sample": false, "top_p": 20, "top_k": -3})", "config.json")
              .generation.top_k == 0);
    CHECK(parse_model_config(config, R"({"do_sample": false})", "config.json").generation.repetition_penalty == 1.0f);
    CHECK(parse_model_config(config, R"({"do_sample": true, "top_k": 4294967297})", "config.json").generation.top_k ==
          INT32_MAX);
    // eos ids are range-checked as 64-bit values: 2^32 + 1 is not id 1.
    CHECK(parse_status("{\"model_type\":\"llama\"," + kBase + ",\"eos_token_id\":4294967297}") == RESET_ERR_FORMAT);
}
