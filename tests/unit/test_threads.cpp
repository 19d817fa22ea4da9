// The header's thread promises ("Threads" in reset.h), each checked by doing
// the same work on several threads at once and comparing it with what one
// thread does alone: a model shared by sessions on many threads, a tokenizer
// shared by many threads, reset_last_error per thread, sessions made and
// freed while others run, reset_session_cancel racing decode steps and
// reset_session_free.  scripts/test.sh also runs this suite in the
// ThreadSanitizer build (RESET_TSAN=ON); its models load with threads = 1, so
// the CPU backend starts no OpenMP team, whose runtime TSan cannot see into.
// Threads record what they saw; the checks run on the main thread.
#include <doctest/doctest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "reset.h"
#include "test_support.h"

using namespace test_support;

namespace {

constexpr int kThreads = 4;

reset_model *load_one_thread(const std::string &dir, reset_weights weights) {
    reset_model_options options;
    reset_model_options_init(&options);
    options.weights = weights;
    options.backend = RESET_BACKEND_CPU;
    options.threads = 1;
    reset_model *model = nullptr;
    const reset_status status = reset_model_load(dir.c_str(), &options, &model);
    INFO(reset_last_error());
    REQUIRE(status == RESET_OK);
    return model;
}

// What one session draws: 2 sequences sampled at T 1 with `seed` for 20 steps after a
// shared prompt, sequence 1 given 3 more ids after step 8 (reset_prefill_sequence).
// Empty when a call failed.
std::vector<int32_t> draw(reset_model *model, uint64_t seed) {
    std::vector<int32_t> tokens;
    reset_session_options options;
    reset_session_options_init(&options);
    options.sequences = 2;
    options.max_context = 48;
    reset_session *session = nullptr;
    if (reset_session_create(model, &options, &session) != RESET_OK) return {};
    reset_policy_params p;
    reset_policy_params_init(&p);
    p.kind = RESET_POLICY_FIXED;
    p.temperature = 1.0f;
    p.seed = seed;
    const int32_t prompt[] = {3, 4, 5, 6}, more[] = {7, 8, 9};
    bool ok = reset_set_policy(session, &p) == RESET_OK && reset_prefill(session, prompt, 4) == RESET_OK;
    for (int t = 0; ok && t < 20; ++t) {
        reset_step steps[2];
        reset_step_init(steps, 2);
        ok = reset_decode_step(session, steps, 2, nullptr) == RESET_OK;
        for (const reset_step &s : steps) tokens.push_back(s.token);
        if (t == 8 && ok) ok = reset_prefill_sequence(session, 1, more, 3) == RESET_OK;
        if (ok && steps[0].end_of_generation && steps[1].end_of_generation) break;
    }
    reset_session_free(session);
    return ok ? tokens : std::vector<int32_t>();
}

}  // namespace

