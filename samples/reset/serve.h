// serve.h — `reset serve`, an OpenAI-compatible HTTP server over one model:
// what its files share.  serve_request.cpp reads a request's JSON into a
// GenerationRequest and turns steps into the API's responses; serve.cpp runs
// the HTTP server and the model (one session, one generation at a time);
// serve_metrics.cpp keeps the counts GET /metrics reports.
//
// The API is OpenAI's chat completions and completions as vLLM and
// llama.cpp's server speak them (their extensions included: top_k, min_p,
// repetition_penalty, stop_token_ids, ignore_eos, chat_template_kwargs,
// reasoning_content), plus libreset's own "policy" (the ReSET sampler).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "cli.h"

namespace cli::serve {

using Json = nlohmann::ordered_json;

// A request the server refuses or cannot serve, as the OpenAI API reports it:
// {"error": {"message", "type", "param", "code"}} with an HTTP status.
struct ApiError : std::runtime_error {
    int http_status;
    std::string type;   // "invalid_request_error", "authentication_error", "server_error"
    std::string param;  // the request field at fault ("" if none)
    std::string code;   // "context_length_exceeded", "model_not_found", ... ("" if none)
    ApiError(int status, const std::string &message, std::string param_ = "", std::string code_ = "");
    Json body() const;
};

// A status from the library as the API error it means (400 for what the request got wrong, 503
// for memory and cancellation at shutdown, 500 for the rest), with the library's message.
ApiError library_error(reset_status status, const std::string &what);

// What the server knows of its model, fixed at start.
struct ServedModel {
    std::string name;                  // the API's "model" (--served-model-name, else the directory's name)
    const reset_model *model = nullptr;
    const reset_tokenizer *tokenizer = nullptr;
    int32_t vocab_size = 0;
    int32_t max_context = 0;           // tokens per sequence, the prompt's and the answer's together
    int parallel = 1;                  // the most samples (n) one request may ask for
    reset_policy_params sampling{};    // a request's sampling where it names none (generation_config.json)
    bool split_reasoning = true;       // <think>...</think> goes to reasoning_content (--reasoning-format)
};

// One request, read and checked: everything the model needs to serve it.
struct GenerationRequest {
    bool chat = true;                  // /v1/chat/completions (else /v1/completions)
    std::vector<int32_t> prompt;
    std::string echo_text;             // completions with echo: the prompt, put before each answer
    bool reasoning_first = false;      // the answer begins with reasoning, <think> written or not (DeepSeek-R1)
    int n = 1;
    int32_t max_tokens = 0;            // at least 1; what the context leaves when the request names none
    PolicySpec policy;
    StopArgs stop;                     // stop strings, stop_token_ids, ignore_eos
    std::vector<reset_logit_bias> logit_bias;
    bool logprobs = false;
    int top_logprobs = 0;
    bool stream = false;
    bool include_usage = false;        // stream_options.include_usage: a last chunk with the usage
    // vLLM's thinking_token_budget (-1: none): after that many reasoning tokens "</think>" is appended
    // to the answer as prompt text (close_reasoning, as `reset generate --think-budget`), and the
    // answer follows.  One sample per request (n = 1).
    int32_t thinking_budget = -1;
    // Tool calling (chat with "tools", tool_choice "auto"): the answer's <tool_call>{...}</tool_call>
    // blocks (Qwen3's Hermes format) come back as tool_calls, not text.
    bool parse_tool_calls = false;
    bool parallel_tool_calls = true;   // false: the first call only
};

// Read a request body (chat: true for /v1/chat/completions).  Throws ApiError naming the field at
// fault; sampling is checked by the library (reset_policy_create_for_model).
GenerationRequest read_request(const ServedModel &served, const std::string &body, bool chat);

// vLLM's /tokenize ({"prompt"} or {"messages"} as a chat request renders them; {"count",
// "max_model_len", "tokens"}) and /detokenize ({"tokens"}; {"prompt"}).  Throw ApiError.
Json tokenize_response(const ServedModel &served, const std::string &body);
Json detokenize_response(const ServedModel &served, const std::string &body);

// What one decode step gave one sample.
struct SampleStep {
    int index = 0;                     // the choice (the session's sequence)
    int32_t token = -1;
    std::string text;                  // complete UTF-8; the ending token's own text left out
    float logprob = 0;
    std::vector<reset_token_logprob> top;
    const char *finish = nullptr;      // "stop" / "length" once the sample has ended, else null
    int stop_string = -1;              // with "stop": the index of the stop string matched, else -1
    bool stop_id = false;              // with "stop": a stop_token_ids entry (the token) ended it
};

// Splits a chat answer into its reasoning (inside <think>...</think>) and the answer after it, as
// the text streams: a tag split across steps is held back until it is whole, and the newlines
// Qwen3's template puts around the reasoning and before the answer are dropped, so the parts render
// back into the same conversation.
class ReasoningSplitter {
public:
    // split false: all text is answer.  reasoning_first: text before </think> is reasoning even
    // when the answer does not open with <think> (the prompt opened it, or the model left it out).
    ReasoningSplitter(bool split, bool reasoning_first);
    void feed(std::string_view text, std::string *reasoning, std::string *content);
    // The generation ended: what is still held back.
    void finish(std::string *reasoning, std::string *content);

private:
    enum class State { Start, Reasoning, Content };
    State state_;
    std::string held_;
    bool part_start_ = true;  // nothing of the current part has been given out yet
    bool reasoning_first_;
    void run(std::string *reasoning, std::string *content, bool final);
};

// Takes the tool calls out of an answer as it streams, as vLLM's Hermes parser reads Qwen3's:
// each <tool_call>{"name": ..., "arguments": ...}</tool_call> becomes a call (OpenAI's
// {"id", "type": "function", "function": {"name", "arguments": JSON text}}), a tag split across
// steps is held back until it is whole, and the text between and after calls is dropped when it is
// only whitespace.  A block that is not such JSON (or nests past 64 levels) stays text; an unclosed
// one at the end is a call if its JSON is whole (the model stopped before "</tool_call>"), else text.
class ToolCallParser {
public:
    // Plain text is appended to *content, finished calls to *calls (a JSON array).
    void feed(std::string_view text, std::string *content, Json *calls);
    void finish(std::string *content, Json *calls);
    int calls() const { return calls_; }

private:
    std::string held_;
    std::string between_;  // text outside calls after the first: shown only if not all whitespace
    bool in_call_ = false;
    int calls_ = 0;
    void run(std::string *content, Json *calls, bool final);
    bool add_call(const std::string &body, Json *calls);
};

// One choice of a response as it is built: its text parts and its log-probabilities.
class ChoiceBuilder {
public:
    ChoiceBuilder(const ServedModel &served, const GenerationRequest &request, int index);
    // A stream's first chunk of this choice: chat's role, or completions' echoed prompt.
    Json start_chunk() const;
    // Adds a step (the last one releases what the splitter held); returns this choice's part of a
    // stream chunk, or null when the step adds nothing to show.
    Json add(const SampleStep &step);
    // The whole choice, for a response that is not streamed.
    Json choice() const;
    bool finished() const { return finish_ != nullptr; }
    const char *finish_reason() const { return finish_; }  // null until the choice has ended
    int tokens() const { return tokens_; }

private:
    const ServedModel &served_;
    const GenerationRequest &request_;
    int index_;
    ReasoningSplitter splitter_;
    ToolCallParser tool_parser_;
    std::string content_, reasoning_;
    Json tool_calls_ = Json::array();
    Json logprobs_;      // chat: the "content" array; completions: tokens, token_logprobs, top_logprobs, text_offset
    size_t text_offset_;  // completions: where the next token's text starts in the choice's text
    const char *finish_ = nullptr;
    Json stop_reason_;  // vLLM's stop_reason: the stop string or stop id that ended it, else null
    int tokens_ = 0;
};

// The response's envelope fields.
std::string new_response_id(bool chat);
Json usage_json(size_t prompt_tokens, size_t cached_tokens, size_t completion_tokens);

// Cross-origin access for browser clients (CORS), as --allowed-origins sets it.  None by default: a
// page on any site the user visits could otherwise drive a server on the user's machine and read
// its answers.  "*" allows any origin; otherwise a list of origins as browsers send them in the
// Origin header ("https://ui.example.com", "http://localhost:3000": scheme, host, optional port).
class CorsPolicy {
public:
    CorsPolicy() = default;
    // The option's text: "*" or comma-separated origins.  False, with *error saying why, for one
    // that is not an http(s) origin (a path, a trailing slash, a space, an empty entry).
    bool parse(const std::string &list, std::string *error);
    bool enabled() const { return any_ || !origins_.empty(); }
    // Access-Control-Allow-Origin's value for a request's Origin: "*", the origin itself (the
    // response then varies by Origin), or "" when it is not allowed.
    std::string allow(const std::string &origin) const;

private:
    bool any_ = false;
    std::vector<std::string> origins_;  // lower-cased, as browsers serialize scheme and host
};

// What the server has done since it started, for GET /metrics in Prometheus' text format
// (version 0.0.4), under vLLM's metric names with libreset's prefix ("reset:" for "vllm:"), so
// that dashboards made for vLLM need only the prefix changed.  Every sample carries the served
// model's name as `model_name`.  Thread-safe: request threads, the decode loop and the scraper
// call it at once.  (serve_metrics.cpp)
class ServerMetrics {
public:
    explicit ServerMetrics(std::string model_name);
    ServerMetrics(const ServerMetrics &) = delete;
    ServerMetrics &operator=(const ServerMetrics &) = delete;

