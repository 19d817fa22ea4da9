// fuzz_tokenize.cpp — the real Qwen3, Llama 3 and Llama 2 tokenizers
// (../shared/data/tokenizers) on fuzzed text and ids.
//
// Input: byte 0 picks the tokenizer (mod 3) and the flags, the rest is the
// text, and also (two bytes each, modulo vocab_size + 16) the ids to
// detokenize.  Checked, as reset.h promises:
//   - valid UTF-8 tokenizes, invalid is RESET_ERR_BAD_UTF8 (the validator is
//     the harness's own); every id is inside the vocabulary;
//   - decode(encode(s)) == s for the byte-level tokenizers (Llama 3 exactly;
//     Qwen3 up to its NFC normalizer, so the decoded text must be a fixed
//     point: decoding its own encoding gives it back);
//   - ids past the vocabulary are RESET_ERR_OUT_OF_RANGE, others decode to
//     valid UTF-8 (broken byte sequences become U+FFFD);
//   - the buffer protocol (fuzz_support.h), reset_token_to_text on each id.
#include <filesystem>

#include "fuzz_support.h"

using reset_fuzz::expect;
using reset_fuzz::finding;

namespace {

struct Loaded {
    const char *name;
    reset_tokenizer *tokenizer = nullptr;
    int32_t vocab = 0;
    int32_t bos = -1;
    bool byte_level = false;
};

// Loaded once, freed at exit (LeakSanitizer checks the rest).
struct Tokenizers {
    std::vector<Loaded> all{{"qwen3"}, {"llama3"}, {"llama2"}};
    ~Tokenizers() {
        for (Loaded &t : all) reset_tokenizer_free(t.tokenizer);
    }
};

std::vector<Loaded> &tokenizers() {
    static Tokenizers loaded = [] {
        Tokenizers tokenizers;
        for (Loaded &t : tokenizers.all) {
            const std::string path = std::string(RESET_SHARED_DIR) + "/data/tokenizers/" + t.name;
            if (!std::filesystem::exists(path)) {  // the real tokenizers are not in the repository
                std::fprintf(stderr, "skipped: %s is absent\n", path.c_str());
                std::exit(77);  // ctest's SKIP_RETURN_CODE (tests/fuzz/fuzz.cmake)
            }
            if (reset_tokenizer_load(path.c_str(), &t.tokenizer) != RESET_OK)
                finding("cannot load " + path + ": " + reset_last_error());
            reset_tokenizer_info info;
            reset_tokenizer_info_init(&info);
            if (reset_tokenizer_get_info(t.tokenizer, &info) != RESET_OK) finding("get_info");
            t.vocab = info.vocab_size;
            t.bos = info.bos_id;
            t.byte_level = std::string(info.kind) == "bpe";
        }
        return tokenizers;
    }();
    return loaded.all;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    Loaded &t = tokenizers()[data[0] % 3];
    const uint32_t flags = (data[0] >> 2) & 3;  // PARSE_SPECIAL, ADD_BOS
    const std::string_view text(reinterpret_cast<const char *>(data + 1), size - 1);

    const auto [status, ids] = reset_fuzz::tokenize(t.tokenizer, text, flags);
    if (!reset_fuzz::valid_utf8(text)) {
        expect(status == RESET_ERR_BAD_UTF8, std::string(t.name) + ": invalid UTF-8 was not RESET_ERR_BAD_UTF8");
    } else {
        expect(status == RESET_OK, std::string(t.name) + ": valid UTF-8 did not tokenize");
        for (int32_t id : ids) expect(id >= 0 && id < t.vocab, std::string(t.name) + ": an id outside the vocabulary");
        const bool has_bos = (flags & RESET_TOKENIZE_ADD_BOS) && t.bos >= 0;
        if (has_bos) expect(!ids.empty() && ids[0] == t.bos, std::string(t.name) + ": ADD_BOS without BOS first");
        const std::vector<int32_t> body(ids.begin() + (has_bos ? 1 : 0), ids.end());
        const auto [decoded_status, decoded] = reset_fuzz::detokenize(t.tokenizer, body, 0);
        expect(decoded_status == RESET_OK, std::string(t.name) + ": its own ids did not detokenize");
        expect(reset_fuzz::valid_utf8(decoded), std::string(t.name) + ": detokenized text is not UTF-8");
        if (t.byte_level) {
            if (std::string(t.name) == "llama3") {
                expect(decoded == text, "llama3: decode(encode(s)) != s");
            } else {
                const auto again = reset_fuzz::tokenize(t.tokenizer, decoded, flags & RESET_TOKENIZE_PARSE_SPECIAL);
                const auto twice = reset_fuzz::detokenize(t.tokenizer, again.second, 0);
                expect(twice.second == decoded, "qwen3: decode(encode(t)) != t for t = decode(encode(s))");
            }
        }
    }

    std::vector<int32_t> raw;
    for (size_t i = 1; i + 1 < size && raw.size() < 256; i += 2)
        raw.push_back((data[i] | data[i + 1] << 8 | (data[i] & 0x80) << 9) % (t.vocab + 16));
    bool out_of_range = false;
    for (int32_t id : raw) out_of_range |= id >= t.vocab;
    for (uint32_t detokenize_flags : {0u, static_cast<uint32_t>(RESET_DETOKENIZE_SKIP_SPECIAL)}) {
        const auto [raw_status, raw_text] = reset_fuzz::detokenize(t.tokenizer, raw, detokenize_flags);
        if (out_of_range) {
            expect(raw_status == RESET_ERR_OUT_OF_RANGE, std::string(t.name) + ": an id past the vocabulary decoded");
        } else {
            expect(raw_status == RESET_OK, std::string(t.name) + ": ids inside the vocabulary did not decode");
            expect(reset_fuzz::valid_utf8(raw_text), std::string(t.name) + ": decoded ids are not UTF-8");
        }
    }
    for (int32_t id : raw) {
        char buffer[1024];
        size_t length = 0;
        const reset_status one = reset_token_to_text(t.tokenizer, id, 0, buffer, sizeof buffer, &length);
        expect(one == (id < t.vocab ? RESET_OK : RESET_ERR_OUT_OF_RANGE),
               std::string(t.name) + ": reset_token_to_text status " + reset_status_name(one));
        if (one == RESET_OK && t.byte_level) {  // sentencepiece's token_id takes pieces ("▁the"), not text
            int32_t back = -2;
            expect(reset_token_id(t.tokenizer, buffer, length, &back) == RESET_OK, "reset_token_id failed");
            expect(back >= 0, std::string(t.name) + ": a token's own text has no id");
        }
    }
    return 0;
}
