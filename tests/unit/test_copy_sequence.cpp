// Copying one sequence onto another (reset_copy_sequence).
//
// The reference for a copy is a sequence that reached the same state without
// one: in a session whose sequences advance in lockstep under a deterministic
// draw (top-k 1), every sequence holds the same tokens, KV cache, logits and
// sampler state (the draw counter included), yet each draws with its own
// Philox key once the policy samples.  A copy must recreate exactly that
// state in a sequence that had diverged.  On the CPU backend the comparison
// is bit for bit: tokens, texts, signals and logits.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "reset.h"
#include "session_steps.h"
#include "test_support.h"

using namespace test_support;
using namespace session_steps;

namespace {

constexpr uint64_t kSeed = 19;

// The policy of reset_session_for, with top_k as given; the step state and counts are kept.
void set_top_k(reset_session *session, int32_t top_k) {
    reset_policy_params p;
    reset_policy_params_init(&p);
    REQUIRE(reset_session_get_policy(session, &p) == RESET_OK);
    p.top_k = top_k;
    p.reset_state = 0;
    REQUIRE(reset_set_policy(session, &p) == RESET_OK);
}

std::string held_text(const reset_session *session, int32_t sequence) {
    const char *text = nullptr;
    size_t length = 0;
    REQUIRE(reset_session_held_text(session, sequence, &text, &length) == RESET_OK);
    return std::string(text, length);
}

// The fixture's sentencepiece model spells this character as three byte tokens.
std::vector<int32_t> character_bytes(reset_model *model) {
    int32_t bytes[4];
    size_t n = 0;
    REQUIRE(reset_tokenize(reset_model_tokenizer(model), "\xe4\xb8\xad", 3, 0, bytes, 4, &n) == RESET_OK);
    REQUIRE(n == 3);
    return std::vector<int32_t>(bytes, bytes + 3);
}

}  // namespace

TEST_CASE("a copy continues as its source would, drawing with its own key") {
    ModelGuard m{load_chat_model()};
    const int lockstep_steps = 6, diverged_steps = 5, sampled_steps = 16;

    // The reference: both sequences advance together for 11 deterministic steps, then sample.
    SessionGuard want{reset_session_for(m.model, 2, kSeed)};
    set_top_k(want.session, 1);
    REQUIRE(reset_prefill(want.session, kPrompt, kPromptLength) == RESET_OK);
    const auto want_before = decode(want.session, 2, lockstep_steps + diverged_steps);
    REQUIRE(generated_tokens(want_before[0]) == generated_tokens(want_before[1]));
    set_top_k(want.session, 0);
    const auto want_after = decode(want.session, 2, sampled_steps);
    // The sampled continuations differ, so a copy drawing with its source's key would be caught.
    REQUIRE(generated_tokens(want_after[0]) != generated_tokens(want_after[1]));

    // Sequence 1 diverges after 6 steps: another context ending inside a character, a restarted sampler
    // (a cut clears the draw counter), 5 steps of its own; then sequence 0 is copied onto it.
    SessionGuard got{reset_session_for(m.model, 2, kSeed)};
    set_top_k(got.session, 1);
    REQUIRE(reset_prefill(got.session, kPrompt, kPromptLength) == RESET_OK);
    decode(got.session, 2, lockstep_steps);
    const std::vector<int32_t> bytes = character_bytes(m.model);
    REQUIRE(reset_truncate_sequence(got.session, 1, 3) == RESET_OK);
    const std::vector<int32_t> other = {30, 31, 32, bytes[0], bytes[1]};
    REQUIRE(reset_prefill_sequence(got.session, 1, other.data(), other.size()) == RESET_OK);
    const auto got_diverged = decode(got.session, 2, diverged_steps);
    REQUIRE(generated_tokens(got_diverged[1]) != generated_tokens(want_before[1]));
    const std::vector<int32_t> source = tokens_of(got.session, 0);
    REQUIRE(tokens_of(got.session, 1) != source);

    REQUIRE(reset_copy_sequence(got.session, 0, 1) == RESET_OK);
    CHECK(tokens_of(got.session, 1) == source);
    CHECK(tokens_of(got.session, 0) == source);
    CHECK(reset_session_length(got.session, 1) == kPromptLength + lockstep_steps + diverged_steps);
    set_top_k(got.session, 0);
    check_same_steps(decode(got.session, 2, sampled_steps), want_after);
}

