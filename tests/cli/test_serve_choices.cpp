// test_serve_choices.cpp — how `reset serve` turns an answer into OpenAI's response parts
// (samples/reset/serve_request.cpp): Qwen3's Hermes tool calls, read as vLLM's hermes parser reads
// them, streamed or whole, however the text is cut into steps.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "serve.h"

using namespace cli::serve;

namespace {

// A Qwen3 answer that thinks, says a word, then calls two tools (the template's own format).
const std::string kThought = "<think>\nTwo cities, two calls.\n</think>\n\n";
const std::string kCalls =
    "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": [1, 2.5]}}\n</tool_call>\n"
    "<tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}\n</tool_call>";

struct Parsed {
    std::string content;
    Json calls = Json::array();
};

// The text fed in pieces of `cut` bytes (0: whole).
Parsed parse(const std::string &text, size_t cut) {
    ToolCallParser parser;
    Parsed out;
    const size_t step = cut == 0 ? text.size() : cut;
    for (size_t at = 0; at < text.size(); at += step) parser.feed(text.substr(at, step), &out.content, &out.calls);
    parser.finish(&out.content, &out.calls);
    return out;
}

Json names_and_arguments(const Json &calls) {
    Json out = Json::array();
    for (const Json &c : calls) {
        CHECK(c["type"] == "function");
        CHECK(c["id"].get<std::string>().rfind("call_", 0) == 0);
        out.push_back({c["function"]["name"], c["function"]["arguments"]});
    }
    return out;
}

}  // namespace

TEST_CASE("tool calls: Hermes blocks become OpenAI calls, the text before them stays, however it is cut") {
    const std::string text = "Checking both.\n" + kCalls;
    const Json want = Json::array({Json::array({"get_weather", R"({"city":"Paris","days":[1,2.5]})"}),
                                   Json::array({"get_time", "{}"})});
    for (size_t cut = 0; cut <= 24; ++cut) {
        CAPTURE(cut);
        const Parsed p = parse(text, cut);
        CHECK(p.content == "Checking both.\n");  // vLLM keeps the text before the first call as it is
        CHECK(names_and_arguments(p.calls) == want);
    }
    // Whitespace between and after calls is not text; words after them are.
    CHECK(parse(kCalls + "\n\n", 5).content.empty());
    CHECK(parse(kCalls + "\nDone.", 5).content == "\nDone.");
}

TEST_CASE("tool calls: what is not a call stays text; an unclosed call at the end counts if its JSON is whole") {
    CHECK(parse("a <tool_call>not json</tool_call> b", 3).content == "a <tool_call>not json</tool_call> b");
    CHECK(parse("<tool_call>{\"name\": 5, \"arguments\": {}}</tool_call>", 0).calls.empty());
    CHECK(parse("<tool_call>{\"arguments\": {}}</tool_call>", 0).calls.empty());
    const Parsed unclosed = parse("<tool_call>\n{\"name\": \"f\", \"arguments\": {\"x\": 1}}\n", 4);
    CHECK(unclosed.content.empty());
    CHECK(names_and_arguments(unclosed.calls) == Json::array({Json::array({"f", R"({"x":1})"})}));
    const Parsed cut_short = parse("<tool_call>\n{\"name\": \"f\", \"argu", 4);
    CHECK(cut_short.calls.empty());
    CHECK(cut_short.content == "<tool_call>\n{\"name\": \"f\", \"argu");
    // JSON nested past 64 levels is not read as a call (the server's stack is not the model's to use).
    const std::string deep = "{\"name\": \"f\", \"arguments\": " + std::string(70, '[') + std::string(70, ']') + "}";
    CHECK(parse("<tool_call>" + deep + "</tool_call>", 0).calls.empty());
    const std::string fits = "{\"name\": \"f\", \"arguments\": " + std::string(60, '[') + std::string(60, ']') + "}";
    CHECK(parse("<tool_call>" + fits + "</tool_call>", 0).calls.size() == 1);
    // A tag that only begins at the end is text once the answer ends.
    CHECK(parse("x <tool_ca", 1).content == "x <tool_ca");
    CHECK(parse("x < y", 1).content == "x < y");
}

