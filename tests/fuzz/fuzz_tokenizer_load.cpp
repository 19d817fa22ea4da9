// fuzz_tokenizer_load.cpp — reset_tokenizer_load on a fuzzed tokenizer
// directory (tokenizer.json, tokenizer_config.json, generation_config.json,
// tokenizer.model), then every call on what loads.
//
// Checked: load fails only with RESET_ERR_IO / FORMAT / UNSUPPORTED (or
// OUT_OF_MEMORY); what loads describes itself consistently (ids inside the
// vocabulary), tokenizes text into ids inside the vocabulary, detokenizes
// every id to valid UTF-8, and renders chats without an internal error; the
// buffer protocol holds (fuzz_support.h).

#include "fuzz_support.h"

using reset_fuzz::expect;
using reset_fuzz::finding;
using reset_fuzz::ok_or_clear_error;
using reset_fuzz::ok_or_listed_error;

namespace {

const char *const kTexts[] = {
    "Hello, world! 12345", "  spaces\tand\nnew lines\n\n", "<|im_start|>user\nhi<|im_end|><|endoftext|>",
    "naïve café 你好 🙂", "<think>\nx\n</think>\n\n", "<s>[INST] hi [/INST]</s>", "<|begin_of_text|><|eot_id|>",
};

void exercise(const reset_tokenizer *tokenizer) {
    reset_tokenizer_info info;
    reset_tokenizer_info_init(&info);
    if (!ok_or_clear_error(reset_tokenizer_get_info(tokenizer, &info), "reset_tokenizer_get_info"))
        finding("get_info failed on a loaded tokenizer");
    expect(info.vocab_size > 0, "a loaded tokenizer with no vocabulary");
    expect(info.bos_id >= -1 && info.bos_id < info.vocab_size, "bos_id outside the vocabulary");
    expect(info.n_eos >= 0 && info.n_eos <= 8, "n_eos outside 0..8");
    for (int i = 0; i < info.n_eos; ++i)
        expect(info.eos_ids[i] >= 0 && info.eos_ids[i] < info.vocab_size, "an EOS id outside the vocabulary");

    for (const char *text : kTexts)
        for (uint32_t flags = 0; flags < 4; ++flags) {
            const auto [status, ids] = reset_fuzz::tokenize(tokenizer, text, flags);
            if (status != RESET_OK) continue;  // e.g. a byte the fuzzed vocabulary cannot spell
            for (int32_t id : ids)
                expect(id >= 0 && id < info.vocab_size, "tokenize gave an id outside the vocabulary");
            const auto decoded = reset_fuzz::detokenize(tokenizer, ids, 0);
            expect(decoded.first == RESET_OK, "its own ids did not detokenize");
            expect(reset_fuzz::valid_utf8(decoded.second), "detokenized text is not UTF-8");
        }
    std::vector<int32_t> all;
    for (int32_t id = 0; id < info.vocab_size && id < 2048; ++id) all.push_back(id);
    for (uint32_t flags : {0u, static_cast<uint32_t>(RESET_DETOKENIZE_SKIP_SPECIAL)}) {
        const auto decoded = reset_fuzz::detokenize(tokenizer, all, flags);
        expect(decoded.first == RESET_OK && reset_fuzz::valid_utf8(decoded.second), "the vocabulary did not decode");
    }
    const int32_t past = info.vocab_size;
    size_t length = 0;
    expect(reset_detokenize(tokenizer, &past, 1, 0, nullptr, 0, &length) == RESET_ERR_OUT_OF_RANGE,
           "an id past the vocabulary decoded");
    for (int32_t which = 0; which < 2; ++which) {
        size_t n = 0;
        const reset_status status = reset_tokenizer_step_delimiters(tokenizer, which, nullptr, 0, &n);
        if (status != RESET_OK && status != RESET_ERR_BUFFER_TOO_SMALL)
            ok_or_clear_error(status, "reset_tokenizer_step_delimiters");
    }

    const char *roles[] = {"system", "user", "assistant", "user"};
    const char *contents[] = {"Be brief.", "What is 2+3?", "<think>\nadd\n</think>\n\n5", "And 4+4?"};
    reset_chat_message messages[4];
    for (int i = 0; i < 4; ++i) messages[i] = {roles[i], contents[i], std::char_traits<char>::length(contents[i])};
    for (int family = 0; family <= 4; ++family)
        for (int thinking = 0; thinking < 2; ++thinking) {
            reset_chat_options options;
            reset_chat_options_init(&options);
            options.chat_template = static_cast<reset_chat_template>(family);
            options.enable_thinking = thinking;
            size_t needed = 0;
            reset_status status = reset_chat_format(tokenizer, messages, 4, &options, nullptr, 0, &needed);
            if (status == RESET_ERR_BUFFER_TOO_SMALL) {
                std::string text(needed, '\0');
                status = reset_chat_format(tokenizer, messages, 4, &options, text.data(), text.size(), &needed);
                expect(status == RESET_OK && needed == text.size(), "reset_chat_format: the asked size did not fit");
                expect(reset_fuzz::valid_utf8(text), "a chat rendering is not UTF-8");
            } else if (status != RESET_OK) {
                ok_or_clear_error(status, "reset_chat_format");
                expect(family == RESET_CHAT_TEMPLATE_AUTO && status == RESET_ERR_UNSUPPORTED,
                       std::string("reset_chat_format failed with ") + reset_status_name(status));
            }
        }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const std::string_view input(reinterpret_cast<const char *>(data), size);
    const std::string directory = reset_fuzz::write_directory(reset_fuzz::split_archive(input));
    reset_tokenizer *tokenizer = nullptr;
    const reset_status loaded = reset_tokenizer_load(directory.c_str(), &tokenizer);
    if (loaded != RESET_OK) {
        ok_or_listed_error(loaded, "reset_tokenizer_load",
                           {RESET_ERR_IO, RESET_ERR_FORMAT, RESET_ERR_UNSUPPORTED, RESET_ERR_OUT_OF_MEMORY});
        expect(tokenizer == nullptr, "a failed reset_tokenizer_load left a tokenizer");
        return 0;
    }
    exercise(tokenizer);
    reset_tokenizer_free(tokenizer);
    return 0;
}
