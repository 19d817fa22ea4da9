// chat_template.cpp — see chat_template.h.  Each renderer follows its Jinja
// template statement by statement; the comments quote the template where a
// detail is easy to get wrong.  Python string methods used by the templates
// (split, strip('\n'), Jinja's trim) are reproduced exactly.
#include "text/chat_template.h"

#include <cstring>
#include <memory>

#include "api/errors.h"
#include "text/json_lite.h"
#include "text/python_json.h"
#include "text/tokenizer.h"
#include "text/utf8.h"

namespace reset {

namespace {

// FNV-1a, to recognise template texts without storing them.
uint64_t fnv1a(std::string_view text) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (char c : text) {
        h ^= static_cast<uint8_t>(c);
        h *= 0x100000001b3ull;
    }
    return h;
}

struct KnownTemplate {
    uint64_t hash;
    ChatTemplateForm form;
};

// The verified templates (tests/text/templates/ holds each one and the
// script that checks its hash and output against transformers).
const KnownTemplate kKnown[] = {
    // Qwen3 (the thinking-capable Qwen3 releases)
    {0x2bfdb7aa9754484eull, {RESET_CHAT_TEMPLATE_QWEN3, false}},
    // Meta-Llama-3-8B-Instruct, first release (always adds the assistant header)
    {0x74891e390e614ae2ull, {RESET_CHAT_TEMPLATE_LLAMA3, true}},
    // DeepSeek-R1-Distill-Qwen/Llama, first release
    {0x9c0722939a9b83ecull, {RESET_CHAT_TEMPLATE_DEEPSEEK_R1, false}},
};

// Python's str.rstrip/lstrip/strip with chars "\n".
std::string_view strip_newlines_left(std::string_view s) {
    size_t i = 0;
    while (i < s.size() && s[i] == '\n') ++i;
    return s.substr(i);
}
std::string_view strip_newlines_right(std::string_view s) {
    size_t n = s.size();
    while (n > 0 && s[n - 1] == '\n') --n;
    return s.substr(0, n);
}
std::string_view strip_newlines(std::string_view s) { return strip_newlines_right(strip_newlines_left(s)); }

// Jinja's `trim` filter: Python's str.strip() with no argument, which removes
// Unicode whitespace (str.isspace), not only ASCII.
std::string_view python_strip(std::string_view s) {
    size_t begin = 0;
    while (begin < s.size()) {
        size_t next = begin;
        if (!utf8::is_python_space(utf8::next(s, next))) break;
        begin = next;
    }
    size_t end = s.size();
    while (end > begin) {
        size_t start = end - 1;
        while (start > begin && (static_cast<uint8_t>(s[start]) & 0xC0) == 0x80) --start;
        size_t pos = start;
        if (!utf8::is_python_space(utf8::next(s, pos))) break;
        end = start;
    }
    return s.substr(begin, end - begin);
}

// s.split(sep)[0] and s.split(sep)[-1].
std::string_view before_first(std::string_view s, std::string_view sep) {
    const size_t at = s.find(sep);
    return at == std::string_view::npos ? s : s.substr(0, at);
}
std::string_view after_last(std::string_view s, std::string_view sep) {
    const size_t at = s.rfind(sep);
    return at == std::string_view::npos ? s : s.substr(at + sep.size());
}
bool contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }
bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool ends_with(std::string_view s, std::string_view p) {
    return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}

std::string &operator<<(std::string &out, std::string_view s) { return out.append(s.data(), s.size()); }

// --- Tools and tool calls ---------------------------------------------------------------------

using json_lite::Value;

// A member as a Python dict holds it: the last of a repeated key.
const Value *find_last(const Value &object, std::string_view key) {
    const Value *found = nullptr;
    for (const auto &member : object.members)
        if (member.first == key) found = &member.second;
    return found;
}

// tools_json and every tool_calls_json, read once: arrays of objects (JSON null: none).
struct ToolJson {
    std::vector<std::unique_ptr<json_lite::Document>> documents;  // the trees' storage
    const Value *tools = nullptr;                                 // null when there are none
    std::vector<const Value *> calls;                             // per message; null when none