namespace {

struct Streamed {
    Json whole;              // the non-streamed choice
    std::vector<Json> parts;  // the stream's parts
};

// An answer given to a ChoiceBuilder in steps of `cut` bytes, the last with `finish`.
Streamed build(const GenerationRequest &request, const std::string &text, size_t cut, const char *finish) {
    static ServedModel served;  // no tokenizer: no log-probabilities asked for
    ChoiceBuilder choice(served, request, 0);
    Streamed out;
    for (size_t at = 0; at < text.size(); at += cut) {
        SampleStep step;
        step.token = 1;
        step.text = text.substr(at, cut);
        if (at + cut >= text.size()) step.finish = finish;
        const Json part = choice.add(step);
        if (!part.is_null()) out.parts.push_back(part);
    }
    out.whole = choice.choice();
    return out;
}

GenerationRequest tool_request() {
    GenerationRequest request;
    request.chat = true;
    request.parse_tool_calls = true;
    return request;
}

}  // namespace

TEST_CASE("tool calls in a chat answer: reasoning, null content, the calls, finish_reason tool_calls") {
    for (size_t cut : {1, 3, 7, 64}) {
        CAPTURE(cut);
        const Streamed s = build(tool_request(), kThought + kCalls, cut, "stop");
        const Json &message = s.whole["message"];
        CHECK(message["reasoning_content"] == "Two cities, two calls.");
        CHECK(message["content"].is_null());
        REQUIRE(message["tool_calls"].size() == 2);
        CHECK(message["tool_calls"][0]["function"]["name"] == "get_weather");
        CHECK(s.whole["finish_reason"] == "tool_calls");
        // The stream: each call once, in a delta naming its index and id; the last part finishes.
        std::vector<Json> deltas;
        std::string content;
        for (const Json &part : s.parts) {
            if (part["delta"].contains("tool_calls"))
                for (const Json &c : part["delta"]["tool_calls"]) deltas.push_back(c);
            if (part["delta"].contains("content")) content += part["delta"]["content"].get<std::string>();
        }
        CHECK(content.empty());
        REQUIRE(deltas.size() == 2);
        for (size_t k = 0; k < 2; ++k) {
            CHECK(deltas[k]["index"] == k);
            CHECK(deltas[k]["id"] == message["tool_calls"][k]["id"]);
            CHECK(deltas[k]["function"] == message["tool_calls"][k]["function"]);
        }
        CHECK(s.parts.back()["finish_reason"] == "tool_calls");
    }
}

TEST_CASE("tool calls: parallel_tool_calls false keeps the first; a cut answer stays length; no tools, no parsing") {
    GenerationRequest one = tool_request();
    one.parallel_tool_calls = false;
    const Streamed first = build(one, kCalls, 5, "stop");
    REQUIRE(first.whole["message"]["tool_calls"].size() == 1);
    CHECK(first.whole["message"]["tool_calls"][0]["function"]["name"] == "get_weather");

    const Streamed cut = build(tool_request(), kCalls, 5, "length");
    CHECK(cut.whole["finish_reason"] == "length");

    const Streamed plain = build(tool_request(), "No tools needed: 4.", 2, "stop");
    CHECK(plain.whole["message"]["content"] == "No tools needed: 4.");
    CHECK(plain.whole["message"]["tool_calls"] == Json::array());
    CHECK(plain.whole["finish_reason"] == "stop");

    GenerationRequest no_tools;
    no_tools.chat = true;
    const Streamed text = build(no_tools, kCalls, 4, "stop");
    CHECK(text.whole["message"]["content"] == kCalls);  // without tools the answer is text
    CHECK(!text.whole["message"].contains("tool_calls"));
}
