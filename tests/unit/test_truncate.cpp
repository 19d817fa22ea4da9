// Cutting sequences back (reset_truncate, reset_truncate_sequence) and
// reading their tokens (reset_session_tokens).
//
// The reference for a sequence cut back is a new session given the kept
// tokens as its prompt: reset.h promises the two are the same.  On the CPU
// backend a prompt token and a generated token run through the same forward
// pass (one position at a time), so the comparison is exact: same tokens,
// texts, signals and logits, bit for bit.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "reset.h"
#include "session_steps.h"
#include "test_support.h"

using namespace test_support;
using namespace session_steps;

namespace {

const std::vector<int32_t> kExtra = {20, 21, 22};

}  // namespace

TEST_CASE("a sequence cut back continues exactly as a new session given the kept tokens as its prompt") {
    ModelGuard m{load_chat_model()};
    for (const int32_t cut : {1, 4, kPromptLength, kPromptLength + 7, kPromptLength + 23}) {
        CAPTURE(cut);
        SessionGuard a{reset_session_for(m.model, 1, 7)};
        REQUIRE(reset_prefill(a.session, kPrompt, kPromptLength) == RESET_OK);
        const std::vector<Step> first = decode(a.session, 1, 24)[0];
        const std::vector<int32_t> held = tokens_of(a.session, 0);
        // The record is the prompt and every generated token, in order.
        REQUIRE(held == concat(std::vector<int32_t>(kPrompt, kPrompt + kPromptLength), generated_tokens(first)));

        REQUIRE(reset_truncate(a.session, cut) == RESET_OK);
        CHECK(reset_session_length(a.session, 0) == cut);
        const std::vector<int32_t> kept(held.begin(), held.begin() + cut);
        CHECK(tokens_of(a.session, 0) == kept);
        // No logits until a prefill.
        reset_step r;
        reset_step_init(&r, 1);
        CHECK(reset_decode_step(a.session, &r, 1, nullptr) == RESET_ERR_STATE);
        CHECK(last_error().find("reset_truncate") != std::string::npos);
        std::vector<float> logits(kVocab);
        CHECK(reset_session_logits(a.session, 0, logits.data(), kVocab) == RESET_ERR_STATE);

        REQUIRE(reset_prefill(a.session, kExtra.data(), kExtra.size()) == RESET_OK);
        const std::vector<Step> again = decode(a.session, 1, 16)[0];

        SessionGuard b{reset_session_for(m.model, 1, 7)};
        const std::vector<int32_t> prompt = concat(kept, kExtra);
        REQUIRE(reset_prefill(b.session, prompt.data(), prompt.size()) == RESET_OK);
        const std::vector<Step> fresh = decode(b.session, 1, 16)[0];
        for (size_t j = 0; j < fresh.size(); ++j) {
            CAPTURE(j);
            CHECK(again[j] == fresh[j]);
        }
        CHECK(tokens_of(a.session, 0) == tokens_of(b.session, 0));
    }
}

TEST_CASE("cutting a sequence to the length it holds changes nothing, logits included") {
    ModelGuard m{load_chat_model()};
    SessionGuard a{reset_session_for(m.model, 1, 11)};
    SessionGuard b{reset_session_for(m.model, 1, 11)};
    for (reset_session *s : {a.session, b.session}) {
        REQUIRE(reset_prefill(s, kPrompt, kPromptLength) == RESET_OK);
        decode(s, 1, 5);
    }
    REQUIRE(reset_truncate(a.session, kPromptLength + 5) == RESET_OK);
    REQUIRE(reset_truncate_sequence(a.session, 0, kPromptLength + 5) == RESET_OK);
    const std::vector<Step> got = decode(a.session, 1, 8)[0], want = decode(b.session, 1, 8)[0];
    for (size_t j = 0; j < want.size(); ++j) CHECK(got[j] == want[j]);
}

TEST_CASE("parallel samples cut back to their prompt draw the same seeded answers again") {
    ModelGuard m{load_chat_model()};
    SessionGuard a{reset_session_for(m.model, 4, 5)};
    REQUIRE(reset_prefill(a.session, kPrompt, kPromptLength) == RESET_OK);
    const auto first = decode(a.session, 4, 12);
    // The samples differ, so the comparison below tells them apart.
    CHECK(generated_tokens(first[0]) != generated_tokens(first[1]));
    CHECK(generated_tokens(first[2]) != generated_tokens(first[3]));

    // Regenerate from the end of the prompt: cut one token less and prefill it again.
    REQUIRE(reset_truncate(a.session, kPromptLength - 1) == RESET_OK);
    REQUIRE(reset_prefill(a.session, kPrompt + kPromptLength - 1, 1) == RESET_OK);
    const auto second = decode(a.session, 4, 12);
    for (size_t s = 0; s < 4; ++s)
        for (size_t j = 0; j < 12; ++j) {
            CAPTURE(s);
            CAPTURE(j);
            CHECK(second[s][j] == first[s][j]);
        }
}

