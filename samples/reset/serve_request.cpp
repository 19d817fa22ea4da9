// serve_request.cpp — `reset serve`: a request's JSON read into a GenerationRequest,
// and steps turned into the OpenAI API's choices (serve.h).
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>

#include "serve.h"

namespace cli::serve {

ApiError::ApiError(int status, const std::string &message, std::string param_, std::string code_)
    : std::runtime_error(message), http_status(status),
      type(status == 401 ? "authentication_error" : status >= 500 ? "server_error" : "invalid_request_error"),
      param(std::move(param_)), code(std::move(code_)) {}

Json ApiError::body() const {
    Json error = {{"message", what()}, {"type", type}, {"param", nullptr}, {"code", nullptr}};
    if (!param.empty()) error["param"] = param;
    if (!code.empty()) error["code"] = code;
    return Json{{"error", error}};
}

ApiError library_error(reset_status status, const std::string &what) {
    const std::string message = what + ": " + reset_last_error();
    switch (status) {
    case RESET_ERR_INVALID_ARGUMENT:
    case RESET_ERR_OUT_OF_RANGE:
    case RESET_ERR_BAD_UTF8:
    case RESET_ERR_UNSUPPORTED: return ApiError(400, message);
    case RESET_ERR_CONTEXT_OVERFLOW: return ApiError(400, message, "", "context_length_exceeded");
    case RESET_ERR_OUT_OF_MEMORY: return ApiError(503, message);
    case RESET_ERR_CANCELLED: return ApiError(503, what + ": the server is shutting down");
    default: return ApiError(500, message);
    }
}

namespace {

// --- the request's fields, each checked for its type and range ---------------------------------

// A field's value, or nullptr when it is absent or null (the API treats the two alike).
const Json *field(const Json &body, const char *name) {
    const auto it = body.find(name);
    return it == body.end() || it->is_null() ? nullptr : &*it;
}

[[noreturn]] void bad_field(const char *name, const std::string &what) {
    throw ApiError(400, std::string(name) + ": " + what, name);
}

bool bool_field(const Json &body, const char *name, bool fallback) {
    const Json *v = field(body, name);
    if (!v) return fallback;
    if (!v->is_boolean()) bad_field(name, "must be true or false");
    return v->get<bool>();
}

// An integer; 5.0 counts (some clients write every number as a float).
int64_t int_field(const Json &body, const char *name, int64_t fallback, int64_t min, int64_t max) {
    const Json *v = field(body, name);
    if (!v) return fallback;
    int64_t value = 0;
    if (v->is_number_integer()) {
        if (v->is_number_unsigned() && v->get<uint64_t>() > uint64_t(INT64_MAX)) bad_field(name, "is out of range");
        value = v->get<int64_t>();
    } else if (const double d = v->is_number_float() ? v->get<double>() : 0.5;
               std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.0e18) {
        value = int64_t(d);
    } else {
        bad_field(name, "must be an integer");
    }
    if (value < min || value > max)
        bad_field(name, "must be in [" + std::to_string(min) + ", " + std::to_string(max) + "], not " +
                            std::to_string(value));
    return value;
}

// An array of token ids, each an integer inside the vocabulary.
std::vector<int32_t> token_ids(const ServedModel &served, const Json &array, const char *name) {
    std::vector<int32_t> ids;
    for (const Json &id : array) {
        if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() >= served.vocab_size)
            bad_field(name, "token ids must be integers in [0, " + std::to_string(served.vocab_size) + ")");
        ids.push_back(int32_t(id.get<int64_t>()));
    }
    return ids;
}

bool number_field(const Json &body, const char *name, double *out) {
    const Json *v = field(body, name);
    if (!v) return false;
    if (!v->is_number()) bad_field(name, "must be a number");
    *out = v->get<double>();
    return true;
}

// --- the prompt ------------------------------------------------------------------------------------

// A message's content: a string, or OpenAI's array of parts, of which only text is served.
std::string message_content(const Json &message, size_t index) {
    const Json *content = field(message, "content");
    const std::string where = "messages[" + std::to_string(index) + "].content";
    if (!content || content->is_null()) return "";  // OpenAI's tool-call message has null content
    if (content->is_string()) return content->get<std::string>();
    if (!content->is_array()) throw ApiError(400, where + ": must be a string or an array of parts", where);
    std::string text;
    for (const Json &part : *content) {
        const Json *type = part.is_object() ? field(part, "type") : nullptr;
        if (!type || !type->is_string() || *type != "text")
            throw ApiError(400, where + ": only text parts are served (this model reads text alone)", where);
        const Json *part_text = field(part, "text");
        if (!part_text || !part_text->is_string()) throw ApiError(400, where + ": a text part needs its text", where);
        text += part_text->get<std::string>();
    }
    return text;
}

// The chat messages as the model's template renders them, tokenized.
void read_chat_prompt(const ServedModel &served, const Json &body, GenerationRequest &request) {
    const Json *messages = field(body, "messages");
    if (!messages || !messages->is_array() || messages->empty())
        throw ApiError(400, "messages: a non-empty array of messages is required", "messages");
    // Tools: shown to the model by its template (Qwen3's), its calls read back from the answer.
    // tool_choice "none" leaves them out; a forced call ("required", a named function) would need
    // decoding constrained to the call's JSON, which this server does not do.
    std::string tools_json;
    if (const Json *tools = field(body, "tools"); tools && !tools->is_null()) {
        if (!tools->is_array()) bad_field("tools", "must be an array of tools");
        for (size_t i = 0; i < tools->size(); ++i) {
            const Json &tool = (*tools)[i];
            const std::string where = "tools[" + std::to_string(i) + "]";
            const Json *type = tool.is_object() ? field(tool, "type") : nullptr;
            const Json *function = tool.is_object() ? field(tool, "function") : nullptr;
            const Json *name = function && function->is_object() ? field(*function, "name") : nullptr;
            if (!type || *type != "function" || !name || !name->is_string() || name->get<std::string>().empty())
                throw ApiError(400, where + ": must be {\"type\": \"function\", \"function\": {\"name\": ...}}",
                               "tools");
        }
        if (!tools->empty()) tools_json = tools->dump(-1, ' ', false, Json::error_handler_t::strict);
    }
    std::string tool_choice = "auto";
    if (const Json *choice = field(body, "tool_choice"); choice && !choice->is_null()) {
        if (!choice->is_string() || (*choice != "none" && *choice != "auto"))
            throw ApiError(400, "tool_choice: \"auto\" and \"none\" are served (a forced call needs constrained "
                                "decoding, which this server does not do)", "tool_choice");
        tool_choice = choice->get<std::string>();
    }
    if (tool_choice == "none") tools_json.clear();
    request.parse_tool_calls = !tools_json.empty();
    request.parallel_tool_calls = bool_field(body, "parallel_tool_calls", true);
    if (const Json *format = field(body, "response_format")) {
        const Json *type = format->is_object() ? field(*format, "type") : nullptr;
        if (!type || *type != "text")
            throw ApiError(400, "response_format: only {\"type\": \"text\"} is served (no JSON mode or schemas)",
                           "response_format");
    }
    bool thinking = true;
    if (const Json *kwargs = field(body, "chat_template_kwargs")) {
        if (!kwargs->is_object()) bad_field("chat_template_kwargs", "must be an object");
        thinking = bool_field(*kwargs, "enable_thinking", true);
    }
    std::vector<Message> conversation;
    for (size_t i = 0; i < messages->size(); ++i) {
        const Json &m = (*messages)[i];
        const std::string where = "messages[" + std::to_string(i) + "]";
        if (!m.is_object()) throw ApiError(400, where + ": must be an object", where);
        const Json *role = field(m, "role");
        if (!role || !role->is_string()) throw ApiError(400, where + ".role: a role is required", where + ".role");
        std::string name = role->get<std::string>();
        if (name == "developer") name = "system";  // OpenAI's newer name for the system prompt
        if (name != "system" && name != "user" && name != "assistant" && name != "tool")
            throw ApiError(400, where + ".role: '" + name + "' is not served (system, developer, user, assistant, tool)",
                           where + ".role");
        std::string calls_json;
        if (const Json *calls = field(m, "tool_calls"); calls && !calls->is_null()) {
            if (name != "assistant" || !calls->is_array())
                throw ApiError(400, where + ".tool_calls: an assistant message's array of calls", where + ".tool_calls");
            if (!calls->empty()) calls_json = calls->dump(-1, ' ', false, Json::error_handler_t::strict);
        }
        std::string content = message_content(m, i);
        // An earlier answer's reasoning, as this server returned it: the template decides whether
        // the model sees it again (Qwen3's and DeepSeek-R1's drop it from history).
        if (const Json *reasoning = field(m, "reasoning_content"); reasoning && name == "assistant") {
            if (!reasoning->is_string()) throw ApiError(400, where + ".reasoning_content: must be a string", where);
            content = "<think>\n" + reasoning->get<std::string>() + "\n</think>\n\n" + content;
        }
        conversation.push_back({name, content, calls_json});
    }
    std::string text;
    try {
        text = chat_render(served.tokenizer, conversation, thinking, true, tools_json);
    } catch (const CliError &e) {  // the template refused them, or a call's JSON is not OpenAI's shape
        if (tools_json.empty()) throw;
        throw ApiError(400, e.what(), "tools");
    }
    request.prompt = tokenize(served.tokenizer, text, RESET_TOKENIZE_PARSE_SPECIAL);
    // DeepSeek-R1's models begin with their reasoning whether or not they write <think> (newer
    // versions of the template put it in the prompt), as vLLM's deepseek_r1 reasoning parser assumes.
    reset_tokenizer_info info;
    reset_tokenizer_info_init(&info);
    const bool deepseek = reset_tokenizer_get_info(served.tokenizer, &info) == RESET_OK &&
                          info.chat_template == RESET_CHAT_TEMPLATE_DEEPSEEK_R1;
    auto ends_with = [&](const char *tail) {
        const size_t n = std::strlen(tail);
        return text.size() >= n && text.compare(text.size() - n, n, tail) == 0;
    };
    request.reasoning_first = deepseek || ends_with("<think>\n") || ends_with("<think>");
}

// A completion's prompt: a string, or token ids (OpenAI allows a list of one of either).
void read_completion_prompt(const ServedModel &served, const Json &body, GenerationRequest &request) {
    const Json *prompt = field(body, "prompt");
    if (!prompt) throw ApiError(400, "prompt: a prompt is required", "prompt");
    const Json *one = prompt;
    if (prompt->is_array() && prompt->size() == 1 && ((*prompt)[0].is_string() || (*prompt)[0].is_array()))
        one = &(*prompt)[0];
    else if (prompt->is_array() && !prompt->empty() && !(*prompt)[0].is_number_integer())
        throw ApiError(400, "prompt: one prompt per request (a string or a list of token ids)", "prompt");
    // echo: the prompt's text goes before each answer (ids are detokenized for it).
    const bool echo = bool_field(body, "echo", false);
    if (one->is_string()) {
        request.prompt = tokenize(served.tokenizer, one->get<std::string>(),
                                  RESET_TOKENIZE_PARSE_SPECIAL | RESET_TOKENIZE_ADD_BOS);
        if (echo) request.echo_text = one->get<std::string>();
    } else if (one->is_array()) {
        request.prompt = token_ids(served, *one, "prompt");
        if (echo) request.echo_text = detokenize(served.tokenizer, request.prompt);
    } else {
        throw ApiError(400, "prompt: must be a string or a list of token ids", "prompt");
    }
    const Json *suffix = field(body, "suffix");
    if (suffix && !(suffix->is_string() && suffix->get<std::string>().empty()))
        throw ApiError(400, "suffix: insertion (fill-in-the-middle) is not supported", "suffix");
}

// --- sampling ----------------------------------------------------------------------------------------

// The request's sampling: libreset's "policy" words if given, else the model's own sampling; then
// OpenAI's and vLLM's fields override it.  A request without a seed draws from a fresh one, as
// OpenAI's API does; the library checks the ranges (reset_policy_create_for_model).
PolicySpec read_sampling(const ServedModel &served, const Json &body) {
    PolicySpec spec;
    spec.params = served.sampling;
    spec.params.preset = nullptr;
    spec.label = "model";
    const Json *policy = field(body, "policy");
    if (policy) {
        if (!policy->is_string()) bad_field("policy", "must be a string such as \"reset t_low=0.6 tau0=1.2\"");
        try {
            spec = parse_policy(policy->get<std::string>());
        } catch (const CliError &e) {
            bad_field("policy", e.what());
        }
    }
    double value = 0;
    if (number_field(body, "temperature", &value)) {
        if (spec.params.kind == RESET_POLICY_RESET || spec.params.kind == RESET_POLICY_ENTROPY)
            bad_field("temperature", "the ReSET policy chooses the temperature (set t_high= and t_low= in policy)");
        if (value < 0) bad_field("temperature", "must be >= 0");
        spec.params.kind = value <= 1e-6 ? RESET_POLICY_GREEDY : RESET_POLICY_FIXED;
        spec.params.temperature = float(value);
    }
    if (number_field(body, "top_p", &value)) spec.params.top_p = float(value);
    if (field(body, "top_k")) {
        const int64_t k = int_field(body, "top_k", 0, -1, 1 << 30);
        spec.params.top_k = int32_t(k < 0 ? 0 : k);  // vLLM's -1 and OpenAI's absent: off
    }
    if (number_field(body, "min_p", &value)) spec.params.min_p = float(value);
    if (number_field(body, "presence_penalty", &value)) spec.params.presence_penalty = float(value);
    if (number_field(body, "frequency_penalty", &value)) spec.params.frequency_penalty = float(value);
    if (number_field(body, "repetition_penalty", &value)) spec.params.repetition_penalty = float(value);
    if (field(body, "seed")) {
        spec.params.seed = uint64_t(int_field(body, "seed", 0, INT64_MIN, INT64_MAX));
    } else if (!(policy && spec.label.find("seed=") != std::string::npos)) {
        static thread_local std::mt19937_64 random{std::random_device{}()};
        spec.params.seed = random() >> 1;
    }
    reset_policy *checked = nullptr;
    const reset_status status = reset_policy_create_for_model(served.model, &spec.params, nullptr, &checked);
    reset_policy_free(checked);
    if (status != RESET_OK) throw ApiError(400, std::string("sampling: ") + reset_last_error());
    return spec;
}

void read_stops(const ServedModel &served, const Json &body, GenerationRequest &request) {
    if (const Json *stop = field(body, "stop")) {
        std::vector<Json> items;
        if (stop->is_string()) items.push_back(*stop);
        else if (stop->is_array()) items.assign(stop->begin(), stop->end());
        else bad_field("stop", "must be a string or an array of strings");
        if (items.size() > RESET_MAX_STOP_STRINGS)
            bad_field("stop", "at most " + std::to_string(RESET_MAX_STOP_STRINGS) + " stop strings");
        for (const Json &item : items) {
            if (!item.is_string() || item.get<std::string>().empty() ||
                item.get<std::string>().size() > RESET_MAX_STOP_STRING_BYTES)
                bad_field("stop", "each stop string must be 1 to " + std::to_string(RESET_MAX_STOP_STRING_BYTES) +
                                      " bytes of text");
            request.stop.strings.push_back(item.get<std::string>());
        }
    }
    if (const Json *ids = field(body, "stop_token_ids")) {
        if (!ids->is_array() || ids->size() > RESET_MAX_STOP_IDS)
            bad_field("stop_token_ids", "must be an array of at most " + std::to_string(RESET_MAX_STOP_IDS) + " ids");
        request.stop.ids = token_ids(served, *ids, "stop_token_ids");
    }
    request.stop.ignore_eos = bool_field(body, "ignore_eos", false);
}

// OpenAI's logit_bias: {"token id": bias}, bias in [-100, 100].
void read_logit_bias(const ServedModel &served, const Json &body, GenerationRequest &request) {
    const Json *bias = field(body, "logit_bias");
    if (!bias) return;
    if (!bias->is_object()) bad_field("logit_bias", "must be an object of token ids and biases");
    if (bias->size() > RESET_MAX_LOGIT_BIAS)
        bad_field("logit_bias", "at most " + std::to_string(RESET_MAX_LOGIT_BIAS) + " tokens");
    for (const auto &[key, value] : bias->items()) {
        char *end = nullptr;
        errno = 0;
        const long id = std::strtol(key.c_str(), &end, 10);
        if (key.empty() || *end != '\0' || errno != 0 || id < 0 || id >= served.vocab_size)
            bad_field("logit_bias", "'" + key + "' is no token id in [0, " + std::to_string(served.vocab_size) + ")");
        if (!value.is_number() || !(std::fabs(value.get<double>()) <= RESET_MAX_LOGIT_BIAS_VALUE))
            bad_field("logit_bias", "the bias of token " + key + " must be a number in [-100, 100]");
        for (const reset_logit_bias &entry : request.logit_bias)
            if (entry.token == int32_t(id)) bad_field("logit_bias", "token " + std::to_string(id) + " is listed twice");
        request.logit_bias.push_back({int32_t(id), float(value.get<double>())});
    }
}

}  // namespace