TEST_SUITE("threads") {

TEST_CASE("sessions on one shared model draw on many threads what each draws alone") {
    TinyShape shape;
    const std::string dir = write_tiny_model(shape, 31, "threads-model");
    for (reset_weights weights : {RESET_WEIGHTS_BF16, RESET_WEIGHTS_NVFP4_W4A4}) {
        reset_model *model = load_one_thread(dir, weights);
        std::array<std::vector<int32_t>, kThreads> alone;
        for (int k = 0; k < kThreads; ++k) alone[size_t(k)] = draw(model, uint64_t(100 + k));
        // Every thread repeats its seed's session, sessions made and freed while the others run.
        std::array<std::vector<std::vector<int32_t>>, kThreads> together;
        std::vector<std::thread> threads;
        for (int k = 0; k < kThreads; ++k)
            threads.emplace_back([&, k] {
                for (int round = 0; round < 6; ++round) together[size_t(k)].push_back(draw(model, uint64_t(100 + k)));
            });
        for (std::thread &t : threads) t.join();
        for (int k = 0; k < kThreads; ++k) {
            REQUIRE_FALSE(alone[size_t(k)].empty());
            for (const auto &tokens : together[size_t(k)]) CHECK(tokens == alone[size_t(k)]);
        }
        CHECK(alone[0] != alone[1]);  // the seeds draw differently: the comparison above can fail
        reset_model_free(model);
    }
}

TEST_CASE("one tokenizer used by many threads encodes and decodes as one thread does") {
    reset_tokenizer *tokenizer = nullptr;
    const std::string dir = std::string(RESET_SOURCE_DIR) + "/tests/fixtures/chat-model";
    REQUIRE(reset_tokenizer_load(dir.c_str(), &tokenizer) == RESET_OK);
    const std::vector<std::string> texts = {"What is 2+3?", "Leo has 2609 apples.", "naïve café — ünïcödé",
                                            "<think>\nstep one\n</think>", "日本語のテキスト", "  spaces  ", "x"};
    // Ids and the text they decode back to, per text.
    auto encode_decode = [&](const std::string &text) {
        std::vector<int32_t> ids(256);
        size_t n = 0;
        if (reset_tokenize(tokenizer, text.data(), text.size(), 0, ids.data(), ids.size(), &n) != RESET_OK)
            return std::make_pair(std::vector<int32_t>(), std::string("(tokenize failed)"));
        ids.resize(n);
        std::string back(1024, '\0');
        size_t length = 0;
        if (reset_detokenize(tokenizer, ids.data(), ids.size(), 0, &back[0], back.size(), &length) != RESET_OK)
            return std::make_pair(ids, std::string("(detokenize failed)"));
        back.resize(length);
        return std::make_pair(ids, back);
    };
    std::vector<std::pair<std::vector<int32_t>, std::string>> alone;
    for (const std::string &text : texts) alone.push_back(encode_decode(text));
    std::array<std::vector<std::pair<std::vector<int32_t>, std::string>>, kThreads> seen;
    std::vector<std::thread> threads;
    for (int k = 0; k < kThreads; ++k)
        threads.emplace_back([&, k] {
            for (int round = 0; round < 200; ++round)
                seen[size_t(k)].push_back(encode_decode(texts[size_t(round + k) % texts.size()]));
        });
    for (std::thread &t : threads) t.join();
    for (int k = 0; k < kThreads; ++k)
        for (size_t round = 0; round < seen[size_t(k)].size(); ++round)
            CHECK(seen[size_t(k)][round] == alone[(round + size_t(k)) % texts.size()]);
    CHECK(alone[0].second == texts[0]);  // a round trip, so the comparison is of real work
    reset_tokenizer_free(tokenizer);
}

TEST_CASE("reset_last_error belongs to the thread whose call failed") {
    // Each thread fails on a path naming it, waits until every thread has failed, then reads
    // its message: with one shared message, all but one would name another thread's path.
    std::array<std::string, kThreads> messages;
    std::atomic<int> failed{0};
    std::vector<std::thread> threads;
    for (int k = 0; k < kThreads; ++k)
        threads.emplace_back([&, k] {
            const std::string missing = "/nonexistent/reset-thread-" + std::to_string(k);
            reset_tokenizer *tokenizer = nullptr;
            const reset_status status = reset_tokenizer_load(missing.c_str(), &tokenizer);
            failed.fetch_add(1);
            while (failed.load() < kThreads) std::this_thread::yield();
            messages[size_t(k)] = std::string(reset_status_name(status)) + ": " + reset_last_error();
        });
    for (std::thread &t : threads) t.join();
    for (int k = 0; k < kThreads; ++k) {
        INFO(messages[size_t(k)]);
        CHECK(messages[size_t(k)].find("RESET_ERR_IO") == 0);
        CHECK(messages[size_t(k)].find("reset-thread-" + std::to_string(k)) != std::string::npos);
    }
}

TEST_CASE("reset_session_cancel from another thread races decode steps and reset_session_free safely") {
    // The canceller calls reset_session_cancel without pause while this thread decodes and then
    // frees the session: every decode step either completes or is cancelled (leaving the length
    // as it was), and a cancel that arrives after the free is refused, never a use of freed memory.
    TinyShape shape;
    reset_model *model = load_one_thread(write_tiny_model(shape, 37, "threads-cancel"), RESET_WEIGHTS_BF16);
    int completed = 0, cancelled = 0, other = 0, refused_after_free = 0, unexpected_cancel_status = 0;
    for (int round = 0; round < 40; ++round) {
        reset_session_options options;
        reset_session_options_init(&options);
        options.max_context = 64;
        reset_session *session = nullptr;
        REQUIRE(reset_session_create(model, &options, &session) == RESET_OK);
        const int32_t prompt[] = {3, 4, 5};
        REQUIRE(reset_prefill(session, prompt, 3) == RESET_OK);
        std::atomic<bool> stop{false}, freed{false}, started{false};
        std::atomic<int> refused{0}, wrong{0};
        std::thread canceller([&] {
            while (!stop.load()) {
                const bool after_free = freed.load();
                const reset_status status = reset_session_cancel(session);
                if (status == RESET_ERR_INVALID_HANDLE) refused.fetch_add(1);
                else if (status != RESET_OK || after_free) wrong.fetch_add(1);  // after the free: only refusals
                started.store(true);
            }
        });
        // Decoding starts once a cancel has been sent (else a fast build may finish the 30 steps
        // before the thread runs, racing nothing): the first step takes that request.
        while (!started.load()) std::this_thread::yield();
        for (int t = 0; t < 30; ++t) {
            const int32_t before = reset_session_length(session, 0);
            reset_step step;
            reset_step_init(&step, 1);
            const reset_status status = reset_decode_step(session, &step, 1, nullptr);
            if (status == RESET_OK) ++completed;
            else if (status == RESET_ERR_CANCELLED && reset_session_length(session, 0) == before) ++cancelled;
            else ++other;
            if (status == RESET_OK && step.end_of_generation) break;
        }
        reset_session_free(session);
        freed.store(true);
        // Until the canceller has seen the free (10 s is far beyond any scheduling delay).
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (refused.load() == 0 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
        stop.store(true);
        canceller.join();
        refused_after_free += refused.load() > 0;
        unexpected_cancel_status += wrong.load();
    }
    CHECK(other == 0);
    CHECK(unexpected_cancel_status == 0);
    CHECK(cancelled >= 40);  // at least each round's first step, which a sent cancel stops
    CHECK(refused_after_free == 40);
    MESSAGE(completed, " steps completed, ", cancelled, " cancelled; ", refused_after_free,
            " rounds saw a cancel after the free refused");
    reset_model_free(model);
}

}  // TEST_SUITE("threads")
