// Stop conditions (reset_set_stop): stop strings, stop ids and max_tokens.
//
// The reference for where a generation stops is the text and tokens of the
// same generation without stop conditions (the tokens do not depend on them:
// the draws are keyed by seed, sequence and step), searched with
// std::string::find, independently of the library's incremental search.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "engine/stop_conditions.h"
#include "reset.h"
#include "test_support.h"

using namespace test_support;

namespace {

// A stop string the fixture's generations do not contain (checked: each use
// expects the generation to end otherwise).
const char kNeverGenerated[] = "\x7f\x01\x7f\x02\x7f\x03\x7f\x04";

reset_session *sampling_session(reset_model *model, int32_t sequences, uint64_t seed) {
    reset_session *session = create_session(model, sequences, 512);
    reset_policy_params p;
    reset_policy_params_init(&p);
    p.kind = RESET_POLICY_FIXED;
    p.temperature = 2.0f;  // varied text from the random fixture, EOS (1 of 512 ids) rarely
    p.seed = seed;
    REQUIRE(reset_set_policy(session, &p) == RESET_OK);
    return session;
}

const int32_t kPrompt[] = {10, 11, 12, 13};
constexpr int32_t kPromptLength = 4;

// What one sequence did in one generation.
struct Run {
    std::vector<int32_t> tokens;
    std::vector<std::string> texts;  // per step
    std::string text;                // their concatenation
    std::vector<std::string> held;   // reset_session_held_text after each step
    reset_end_reason end = RESET_END_NONE;
    int32_t stop_index = -1;
    int32_t length = 0;              // reset_session_length afterwards
};

// Prefill the prompt and decode every sequence until all have ended.
std::vector<Run> generate(reset_session *session, int32_t sequences) {
    REQUIRE(reset_session_reset(session) == RESET_OK);
    REQUIRE(reset_prefill(session, kPrompt, kPromptLength) == RESET_OK);
    std::vector<Run> runs(static_cast<size_t>(sequences));
    for (int step = 0; step < 400; ++step) {
        std::vector<reset_step> steps(static_cast<size_t>(sequences));
        reset_step_init(steps.data(), steps.size());
        int32_t active = 0;
        const reset_status status = reset_decode_step(session, steps.data(), steps.size(), &active);
        INFO(reset_last_error());
        REQUIRE(status == RESET_OK);
        for (int32_t k = 0; k < sequences; ++k) {
            const reset_step &r = steps[size_t(k)];
            Run &run = runs[size_t(k)];
            if (run.end != RESET_END_NONE) {
                CHECK(r.end_reason == RESET_END_FINISHED);
                CHECK(r.stop_index == -1);
                continue;
            }
            run.tokens.push_back(r.token);
            run.texts.emplace_back(r.text, r.text_len);
            run.text += run.texts.back();
            const char *held = nullptr;
            size_t held_len = 0;
            REQUIRE(reset_session_held_text(session, k, &held, &held_len) == RESET_OK);
            run.held.emplace_back(held, held_len);
            if (r.end_of_generation) {
                run.end = r.end_reason;
                run.stop_index = r.stop_index;
            } else {
                CHECK(r.end_reason == RESET_END_NONE);
            }
            if (r.end_reason != RESET_END_STOP) CHECK(r.stop_index == -1);
        }
        if (active == 0) break;
    }
    for (int32_t k = 0; k < sequences; ++k) {
        REQUIRE(runs[size_t(k)].end != RESET_END_NONE);  // the step bound is far above max_tokens
        runs[size_t(k)].length = reset_session_length(session, k);
    }
    return runs;
}

// Stop options over strings and ids this object keeps alive.
struct StopSpec {
    std::vector<std::string> strings;
    std::vector<int32_t> ids;
    int32_t max_tokens = 0, include = 0, ignore_eos = 0;
    std::vector<const char *> pointers;