namespace {

// The body as a JSON object naming this server's model or none.
Json read_body(const ServedModel &served, const std::string &text) {
    Json body;
    try {
        body = Json::parse(text);
    } catch (const Json::exception &e) {
        throw ApiError(400, std::string("the body is not valid JSON (") + e.what() + ")");
    }
    if (!body.is_object()) throw ApiError(400, "the body must be a JSON object");
    if (const Json *model = field(body, "model"); model && (!model->is_string() || *model != served.name))
        throw ApiError(404, "the model `" + (model->is_string() ? model->get<std::string>() : model->dump()) +
                                "` does not exist: this server serves `" + served.name + "`",
                       "model", "model_not_found");
    return body;
}

}  // namespace

Json tokenize_response(const ServedModel &served, const std::string &text) {
    const Json body = read_body(served, text);
    GenerationRequest request;
    try {
        if (field(body, "messages")) {
            read_chat_prompt(served, body, request);
        } else {
            const Json *prompt = field(body, "prompt");
            if (!prompt || !prompt->is_string()) throw ApiError(400, "prompt: a string, or messages", "prompt");
            const bool special = bool_field(body, "add_special_tokens", true);
            request.prompt = tokenize(served.tokenizer, prompt->get<std::string>(),
                                      RESET_TOKENIZE_PARSE_SPECIAL | (special ? RESET_TOKENIZE_ADD_BOS : 0u));
        }
    } catch (const CliError &e) {
        throw ApiError(400, e.what());
    }
    return {{"count", request.prompt.size()}, {"max_model_len", served.max_context}, {"tokens", request.prompt}};
}

