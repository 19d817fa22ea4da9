// test_support.h — what the unit tests share: temporary directories, a
// safetensors writer (the format written byte by byte, independently of the
// reader under test), and tiny random models in the Hugging Face layout.
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "reset.h"

namespace test_support {

// The message of this thread's last failing call, as a string to search.
inline std::string last_error() { return reset_last_error(); }

// Handles freed however a test leaves its scope.
struct ModelGuard {
    reset_model *model = nullptr;
    ~ModelGuard() { reset_model_free(model); }
};
struct SessionGuard {
    reset_session *session = nullptr;
    ~SessionGuard() { reset_session_free(session); }
};

// tests/fixtures/chat-model (Qwen3, 512 ids, a sentencepiece tokenizer with byte fallback), loaded
// with the default options; the test stops if it does not load.
inline reset_model *load_chat_model() {
    reset_model_options options;
    reset_model_options_init(&options);
    reset_model *model = nullptr;
    const std::string dir = std::string(RESET_SOURCE_DIR) + "/tests/fixtures/chat-model";
    const reset_status status = reset_model_load(dir.c_str(), &options, &model);
    INFO(reset_last_error());
    REQUIRE(status == RESET_OK);
    return model;
}

// A session of `sequences` sequences and `max_context` positions, with the other options' defaults.
inline reset_session *create_session(reset_model *model, int32_t sequences, int32_t max_context) {
    reset_session_options options;
    reset_session_options_init(&options);
    options.sequences = sequences;
    options.max_context = max_context;
    reset_session *session = nullptr;
    const reset_status status = reset_session_create(model, &options, &session);
    INFO(reset_last_error());
    REQUIRE(status == RESET_OK);
    return session;
}

// A fresh directory under $TMPDIR, removed at exit of the test program.
inline std::string temp_directory(const std::string &tag) {
    const char *base = std::getenv("TMPDIR");
    std::string pattern = std::string(base ? base : "/tmp") + "/reset-test-" + tag + "-XXXXXX";
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    if (!mkdtemp(buffer.data())) std::abort();
    return std::string(buffer.data());
}

inline void write_file(const std::string &path, const std::string &bytes) {
    std::ofstream out(path, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

struct RawTensor {
    std::string name;
    std::string dtype;            // "BF16", "F32", "U8", ...
    std::vector<int64_t> shape;
    std::string bytes;            // little-endian payload
};

// Serialise tensors in the order given, contiguous, no padding.
inline std::string safetensors_bytes(const std::vector<RawTensor> &tensors, const std::string &metadata = "") {
    std::string header = "{";
    if (!metadata.empty()) header += "\"__metadata__\":" + metadata + ",";
    size_t offset = 0;
    for (size_t i = 0; i < tensors.size(); ++i) {
        const RawTensor &t = tensors[i];
        std::string shape;
        for (size_t d = 0; d < t.shape.size(); ++d) shape += (d ? "," : "") + std::to_string(t.shape[d]);
        header += (i ? "," : "") + std::string("\"") + t.name + "\":{\"dtype\":\"" + t.dtype + "\",\"shape\":[" + shape +
                  "],\"data_offsets\":[" + std::to_string(offset) + "," + std::to_string(offset + t.bytes.size()) + "]}";
        offset += t.bytes.size();
    }
    header += "}";
    while (header.size() % 8) header += ' ';
    std::string out(8, '\0');
    const uint64_t n = header.size();
    for (int i = 0; i < 8; ++i) out[size_t(i)] = static_cast<char>((n >> (8 * i)) & 0xff);
    out += header;
    for (const auto &t : tensors) out += t.bytes;
    return out;
}

inline uint16_t to_bf16(float v) {
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    bits += 0x7fffu + ((bits >> 16) & 1u);
    return static_cast<uint16_t>(bits >> 16);
}

inline RawTensor random_bf16(const std::string &name, std::vector<int64_t> shape, std::mt19937 &rng, float scale,
                             float offset = 0.0f) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::string bytes(size_t(n) * 2, '\0');
    for (int64_t i = 0; i < n; ++i) {
        const uint16_t b = to_bf16(offset + scale * normal(rng));
        std::memcpy(&bytes[size_t(i) * 2], &b, 2);
    }
    return {name, "BF16", shape, bytes};
}

struct TinyShape {
    std::string architecture = "qwen3";
    int vocab = 64, hidden = 32, layers = 2, heads = 4, kv_heads = 2, head_dim = 16, intermediate = 48;
    bool tied = false;
    int max_position = 64;
};

inline std::string tiny_config_json(const TinyShape &s) {
    return "{\"model_type\":\"" + s.architecture + "\",\"vocab_size\":" + std::to_string(s.vocab) +
           ",\"hidden_size\":" + std::to_string(s.hidden) + ",\"num_hidden_layers\":" + std::to_string(s.layers) +
           ",\"num_attention_heads\":" + std::to_string(s.heads) + ",\"num_key_value_heads\":" + std::to_string(s.kv_heads) +
           ",\"head_dim\":" + std::to_string(s.head_dim) + ",\"intermediate_size\":" + std::to_string(s.intermediate) +
           ",\"max_position_embeddings\":" + std::to_string(s.max_position) + ",\"rms_norm_eps\":1e-6,\"rope_theta\":10000" +
           ",\"tie_word_embeddings\":" + (s.tied ? "true" : "false") + ",\"hidden_act\":\"silu\",\"eos_token_id\":1}";
}

// Every tensor a model of this shape needs, random (never zeros).
inline std::vector<RawTensor> tiny_tensors(const TinyShape &s, uint32_t seed) {
    std::mt19937 rng(seed);
    std::vector<RawTensor> t;
    const int64_t q = int64_t(s.heads) * s.head_dim, kv = int64_t(s.kv_heads) * s.head_dim;
    t.push_back(random_bf16("model.embed_tokens.weight", {s.vocab, s.hidden}, rng, 0.5f));
    for (int l = 0; l < s.layers; ++l) {
        const std::string p = "model.layers." + std::to_string(l) + ".";
        t.push_back(random_bf16(p + "input_layernorm.weight", {s.hidden}, rng, 0.1f, 1.0f));
        t.push_back(random_bf16(p + "post_attention_layernorm.weight", {s.hidden}, rng, 0.1f, 1.0f));
        t.push_back(random_bf16(p + "self_attn.q_proj.weight", {q, s.hidden}, rng, 0.2f));
        t.push_back(random_bf16(p + "self_attn.k_proj.weight", {kv, s.hidden}, rng, 0.2f));
        t.push_back(random_bf16(p + "self_attn.v_proj.weight", {kv, s.hidden}, rng, 0.2f));
        t.push_back(random_bf16(p + "self_attn.o_proj.weight", {s.hidden, q}, rng, 0.2f));
        if (s.architecture == "qwen3") {
            t.push_back(random_bf16(p + "self_attn.q_norm.weight", {s.head_dim}, rng, 0.1f, 1.0f));
            t.push_back(random_bf16(p + "self_attn.k_norm.weight", {s.head_dim}, rng, 0.1f, 1.0f));
        }
        if (s.architecture == "qwen2") {
            t.push_back(random_bf16(p + "self_attn.q_proj.bias", {q}, rng, 0.1f));
            t.push_back(random_bf16(p + "self_attn.k_proj.bias", {kv}, rng, 0.1f));
            t.push_back(random_bf16(p + "self_attn.v_proj.bias", {kv}, rng, 0.1f));
        }
        t.push_back(random_bf16(p + "mlp.gate_proj.weight", {s.intermediate, s.hidden}, rng, 0.2f));
        t.push_back(random_bf16(p + "mlp.up_proj.weight", {s.intermediate, s.hidden}, rng, 0.2f));
        t.push_back(random_bf16(p + "mlp.down_proj.weight", {s.hidden, s.intermediate}, rng, 0.2f));
    }
    t.push_back(random_bf16("model.norm.weight", {s.hidden}, rng, 0.1f, 1.0f));
    if (!s.tied) t.push_back(random_bf16("lm_head.weight", {s.vocab, s.hidden}, rng, 0.5f));
    return t;
}

// Write a model directory of this shape holding `tensors` and return its path.
inline std::string write_model(const TinyShape &shape, const std::vector<RawTensor> &tensors, const std::string &tag) {
    const std::string dir = temp_directory(tag);
    write_file(dir + "/config.json", tiny_config_json(shape));
    write_file(dir + "/model.safetensors", safetensors_bytes(tensors));
    return dir;
}

// Write a complete tiny model directory and return its path.
inline std::string write_tiny_model(const TinyShape &shape, uint32_t seed, const std::string &tag) {
    return write_model(shape, tiny_tensors(shape, seed), tag);
}

}  // namespace test_support
