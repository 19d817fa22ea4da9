// Tokenizer internals on the real tokenizers (skipped without ../shared):
// streaming never splits a character, decode(encode(s)) == s, the JSON
// reader, the pre-tokenizer regex rewrite and the chat template rules.
#include <doctest/doctest.h>

#include <filesystem>
#include <random>

#include "api/errors.h"
#include "text/chat_template.h"
#include "text/json_lite.h"
#include "text/pretokenizer.h"
#include "text/python_json.h"
#include "text/tokenizer.h"
#include "text/utf8.h"
#include "test_support.h"

using namespace reset;

namespace {

std::string shared_tokenizer(const char *relative) {
    const std::string path = std::string(RESET_SHARED_DIR) + "/data/tokenizers/" + relative;
    return std::filesystem::exists(path) ? path : std::string();
}

#define REQUIRE_SHARED(path)                                                                              \
    if (path.empty()) {                                                                                   \
        MESSAGE("skipped: ../shared/data/tokenizers is absent (the real tokenizers are not in the repo)"); \
        return;                                                                                           \
    }

// Streams ids one at a time and checks every piece is complete UTF-8 and the
// concatenation equals decode().
void check_stream(const Tokenizer &tok, const std::vector<int32_t> &ids) {
    StreamDecoder stream(tok);
    std::string streamed;
    for (int32_t id : ids) {
        const std::string piece = stream.push(id);
        CHECK(utf8::is_valid(piece));
        streamed += piece;
    }
    streamed += stream.finish();
    CHECK(streamed == tok.decode(ids, false));
}

const char *const kSamples[] = {
    "Hello, world! 1234567 \xF0\x9F\x91\xA8\xE2\x80\x8D\xF0\x9F\x91\xA9\xE2\x80\x8D\xF0\x9F\x91\xA7 emoji",
    "\xE4\xB8\xAD\xE6\x96\x87 \xED\x95\x9C\xEA\xB5\xAD\xEC\x96\xB4 \xD7\xA2\xD7\x91\xD7\xA8\xD7\x99\xD7\xAA",
    "\\frac{a}{b}\n\ndef f(x):\r\n    return x\t# done",
    "\xF0\x9F\x8F\xB3\xEF\xB8\x8F\xE2\x80\x8D\xF0\x9F\x8C\x88 \xF0\x9D\x94\x98 \xE2\x9D\xA4",
};

}  // namespace

TEST_CASE("json_lite parses escapes, surrogate pairs and rejects malformed input") {
    json_lite::Document doc(R"({"a": [1, -2.5e1, true, null], "s": "x\u00e9\ud83d\ude00\n\"", "o": {}})", "t");
    const auto &root = doc.root();
    REQUIRE(root.find("a"));
    CHECK(root.find("a")->items.size() == 4);
    CHECK(root.find("a")->items[1].number == -25.0);
    CHECK(root.find("s")->text == "x\xC3\xA9\xF0\x9F\x98\x80\n\"");
    CHECK(root.find("o")->is_object());
    // Leading zeros: found by tests/fuzz/fuzz_json.cpp against nlohmann::json (RFC 8259 refuses them).
    for (const char *bad : {"{\"a\": 1,}", "[1 2]", "\"\\ud800\"", "{\"a\"}", "tru", "\"abc", "00", "[-01]", "01.5"}) {
        try {
            json_lite::Document broken(bad, "bad");
            FAIL("accepted: " << bad);
        } catch (const Error &e) {
            CHECK(e.status() == RESET_ERR_FORMAT);
        }
    }
}

TEST_CASE("onig \\s is rewritten to Unicode White_Space, including NEL") {
    Regex regex(R"(\s+|\S+)");
    std::vector<std::string_view> pieces;
    regex.split_isolated("a\xC2\x85" "b", pieces);  // U+0085 between letters
    REQUIRE(pieces.size() == 3);
    CHECK(pieces[1] == "\xC2\x85");
    CHECK(translate_onig_pattern(R"([^\s\p{L}])").find("\\x{85}") != std::string::npos);
}

