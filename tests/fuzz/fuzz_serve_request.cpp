// fuzz_serve_request.cpp — `reset serve`'s request reader (samples/reset/serve_request.cpp) on
// fuzzed bodies: what a network client sends the server.
//
// Input: byte 0 picks what reads the rest (mod 5): a chat request, a completion request,
// /tokenize, /detokenize, or the reasoning splitter.  The model is the embedded default model
// (models/default: Qwen3's template, a sentencepiece tokenizer of 768 pieces), served as "arith"
// with a context of 512 and up to 4 samples.  Checked:
//   - a body is read or refused with ApiError only (never another exception: the server would
//     answer 500), a 400 or a 404 (another model), with a message;
//   - what is read fits what the engine is promised: a prompt of ids inside the vocabulary, n in
//     1..4, max_tokens >= 1 with the prompt inside the context, at most 16 stop strings of 1..256
//     bytes of valid UTF-8, stop ids inside the vocabulary, logit biases for distinct ids inside it
//     in [-100, 100], top_logprobs in 0..20 and only with logprobs, a thinking budget only for one
//     sample, and sampling the library accepts (reset_policy_create_for_model, checked again);
//   - /tokenize gives ids inside the vocabulary and their count; /detokenize valid UTF-8;
//   - the reasoning splitter gives the same reasoning and answer however the text is cut into
//     steps (the input's bytes name the cuts) as for the whole text at once, and never invents
//     text: both parts together are at most the input's bytes; the tool-call parser, on the same
//     text and cuts, likewise (its calls compared without their random ids).
#include <string>

#include "fuzz_support.h"
#include "serve.h"

using reset_fuzz::expect;
using reset_fuzz::finding;
using namespace cli::serve;