TEST_CASE("one sequence cut back leaves the others exactly as they were") {
    ModelGuard m{load_chat_model()};
    SessionGuard a{reset_session_for(m.model, 3, 9)};
    SessionGuard c{reset_session_for(m.model, 3, 9)};  // the same, never cut
    for (reset_session *s : {a.session, c.session}) REQUIRE(reset_prefill(s, kPrompt, kPromptLength) == RESET_OK);
    const auto a_first = decode(a.session, 3, 8);
    decode(c.session, 3, 8);
    const std::vector<int32_t> held = tokens_of(a.session, 1);
    const int32_t cut = kPromptLength + 3;

    REQUIRE(reset_truncate_sequence(a.session, 1, cut) == RESET_OK);
    CHECK(reset_session_length(a.session, 0) == kPromptLength + 8);
    CHECK(reset_session_length(a.session, 1) == cut);
    reset_step r[3];
    reset_step_init(r, 3);
    CHECK(reset_decode_step(a.session, r, 3, nullptr) == RESET_ERR_STATE);  // sequence 1 has no logits
    CHECK(last_error().find("sequence 1") != std::string::npos);
    std::vector<float> logits(kVocab);
    CHECK(reset_session_logits(a.session, 0, logits.data(), kVocab) == RESET_OK);
    CHECK(reset_session_logits(a.session, 1, logits.data(), kVocab) == RESET_ERR_STATE);
    REQUIRE(reset_prefill_sequence(a.session, 1, kExtra.data(), kExtra.size()) == RESET_OK);
    const auto a_then = decode(a.session, 3, 8);
    const auto c_then = decode(c.session, 3, 8);
    for (size_t s : {size_t(0), size_t(2)})
        for (size_t j = 0; j < 8; ++j) {
            CAPTURE(s);
            CAPTURE(j);
            CHECK(a_then[s][j] == c_then[s][j]);
        }
    // Sequence 1 as sequence 1 of a new session given its kept tokens and the extra ones.
    SessionGuard b{reset_session_for(m.model, 3, 9)};
    const std::vector<int32_t> prompt = concat(std::vector<int32_t>(held.begin(), held.begin() + cut), kExtra);
    REQUIRE(reset_prefill(b.session, prompt.data(), prompt.size()) == RESET_OK);
    const auto b_then = decode(b.session, 3, 8);
    for (size_t j = 0; j < 8; ++j) CHECK(a_then[1][j] == b_then[1][j]);
    (void)a_first;
}

TEST_CASE("cutting every sequence to 0 is a reset; one sequence cut to 0 is prefilled on its own") {
    ModelGuard m{load_chat_model()};
    SessionGuard a{reset_session_for(m.model, 2, 3)};
    REQUIRE(reset_prefill(a.session, kPrompt, kPromptLength) == RESET_OK);
    decode(a.session, 2, 4);
    REQUIRE(reset_truncate(a.session, 0) == RESET_OK);
    CHECK(tokens_of(a.session, 0).empty());
    // As after reset_session_reset: no prompt to continue.
    CHECK(reset_prefill_sequence(a.session, 1, kExtra.data(), kExtra.size()) == RESET_ERR_STATE);
    reset_step r[2];
    reset_step_init(r, 2);
    CHECK(reset_decode_step(a.session, r, 2, nullptr) == RESET_ERR_STATE);
    REQUIRE(reset_prefill(a.session, kPrompt, kPromptLength) == RESET_OK);
    SessionGuard b{reset_session_for(m.model, 2, 3)};
    REQUIRE(reset_prefill(b.session, kPrompt, kPromptLength) == RESET_OK);
    auto got = decode(a.session, 2, 6), want = decode(b.session, 2, 6);
    for (size_t s = 0; s < 2; ++s)
        for (size_t j = 0; j < 6; ++j) CHECK(got[s][j] == want[s][j]);

    // Sequence 1 alone back to nothing, then a prompt of its own.
    REQUIRE(reset_truncate_sequence(a.session, 1, 0) == RESET_OK);
    CHECK(reset_session_length(a.session, 1) == 0);
    REQUIRE(reset_prefill_sequence(a.session, 1, kExtra.data(), kExtra.size()) == RESET_OK);
    CHECK(tokens_of(a.session, 1) == kExtra);
    REQUIRE(reset_decode_step(a.session, r, 2, nullptr) == RESET_OK);
}