    static const Value *read(std::vector<std::unique_ptr<json_lite::Document>> &documents, std::string_view text,
                             const std::string &what) {
        if (text.empty()) return nullptr;
        try {
            documents.push_back(std::make_unique<json_lite::Document>(std::string(text), what));
        } catch (const Error &e) {
            fail(RESET_ERR_INVALID_ARGUMENT, e.what());  // the caller's argument, not a file
        }
        const Value &root = documents.back()->root();
        if (root.is_null()) return nullptr;
        if (!root.is_array()) fail(RESET_ERR_INVALID_ARGUMENT, what, " is not a JSON array");
        for (size_t i = 0; i < root.items.size(); ++i)
            if (!root.items[i].is_object()) fail(RESET_ERR_INVALID_ARGUMENT, what, "[", i, "] is not a JSON object");
        return root.items.empty() ? nullptr : &root;  // [] renders as none, as Jinja's `if tools` reads it
    }

    ToolJson(const std::vector<ChatMessage> &m, const ChatOptions &o) {
        tools = read(documents, o.tools_json, "tools_json");
        calls.resize(m.size());
        for (size_t i = 0; i < m.size(); ++i) {
            if (m[i].tool_calls_json.empty()) continue;
            const std::string what = "tool_calls_json[" + std::to_string(i) + "]";
            if (m[i].role != "assistant")
                fail(RESET_ERR_INVALID_ARGUMENT, what, ": only assistant messages carry tool calls (messages[", i,
                     "] is \"", m[i].role, "\")");
            calls[i] = read(documents, m[i].tool_calls_json, what);
        }
    }
    bool any_calls() const {
        for (const Value *c : calls)
            if (c) return true;
        return false;
    }
};

// A tool call's string field, which the template concatenates or prints as text.
std::string_view string_field(const Value &object, std::string_view key, const std::string &what) {
    const Value *v = find_last(object, key);
    if (!v) fail(RESET_ERR_INVALID_ARGUMENT, what, " has no \"", key, "\"");
    if (!v->is_string()) fail(RESET_ERR_INVALID_ARGUMENT, what, "'s \"", key, "\" is not a string");
    return v->text;
}

// OpenAI's {"type", "function": {"name", "arguments"}}; transformers also takes {"name", "arguments"}.
const Value &call_function(const Value &call, const std::string &what) {
    const Value *function = find_last(call, "function");
    if (!function) return call;
    if (!function->is_object() || function->members.empty())
        fail(RESET_ERR_INVALID_ARGUMENT, what, "'s \"function\" is not a non-empty JSON object");
    return *function;
}

std::string call_name(size_t message, size_t index) {
    return "tool_calls_json[" + std::to_string(message) + "][" + std::to_string(index) + "]";
}

// Qwen3's template (tools and tool calls included).
std::string render_qwen3(const std::vector<ChatMessage> &m, const ChatOptions &o) {
    const ToolJson tool_json(m, o);
    std::string out;
    const size_t n = m.size();
    if (tool_json.tools) {
        out << "<|im_start|>system\n";
        if (n > 0 && m[0].role == "system") out << m[0].content << "\n\n";
        out << "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
               "You are provided with function signatures within <tools></tools> XML tags:\n<tools>";
        for (const Value &tool : tool_json.tools->items) {
            out << "\n";
            python_json::dump_to(out, tool);  // tool | tojson
        }
        out << "\n</tools>\n\nFor each function call, return a json object with function name and arguments "
               "within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, "
               "\"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n";
    } else if (n > 0 && m[0].role == "system") {
        out << "<|im_start|>system\n" << m[0].content << "<|im_end|>\n";
    }
    // ns.last_query_index: the last user message that is not a wrapped tool
    // response, scanning from the end; len-1 when there is none.
    size_t last_query = n == 0 ? 0 : n - 1;
    for (size_t back = 0; back < n; ++back) {
        const size_t i = n - 1 - back;
        if (m[i].role == "user" &&
            !(starts_with(m[i].content, "<tool_response>") && ends_with(m[i].content, "</tool_response>"))) {
            last_query = i;
            break;
        }
    }
    for (size_t i = 0; i < n; ++i) {
        const ChatMessage &msg = m[i];
        if (msg.role == "user" || (msg.role == "system" && i != 0)) {
            out << "<|im_start|>" << msg.role << "\n" << msg.content << "<|im_end|>\n";
        } else if (msg.role == "assistant") {
            std::string_view content = msg.content, reasoning;
            if (contains(msg.content, "</think>")) {
                content = strip_newlines_left(after_last(msg.content, "</think>"));
                reasoning = strip_newlines_left(after_last(strip_newlines_right(before_first(msg.content, "</think>")),
                                                           "<think>"));
            }
            // History before the last user query loses its reasoning.
            if (n > 0 && i > last_query && (i == n - 1 || !reasoning.empty())) {
                out << "<|im_start|>" << msg.role << "\n<think>\n" << strip_newlines(reasoning) << "\n</think>\n\n"
                    << strip_newlines_left(content);
            } else {
                out << "<|im_start|>" << msg.role << "\n" << content;
            }
            if (const Value *calls = tool_json.calls[i]) {
                for (size_t k = 0; k < calls->items.size(); ++k) {
                    const std::string what = call_name(i, k);
                    // {%- if (loop.first and content) or (not loop.first) %}{{- '\n' }}
                    if (k > 0 || !content.empty()) out << "\n";
                    const Value &function = call_function(calls->items[k], what);
                    out << "<tool_call>\n{\"name\": \"" << string_field(function, "name", what)
                        << "\", \"arguments\": ";
                    const Value *arguments = find_last(function, "arguments");
                    if (!arguments) fail(RESET_ERR_INVALID_ARGUMENT, what, " has no \"arguments\"");
                    // A string is printed as it is (OpenAI's arguments are JSON text), anything else | tojson.
                    if (arguments->is_string()) out << arguments->text;
                    else python_json::dump_to(out, *arguments);
                    out << "}\n</tool_call>";
                }
            }
            out << "<|im_end|>\n";
        } else if (msg.role == "tool") {
            if (i == 0 || m[i - 1].role != "tool") out << "<|im_start|>user";
            out << "\n<tool_response>\n" << msg.content << "\n</tool_response>";
            if (i == n - 1 || m[i + 1].role != "tool") out << "<|im_end|>\n";
        }
        // Other roles render nothing, as in the template.
    }
    if (o.add_generation_prompt) {
        out << "<|im_start|>assistant\n";
        if (!o.enable_thinking) out << "<think>\n\n</think>\n\n";
    }
    return out;
}