Json detokenize_response(const ServedModel &served, const std::string &text) {
    const Json body = read_body(served, text);
    const Json *tokens = field(body, "tokens");
    if (!tokens || !tokens->is_array()) throw ApiError(400, "tokens: an array of token ids is required", "tokens");
    try {
        return {{"prompt", detokenize(served.tokenizer, token_ids(served, *tokens, "tokens"))}};
    } catch (const CliError &e) {
        throw ApiError(400, e.what());
    }
}

GenerationRequest read_request(const ServedModel &served, const std::string &text, bool chat) {
    const Json body = read_body(served, text);
    GenerationRequest request;
    request.chat = chat;
    try {
        if (chat) read_chat_prompt(served, body, request);
        else read_completion_prompt(served, body, request);
    } catch (const CliError &e) {  // the template or the tokenizer refused the text
        throw ApiError(400, e.what(), chat ? "messages" : "prompt");
    }
    if (request.prompt.empty()) throw ApiError(400, "the prompt is empty", chat ? "messages" : "prompt");

    request.n = int(int_field(body, "n", 1, 1, 8));
    if (request.n > served.parallel)
        bad_field("n", "this server draws at most " + std::to_string(served.parallel) +
                           " samples per request (reset serve --parallel N, up to 8)");
    if (!chat && int_field(body, "best_of", request.n, 1, 8) != request.n)
        bad_field("best_of", "must equal n (every sample drawn is returned)");

    // The prompt and the answer share the context, as in vLLM: a prompt that leaves no room, or a
    // max_tokens beyond what it leaves, is refused rather than cut short.
    const size_t prompt_tokens = request.prompt.size();
    const size_t context = size_t(served.max_context);
    if (prompt_tokens >= context)
        throw ApiError(400, "this model's maximum context length is " + std::to_string(context) +
                                " tokens, and the prompt has " + std::to_string(prompt_tokens) +
                                " (the answer needs at least one more)",
                       chat ? "messages" : "prompt", "context_length_exceeded");
    const char *max_name = chat && field(body, "max_completion_tokens") ? "max_completion_tokens" : "max_tokens";
    const int64_t max_tokens = int_field(body, max_name, 0, 1, INT32_MAX);
    if (max_tokens > int64_t(context - prompt_tokens))
        throw ApiError(400, "this model's maximum context length is " + std::to_string(context) +
                                " tokens; the prompt has " + std::to_string(prompt_tokens) + " and " + max_name +
                                " asks for " + std::to_string(max_tokens) + " more",
                       max_name, "context_length_exceeded");
    request.max_tokens = int32_t(max_tokens > 0 ? max_tokens : int64_t(context - prompt_tokens));

    request.policy = read_sampling(served, body);
    read_stops(served, body, request);
    read_logit_bias(served, body, request);
    if (chat) {
        request.logprobs = bool_field(body, "logprobs", false);
        request.top_logprobs = int(int_field(body, "top_logprobs", 0, 0, RESET_MAX_TOP_LOGPROBS));
        if (request.top_logprobs > 0 && !request.logprobs) bad_field("top_logprobs", "needs \"logprobs\": true");
    } else {
        request.logprobs = field(body, "logprobs") != nullptr;
        request.top_logprobs = int(int_field(body, "logprobs", 0, 0, RESET_MAX_TOP_LOGPROBS));
        if (request.logprobs && bool_field(body, "echo", false))
            bad_field("echo", "with logprobs would need the prompt's log-probabilities, which are not computed");
    }
    request.thinking_budget = int32_t(int_field(body, "thinking_token_budget", -1, 0, INT32_MAX));
    if (request.thinking_budget >= 0 && request.n > 1)
        bad_field("thinking_token_budget", "is served for one sample per request (n = 1)");
    request.stream = bool_field(body, "stream", false);
    if (const Json *options = field(body, "stream_options")) {
        if (!request.stream) bad_field("stream_options", "only with \"stream\": true");
        if (!options->is_object()) bad_field("stream_options", "must be an object");
        request.include_usage = bool_field(*options, "include_usage", false);
    }
    return request;
}