TEST_CASE("byte-level BPE: round trip and streaming never split a character") {
    const std::string path = shared_tokenizer("qwen3/tokenizer.json");
    REQUIRE_SHARED(path);
    const auto tok = Tokenizer::load(path);
    for (const char *text : kSamples) {
        const auto ids = tok->encode(text, true);
        CHECK(tok->decode(ids, false) == text);
        check_stream(*tok, ids);
    }
    // Random ids spell arbitrary byte sequences: stream and decode must agree.
    std::mt19937 rng(7);
    std::uniform_int_distribution<int32_t> any(0, tok->vocab_size() - 1);
    for (int round = 0; round < 300; ++round) {
        std::vector<int32_t> ids(static_cast<size_t>(1 + round % 9));
        for (auto &id : ids) id = any(rng);
        check_stream(*tok, ids);
    }
    CHECK(tok->newline_ids() == std::vector<int32_t>{198});
}

TEST_CASE("sentencepiece byte fallback streams whole characters") {
    const std::string path = shared_tokenizer("llama2/tokenizer.model");
    REQUIRE_SHARED(path);
    const auto tok = Tokenizer::load(path);
    for (const char *text : kSamples) {
        const auto ids = tok->encode(text, false);
        CHECK(tok->decode(ids, false) == text);
        check_stream(*tok, ids);
    }
    // A 4-byte emoji spread over four byte-fallback tokens: nothing until the last.
    const auto ids = tok->encode("\xF0\x9F\xA6\x99", false);
    StreamDecoder stream(*tok);
    std::string out;
    size_t empty_pushes = 0;
    for (int32_t id : ids) {
        const std::string piece = stream.push(id);
        empty_pushes += piece.empty();
        out += piece;
    }
    CHECK(empty_pushes >= 3);
    CHECK(out == tok->decode(ids, false));
    CHECK(tok->newline_ids().size() == 1);  // <0x0A>
    CHECK(tok->token_bytes(tok->newline_ids()[0]) == "\n");
}

TEST_CASE("stream decoder: finish emits a dangling prefix as U+FFFD; errors change nothing") {
    const std::string path = shared_tokenizer("llama2/tokenizer.model");
    REQUIRE_SHARED(path);
    const auto tok = Tokenizer::load(path);
    const auto ids = tok->encode("\xF0\x9F\xA6\x99", false);
    StreamDecoder stream(*tok);
    CHECK(stream.push(ids[0]).empty());
    CHECK(stream.push(ids[1]).empty());
    CHECK_THROWS_AS(stream.push(tok->vocab_size()), Error);
    CHECK(stream.finish() == "\xEF\xBF\xBD");
    CHECK(stream.finish().empty());
}

TEST_CASE("chat: unknown templates are refused with the override named; plain concatenates") {
    const std::vector<ChatMessage> messages{{"user", "hi"}};
    ChatOptions options;
    try {
        render_chat("{{ custom }}", "", messages, options);
        FAIL("rendered an unknown template");
    } catch (const Error &e) {
        CHECK(e.status() == RESET_ERR_UNSUPPORTED);
        CHECK(std::string(e.what()).find("RESET_CHAT_TEMPLATE_QWEN3") != std::string::npos);
    }
    options.family = RESET_CHAT_TEMPLATE_PLAIN;
    CHECK(render_chat("{{ custom }}", "", messages, options) == "hi");
    options.family = RESET_CHAT_TEMPLATE_LLAMA3;
    CHECK(render_chat("", "<B>", {{"user", "\xE3\x80\x80 x \n"}}, options) ==
          "<B><|start_header_id|>user<|end_header_id|>\n\nx<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n");
    options.family = RESET_CHAT_TEMPLATE_QWEN3;
    options.enable_thinking = false;
    CHECK(render_chat("", "", {{"user", "q"}, {"assistant", "<think>\nr\n</think>\n\na"}, {"user", "q2"}}, options) ==
          "<|im_start|>user\nq<|im_end|>\n<|im_start|>assistant\na<|im_end|>\n<|im_start|>user\nq2<|im_end|>\n"
          "<|im_start|>assistant\n<think>\n\n</think>\n\n");
}