TEST_CASE("a copy takes its source's end and held text; copying onto itself changes nothing") {
    ModelGuard m{load_chat_model()};
    // Greedy, so both sequences of a session draw the same tokens; a probe finds a step with text.
    auto greedy_session = [&] {
        reset_session *session = create_session(m.model, 2, 256);
        reset_policy_params p;
        reset_policy_params_init(&p);
        p.kind = RESET_POLICY_GREEDY;
        REQUIRE(reset_set_policy(session, &p) == RESET_OK);
        return session;
    };
    SessionGuard probe{greedy_session()};
    reset_stop_options stop;
    reset_stop_options_init(&stop);
    stop.ignore_eos = 1;
    REQUIRE(reset_set_stop(probe.session, &stop) == RESET_OK);
    REQUIRE(reset_prefill(probe.session, kPrompt, kPromptLength) == RESET_OK);
    const std::vector<Step> reference = decode(probe.session, 2, 20)[0];
    size_t k = 0;
    while (k < reference.size() && reference[k].text.empty()) ++k;
    REQUIRE(k + 3 < reference.size());

    // A stop string that begins with step k's text and is never generated holds that text back,
    // and max_tokens ends the generation 3 steps later.
    SessionGuard a{greedy_session()};
    const std::string never = reference[k].text + "\x7f\x01\x7f\x02";
    const char *strings[] = {never.c_str()};
    stop.strings = strings;
    stop.string_count = 1;
    stop.max_tokens = int32_t(k) + 4;
    REQUIRE(reset_set_stop(a.session, &stop) == RESET_OK);
    REQUIRE(reset_prefill(a.session, kPrompt, kPromptLength) == RESET_OK);
    decode(a.session, 2, int(k) + 1);
    REQUIRE(held_text(a.session, 0) == reference[k].text);
    // Sequence 1 starts a new generation: nothing held.
    const std::vector<int32_t> turn = {40, 41};
    REQUIRE(reset_prefill_sequence(a.session, 1, turn.data(), turn.size()) == RESET_OK);
    CHECK(held_text(a.session, 1).empty());

    REQUIRE(reset_copy_sequence(a.session, 0, 0) == RESET_OK);  // itself: nothing happens
    CHECK(held_text(a.session, 0) == reference[k].text);
    REQUIRE(reset_copy_sequence(a.session, 0, 1) == RESET_OK);
    CHECK(held_text(a.session, 1) == reference[k].text);
    CHECK(tokens_of(a.session, 1) == tokens_of(a.session, 0));
    // Both end together now (the copy took the max_tokens count), with the same text.
    std::string texts[2];
    for (int j = 0; j < 3; ++j) {
        reset_step r[2];
        reset_step_init(r, 2);
        REQUIRE(reset_decode_step(a.session, r, 2, nullptr) == RESET_OK);
        for (int s = 0; s < 2; ++s) {
            CAPTURE(j);
            CHECK(r[s].token == reference[k + 1 + size_t(j)].token);
            CHECK(r[s].end_of_generation == (j == 2 ? 1 : 0));
            texts[s].append(r[s].text, r[s].text_len);
        }
    }
    CHECK(texts[0] == texts[1]);
    CHECK(texts[0].rfind(reference[k].text, 0) == 0);  // the held text comes first

    // An ended sequence copied onto a generating one ends it too.
    REQUIRE(reset_prefill_sequence(a.session, 1, turn.data(), turn.size()) == RESET_OK);
    REQUIRE(reset_copy_sequence(a.session, 0, 1) == RESET_OK);
    reset_step r[2];
    reset_step_init(r, 2);
    CHECK(reset_decode_step(a.session, r, 2, nullptr) == RESET_ERR_STATE);  // every sequence has ended
    // A new turn for both: computed once, the same logits.
    REQUIRE(reset_prefill(a.session, turn.data(), turn.size()) == RESET_OK);
    std::vector<float> z0(kVocab), z1(kVocab);
    REQUIRE(reset_session_logits(a.session, 0, z0.data(), kVocab) == RESET_OK);
    REQUIRE(reset_session_logits(a.session, 1, z1.data(), kVocab) == RESET_OK);
    CHECK(z0 == z1);
}