// --- reasoning and answer ---------------------------------------------------------------------------

namespace {
constexpr std::string_view kOpen = "<think>", kClose = "</think>";

// The length of the longest end of `text` that begins `tag` (text that may yet become the tag).
size_t partial_tag(const std::string &text, std::string_view tag) {
    for (size_t n = std::min(text.size(), tag.size() - 1); n > 0; --n)
        if (text.compare(text.size() - n, n, tag.substr(0, n)) == 0) return n;
    return 0;
}
}  // namespace

ReasoningSplitter::ReasoningSplitter(bool split, bool reasoning_first)
    : state_(split ? State::Start : State::Content), part_start_(split), reasoning_first_(reasoning_first) {}

void ReasoningSplitter::feed(std::string_view text, std::string *reasoning, std::string *content) {
    held_.append(text);
    run(reasoning, content, false);
}

void ReasoningSplitter::finish(std::string *reasoning, std::string *content) { run(reasoning, content, true); }

void ReasoningSplitter::run(std::string *reasoning, std::string *content, bool final) {
    for (;;) {
        if (state_ == State::Start) {
            // The answer opens with <think> (Qwen3 thinking), or begins with reasoning anyway
            // (reasoning_first), or has none.
            if (held_.compare(0, kOpen.size(), kOpen) == 0) {
                held_.erase(0, kOpen.size());
                state_ = State::Reasoning;
                part_start_ = true;
                continue;
            }
            if (!final && held_.size() < kOpen.size() && kOpen.compare(0, held_.size(), held_) == 0) return;
            state_ = reasoning_first_ ? State::Reasoning : State::Content;
            part_start_ = true;
            continue;
        }
        if (part_start_) {  // the newlines the template puts after <think> and after </think>
            const size_t text_start = held_.find_first_not_of('\n');
            held_.erase(0, text_start == std::string::npos ? held_.size() : text_start);
            if (held_.empty()) return;
            part_start_ = false;
        }
        if (state_ == State::Content) {
            content->append(held_);
            held_.clear();
            return;
        }
        const size_t close = held_.find(kClose);
        if (close != std::string::npos) {
            size_t end = close;
            while (end > 0 && held_[end - 1] == '\n') --end;  // the template's newline before </think>
            reasoning->append(held_, 0, end);
            held_.erase(0, close + kClose.size());
            state_ = State::Content;
            part_start_ = true;
            continue;
        }
        if (final) {
            reasoning->append(held_);
            held_.clear();
            return;
        }
        // Hold back what may begin </think>, and the newlines that may come before it.
        size_t keep = held_.size() - partial_tag(held_, kClose);
        while (keep > 0 && held_[keep - 1] == '\n') --keep;
        reasoning->append(held_, 0, keep);
        held_.erase(0, keep);
        return;
    }
}