TEST_CASE("python_json: json.dumps(json.loads(text), ensure_ascii=False), byte for byte") {
    // The expected text is Python 3.11's own output for this input:
    //   python3 -c 'import json,sys; print(json.dumps(json.loads(sys.stdin.read()), ensure_ascii=False))'
    // A repeated key keeps its first place and its last value; integers as written (-0 is 0, any
    // size); other numbers as float repr; overflow as Infinity; control characters as \u00xx.
    const std::string input =
        R"({"a": 1, "b": [1E3, -0, -0.0, 1e400, -1e400, 0.1, 1e-5, 12345678901234567890123, 2.50, 1e16, )"
        R"(1.0e15, 5e-324, 0.0001], "a": {"x\u0001\"\\": "Ã©\n\t/â¨"}, "c": {}, )"
        R"("d": [], "e": [true, false, null]})";
    const json_lite::Document doc(input, "test");
    CHECK(python_json::dumps(doc.root()) ==
          R"({"a": {"x\u0001\"\\": "Ã©\n\t/â¨"}, "b": [1000.0, 0, -0.0, Infinity, -Infinity, )"
          R"(0.1, 1e-05, 12345678901234567890123, 2.5, 1e+16, 1000000000000000.0, 5e-324, 0.0001], "c": {}, )"
          R"("d": [], "e": [true, false, null]})");
    // repr's switch to exponents: decpt <= -4 or > 16 (repr(1e-4) = '0.0001', repr(1e16) = '1e+16').
    CHECK(python_json::float_repr(1e-4) == "0.0001");
    CHECK(python_json::float_repr(9.999e-5) == "9.999e-05");
    CHECK(python_json::float_repr(1234567890123456.0) == "1234567890123456.0");
    CHECK(python_json::float_repr(12345678901234567.0) == "1.2345678901234568e+16");
    CHECK(python_json::float_repr(-1.5e300) == "-1.5e+300");
    CHECK(python_json::float_repr(123.456) == "123.456");
}

TEST_CASE("chat: Qwen3 renders tools and tool calls; others refuse them; bad JSON is named") {
    ChatOptions options;
    options.family = RESET_CHAT_TEMPLATE_QWEN3;
    options.tools_json = R"([{"type": "function", "function": {"name": "f", "parameters": {"b": 1, "a": 2.0}}}])";
    std::vector<ChatMessage> messages{{"user", "q"},
                                      {"assistant", "", R"([{"function": {"name": "f", "arguments": {"x": 1e-5}}}])"},
                                      {"tool", "r"}};
    const std::string text = render_chat("", "", messages, options);
    CHECK(text.find("<tools>\n{\"type\": \"function\", \"function\": {\"name\": \"f\", \"parameters\": "
                    "{\"b\": 1, \"a\": 2.0}}}\n</tools>") != std::string::npos);
    CHECK(text.find("<|im_start|>assistant\n<tool_call>\n{\"name\": \"f\", \"arguments\": {\"x\": 1e-05}}\n"
                    "</tool_call><|im_end|>\n<|im_start|>user\n<tool_response>\nr\n</tool_response><|im_end|>\n") !=
          std::string::npos);
    auto status_of = [&](const std::vector<ChatMessage> &m, const ChatOptions &o) {
        try {
            render_chat("", "", m, o);
        } catch (const Error &e) {
            return e.status();
        }
        return RESET_OK;
    };
    for (reset_chat_template other : {RESET_CHAT_TEMPLATE_DEEPSEEK_R1, RESET_CHAT_TEMPLATE_LLAMA3,
                                      RESET_CHAT_TEMPLATE_PLAIN}) {
        ChatOptions o = options;
        o.family = other;
        CHECK(status_of(messages, o) == RESET_ERR_UNSUPPORTED);
        o.tools_json = "[]";
        CHECK(status_of(messages, o) == RESET_ERR_UNSUPPORTED);  // the tool call
        CHECK(status_of({{"user", "q"}}, o) == RESET_OK);
    }
    ChatOptions bad = options;
    bad.tools_json = "[{]";
    CHECK(status_of({{"user", "q"}}, bad) == RESET_ERR_INVALID_ARGUMENT);
    bad.tools_json = "[{\"d\": \"\xFF\"}]";
    CHECK(status_of({{"user", "q"}}, bad) == RESET_ERR_BAD_UTF8);
    CHECK(status_of({{"user", "q", "[]"}}, options) == RESET_ERR_INVALID_ARGUMENT);  // a user's tool calls
}