TEST_CASE("a sequence that ended generates again once cut back and prefilled; its held text is dropped") {
    ModelGuard m{load_chat_model()};
    SessionGuard probe{reset_session_for(m.model, 1, 13)};
    REQUIRE(reset_prefill(probe.session, kPrompt, kPromptLength) == RESET_OK);
    const std::vector<Step> reference = decode(probe.session, 1, 20)[0];
    size_t k = 0;  // a step with text, whose text then begins the stop string
    while (k < reference.size() && reference[k].text.empty()) ++k;
    REQUIRE(k + 1 < reference.size());

    // The stop id: the first token after step k that none before it equals, so it ends the sequence there.
    size_t end = k + 1;
    auto seen_before = [&](size_t j) {
        for (size_t i = 0; i < j; ++i)
            if (reference[i].token == reference[j].token) return true;
        return false;
    };
    while (end < reference.size() && seen_before(end)) ++end;
    REQUIRE(end < reference.size());

    SessionGuard a{reset_session_for(m.model, 1, 13)};
    const std::string never = reference[k].text + "\x7f\x01\x7f\x02";  // begins with step k's text, never generated
    const char *strings[] = {never.c_str()};
    const int32_t stop_id = reference[end].token;
    reset_stop_options stop;
    reset_stop_options_init(&stop);
    stop.strings = strings;
    stop.string_count = 1;
    stop.ids = &stop_id;
    stop.id_count = 1;
    stop.ignore_eos = 1;
    REQUIRE(reset_set_stop(a.session, &stop) == RESET_OK);
    REQUIRE(reset_prefill(a.session, kPrompt, kPromptLength) == RESET_OK);
    reset_step r;
    const char *text = nullptr;
    size_t text_len = 0;
    for (size_t j = 0; j <= end; ++j) {
        reset_step_init(&r, 1);
        REQUIRE(reset_decode_step(a.session, &r, 1, nullptr) == RESET_OK);
        REQUIRE(r.token == reference[j].token);
        CHECK(r.end_of_generation == (j == end));
        if (j == k) {  // the text so far begins the stop string: held back
            REQUIRE(reset_session_held_text(a.session, 0, &text, &text_len) == RESET_OK);
            CHECK(std::string(text, text_len) == reference[k].text);
        }
    }
    REQUIRE(r.end_reason == RESET_END_STOP);
    // The stop id left the context, and the record says so.
    const std::vector<int32_t> held = tokens_of(a.session, 0);
    CHECK(int32_t(held.size()) == kPromptLength + int32_t(end));
    CHECK(held.back() == reference[end - 1].token);

    // Cut back to the end of the prompt, the ended sequence draws the same answer again.
    REQUIRE(reset_truncate(a.session, kPromptLength - 1) == RESET_OK);
    REQUIRE(reset_prefill(a.session, kPrompt + kPromptLength - 1, 1) == RESET_OK);
    for (size_t j = 0; j <= k; ++j) {
        reset_step_init(&r, 1);
        REQUIRE(reset_decode_step(a.session, &r, 1, nullptr) == RESET_OK);
        REQUIRE(r.token == reference[j].token);
    }
    REQUIRE(reset_session_held_text(a.session, 0, &text, &text_len) == RESET_OK);
    CHECK(std::string(text, text_len) == reference[k].text);
    // Cut back again (to fewer tokens than it holds: k may be 0): the held text goes with the tokens.
    REQUIRE(reset_truncate(a.session, kPromptLength) == RESET_OK);
    REQUIRE(reset_session_held_text(a.session, 0, &text, &text_len) == RESET_OK);
    CHECK(text_len == 0);
    REQUIRE(reset_prefill(a.session, kExtra.data(), kExtra.size()) == RESET_OK);
    reset_step_init(&r, 1);
    REQUIRE(reset_decode_step(a.session, &r, 1, nullptr) == RESET_OK);
    CHECK(r.token >= 0);
}