namespace {

struct Served {
    reset_model *model = nullptr;
    ServedModel served;
    Served() {
        reset_model_options options;
        reset_model_options_init(&options);
        options.backend = RESET_BACKEND_CPU;
        if (reset_model_load(RESET_SOURCE_DIR "/models/default", &options, &model) != RESET_OK)
            finding(std::string("cannot load the default model: ") + reset_last_error());
        reset_model_info info;
        reset_model_info_init(&info);
        reset_model_get_info(model, &info);
        served.name = "arith";
        served.model = model;
        served.tokenizer = reset_model_tokenizer(model);
        served.vocab_size = info.vocab_size;
        served.max_context = 512;
        served.parallel = 4;
        reset_session *session = nullptr;
        if (reset_session_create(model, nullptr, &session) != RESET_OK) finding("cannot create a session");
        reset_policy_params_init(&served.sampling);
        reset_session_get_policy(session, &served.sampling);
        served.sampling.preset = nullptr;
        reset_session_free(session);
    }
    ~Served() { reset_model_free(model); }
};

const ServedModel &served() {
    static Served s;
    return s.served;
}

void expect_refusal(const ApiError &e, const std::string &where) {
    expect(e.http_status == 400 || e.http_status == 404,
           where + ": refused with HTTP " + std::to_string(e.http_status) + ": " + e.what());
    expect(e.what()[0] != '\0', where + ": a refusal without a message");
    const Json body = e.body();
    expect(body["error"]["message"] == e.what() && body["error"]["type"] == "invalid_request_error",
           where + ": the error object does not carry the refusal");
}

void check_request(const ServedModel &s, const GenerationRequest &r) {
    expect(!r.prompt.empty(), "an empty prompt was accepted");
    for (int32_t id : r.prompt) expect(id >= 0 && id < s.vocab_size, "a prompt id outside the vocabulary");
    expect(r.n >= 1 && r.n <= s.parallel, "n outside 1..parallel");
    expect(r.max_tokens >= 1 && r.prompt.size() + size_t(r.max_tokens) <= size_t(s.max_context),
           "max_tokens does not fit the context beside the prompt");
    expect(r.stop.strings.size() <= RESET_MAX_STOP_STRINGS, "too many stop strings");
    for (const std::string &stop : r.stop.strings)
        expect(!stop.empty() && stop.size() <= RESET_MAX_STOP_STRING_BYTES && reset_fuzz::valid_utf8(stop),
               "a stop string the library would refuse");
    expect(r.stop.ids.size() <= RESET_MAX_STOP_IDS, "too many stop ids");
    for (int32_t id : r.stop.ids) expect(id >= 0 && id < s.vocab_size, "a stop id outside the vocabulary");
    expect(r.logit_bias.size() <= RESET_MAX_LOGIT_BIAS, "too many logit biases");
    for (size_t i = 0; i < r.logit_bias.size(); ++i) {
        const reset_logit_bias &b = r.logit_bias[i];
        expect(b.token >= 0 && b.token < s.vocab_size && b.bias >= -100.0f && b.bias <= 100.0f,
               "a logit bias the API does not allow");
        for (size_t j = 0; j < i; ++j) expect(r.logit_bias[j].token != b.token, "a token biased twice");
    }
    expect(r.top_logprobs >= 0 && r.top_logprobs <= RESET_MAX_TOP_LOGPROBS && (r.logprobs || r.top_logprobs == 0),
           "top_logprobs out of range or without logprobs");
    expect(r.thinking_budget < 0 || r.n == 1, "a thinking budget for several samples");
    expect(!r.include_usage || r.stream, "include_usage without a stream");
    reset_policy *policy = nullptr;
    const reset_status status = reset_policy_create_for_model(s.model, &r.policy.params, nullptr, &policy);
    reset_policy_free(policy);
    expect(status == RESET_OK, std::string("sampling the library refuses was accepted: ") + reset_last_error());
}

void check_splitter(std::string_view input) {
    // Byte 0: whether to split, and reasoning_first; then cut lengths (1..16) until a 0 byte, then the text.
    if (input.empty()) return;
    const bool split = input[0] & 1, first = input[0] & 2;
    size_t at = 1;
    std::vector<size_t> cuts;
    while (at < input.size() && input[at] != 0 && cuts.size() < 64)
        cuts.push_back(size_t(uint8_t(input[at++]) % 16 + 1));
    if (at < input.size()) ++at;
    const std::string_view text = input.substr(at);
    std::string whole_reasoning, whole_content, reasoning, content;
    ReasoningSplitter whole(split, first), pieces(split, first);
    whole.feed(text, &whole_reasoning, &whole_content);
    whole.finish(&whole_reasoning, &whole_content);
    size_t start = 0;
    for (size_t i = 0; start < text.size(); ++i) {
        const size_t n = cuts.empty() ? text.size() : cuts[i % cuts.size()];
        pieces.feed(text.substr(start, n), &reasoning, &content);
        start += n;
    }
    pieces.finish(&reasoning, &content);
    expect(reasoning == whole_reasoning && content == whole_content,
           "the reasoning splitter gives other parts when the text comes in pieces");
    expect(reasoning.size() + content.size() <= text.size(), "the reasoning splitter made up text");
    if (!split) expect(content == text && reasoning.empty(), "with no split, the answer is not the text");

    // The tool-call parser on the same text and cuts: the same text and calls (ids aside) whole or in
    // pieces, and no text made up (a call's name and arguments come from the text inside its tags).
    auto parse_calls = [&](bool in_pieces, std::string *plain) {
        ToolCallParser parser;
        Json calls = Json::array();
        size_t from = 0;
        for (size_t i = 0; from < text.size(); ++i) {
            const size_t n = !in_pieces || cuts.empty() ? text.size() : cuts[i % cuts.size()];
            parser.feed(text.substr(from, n), plain, &calls);
            from += n;
        }
        parser.finish(plain, &calls);
        expect(parser.calls() == int(calls.size()), "the tool-call parser miscounts its calls");
        for (Json &call : calls) call.erase("id");
        return calls;
    };
    std::string whole_plain, piece_plain;
    const Json whole_calls = parse_calls(false, &whole_plain), piece_calls = parse_calls(true, &piece_plain);
    expect(whole_plain == piece_plain && whole_calls == piece_calls,
           "the tool-call parser gives other text or calls when the text comes in pieces");
    expect(whole_plain.size() <= text.size(), "the tool-call parser made up text");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    const ServedModel &s = served();
    const std::string body(reinterpret_cast<const char *>(data) + 1, size - 1);
    const int mode = data[0] % 5;
    static const bool verbose = std::getenv("RESET_FUZZ_VERBOSE") != nullptr;  // what the corpus reaches
    try {
        if (mode <= 1) {
            check_request(s, read_request(s, body, mode == 0));
            if (verbose) std::fprintf(stderr, "  read\n");
        } else if (mode == 2) {
            const Json r = tokenize_response(s, body);
            expect(r["count"] == r["tokens"].size(), "/tokenize's count is not its tokens'");
            for (const Json &id : r["tokens"])
                expect(id.get<int64_t>() >= 0 && id.get<int64_t>() < s.vocab_size,
                       "/tokenize: an id outside the vocabulary");
        } else if (mode == 3) {
            const Json r = detokenize_response(s, body);
            expect(reset_fuzz::valid_utf8(r["prompt"].get<std::string>()), "/detokenize: text that is not UTF-8");
        } else {
            check_splitter(body);
        }
    } catch (const ApiError &e) {
        if (verbose) std::fprintf(stderr, "  refused (%d): %s\n", e.http_status, e.what());
        expect_refusal(e, mode <= 1 ? (mode == 0 ? "chat" : "completion") : mode == 2 ? "/tokenize" : "/detokenize");
    } catch (const std::exception &e) {
        finding(std::string("an exception other than ApiError: ") + e.what());
    }
    return 0;
}
