// tokenizer_api.cpp — the C ABI of the text module: tokenizers and chat
// formatting (reset.h, "Tokenizers and chat formatting").
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "api/errors.h"
#include "api/handles.h"
#include "reset.h"
#include "text/chat_template.h"
#include "text/tokenizer.h"

using namespace reset;

extern "C" {

reset_status reset_tokenizer_load(const char *path, reset_tokenizer **out_tokenizer) {
    if (out_tokenizer) *out_tokenizer = nullptr;
    return api_call([&] {
        require(path, "path");
        require(out_tokenizer, "out_tokenizer");
        *out_tokenizer = make_tokenizer_handle(Tokenizer::load(path));
    });
}

void reset_tokenizer_free(reset_tokenizer *tokenizer) {
    // A model's own tokenizer stays: its sessions decode with it.
    if (tokenizer && tokenizer_owned_by_model(tokenizer)) {
        set_last_error(RESET_ERR_INVALID_ARGUMENT,
                       "reset_tokenizer_free: this tokenizer belongs to its model (reset_model_tokenizer) and is "
                       "freed with it; nothing was freed");
        return;
    }
    destroy_tokenizer_handle(tokenizer);
}

void reset_tokenizer_info_init_sized(reset_tokenizer_info *info, size_t struct_size) {
    reset_tokenizer_info defaults;
    std::memset(&defaults, 0, sizeof defaults);
    defaults.bos_id = -1;
    write_defaults(info, struct_size, defaults);
}

void (reset_tokenizer_info_init)(reset_tokenizer_info *info) {
    reset_tokenizer_info_init_sized(info, sizeof *info);
}

reset_status reset_tokenizer_get_info(const reset_tokenizer *tokenizer, reset_tokenizer_info *info) {
    return api_call([&] {
        const Tokenizer &t = tokenizer_of(tokenizer);
        require(info, "info");
        reset_tokenizer_info full;
        reset_tokenizer_info_init(&full);
        const uint32_t size = info->struct_size;
        if (size < sizeof(uint32_t) || size > sizeof full)
            fail(RESET_ERR_INVALID_ARGUMENT, "info->struct_size is ", size, " (call reset_tokenizer_info_init)");
        full.vocab_size = t.vocab_size();
        full.bos_id = t.bos_id();
        const size_t n_eos = std::min<size_t>(t.eos_ids().size(), 8);
        full.n_eos = static_cast<int32_t>(n_eos);
        std::copy(t.eos_ids().begin(), t.eos_ids().begin() + static_cast<std::ptrdiff_t>(n_eos), full.eos_ids);
        std::strncpy(full.kind, t.kind(), sizeof full.kind - 1);
        full.chat_template = recognise_chat_template(t.chat_template()).family;
        full.has_chat_template = t.chat_template().empty() ? 0 : 1;
        // Older callers get only the fields they know about.
        std::memcpy(info, &full, size);
        info->struct_size = size;
    });
}

reset_status reset_tokenize(const reset_tokenizer *tokenizer, const char *text, size_t text_len, uint32_t flags,
                            int32_t *ids, size_t capacity, size_t *n_ids) {
    return api_call([&] {
        const Tokenizer &t = tokenizer_of(tokenizer);
        require(n_ids, "n_ids");
        if (text_len > 0) require(text, "text");
        if (flags & ~(RESET_TOKENIZE_PARSE_SPECIAL | RESET_TOKENIZE_ADD_BOS))
            fail(RESET_ERR_INVALID_ARGUMENT, "unknown reset_tokenize flags 0x", flags);
        std::vector<int32_t> out;
        if ((flags & RESET_TOKENIZE_ADD_BOS) && t.bos_id() >= 0) out.push_back(t.bos_id());
        const std::vector<int32_t> body =
            t.encode(std::string_view(text_len ? text : "", text_len), (flags & RESET_TOKENIZE_PARSE_SPECIAL) != 0);
        out.insert(out.end(), body.begin(), body.end());
        copy_out(out.data(), out.size(), ids, capacity, n_ids);
    });
}

reset_status reset_detokenize(const reset_tokenizer *tokenizer, const int32_t *ids, size_t n_ids, uint32_t flags,
                              char *buffer, size_t capacity, size_t *text_len) {
    return api_call([&] {
        const Tokenizer &t = tokenizer_of(tokenizer);
        require(text_len, "text_len");
        if (n_ids > 0) require(ids, "ids");
        if (flags & ~RESET_DETOKENIZE_SKIP_SPECIAL)
            fail(RESET_ERR_INVALID_ARGUMENT, "unknown reset_detokenize flags ", flags);
        const std::string text =
            t.decode(std::vector<int32_t>(ids, ids + n_ids), (flags & RESET_DETOKENIZE_SKIP_SPECIAL) != 0);
        copy_out(text.data(), text.size(), buffer, capacity, text_len);
    });
}

reset_status reset_token_to_text(const reset_tokenizer *tokenizer, int32_t id, uint32_t flags, char *buffer,
                                 size_t capacity, size_t *text_len) {
    return api_call([&] {
        const Tokenizer &t = tokenizer_of(tokenizer);
        require(text_len, "text_len");
        if (flags & ~RESET_DETOKENIZE_SKIP_SPECIAL)
            fail(RESET_ERR_INVALID_ARGUMENT, "unknown reset_token_to_text flags ", flags);
        const std::string &bytes = t.token_bytes(id);
        if ((flags & RESET_DETOKENIZE_SKIP_SPECIAL) && t.is_special(id)) {
            copy_out<char>(nullptr, 0, buffer, capacity, text_len);
            return;
        }
        copy_out(bytes.data(), bytes.size(), buffer, capacity, text_len);
    });
}

reset_status reset_token_id(const reset_tokenizer *tokenizer, const char *text, size_t text_len, int32_t *out_id) {
    return api_call([&] {
        const Tokenizer &t = tokenizer_of(tokenizer);
        require(out_id, "out_id");
        if (text_len > 0) require(text, "text");
        *out_id = t.token_id(std::string_view(text_len ? text : "", text_len));
    });
}

reset_status reset_tokenizer_step_delimiters(const reset_tokenizer *tokenizer, int32_t which, int32_t *ids,
                                             size_t capacity, size_t *n_ids) {
    return api_call([&] {
        const Tokenizer &t = tokenizer_of(tokenizer);
        require(n_ids, "n_ids");
        if (which != 0 && which != 1) fail(RESET_ERR_INVALID_ARGUMENT, "which is ", which, " (0: NL, 1: DNL)");
        const std::vector<int32_t> &set = which == 0 ? t.newline_ids() : t.double_newline_ids();
        copy_out(set.data(), set.size(), ids, capacity, n_ids);
    });
}

void reset_chat_options_init_sized(reset_chat_options *options, size_t struct_size) {
    reset_chat_options defaults;
    std::memset(&defaults, 0, sizeof defaults);
    defaults.chat_template = RESET_CHAT_TEMPLATE_AUTO;
    defaults.add_generation_prompt = 1;
    defaults.enable_thinking = 1;
    write_defaults(options, struct_size, defaults);
}

// The unsized init is what programs built before the macro existed call: they hold 0.10's
// struct (no tool fields), so it writes that much only; newer programs reach the sized init.
void (reset_chat_options_init)(reset_chat_options *options) {
    reset_chat_options_init_sized(options, offsetof(reset_chat_options, tools_json));
}

reset_status reset_chat_format(const reset_tokenizer *tokenizer, const reset_chat_message *messages,
                               size_t n_messages, const reset_chat_options *options, char *buffer, size_t capacity,
                               size_t *text_len) {
    return api_call([&] {
        const Tokenizer &t = tokenizer_of(tokenizer);
        require(text_len, "text_len");
        if (n_messages > 0) require(messages, "messages");
        const reset_chat_options o = read_options(options, reset_chat_options_init_sized, "options");
        const int32_t chat_template = enum_as_int(o.chat_template);
        if (chat_template < RESET_CHAT_TEMPLATE_AUTO || chat_template > RESET_CHAT_TEMPLATE_PLAIN)
            fail(RESET_ERR_INVALID_ARGUMENT, "options->chat_template is ", chat_template,
                 ", not a reset_chat_template value");
        std::vector<ChatMessage> list;
        list.reserve(n_messages);
        for (size_t i = 0; i < n_messages; ++i) {
            if (!messages[i].role) fail(RESET_ERR_INVALID_ARGUMENT, "messages[", i, "].role is NULL");
            if (messages[i].content_len > 0 && !messages[i].content)
                fail(RESET_ERR_INVALID_ARGUMENT, "messages[", i, "].content is NULL");
            list.push_back({messages[i].role,
                            std::string_view(messages[i].content_len ? messages[i].content : "", messages[i].content_len)});
            if (o.tool_calls_json && o.tool_calls_json[i]) list.back().tool_calls_json = o.tool_calls_json[i];
        }
        ChatOptions chat;
        if (o.tools_json) chat.tools_json = o.tools_json;
        chat.family = o.chat_template;
        chat.add_generation_prompt = o.add_generation_prompt != 0;
        chat.enable_thinking = o.enable_thinking != 0;
        const std::string text = render_chat(t, list, chat);
        copy_out(text.data(), text.size(), buffer, capacity, text_len);
    });
}

}  // extern "C"