TEST_CASE("a copy takes its source's incomplete character") {
    ModelGuard m{load_chat_model()};
    const std::vector<int32_t> bytes = character_bytes(m.model);
    auto greedy_session = [&] {
        reset_session *session = reset_session_for(m.model, 2, kSeed);
        set_top_k(session, 1);
        return session;
    };
    // Sequence 0's prompt ends in two bytes of the character's three; sequence 1's does not.
    SessionGuard a{greedy_session()};
    REQUIRE(reset_prefill(a.session, kPrompt, kPromptLength) == RESET_OK);
    REQUIRE(reset_prefill_sequence(a.session, 0, bytes.data(), 2) == RESET_OK);
    const int32_t plain = 40;
    REQUIRE(reset_prefill_sequence(a.session, 1, &plain, 1) == RESET_OK);
    REQUIRE(reset_copy_sequence(a.session, 0, 1) == RESET_OK);
    // The reference: the same prompt in one sequence, no copy.
    SessionGuard b{greedy_session()};
    const std::vector<int32_t> prompt = concat(std::vector<int32_t>(kPrompt, kPrompt + kPromptLength),
                                               {bytes[0], bytes[1]});
    REQUIRE(reset_prefill(b.session, prompt.data(), prompt.size()) == RESET_OK);
    check_same_steps(decode(a.session, 2, 4), decode(b.session, 2, 4), [](size_t) { return size_t(0); });
}

TEST_CASE("a copy of a sequence cut back has no logits either") {
    ModelGuard m{load_chat_model()};
    SessionGuard a{reset_session_for(m.model, 3, kSeed)};
    REQUIRE(reset_prefill(a.session, kPrompt, kPromptLength) == RESET_OK);
    decode(a.session, 3, 4);
    REQUIRE(reset_truncate_sequence(a.session, 2, kPromptLength + 1) == RESET_OK);
    REQUIRE(reset_copy_sequence(a.session, 2, 0) == RESET_OK);
    CHECK(reset_session_length(a.session, 0) == kPromptLength + 1);
    reset_step r[3];
    reset_step_init(r, 3);
    CHECK(reset_decode_step(a.session, r, 3, nullptr) == RESET_ERR_STATE);
    CHECK(last_error().find("sequence 0") != std::string::npos);
    std::vector<float> z(kVocab);
    CHECK(reset_session_logits(a.session, 0, z.data(), kVocab) == RESET_ERR_STATE);
    // Both prefilled with the same token continue identically under a deterministic draw (their
    // sampled draws would differ: each sequence has its own key): the copy took the cut's state.
    set_top_k(a.session, 1);
    const int32_t next = 50;
    REQUIRE(reset_prefill_sequence(a.session, 0, &next, 1) == RESET_OK);
    REQUIRE(reset_prefill_sequence(a.session, 2, &next, 1) == RESET_OK);
    const auto after = decode(a.session, 3, 6);
    for (size_t j = 0; j < 6; ++j) {
        CAPTURE(j);
        CHECK(after[0][j] == after[2][j]);
    }
}

TEST_CASE("reset_copy_sequence refuses bad arguments and changes nothing") {
    ModelGuard m{load_chat_model()};
    SessionGuard a{reset_session_for(m.model, 2, kSeed)};
    CHECK(reset_copy_sequence(nullptr, 0, 1) == RESET_ERR_INVALID_ARGUMENT);
    REQUIRE(reset_prefill(a.session, kPrompt, kPromptLength) == RESET_OK);
    const int32_t extra[] = {20, 21};
    REQUIRE(reset_prefill_sequence(a.session, 1, extra, 2) == RESET_OK);
    const std::vector<int32_t> held0 = tokens_of(a.session, 0), held1 = tokens_of(a.session, 1);
    std::vector<float> before(kVocab);
    REQUIRE(reset_session_logits(a.session, 1, before.data(), kVocab) == RESET_OK);
    for (const auto &pair : {std::pair<int32_t, int32_t>{0, 2}, {2, 0}, {-1, 1}, {1, -1}, {0, 8}}) {
        CAPTURE(pair.first);
        CAPTURE(pair.second);
        CHECK(reset_copy_sequence(a.session, pair.first, pair.second) == RESET_ERR_OUT_OF_RANGE);
        CHECK(last_error().find("outside [0, 2)") != std::string::npos);
    }
    CHECK(tokens_of(a.session, 0) == held0);
    CHECK(tokens_of(a.session, 1) == held1);
    std::vector<float> after(kVocab);
    REQUIRE(reset_session_logits(a.session, 1, after.data(), kVocab) == RESET_OK);
    CHECK(after == before);
    // A freed session is a bad handle, not a crash.
    reset_session *freed = create_session(m.model, 2, 16);
    reset_session_free(freed);
    CHECK(reset_copy_sequence(freed, 0, 1) == RESET_ERR_INVALID_HANDLE);
}