    reset_stop_options options() {
        pointers.clear();
        for (const std::string &s : strings) pointers.push_back(s.c_str());
        reset_stop_options o;
        reset_stop_options_init(&o);
        o.strings = pointers.data();
        o.string_count = pointers.size();
        o.ids = ids.data();
        o.id_count = ids.size();
        o.max_tokens = max_tokens;
        o.include_stop_string = include;
        o.ignore_eos = ignore_eos;
        return o;
    }
};

void set_stop(reset_session *session, const std::vector<std::string> &strings, const std::vector<int32_t> &ids,
              int32_t max_tokens, int32_t include = 0) {
    StopSpec spec{strings, ids, max_tokens, include, 0, {}};
    const reset_stop_options o = spec.options();
    const reset_status status = reset_set_stop(session, &o);
    INFO(reset_last_error());
    REQUIRE(status == RESET_OK);
}

// The UTF-8 character boundaries of a text (0 and size included).
std::vector<size_t> boundaries(const std::string &text) {
    std::vector<size_t> b;
    for (size_t i = 0; i <= text.size(); ++i)
        if (i == text.size() || (static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) b.push_back(i);
    return b;
}

// Where `stops` end the reference text: the first end of any one's first
// occurrence; of those ending there, the longest, then the first listed.
struct Expected {
    int32_t index = -1;
    size_t start = 0, end = 0;
};
Expected first_stop(const std::string &text, const std::vector<std::string> &stops) {
    Expected e;
    for (size_t k = 0; k < stops.size(); ++k) {
        const size_t at = text.find(stops[k]);
        if (at == std::string::npos) continue;
        const size_t end = at + stops[k].size();
        if (e.index < 0 || end < e.end || (end == e.end && stops[k].size() > stops[size_t(e.index)].size())) {
            e.index = int32_t(k);
            e.start = at;
            e.end = end;
        }
    }
    return e;
}

}  // namespace

TEST_CASE("stop search: first end wins, then the longest, then the first listed; what may begin one is held") {
    auto conditions = [](std::vector<std::string> strings) {
        StopSpec spec{std::move(strings), {}, 0, 0, 0, {}};
        const reset_stop_options o = spec.options();
        return reset::make_stop_conditions(&o, 512, true);
    };
    reset::StopMatch m = reset::find_stop(conditions({"abc", "b"}), "xabcd");
    CHECK(m.index == 1);  // "b" is complete one byte before "abc"
    CHECK(m.start == 2);
    CHECK(m.end == 3);
    m = reset::find_stop(conditions({"b", "ab"}), "xab");
    CHECK(m.index == 1);  // both end at byte 3: the longer
    CHECK(m.start == 1);
    m = reset::find_stop(conditions({"ab", "ab"}), "ab");
    CHECK(m.index == 0);  // equal: the first listed
    m = reset::find_stop(conditions({"\nUser:", "zz"}), "hello\nUs");
    CHECK(m.index == -1);
    CHECK(m.hold == 3);  // "\nUs" may begin "\nUser:"
    m = reset::find_stop(conditions({"aab"}), "xaaaa");
    CHECK(m.hold == 2);  // the longest suffix that begins it, after KMP's fallbacks
    m = reset::find_stop(conditions({"aab"}), "aaab");
    CHECK(m.index == 0);
    CHECK(m.start == 1);
    m = reset::find_stop(conditions({"é"}), "caf\xC3");
    CHECK(m.hold == 1);  // bytes, not characters (the session only feeds complete characters)
    m = reset::find_stop(conditions({}), "anything");
    CHECK(m.index == -1);
    CHECK(m.hold == 0);
}

TEST_CASE("stop strings end each sequence where its text first contains one, whatever the tokens' split") {
    ModelGuard m{load_chat_model()};
    constexpr int32_t kSequences = 3;
    constexpr int32_t kMaxTokens = 60;
    SessionGuard s{sampling_session(m.model, kSequences, 7)};
    set_stop(s.session, {}, {}, kMaxTokens);
    const std::vector<Run> reference = generate(s.session, kSequences);
    for (const Run &run : reference) {
        CHECK((run.end == RESET_END_LENGTH || run.end == RESET_END_EOS));
        if (run.end == RESET_END_LENGTH) {
            CHECK(run.tokens.size() == size_t(kMaxTokens));
            CHECK(run.length == kPromptLength + kMaxTokens);  // the last token is in the context
        }
    }
    REQUIRE(reference[0].text.size() > 40);  // enough text to cut

    std::mt19937 rng(2026);
    int stopped = 0, not_found = 0, across_tokens = 0;
    for (int trial = 0; trial < 40; ++trial) {
        // One to three stop strings cut from sequence (trial % 3)'s text at character boundaries, some
        // made not to occur by an appended character; the other sequences may or may not contain them.
        const Run &source = reference[size_t(trial % kSequences)];
        const std::vector<size_t> b = boundaries(source.text);
        std::vector<std::string> stops;
        const int count = 1 + int(rng() % 3);
        for (int k = 0; k < count; ++k) {
            const size_t first = rng() % (b.size() - 1);
            const size_t last = std::min(b.size() - 1, first + 1 + rng() % 6);
            std::string stop = source.text.substr(b[first], b[last] - b[first]);
            if (rng() % 4 == 0) stop += kNeverGenerated;
            stops.push_back(stop);
        }
        const int32_t include = int32_t(rng() % 2);
        set_stop(s.session, stops, {}, kMaxTokens, include);
        const std::vector<Run> runs = generate(s.session, kSequences);
        for (int32_t k = 0; k < kSequences; ++k) {
            const Run &want = reference[size_t(k)];
            const Run &got = runs[size_t(k)];
            const Expected e = first_stop(want.text, stops);
            INFO("trial ", trial, " sequence ", k, " stop ", e.index);
            // The same tokens up to where it stopped.
            REQUIRE(got.tokens.size() <= want.tokens.size());
            CHECK(std::equal(got.tokens.begin(), got.tokens.end(), want.tokens.begin()));
            // Every step's text extends a prefix of the reference (held text comes later, never altered),
            // and with the held text it is all the reference had reported by then.
            CHECK(want.text.compare(0, got.text.size(), got.text) == 0);
            std::string reported, want_reported;
            for (size_t j = 0; j < got.tokens.size(); ++j) {
                reported += got.texts[j];
                want_reported += want.texts[j];
                if (j + 1 < got.tokens.size() || got.end == RESET_END_NONE)
                    CHECK(reported + got.held[j] == want_reported);
                else
                    CHECK(got.held[j].empty());  // an ended sequence holds nothing
            }
            if (e.index < 0) {
                ++not_found;
                CHECK(got.end == want.end);
                CHECK(got.text == want.text);  // held text was flushed at the end
                CHECK(got.tokens.size() == want.tokens.size());
                CHECK(got.length == want.length);
                continue;
            }
            ++stopped;
            CHECK(got.end == RESET_END_STOP);
            CHECK(got.stop_index == e.index);
            CHECK(got.text == want.text.substr(0, include ? e.end : e.start));
            // It stopped at the token whose text completed the string.
            size_t before = 0;
            for (size_t j = 0; j + 1 < got.tokens.size(); ++j) before += want.texts[j].size();
            CHECK(before < e.end);
            CHECK(before + want.texts[got.tokens.size() - 1].size() >= e.end);
            across_tokens += e.start < before;
            // The stopping token is not in the context; the ones before it are.
            CHECK(got.length == kPromptLength + int32_t(got.tokens.size()) - 1);
        }
    }
    // The trials are meant to cover each outcome; a change that makes them all alike tests less.
    CHECK(stopped > 20);
    CHECK(not_found > 5);
    CHECK(across_tokens > 5);
}

TEST_CASE("stop ids end a sequence as EOS does; max_tokens ends it with its last token in the context") {
    ModelGuard m{load_chat_model()};
    SessionGuard s{sampling_session(m.model, 1, 3)};
    set_stop(s.session, {}, {}, 30);
    const Run reference = generate(s.session, 1)[0];
    REQUIRE(reference.end == RESET_END_LENGTH);
    CHECK(reference.length == kPromptLength + 30);

    // A stop id: the first step that draws it ends the sequence; its text is reported.
    const int32_t id = reference.tokens[12];
    const size_t first = size_t(std::find(reference.tokens.begin(), reference.tokens.end(), id) -
                                reference.tokens.begin());
    set_stop(s.session, {}, {id, 5000 % 512}, 30);
    Run got = generate(s.session, 1)[0];
    CHECK(got.end == RESET_END_STOP);
    CHECK(got.stop_index == -1);
    CHECK(got.tokens.size() == first + 1);
    std::string want;
    for (size_t j = 0; j <= first; ++j) want += reference.texts[j];
    CHECK(got.text == want);
    CHECK(got.length == kPromptLength + int32_t(first));  // the stop id is not in the context

    // max_tokens: the logits after the last token are those of a session that ran it.
    set_stop(s.session, {}, {}, 10);
    got = generate(s.session, 1)[0];
    CHECK(got.end == RESET_END_LENGTH);
    CHECK(got.tokens.size() == 10);
    CHECK(got.length == kPromptLength + 10);
    std::vector<float> after_length(512), after_ten(512);
    REQUIRE(reset_session_logits(s.session, 0, after_length.data(), 512) == RESET_OK);
    SessionGuard plain{sampling_session(m.model, 1, 3)};
    REQUIRE(reset_prefill(plain.session, kPrompt, kPromptLength) == RESET_OK);
    for (int j = 0; j < 10; ++j) {
        reset_step r;
        reset_step_init(&r, 1);
        REQUIRE(reset_decode_step(plain.session, &r, 1, nullptr) == RESET_OK);
        CHECK(r.token == reference.tokens[size_t(j)]);
    }
    REQUIRE(reset_session_logits(plain.session, 0, after_ten.data(), 512) == RESET_OK);
    CHECK(after_length == after_ten);

    // A new turn: the budget counts from it, and the sequence generates again.
    const int32_t more[] = {20, 21};
    REQUIRE(reset_prefill(s.session, more, 2) == RESET_OK);
    for (int step = 1;; ++step) {
        reset_step r;
        reset_step_init(&r, 1);
        REQUIRE(reset_decode_step(s.session, &r, 1, nullptr) == RESET_OK);
        if (r.end_reason == RESET_END_LENGTH) CHECK(step == 10);
        if (r.end_of_generation) {
            CHECK((r.end_reason == RESET_END_LENGTH || r.end_reason == RESET_END_EOS));
            break;
        }
        REQUIRE(step < 10);
    }

    // Lowering max_tokens mid-answer counts what was generated: the next step ends it.
    set_stop(s.session, {}, {}, 0);
    REQUIRE(reset_session_reset(s.session) == RESET_OK);
    REQUIRE(reset_prefill(s.session, kPrompt, kPromptLength) == RESET_OK);
    for (int j = 0; j < 5; ++j) {
        reset_step r;
        reset_step_init(&r, 1);
        REQUIRE(reset_decode_step(s.session, &r, 1, nullptr) == RESET_OK);
        REQUIRE(r.end_of_generation == 0);
    }
    set_stop(s.session, {}, {}, 3);
    reset_step r;
    reset_step_init(&r, 1);
    REQUIRE(reset_decode_step(s.session, &r, 1, nullptr) == RESET_OK);
    CHECK(r.end_reason == RESET_END_LENGTH);
    CHECK(reset_decode_step(s.session, &r, 1, nullptr) == RESET_ERR_STATE);  // every sequence has ended
}

TEST_CASE("ignore_eos: an end-of-generation id is one more token, in the context; max_tokens still ends it") {
    // Seed 7 at T 2 draws an end-of-generation id (3 or 1 of the chat fixture's 512) at its 59th
    // token: without ignore_eos it ends there.
    ModelGuard m{load_chat_model()};
    SessionGuard s{sampling_session(m.model, 1, 7)};
    set_stop(s.session, {}, {}, 100);
    const Run ended = generate(s.session, 1)[0];
    REQUIRE(ended.end == RESET_END_EOS);
    REQUIRE(ended.tokens.size() < 90);
    StopSpec spec{{}, {}, 100, 0, 1, {}};
    const reset_stop_options o = spec.options();
    REQUIRE(reset_set_stop(s.session, &o) == RESET_OK);
    const Run ignored = generate(s.session, 1)[0];
    CHECK(ignored.end == RESET_END_LENGTH);
    CHECK(ignored.tokens.size() == 100);
    CHECK(ignored.length == kPromptLength + 100);  // the end-of-generation id entered the context
    CHECK(std::equal(ended.tokens.begin(), ended.tokens.end(), ignored.tokens.begin()));
    // The ids after it are those of a session that was given it as prompt text.
    SessionGuard fed{sampling_session(m.model, 1, 7)};
    REQUIRE(reset_prefill(fed.session, kPrompt, kPromptLength) == RESET_OK);
    for (size_t j = 0; j < ended.tokens.size() - 1; ++j) {
        reset_step r;
        reset_step_init(&r, 1);
        REQUIRE(reset_decode_step(fed.session, &r, 1, nullptr) == RESET_OK);
    }
    REQUIRE(reset_prefill(fed.session, &ended.tokens.back(), 1) == RESET_OK);
    std::vector<float> a(512), b(512);
    REQUIRE(reset_session_logits(fed.session, 0, a.data(), a.size()) == RESET_OK);
    SessionGuard again{sampling_session(m.model, 1, 7)};
    REQUIRE(reset_set_stop(again.session, &o) == RESET_OK);
    REQUIRE(reset_prefill(again.session, kPrompt, kPromptLength) == RESET_OK);
    for (size_t j = 0; j < ended.tokens.size(); ++j) {
        reset_step r;
        reset_step_init(&r, 1);
        REQUIRE(reset_decode_step(again.session, &r, 1, nullptr) == RESET_OK);
        CHECK(r.end_of_generation == 0);
    }
    REQUIRE(reset_session_logits(again.session, 0, b.data(), b.size()) == RESET_OK);
    CHECK(a == b);
}

TEST_CASE("reset_set_stop refuses bad options precisely and keeps the conditions it had") {
    ModelGuard m{load_chat_model()};
    SessionGuard s{sampling_session(m.model, 1, 3)};
    set_stop(s.session, {}, {}, 4);
    const char *good[] = {kNeverGenerated};
    const std::string long_string(RESET_MAX_STOP_STRING_BYTES + 1, 'a');
    const std::string longest(RESET_MAX_STOP_STRING_BYTES, 'a');
    const char *bad_utf8[] = {"ok", "\xC3\x28"};
    const char *empty[] = {""};
    const char *null_entry[] = {"a", nullptr};
    const char *too_long[] = {long_string.c_str()};
    const char *just_fits[] = {longest.c_str()};
    const int32_t out_of_range[] = {1, 512};
    const int32_t negative[] = {-1};
    std::vector<const char *> many(RESET_MAX_STOP_STRINGS + 1, "x");
    std::vector<int32_t> many_ids(RESET_MAX_STOP_IDS + 1, 1);

    reset_stop_options base;
    reset_stop_options_init(&base);
    struct Refused {
        const char *const *strings;
        size_t string_count;
        const int32_t *ids;
        size_t id_count;
        int32_t max_tokens, include_stop_string;
        uint32_t struct_size;  // 0: base's
        reset_status status;
        const char *message;
    };
    const uint32_t inside_pointer = uint32_t(offsetof(reset_stop_options, strings) + 4);
    const Refused refused[] = {
        {bad_utf8, 2, nullptr, 0, 0, 0, 0, RESET_ERR_BAD_UTF8, "options->strings[1] is not valid UTF-8"},
        {empty, 1, nullptr, 0, 0, 0, 0, RESET_ERR_INVALID_ARGUMENT, "options->strings[0] is empty"},
        {null_entry, 2, nullptr, 0, 0, 0, 0, RESET_ERR_INVALID_ARGUMENT, "options->strings[1] is NULL"},
        {too_long, 1, nullptr, 0, 0, 0, 0, RESET_ERR_INVALID_ARGUMENT, "options->strings[0] is longer than 256 bytes"},
        {nullptr, 1, nullptr, 0, 0, 0, 0, RESET_ERR_INVALID_ARGUMENT, "options->strings is NULL with string_count 1"},
        {many.data(), many.size(), nullptr, 0, 0, 0, 0, RESET_ERR_INVALID_ARGUMENT,
         "options->string_count = 17 is above 16"},
        {nullptr, 0, out_of_range, 2, 0, 0, 0, RESET_ERR_OUT_OF_RANGE,
         "options->ids[1] = 512 is outside the vocabulary [0, 512)"},
        {nullptr, 0, negative, 1, 0, 0, 0, RESET_ERR_OUT_OF_RANGE, "options->ids[0] = -1"},
        {nullptr, 0, nullptr, 3, 0, 0, 0, RESET_ERR_INVALID_ARGUMENT, "options->ids is NULL with id_count 3"},
        {nullptr, 0, many_ids.data(), many_ids.size(), 0, 0, 0, RESET_ERR_INVALID_ARGUMENT,
         "options->id_count = 257 is above 256"},
        {nullptr, 0, nullptr, 0, -1, 0, 0, RESET_ERR_INVALID_ARGUMENT, "options->max_tokens = -1 is negative"},
        {nullptr, 0, nullptr, 0, 0, 2, 0, RESET_ERR_INVALID_ARGUMENT,
         "options->include_stop_string = 2 (must be 0 or 1)"},
        {nullptr, 0, nullptr, 0, 0, 0, 2, RESET_ERR_INVALID_ARGUMENT, "options->struct_size is 2"},
        {nullptr, 0, nullptr, 0, 0, 0, inside_pointer, RESET_ERR_INVALID_ARGUMENT, "ends inside a pointer field"},
    };
    for (const Refused &c : refused) {
        INFO(c.message);
        reset_stop_options o = base;
        o.strings = c.strings;
        o.string_count = c.string_count;
        o.ids = c.ids;
        o.id_count = c.id_count;
        o.max_tokens = c.max_tokens;
        o.include_stop_string = c.include_stop_string;
        if (c.struct_size) o.struct_size = c.struct_size;
        CHECK(reset_set_stop(s.session, &o) == c.status);
        CHECK(last_error().find(c.message) != std::string::npos);
    }
    CHECK(reset_set_stop(nullptr, &base) == RESET_ERR_INVALID_ARGUMENT);
    reset_stop_options bad_ignore = base;
    bad_ignore.ignore_eos = -1;
    CHECK(reset_set_stop(s.session, &bad_ignore) == RESET_ERR_INVALID_ARGUMENT);
    CHECK(last_error().find("options->ignore_eos = -1 (must be 0 or 1)") != std::string::npos);
    const char *held = "x";
    size_t held_len = 7;
    CHECK(reset_session_held_text(s.session, 1, &held, &held_len) == RESET_ERR_OUT_OF_RANGE);
    CHECK((held != nullptr && *held == '\0' && held_len == 0));  // cleared on error
    CHECK(reset_session_held_text(s.session, 0, nullptr, &held_len) == RESET_ERR_INVALID_ARGUMENT);
    CHECK(reset_session_held_text(s.session, 0, &held, nullptr) == RESET_ERR_INVALID_ARGUMENT);
    CHECK(reset_session_held_text(nullptr, 0, &held, &held_len) == RESET_ERR_INVALID_ARGUMENT);

    // None of those changed the conditions: max_tokens 4 still ends the generation.
    Run run = generate(s.session, 1)[0];
    CHECK(run.end == RESET_END_LENGTH);
    CHECK(run.tokens.size() == 4);

    // The longest string is accepted; NULL options remove every condition.
    reset_stop_options o = base;
    o.strings = just_fits, o.string_count = 1;
    CHECK(reset_set_stop(s.session, &o) == RESET_OK);
    o = base, o.strings = good, o.string_count = 1, o.max_tokens = 6;
    REQUIRE(reset_set_stop(s.session, &o) == RESET_OK);
    run = generate(s.session, 1)[0];
    CHECK(run.end == RESET_END_LENGTH);
    CHECK(run.tokens.size() == 6);
    REQUIRE(reset_set_stop(s.session, nullptr) == RESET_OK);
    REQUIRE(reset_session_reset(s.session) == RESET_OK);
    REQUIRE(reset_prefill(s.session, kPrompt, kPromptLength) == RESET_OK);
    for (int j = 0; j < 12; ++j) {
        reset_step r;
        reset_step_init(&r, 1);
        REQUIRE(reset_decode_step(s.session, &r, 1, nullptr) == RESET_OK);
        if (r.end_reason == RESET_END_EOS) break;
        CHECK(r.end_of_generation == 0);
    }
}

TEST_CASE("stop strings need a tokenizer; stop ids and max_tokens do not") {
    ModelGuard m;
    reset_model_options options;
    reset_model_options_init(&options);
    const std::string dir = std::string(RESET_SOURCE_DIR) + "/tests/fixtures/models/qwen3-tied";
    REQUIRE(reset_model_load(dir.c_str(), &options, &m.model) == RESET_OK);
    if (reset_model_tokenizer(m.model) != nullptr) return;  // the fixture gained a tokenizer: nothing to test
    SessionGuard s{sampling_session(m.model, 1, 1)};
    const char *strings[] = {"a"};
    reset_stop_options o;
    reset_stop_options_init(&o);
    o.strings = strings;
    o.string_count = 1;
    CHECK(reset_set_stop(s.session, &o) == RESET_ERR_UNSUPPORTED);
    CHECK(last_error().find("stop strings need the model's tokenizer") != std::string::npos);
    o.string_count = 0;
    o.max_tokens = 2;
    REQUIRE(reset_set_stop(s.session, &o) == RESET_OK);
    const Run run = generate(s.session, 1)[0];
    CHECK(run.end == RESET_END_LENGTH);
    CHECK(run.tokens.size() == 2);
    CHECK(run.text.empty());
}

TEST_CASE("traces name the end reason and the stop string") {
    reset_step step;
    reset_step_init(&step, 1);
    CHECK(step.stop_index == -1);
    step.token = 7;
    step.end_of_generation = 1;
    step.end_reason = RESET_END_STOP;
    step.stop_index = 2;
    char line[1024];
    size_t length = 0;
    REQUIRE(reset_step_to_json(&step, line, sizeof line, &length) == RESET_OK);
    CHECK(std::string(line).find("\"end\":true,\"end_reason\":\"stop\",\"stop_index\":2,") != std::string::npos);
    step.end_reason = RESET_END_LENGTH;
    REQUIRE(reset_step_to_json(&step, line, sizeof line, &length) == RESET_OK);
    CHECK(std::string(line).find("\"end\":true,\"end_reason\":\"length\",\"text\"") != std::string::npos);
    step.end_reason = static_cast<reset_end_reason>(9);  // not a reason reset.h names: left out
    REQUIRE(reset_step_to_json(&step, line, sizeof line, &length) == RESET_OK);
    CHECK(std::string(line).find("end_reason") == std::string::npos);
    step.end_of_generation = 0;
    step.end_reason = RESET_END_NONE;
    REQUIRE(reset_step_to_json(&step, line, sizeof line, &length) == RESET_OK);
    CHECK(std::string(line).find("\"end\":false,\"text\"") != std::string::npos);
}