// --- tool calls ------------------------------------------------------------------------------------

namespace {
constexpr std::string_view kCallOpen = "<tool_call>", kCallClose = "</tool_call>";
constexpr int kMaxCallDepth = 64;

bool all_space(std::string_view text) {
    return text.find_first_not_of(" \t\r\n") == std::string_view::npos;
}

// `words` random 64-bit words in hex: the ids of responses and tool calls.
std::string random_hex(int words) {
    static thread_local std::mt19937_64 random{std::random_device{}()};
    std::string hex;
    for (int i = 0; i < words; ++i) {
        char word[17];
        std::snprintf(word, sizeof word, "%016llx", (unsigned long long)random());
        hex += word;
    }
    return hex;
}
}  // namespace

void ToolCallParser::feed(std::string_view text, std::string *content, Json *calls) {
    held_.append(text);
    run(content, calls, false);
}

void ToolCallParser::finish(std::string *content, Json *calls) { run(content, calls, true); }

// {"name": "...", "arguments": ...} (the template's own words) as an OpenAI call; false if it is not.
bool ToolCallParser::add_call(const std::string &body, Json *calls) {
    // The model writes what it likes: JSON nested deeper than any call's arguments stays text, so
    // the recursive dump below cannot exhaust the stack (brackets counted, strings or not).
    int depth = 0;
    for (const char c : body) {
        depth += (c == '[' || c == '{') - (c == ']' || c == '}');
        if (depth > kMaxCallDepth) return false;
    }
    const Json call = Json::parse(body, nullptr, false);
    if (call.is_discarded() || !call.is_object()) return false;
    const Json *name = field(call, "name");
    const Json *arguments = field(call, "arguments");
    if (!name || !name->is_string() || !arguments) return false;
    // OpenAI's arguments are JSON text; the model wrote a JSON value.
    calls->push_back({{"id", "call_" + random_hex(2)},
                      {"type", "function"},
                      {"function", {{"name", *name}, {"arguments", arguments->dump(-1, ' ', false,
                                                                               Json::error_handler_t::replace)}}}});
    ++calls_;
    return true;
}