std::string render_llama3(const std::vector<ChatMessage> &m, const ChatOptions &o, std::string_view bos,
                          bool always_prompt) {
    std::string out;
    for (size_t i = 0; i < m.size(); ++i) {
        if (i == 0) out << bos;
        // '...<|end_header_id|>\n\n'+ message['content'] | trim + '<|eot_id|>'
        out << "<|start_header_id|>" << m[i].role << "<|end_header_id|>\n\n" << python_strip(m[i].content)
            << "<|eot_id|>";
    }
    if (o.add_generation_prompt || always_prompt) out << "<|start_header_id|>assistant<|end_header_id|>\n\n";
    return out;
}

std::string render_deepseek_r1(const std::vector<ChatMessage> &m, const ChatOptions &o, std::string_view bos) {
    std::string out;
    // ns.system_prompt: the last system message's content.
    std::string_view system;
    for (const ChatMessage &msg : m)
        if (msg.role == "system") system = msg.content;
    out << bos << system;
    bool is_tool = false, is_output_first = true;
    for (const ChatMessage &msg : m) {
        if (msg.role == "user") {
            is_tool = false;
            out << "<｜User｜>" << msg.content;
        } else if (msg.role == "assistant") {
            if (is_tool) {
                out << "<｜tool▁outputs▁end｜>" << msg.content << "<｜end▁of▁sentence｜>";
                is_tool = false;
            } else {
                std::string_view content = msg.content;
                if (contains(content, "</think>")) content = after_last(content, "</think>");
                out << "<｜Assistant｜>" << content << "<｜end▁of▁sentence｜>";
            }
        } else if (msg.role == "tool") {
            is_tool = true;
            if (is_output_first) {
                out << "<｜tool▁outputs▁begin｜><｜tool▁output▁begin｜>" << msg.content << "<｜tool▁output▁end｜>";
                is_output_first = false;
            } else {
                out << "\n<｜tool▁output▁begin｜>" << msg.content << "<｜tool▁output▁end｜>";
            }
        }
    }
    if (is_tool) out << "<｜tool▁outputs▁end｜>";
    if (o.add_generation_prompt && !is_tool) out << "<｜Assistant｜>";
    return out;
}

// Plain completion: the contents in order, nothing added.
std::string render_plain(const std::vector<ChatMessage> &m) {
    std::string out;
    for (const ChatMessage &msg : m) out << msg.content;
    return out;
}

}  // namespace

