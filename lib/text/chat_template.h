// chat_template.h — rendering conversations the way each model family's
// official Jinja chat template does, byte for byte.
//
// libreset does not run Jinja: it recognises the template text from
// tokenizer_config.json among the exact templates it has verified against
// transformers' apply_chat_template (tests/text/chat_reference.py) and renders
// that family in C++.  An unrecognised template is an error naming the
// override to use, never a guess.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "reset.h"

namespace reset {

class Tokenizer;

struct ChatMessage {
    std::string_view role, content;
    // An assistant message's tool calls: OpenAI's "tool_calls" JSON array; empty: none.
    std::string_view tool_calls_json = {};
};

// A recognised template: its family and the variant details that differ
// between published revisions.
struct ChatTemplateForm {
    reset_chat_template family = RESET_CHAT_TEMPLATE_AUTO;  // AUTO: not recognised
    bool always_generation_prompt = false;  // Llama 3's first release ignores add_generation_prompt
};

// The form of a template text ({AUTO} when it is not one libreset knows).
ChatTemplateForm recognise_chat_template(std::string_view template_text);
// A name for messages: "Qwen3", "Llama 3", ...
const char *chat_template_name(reset_chat_template family);

struct ChatOptions {
    reset_chat_template family = RESET_CHAT_TEMPLATE_AUTO;  // AUTO: recognise the tokenizer's template
    bool add_generation_prompt = true;
    bool enable_thinking = true;
    // OpenAI's "tools" JSON array; empty: none.
    std::string_view tools_json;
};

// Render.  Throws RESET_ERR_UNSUPPORTED for an unknown (or missing) template
// under AUTO and for tools or tool calls the template does not render,
// RESET_ERR_BAD_UTF8 for invalid text, RESET_ERR_INVALID_ARGUMENT for an empty
// role and for tools / tool calls that are not JSON of OpenAI's shape.
std::string render_chat(const Tokenizer &tokenizer, const std::vector<ChatMessage> &messages,
                        const ChatOptions &options);
// The same with the template text and BOS text given (for tests).
std::string render_chat(std::string_view template_text, std::string_view bos_text,
                        const std::vector<ChatMessage> &messages, const ChatOptions &options);

}  // namespace reset