namespace {

// A minimal byte-level BPE tokenizer.json: the 256 ByteLevel characters
// (GPT-2's byte-to-character table) as ids 0..255, `extra_vocab` appended
// to the vocabulary object, `added` as its added_tokens.
std::string byte_level_tokenizer_json(const std::string &extra_vocab, const std::string &added) {
    std::string vocab;
    int next = 256;
    for (int b = 0; b < 256; ++b) {
        const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
        const uint32_t code = printable ? static_cast<uint32_t>(b) : static_cast<uint32_t>(next++);
        std::string text;
        if (code < 0x80) {
            text = std::string(1, static_cast<char>(code));
            if (text == "\"" || text == "\\") text = "\\" + text;
        } else {
            text += static_cast<char>(0xC0 | (code >> 6));
            text += static_cast<char>(0x80 | (code & 0x3F));
        }
        vocab += (b ? ", \"" : "\"") + text + "\": " + std::to_string(b);
    }
    return R"({"added_tokens": [)" + added + R"(], "normalizer": null,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": false, "use_regex": true},
        "decoder": {"type": "ByteLevel"}, "model": {"type": "BPE", "vocab": {)" +
           vocab + extra_vocab + R"(}, "merges": []}})";
}

reset_status tokenizer_load_status(const std::string &tokenizer_json, const std::string &tokenizer_config = "") {
    const std::string dir = test_support::temp_directory("token-ids");
    test_support::write_file(dir + "/tokenizer.json", tokenizer_json);
    if (!tokenizer_config.empty()) test_support::write_file(dir + "/tokenizer_config.json", tokenizer_config);
    try {
        Tokenizer::load(dir);
        return RESET_OK;
    } catch (const Error &e) {
        return e.status();
    }
}

}  // namespace

// Found by reading the loader while writing the fuzz targets (tests/fuzz): a
// 300-byte tokenizer.json declaring id 99,999,999 made it allocate 3.1 GB of
// empty token slots and take 19 s before failing; a config id of 2^31 - 1
// overflowed id + 1; fractional ids were truncated.
TEST_CASE("tokenizer ids: integers in range, dense, or RESET_ERR_FORMAT before anything is sized") {
    CHECK(tokenizer_load_status(byte_level_tokenizer_json("", "")) == RESET_OK);
    CHECK(tokenizer_load_status(byte_level_tokenizer_json(R"(, "ab": 300)", "")) == RESET_OK);  // a few holes: fine
    CHECK(tokenizer_load_status(byte_level_tokenizer_json(R"(, "ab": 16000000)", "")) == RESET_ERR_FORMAT);
    CHECK(tokenizer_load_status(byte_level_tokenizer_json(R"(, "ab": 99999999)", "")) == RESET_ERR_FORMAT);
    CHECK(tokenizer_load_status(byte_level_tokenizer_json(R"(, "ab": 256.5)", "")) == RESET_ERR_FORMAT);
    CHECK(tokenizer_load_status(byte_level_tokenizer_json(R"(, "ab": -1)", "")) == RESET_ERR_FORMAT);
    CHECK(tokenizer_load_status(byte_level_tokenizer_json("", R"({"id": 256, "content": "<x>", "special": true})")) ==
          RESET_OK);
    CHECK(tokenizer_load_status(byte_level_tokenizer_json(
              "", R"({"id": 2147483647, "content": "<x>", "special": true})")) == RESET_ERR_FORMAT);
    const std::string json = byte_level_tokenizer_json("", "");
    CHECK(tokenizer_load_status(json, R"({"added_tokens_decoder": {"257": {"content": "<y>"}}})") == RESET_OK);
    for (const char *key : {"2147483647", "99999999", "12abc", "-3", ""})
        CHECK_MESSAGE(tokenizer_load_status(json, std::string(R"({"added_tokens_decoder": {")") + key +
                                                      R"(": {"content": "<y>"}}})") == RESET_ERR_FORMAT,
                      key);
    // A named-template list whose item has a non-string name: not "default", not a type error escaping as an
    // internal error (nlohmann's value("name", "") threw before session 25).
    CHECK(tokenizer_load_status(json, R"({"chat_template": [{"name": 5, "template": "x"}]})") == RESET_OK);
}

TEST_CASE("generation_config.json eos ids past int32 are left out, not wrapped") {
    const std::string dir = test_support::temp_directory("eos-ids");
    test_support::write_file(dir + "/tokenizer.json", byte_level_tokenizer_json("", ""));
    test_support::write_file(dir + "/generation_config.json", R"({"eos_token_id": [4294967301, 7]})");
    const auto tokenizer = Tokenizer::load(dir);
    CHECK(tokenizer->eos_ids() == std::vector<int32_t>{7});  // 2^32 + 5 wrapped to 5 before session 25
}