    // A generation request's life: waiting for the model's turn, then running.
    void request_waiting();
    void request_running(double queue_seconds);  // its turn came after queue_seconds
    void request_done();                         // running no more (whatever the outcome)
    // A decode step of a running request (every sample's next token): its first from the request's
    // arrival, a later one from the step before; with the KV-cache tokens held after it (one lock
    // per step: this runs between two steps, while the GPU waits).
    void first_token(double seconds, int64_t kv_tokens_held);
    void step(double seconds, int64_t kv_tokens_held);
    // A request that produced a response: its prompt (cached tokens included), the prompt tokens
    // the session already held, the tokens generated, its time from arrival to its end (before a
    // stream's [DONE]), and how each of its choices ended ("stop", "length", "tool_calls"; "abort"
    // when the client left).
    void request_finished(size_t prompt_tokens, size_t cached_tokens, size_t generation_tokens,
                          double e2e_seconds, const std::vector<std::string> &finish_reasons);
    void error(int http_status);  // a request answered with an error object
    // The session's KV cache: the tokens its sequences hold (the prompt cache's included) out of
    // sequences x max_context; 0 of 0 when there is no session.
    void kv_cache(int64_t tokens_held, int64_t capacity);

    std::string text() const;  // the exposition

    // The buckets (upper bounds, seconds) of the histograms; +Inf is implied.  The decode step's
    // are fine around libreset's 2-8 ms steps, where vLLM's start at 10 ms.
    static const std::vector<double> kFirstTokenBuckets, kStepBuckets, kLatencyBuckets, kQueueBuckets;

private:
    struct Histogram {
        const std::vector<double> *bounds;
        std::vector<uint64_t> counts;  // per bucket, not cumulative; one more for +Inf
        double sum = 0;
        uint64_t count = 0;
        void observe(double v);
    };
    std::string label_;  // model_name="...", escaped
    mutable std::mutex mutex_;
    int64_t waiting_ = 0, running_ = 0;
    int64_t kv_tokens_ = 0, kv_capacity_ = 0;
    uint64_t prompt_tokens_ = 0, cached_tokens_ = 0, generation_tokens_ = 0;
    std::map<std::string, uint64_t> finished_;  // finish reason -> choices
    std::map<int, uint64_t> errors_;            // HTTP status -> requests
    Histogram first_token_, step_, e2e_, queue_;
};

}  // namespace cli::serve