void ToolCallParser::run(std::string *content, Json *calls, bool final) {
    for (;;) {
        if (!in_call_) {
            const size_t open = held_.find(kCallOpen);
            // Text that may yet begin <tool_call> stays held.
            const size_t usable = open != std::string::npos ? open
                                  : final                   ? held_.size()
                                                            : held_.size() - partial_tag(held_, kCallOpen);
            std::string outside = held_.substr(0, usable);
            held_.erase(0, usable);
            if (calls_ == 0) {
                content->append(outside);
            } else {
                between_ += outside;  // shown only if more than whitespace comes between or after calls
                if (open != std::string::npos || final) {
                    if (!all_space(between_)) content->append(between_);
                    between_.clear();
                }
            }
            if (open == std::string::npos) return;
            held_.erase(0, kCallOpen.size());
            in_call_ = true;
            continue;
        }
        const size_t close = held_.find(kCallClose);
        if (close == std::string::npos && !final) return;
        const std::string body = held_.substr(0, close == std::string::npos ? held_.size() : close);
        held_.erase(0, close == std::string::npos ? held_.size() : close + kCallClose.size());
        in_call_ = false;
        if (!add_call(body, calls)) {  // not a call after all: its text, as written
            content->append(kCallOpen);
            content->append(body);
            if (close != std::string::npos) content->append(kCallClose);
        }
    }
}