ChatTemplateForm recognise_chat_template(std::string_view template_text) {
    const uint64_t h = fnv1a(template_text);
    for (const KnownTemplate &k : kKnown)
        if (k.hash == h) return k.form;
    return {};
}

const char *chat_template_name(reset_chat_template family) {
    switch (family) {
    case RESET_CHAT_TEMPLATE_QWEN3: return "Qwen3";
    case RESET_CHAT_TEMPLATE_DEEPSEEK_R1: return "DeepSeek-R1";
    case RESET_CHAT_TEMPLATE_LLAMA3: return "Llama 3";
    case RESET_CHAT_TEMPLATE_PLAIN: return "plain";
    default: return "unknown";
    }
}

std::string render_chat(std::string_view template_text, std::string_view bos_text,
                        const std::vector<ChatMessage> &messages, const ChatOptions &options) {
    for (const ChatMessage &msg : messages) {
        if (msg.role.empty()) fail(RESET_ERR_INVALID_ARGUMENT, "a chat message has an empty role");
        utf8::require_valid(msg.role, "a chat message's role");
        utf8::require_valid(msg.content, "a chat message's content");
        utf8::require_valid(msg.tool_calls_json, "a chat message's tool_calls_json");
    }
    utf8::require_valid(options.tools_json, "tools_json");
    const ChatTemplateForm recognised = recognise_chat_template(template_text);
    ChatTemplateForm form = recognised;
    if (options.family != RESET_CHAT_TEMPLATE_AUTO) {
        // An explicit family: keep the variant details only when the
        // tokenizer's own template is of that family.
        form = recognised.family == options.family ? recognised : ChatTemplateForm{options.family, false};
    } else if (recognised.family == RESET_CHAT_TEMPLATE_AUTO) {
        const char *hint = "";
        if (contains(template_text, "<|im_start|>")) hint = " It resembles Qwen3's (ChatML).";
        else if (contains(template_text, "<|start_header_id|>")) hint = " It resembles Llama 3's.";
        else if (contains(template_text, "<｜Assistant｜>")) hint = " It resembles DeepSeek-R1's.";
        if (template_text.empty())
            fail(RESET_ERR_UNSUPPORTED,
                 "the tokenizer has no chat_template; choose one explicitly (reset_chat_options.chat_template = "
                 "RESET_CHAT_TEMPLATE_QWEN3, _DEEPSEEK_R1, _LLAMA3 or _PLAIN; Python: chat_template='qwen3', ...)");
        fail(RESET_ERR_UNSUPPORTED, "the tokenizer's chat_template (", template_text.size(),
             " bytes) is not one libreset has verified, so it is not rendered by guess.", hint,
             " To render it as a known family, set reset_chat_options.chat_template to RESET_CHAT_TEMPLATE_QWEN3, "
             "_DEEPSEEK_R1, _LLAMA3 or _PLAIN (Python: chat_template='qwen3', 'deepseek-r1', 'llama3' or 'plain')");
    }
    if (form.family != RESET_CHAT_TEMPLATE_QWEN3) {
        // DeepSeek-R1's template shows no tools list, and renders tool calls only for an assistant
        // message whose content is None, a key transformers (5.x) drops before rendering, so the
        // template then fails.  Llama 3's first release and plain text have neither.
        const ToolJson tool_json(messages, options);  // malformed JSON is still named as such
        if (tool_json.tools || tool_json.any_calls())
            fail(RESET_ERR_UNSUPPORTED, "the ", chat_template_name(form.family),
                 " chat template renders neither tools nor tool calls (Qwen3's does)");
    }
    switch (form.family) {
    case RESET_CHAT_TEMPLATE_QWEN3: return render_qwen3(messages, options);
    case RESET_CHAT_TEMPLATE_LLAMA3: return render_llama3(messages, options, bos_text, form.always_generation_prompt);
    case RESET_CHAT_TEMPLATE_DEEPSEEK_R1:
        return render_deepseek_r1(messages, options, bos_text);
    case RESET_CHAT_TEMPLATE_PLAIN: return render_plain(messages);
    default: fail(RESET_ERR_INVALID_ARGUMENT, "chat template ", static_cast<int>(form.family), " is not a known value");
    }
}

std::string render_chat(const Tokenizer &tokenizer, const std::vector<ChatMessage> &messages,
                        const ChatOptions &options) {
    return render_chat(tokenizer.chat_template(), tokenizer.bos_text(), messages, options);
}

}  // namespace reset