namespace {

// Protobuf wire format, enough for a sentencepiece ModelProto: a varint field, a
// length-delimited field, and a fixed32 float field.
std::string proto_varint(uint64_t v) {
    std::string out;
    do {
        out.push_back(static_cast<char>((v & 0x7f) | (v > 0x7f ? 0x80 : 0)));
        v >>= 7;
    } while (v);
    return out;
}
std::string proto_number(int field, uint64_t v) { return proto_varint(uint64_t(field) << 3) + proto_varint(v); }
std::string proto_bytes(int field, const std::string &bytes) {
    return proto_varint(uint64_t(field) << 3 | 2) + proto_varint(bytes.size()) + bytes;
}
std::string proto_zero_float(int field) { return proto_varint(uint64_t(field) << 3 | 5) + std::string(4, '\0'); }

// A sentencepiece model with "<unk>" (type UNKNOWN = 2) and the given pieces
// (type NORMAL = 1 unless `control` names one, CONTROL = 3): ModelProto.pieces
// (1) = {piece 1, score 2, type 3}, trainer_spec (2) = {model_type 3: UNIGRAM
// 1, BPE 2; unk_id 40 = 0}, normalizer_spec (3) = {name 1 = "identity"}.
// Loads it, then encodes "a b"; the first failure's status.
reset_status sentencepiece_status(const std::vector<std::string> &pieces, int model_type = 1,
                                  const std::string &control = "") {
    std::string model = proto_bytes(1, proto_bytes(1, "<unk>") + proto_zero_float(2) + proto_number(3, 2));
    for (const std::string &p : pieces)
        model += proto_bytes(1, proto_bytes(1, p) + proto_zero_float(2) + proto_number(3, p == control ? 3 : 1));
    model += proto_bytes(2, proto_number(3, uint64_t(model_type)) + proto_number(40, 0)) +
             proto_bytes(3, proto_bytes(1, "identity"));
    const std::string dir = test_support::temp_directory("sentencepiece");
    test_support::write_file(dir + "/tokenizer.model", model);
    try {
        const auto tokenizer = Tokenizer::load(dir);
        if (tokenizer->vocab_size() != int32_t(pieces.size()) + 1) return RESET_ERR_INTERNAL;
        tokenizer->encode("a b", false);
        return RESET_OK;
    } catch (const Error &e) {
        return e.status();
    } catch (const std::exception &) {
        return RESET_ERR_INTERNAL;  // what escaped before session 27
    }
}

}  // namespace

// Found in session 27 by mutating sentencepiece models (docs/history/fuzzing.md):
// a "\0" piece made Debian's libsentencepiece throw from darts_clone ("zero-length
// key"), which reached the API as RESET_ERR_INTERNAL instead of a malformed-file
// error; a piece that is not UTF-8 loaded and broke the encoder later.
TEST_CASE("a malformed sentencepiece model is RESET_ERR_FORMAT, whatever way the library fails") {
    const std::string space = "\xE2\x96\x81";  // U+2581, sentencepiece's space
    // The writer makes models the library loads and encodes with.
    CHECK(sentencepiece_status({"a", "b", space}) == RESET_OK);
    CHECK(sentencepiece_status({"a", "b", space}, 2) == RESET_OK);
    CHECK(sentencepiece_status({"a", std::string(1, '\0')}) == RESET_ERR_FORMAT);  // an exception inside Load
    CHECK(sentencepiece_status({"a", ""}) == RESET_ERR_FORMAT);                    // a status from Load
    // A piece that is not UTF-8 loaded, then made the library's BPE encoder fail on ordinary text
    // (RESET_ERR_INTERNAL from reset_tokenize; fuzz_tokenizer_load, found_spm_piece_not_utf8).
    CHECK(sentencepiece_status({"a", "\xE2\xFF\x81"}) == RESET_ERR_FORMAT);
    // A BPE model whose space piece is a control token loads, and the library cannot encode a
    // space with it (found_spm_bpe_control_space): the model's fault, so FORMAT, not INTERNAL.
    CHECK(sentencepiece_status({"a", "b", space}, 2, space) == RESET_ERR_FORMAT);
}