// --- choices -----------------------------------------------------------------------------------------

namespace {

// OpenAI's floor for a log-probability JSON cannot hold (-inf), as vLLM writes it.
double finite_logprob(float logprob) { return std::isfinite(logprob) ? double(logprob) : -9999.0; }

Json byte_list(const std::string &text) {
    Json bytes = Json::array();
    for (unsigned char c : text) bytes.push_back(int(c));
    return bytes;
}

}  // namespace

ChoiceBuilder::ChoiceBuilder(const ServedModel &served, const GenerationRequest &request, int index)
    : served_(served), request_(request), index_(index),
      splitter_(request.chat && served.split_reasoning, request.reasoning_first),
      text_offset_(request.echo_text.size()) {
    if (!request.logprobs) logprobs_ = nullptr;
    else if (request.chat) logprobs_ = Json::array();
    else logprobs_ = {{"tokens", Json::array()}, {"token_logprobs", Json::array()},
                      {"top_logprobs", Json::array()}, {"text_offset", Json::array()}};
}

Json ChoiceBuilder::start_chunk() const {
    if (request_.chat)
        return {{"index", index_}, {"delta", {{"role", "assistant"}, {"content", ""}}}, {"logprobs", nullptr},
                {"finish_reason", nullptr}};
    return {{"index", index_}, {"text", request_.echo_text}, {"logprobs", nullptr}, {"finish_reason", nullptr}};
}

Json ChoiceBuilder::add(const SampleStep &step) {
    std::string reasoning, content;
    splitter_.feed(step.text, &reasoning, &content);
    if (step.finish) {
        splitter_.finish(&reasoning, &content);
        finish_ = step.finish;
        if (step.stop_string >= 0) stop_reason_ = request_.stop.strings[size_t(step.stop_string)];
        else if (step.stop_id) stop_reason_ = step.token;
    }
    Json calls = Json::array();
    if (request_.parse_tool_calls) {
        std::string text;
        tool_parser_.feed(content, &text, &calls);
        if (step.finish) tool_parser_.finish(&text, &calls);
        content = std::move(text);
        if (!request_.parallel_tool_calls) {  // the first call only: later ones are dropped
            const size_t room = tool_calls_.empty() ? 1 : 0;
            if (calls.size() > room) calls.erase(calls.begin() + std::ptrdiff_t(room), calls.end());
        }
        for (Json &call : calls) {
            tool_calls_.push_back(call);
            call["index"] = tool_calls_.size() - 1;  // a stream's delta names each call by its index
        }
        // A call ended the answer: OpenAI's finish_reason says so (a length cut stays "length").
        if (step.finish && !tool_calls_.empty() && std::strcmp(step.finish, "stop") == 0) finish_ = "tool_calls";
    }
    reasoning_ += reasoning;
    content_ += content;
    Json step_logprobs = nullptr;
    if (step.token >= 0) {
        ++tokens_;
        if (request_.logprobs) {
            // Each token's own text (raw, so a piece of a multi-byte character is its bytes).
            const std::string text = token_text(served_.tokenizer, step.token);
            if (request_.chat) {
                Json top = Json::array();
                for (const reset_token_logprob &t : step.top) {
                    const std::string t_text = token_text(served_.tokenizer, t.token);
                    top.push_back({{"token", t_text}, {"logprob", finite_logprob(t.logprob)},
                                   {"bytes", byte_list(t_text)}});
                }
                Json entry = {{"token", text}, {"logprob", finite_logprob(step.logprob)}, {"bytes", byte_list(text)},
                              {"top_logprobs", top}};
                logprobs_.push_back(entry);
                step_logprobs = {{"content", Json::array({entry})}};
            } else {
                Json top = Json::object();
                for (const reset_token_logprob &t : step.top)
                    top[token_text(served_.tokenizer, t.token)] = finite_logprob(t.logprob);
                const Json top_entry = request_.top_logprobs > 0 ? top : Json(nullptr);
                logprobs_["tokens"].push_back(text);
                logprobs_["token_logprobs"].push_back(finite_logprob(step.logprob));
                logprobs_["top_logprobs"].push_back(top_entry);
                logprobs_["text_offset"].push_back(text_offset_);
                step_logprobs = {{"tokens", {text}}, {"token_logprobs", {finite_logprob(step.logprob)}},
                                 {"top_logprobs", {top_entry}}, {"text_offset", {text_offset_}}};
                text_offset_ += text.size();
            }
        }
    }
    if (reasoning.empty() && content.empty() && calls.empty() && step_logprobs.is_null() && !step.finish)
        return nullptr;
    const Json finish = step.finish ? Json(finish_) : Json(nullptr);
    Json part;
    if (!request_.chat) {
        part = {{"index", index_}, {"text", content}, {"logprobs", step_logprobs}, {"finish_reason", finish}};
    } else {
        Json delta = Json::object();
        if (!reasoning.empty()) delta["reasoning_content"] = reasoning;
        if (!content.empty()) delta["content"] = content;
        if (!calls.empty()) delta["tool_calls"] = calls;
        part = {{"index", index_}, {"delta", delta}, {"logprobs", step_logprobs}, {"finish_reason", finish}};
    }
    if (step.finish) part["stop_reason"] = stop_reason_;
    return part;
}