TEST_CASE("a cut inside a character keeps its first bytes for the text that follows") {
    ModelGuard m{load_chat_model()};
    // The fixture's sentencepiece model spells this character as three byte tokens.
    const char character[] = "\xe4\xb8\xad";
    int32_t bytes[4];
    size_t n = 0;
    REQUIRE(reset_tokenize(reset_model_tokenizer(m.model), character, 3, 0, bytes, 4, &n) == RESET_OK);
    REQUIRE(n == 3);
    SessionGuard a{reset_session_for(m.model, 1, 17)};
    // The prompt ends in the character's first byte, then a second byte twice (invalid UTF-8).
    std::vector<int32_t> prompt = concat(std::vector<int32_t>(kPrompt, kPrompt + kPromptLength),
                                         {bytes[0], bytes[1], bytes[1]});
    REQUIRE(reset_prefill(a.session, prompt.data(), prompt.size()) == RESET_OK);
    REQUIRE(reset_truncate(a.session, kPromptLength + 1) == RESET_OK);
    REQUIRE(reset_prefill(a.session, &bytes[1], 1) == RESET_OK);  // the text now ends in two bytes of three
    SessionGuard b{reset_session_for(m.model, 1, 17)};
    prompt.resize(size_t(kPromptLength) + 2);
    REQUIRE(reset_prefill(b.session, prompt.data(), prompt.size()) == RESET_OK);
    const std::vector<Step> got = decode(a.session, 1, 4)[0], want = decode(b.session, 1, 4)[0];
    for (size_t j = 0; j < want.size(); ++j) CHECK(got[j] == want[j]);
}

TEST_CASE("reset_truncate and reset_session_tokens refuse bad arguments and change nothing") {
    ModelGuard m{load_chat_model()};
    SessionGuard a{reset_session_for(m.model, 2, 1)};
    CHECK(reset_truncate(nullptr, 0) == RESET_ERR_INVALID_ARGUMENT);
    CHECK(reset_truncate_sequence(nullptr, 0, 0) == RESET_ERR_INVALID_ARGUMENT);
    size_t n = 99;
    CHECK(reset_session_tokens(nullptr, 0, nullptr, 0, &n) == RESET_ERR_INVALID_ARGUMENT);
    CHECK(n == 0);
    // A new session holds nothing: 0 is the only length.
    CHECK(reset_truncate(a.session, 0) == RESET_OK);
    CHECK(reset_truncate(a.session, 1) == RESET_ERR_OUT_OF_RANGE);
    CHECK(reset_session_tokens(a.session, 0, nullptr, 0, &n) == RESET_OK);
    CHECK(n == 0);

    REQUIRE(reset_prefill(a.session, kPrompt, kPromptLength) == RESET_OK);
    REQUIRE(reset_prefill_sequence(a.session, 1, kExtra.data(), kExtra.size()) == RESET_OK);
    const int32_t longer = kPromptLength + int32_t(kExtra.size());
    CHECK(reset_truncate(a.session, -1) == RESET_ERR_OUT_OF_RANGE);
    // Sequence 0 holds fewer tokens: nothing is cut, sequence 1 included.
    CHECK(reset_truncate(a.session, longer - 1) == RESET_ERR_OUT_OF_RANGE);
    CHECK(last_error().find("sequence 0") != std::string::npos);
    CHECK(reset_truncate_sequence(a.session, 0, kPromptLength + 1) == RESET_ERR_OUT_OF_RANGE);
    CHECK(reset_truncate_sequence(a.session, 2, 0) == RESET_ERR_OUT_OF_RANGE);
    CHECK(reset_truncate_sequence(a.session, -1, 0) == RESET_ERR_OUT_OF_RANGE);
    CHECK(reset_session_length(a.session, 0) == kPromptLength);
    CHECK(reset_session_length(a.session, 1) == longer);
    std::vector<float> logits(kVocab);
    CHECK(reset_session_logits(a.session, 0, logits.data(), kVocab) == RESET_OK);
    CHECK(reset_session_logits(a.session, 1, logits.data(), kVocab) == RESET_OK);

    CHECK(reset_session_tokens(a.session, 0, nullptr, 0, nullptr) == RESET_ERR_INVALID_ARGUMENT);
    CHECK(reset_session_tokens(a.session, 2, nullptr, 0, &n) == RESET_ERR_OUT_OF_RANGE);
    std::vector<int32_t> small(size_t(longer - 1), -7);
    CHECK(reset_session_tokens(a.session, 1, small.data(), small.size(), &n) == RESET_ERR_BUFFER_TOO_SMALL);
    CHECK(n == size_t(longer));
    CHECK(small == std::vector<int32_t>(size_t(longer - 1), -7));  // nothing written
    CHECK(tokens_of(a.session, 1) ==
          concat(std::vector<int32_t>(kPrompt, kPrompt + kPromptLength), kExtra));
}