Json ChoiceBuilder::choice() const {
    const Json finish = finish_ ? Json(finish_) : Json(nullptr);
    if (!request_.chat)
        return {{"index", index_}, {"text", request_.echo_text + content_}, {"logprobs", logprobs_},
                {"finish_reason", finish}, {"stop_reason", stop_reason_}};
    Json message = {{"role", "assistant"}, {"content", content_}};
    if (served_.split_reasoning) message["reasoning_content"] = reasoning_.empty() ? Json(nullptr) : Json(reasoning_);
    if (request_.parse_tool_calls) {
        // As OpenAI returns a call: content null when the answer is only calls.
        if (!tool_calls_.empty() && content_.empty()) message["content"] = nullptr;
        message["tool_calls"] = tool_calls_;
    }
    const Json logprobs = request_.logprobs ? Json{{"content", logprobs_}} : Json(nullptr);
    return {{"index", index_}, {"message", message}, {"logprobs", logprobs}, {"finish_reason", finish},
            {"stop_reason", stop_reason_}};
}

std::string new_response_id(bool chat) { return (chat ? "chatcmpl-" : "cmpl-") + random_hex(2); }

Json usage_json(size_t prompt_tokens, size_t cached_tokens, size_t completion_tokens) {
    return {{"prompt_tokens", prompt_tokens},
            {"completion_tokens", completion_tokens},
            {"total_tokens", prompt_tokens + completion_tokens},
            {"prompt_tokens_details", {{"cached_tokens", cached_tokens}}}};
}

// --- CORS ------------------------------------------------------------------------------------------

namespace {

std::string lower(std::string text) {
    for (char &c : text)
        if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
    return text;
}

// Whether `origin` is an origin as a browser serializes it: http or https, a host of letters, digits,
// dots, hyphens (or a bracketed IPv6 address), an optional port; no path, query, user or slash.
bool is_origin(const std::string &origin) {
    size_t host = 0;
    if (origin.rfind("http://", 0) == 0) host = 7;
    else if (origin.rfind("https://", 0) == 0) host = 8;
    else return false;
    size_t i = host;
    if (i < origin.size() && origin[i] == '[') {  // [IPv6]
        const size_t close = origin.find(']', i);
        if (close == std::string::npos || close == i + 1) return false;
        for (size_t k = i + 1; k < close; ++k)
            if (!std::isxdigit(static_cast<unsigned char>(origin[k])) && origin[k] != ':' && origin[k] != '.')
                return false;
        i = close + 1;
    } else {
        const size_t start = i;
        while (i < origin.size() && (std::isalnum(static_cast<unsigned char>(origin[i])) || origin[i] == '.' ||
                                     origin[i] == '-'))
            ++i;
        if (i == start) return false;
    }
    if (i == origin.size()) return true;
    if (origin[i] != ':' || i + 1 == origin.size() || origin.size() - i - 1 > 5) return false;
    for (size_t k = i + 1; k < origin.size(); ++k)
        if (!std::isdigit(static_cast<unsigned char>(origin[k]))) return false;
    return std::stoi(origin.substr(i + 1)) <= 65535;
}

}  // namespace

bool CorsPolicy::parse(const std::string &list, std::string *error) {
    any_ = false;
    origins_.clear();
    size_t start = 0;
    for (;;) {
        const size_t comma = list.find(',', start);
        const std::string entry = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        if (entry == "*") {
            any_ = true;
        } else if (is_origin(lower(entry))) {
            origins_.push_back(lower(entry));
        } else {
            *error = entry.empty() ? "an empty entry in '" + list + "'"
                                   : "'" + entry + "' is not an origin (http:// or https://, a host, an optional "
                                                   "port; no path or trailing slash) or *";
            any_ = false;
            origins_.clear();
            return false;
        }
        if (comma == std::string::npos) return true;
        start = comma + 1;
    }
}

std::string CorsPolicy::allow(const std::string &origin) const {
    if (origin.empty()) return "";
    if (any_) return "*";
    const std::string key = lower(origin);
    for (const std::string &o : origins_)
        if (o == key) return origin;
    return "";
}

}  // namespace cli::serve
