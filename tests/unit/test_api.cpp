// The C ABI end to end on tiny random models: load, info, sessions, decoding,
// policies, and every misuse and bad input returning a precise status.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "engine/device_engine.h"
#include "reset.h"
#include "test_support.h"

using namespace test_support;

namespace {


reset_model *load(const std::string &dir, reset_weights weights = RESET_WEIGHTS_AUTO) {
    reset_model_options options;
    reset_model_options_init(&options);
    options.weights = weights;
    reset_model *model = nullptr;
    const reset_status status = reset_model_load(dir.c_str(), &options, &model);
    INFO(reset_last_error());
    REQUIRE(status == RESET_OK);
    return model;
}

reset_session *session_on(reset_model *model, int32_t sequences = 1, int32_t max_context = 0) {
    reset_session_options options;
    reset_session_options_init(&options);
    options.sequences = sequences;
    options.max_context = max_context;
    reset_session *session = nullptr;
    REQUIRE(reset_session_create(model, &options, &session) == RESET_OK);
    return session;
}

}  // namespace

TEST_CASE("versions: macros and the loaded library agree") {
    CHECK(reset_version() == RESET_VERSION_NUMBER);
    CHECK(std::string(reset_version_string()).rfind(RESET_VERSION_STRING, 0) == 0);
    CHECK(std::string(reset_status_name(RESET_ERR_FORMAT)) == "RESET_ERR_FORMAT");
}

TEST_CASE("model info describes the loaded model") {
    TinyShape shape;
    shape.architecture = "qwen2";
    ModelGuard m{load(write_tiny_model(shape, 1, "info"))};
    reset_model_info info;
    reset_model_info_init(&info);
    REQUIRE(reset_model_get_info(m.model, &info) == RESET_OK);
    CHECK(std::string(info.architecture) == "qwen2");
    CHECK(info.n_layers == 2);
    CHECK(info.vocab_size == 64);
    CHECK(info.weights == RESET_WEIGHTS_BF16);
    CHECK(info.backend == RESET_BACKEND_CPU);
    CHECK(info.n_eos == 1);
    CHECK(info.eos_ids[0] == 1);
    // 2 layers x (q 64x32 + k 32x32 + v 32x32 + o 32x64 + 3 x 48x32 + biases 128 + norms 64) + embed/head/norm.
    CHECK(info.n_parameters == uint64_t(2 * (2048 + 1024 + 1024 + 2048 + 3 * 1536 + 128 + 64) + 2 * 2048 + 32));
    CHECK(info.weight_bytes > 0);
}

TEST_CASE("NVFP4 on load: model info reports the format and the dynamic activation scale") {
    TinyShape shape;
    ModelGuard m{load(write_tiny_model(shape, 2, "nvfp4"), RESET_WEIGHTS_NVFP4_W4A4)};
    reset_model_info info;
    reset_model_info_init(&info);
    REQUIRE(reset_model_get_info(m.model, &info) == RESET_OK);
    CHECK(info.weights == RESET_WEIGHTS_NVFP4_W4A4);
    CHECK(info.dynamic_input_scale == 1);
    CHECK(info.lm_head_nvfp4 == 0);
    CHECK(info.n_bf16_linears == 1);  // the lm_head
    CHECK(info.host_bytes > 0);
}

TEST_CASE("greedy decoding is deterministic and matches the argmax of the logits") {
    TinyShape shape;
    ModelGuard m{load(write_tiny_model(shape, 3, "greedy"))};
    SessionGuard s{session_on(m.model)};
    const int32_t prompt[] = {5, 9, 2, 40};
    REQUIRE(reset_prefill(s.session, prompt, 4) == RESET_OK);
    CHECK(reset_session_length(s.session, 0) == 4);
    std::vector<int32_t> first;
    for (int i = 0; i < 8; ++i) {
        std::vector<float> logits(64);
        REQUIRE(reset_session_logits(s.session, 0, logits.data(), logits.size()) == RESET_OK);
        const int32_t argmax = int32_t(std::max_element(logits.begin(), logits.end()) - logits.begin());
        reset_step step;
        reset_step_init(&step, 1);
        int32_t active = -1;
        REQUIRE(reset_decode_step(s.session, &step, 1, &active) == RESET_OK);
        if (step.end_of_generation) break;
        CHECK(step.token == argmax);
        CHECK(step.temperature == 0.0f);
        CHECK(step.entropy > 0.0f);
        // log softmax of the logits at the argmax, in double here (tolerance: FP32 rounding of the result
        // and another summation order, a few ulp of values near -1).
        double sum = 0.0;
        for (float z : logits) sum += std::exp(double(z) - double(logits[size_t(argmax)]));
        CHECK(step.logprob == doctest::Approx(-std::log(sum)).epsilon(1e-6));
        CHECK(step.logprob < -1e-3f);  // a random-weight model is unsure: not a trivial 0
        first.push_back(step.token);
    }
    REQUIRE(reset_session_reset(s.session) == RESET_OK);
    CHECK(reset_session_length(s.session, 0) == 0);
    REQUIRE(reset_prefill(s.session, prompt, 4) == RESET_OK);
    for (int32_t expected : first) {
        reset_step step;
        reset_step_init(&step, 1);
        REQUIRE(reset_decode_step(s.session, &step, 1, nullptr) == RESET_OK);
        CHECK(step.token == expected);
    }
}

TEST_CASE("parallel samples share one prefill and draw independently") {
    TinyShape shape;
    ModelGuard m{load(write_tiny_model(shape, 4, "parallel"))};
    SessionGuard s{session_on(m.model, 4)};
    const int32_t prompt[] = {3, 4, 5};
    REQUIRE(reset_prefill(s.session, prompt, 3) == RESET_OK);
    std::vector<float> a(64), b(64);
    REQUIRE(reset_session_logits(s.session, 0, a.data(), 64) == RESET_OK);
    REQUIRE(reset_session_logits(s.session, 3, b.data(), 64) == RESET_OK);
    CHECK(a == b);
    reset_policy_params p;
    reset_policy_params_init(&p);
    p.kind = RESET_POLICY_FIXED;
    p.temperature = 5.0f;  // near-uniform: four sequences agreeing for 6 steps is ~impossible
    p.seed = 11;
    REQUIRE(reset_set_policy(s.session, &p) == RESET_OK);
    std::vector<std::vector<int32_t>> tokens(4);
    for (int i = 0; i < 6; ++i) {
        reset_step steps[4];
        reset_step_init(steps, 4);
        if (reset_decode_step(s.session, steps, 4, nullptr) != RESET_OK) break;
        for (int k = 0; k < 4; ++k) {
            CHECK(steps[k].sequence == k);
            tokens[size_t(k)].push_back(steps[k].token);
        }
    }
    CHECK_FALSE((tokens[0] == tokens[1] && tokens[1] == tokens[2] && tokens[2] == tokens[3]));
}

// The greedy tokens `session`'s sequence 0 decodes in `n` steps (each must not end it).
std::vector<int32_t> greedy_tokens(reset_session *session, int32_t sequences, int n) {
    std::vector<int32_t> tokens;
    for (int i = 0; i < n; ++i) {
        std::vector<reset_step> steps(static_cast<size_t>(sequences));
        reset_step_init(steps.data(), steps.size());
        REQUIRE(reset_decode_step(session, steps.data(), steps.size(), nullptr) == RESET_OK);
        for (const reset_step &step : steps) {
            REQUIRE(step.token == steps[0].token);  // greedy sequences of one prompt agree
            REQUIRE_FALSE(step.end_of_generation);  // (model seed 12 ends none in 3 steps)
        }
        tokens.push_back(steps[0].token);
    }
    return tokens;
}

std::vector<float> logits_of(reset_session *session, int32_t sequence) {
    std::vector<float> logits(64);
    REQUIRE(reset_session_logits(session, sequence, logits.data(), logits.size()) == RESET_OK);
    return logits;
}

TEST_CASE("reset_prefill_sequence continues one sequence and leaves the others as they were") {
    TinyShape shape;
    ModelGuard m{load(write_tiny_model(shape, 12, "prefill-sequence"))};
    SessionGuard s{session_on(m.model, 3, 16)};
    const int32_t prompt[] = {3, 4, 5}, suffix[] = {7, 8}, turn[] = {9};
    // No prompt yet: one sequence has nothing to continue.
    CHECK(reset_prefill_sequence(s.session, 1, suffix, 2) == RESET_ERR_STATE);
    CHECK(last_error().find("reset_prefill first") != std::string::npos);
    REQUIRE(reset_prefill(s.session, prompt, 3) == RESET_OK);
    const std::vector<int32_t> decoded = greedy_tokens(s.session, 3, 3);
    const std::vector<float> before0 = logits_of(s.session, 0), before2 = logits_of(s.session, 2);

    REQUIRE(reset_prefill_sequence(s.session, 1, suffix, 2) == RESET_OK);
    CHECK(reset_session_length(s.session, 0) == 6);
    CHECK(reset_session_length(s.session, 1) == 8);
    CHECK(reset_session_length(s.session, 2) == 6);
    CHECK(logits_of(s.session, 0) == before0);
    CHECK(logits_of(s.session, 2) == before2);

    // Sequence 1 now equals a one-sequence session fed prompt, decoded tokens and suffix as a
    // prompt: the CPU backend runs each position through the same forward with the same
    // rounded cache, so the logits are bit-identical, not merely close.
    SessionGuard reference{session_on(m.model, 1, 16)};
    std::vector<int32_t> history(prompt, prompt + 3);
    history.insert(history.end(), decoded.begin(), decoded.end());
    history.insert(history.end(), suffix, suffix + 2);
    REQUIRE(reset_prefill(reference.session, history.data(), history.size()) == RESET_OK);
    CHECK(logits_of(s.session, 1) == logits_of(reference.session, 0));
    CHECK(logits_of(s.session, 1) != before0);  // otherwise the check above tests nothing

    // The sequences no longer hold the same tokens, so a later prefill of every sequence
    // computes each one instead of copying sequence 0's result.
    REQUIRE(reset_prefill(s.session, turn, 1) == RESET_OK);
    REQUIRE(reset_prefill(reference.session, turn, 1) == RESET_OK);
    CHECK(logits_of(s.session, 1) == logits_of(reference.session, 0));
    CHECK(logits_of(s.session, 0) == logits_of(s.session, 2));
    CHECK(logits_of(s.session, 0) != logits_of(s.session, 1));

    // Misuse leaves every sequence as it was.
    const int32_t bad[] = {7, 64};
    CHECK(reset_prefill_sequence(s.session, 3, suffix, 2) == RESET_ERR_OUT_OF_RANGE);
    CHECK(last_error().find("sequence 3") != std::string::npos);
    CHECK(reset_prefill_sequence(s.session, -1, suffix, 2) == RESET_ERR_OUT_OF_RANGE);
    CHECK(reset_prefill_sequence(s.session, 0, bad, 2) == RESET_ERR_OUT_OF_RANGE);
    CHECK(reset_prefill_sequence(s.session, 0, suffix, 0) == RESET_ERR_INVALID_ARGUMENT);
    CHECK(reset_prefill_sequence(s.session, 0, nullptr, 2) == RESET_ERR_INVALID_ARGUMENT);
    CHECK(reset_prefill_sequence(nullptr, 0, suffix, 2) == RESET_ERR_INVALID_ARGUMENT);
    CHECK(last_error().find("session is NULL") != std::string::npos);
    const std::vector<int32_t> long_suffix(8, 6);  // sequence 1 holds 9 of 16
    CHECK(reset_prefill_sequence(s.session, 1, long_suffix.data(), long_suffix.size()) ==
          RESET_ERR_CONTEXT_OVERFLOW);
    CHECK(reset_prefill_sequence(s.session, 0, long_suffix.data(), long_suffix.size()) == RESET_OK);  // 7 + 8
    CHECK(reset_session_length(s.session, 0) == 15);
    CHECK(reset_session_length(s.session, 1) == 9);
    CHECK(reset_session_length(s.session, 2) == 7);
}

TEST_CASE("penalties: a session draws what standalone policies fed its raw logits draw, across rollbacks") {
    TinyShape shape;
    ModelGuard m{load(write_tiny_model(shape, 5, "penalties"))};
    SessionGuard s{session_on(m.model, 2)};
    reset_policy_params p;
    reset_policy_params_init(&p);
    p.kind = RESET_POLICY_FIXED;
    p.temperature = 0.7f;
    p.seed = 21;
    p.presence_penalty = 1.5f;
    p.frequency_penalty = 0.5f;
    p.repetition_penalty = 1.3f;  // over the prompt too: the references are told it
    REQUIRE(reset_set_policy(s.session, &p) == RESET_OK);
    const int32_t prompt[] = {7, 8, 9, 10};
    reset_policy *reference[2] = {nullptr, nullptr};
    for (int32_t k = 0; k < 2; ++k) {
        reset_policy_options o;
        reset_policy_options_init(&o);
        o.sequence = k;
        REQUIRE(reset_policy_create(&p, &o, &reference[k]) == RESET_OK);
        REQUIRE(reset_policy_add_context(reference[k], prompt, 4) == RESET_OK);
    }
    REQUIRE(reset_prefill(s.session, prompt, 4) == RESET_OK);
    std::vector<int32_t> generated;
    for (int i = 0; i < 40; ++i) {
        if (i == 10) {  // a pending cancel fails the next step, which must leave the counts as they were
            REQUIRE(reset_session_cancel(s.session) == RESET_OK);
            reset_step steps[2];
            reset_step_init(steps, 2);
            REQUIRE(reset_decode_step(s.session, steps, 2, nullptr) == RESET_ERR_CANCELLED);
        }
        if (i == 25) {  // a new generation: the session's counts and the references' restart
            p.reset_state = 1;
            REQUIRE(reset_set_policy(s.session, &p) == RESET_OK);
            for (reset_policy *r : reference) REQUIRE(reset_policy_set_params(r, &p) == RESET_OK);
            p.reset_state = 0;
        }
        int32_t expected[2];
        reset_decision decisions[2];
        for (int32_t k = 0; k < 2; ++k) {
            const std::vector<float> z = logits_of(s.session, k);
            reset_decision_init(&decisions[k]);
            REQUIRE(reset_policy_sample(reference[k], z.data(), z.size(), &expected[k], &decisions[k]) == RESET_OK);
        }
        reset_step steps[2];
        reset_step_init(steps, 2);
        REQUIRE(reset_decode_step(s.session, steps, 2, nullptr) == RESET_OK);
        for (int32_t k = 0; k < 2; ++k) {
            REQUIRE_FALSE(steps[k].end_of_generation);  // (model seed 5 ends neither within 40 steps)
            INFO("step ", i, " sequence ", k);
            CHECK(steps[k].token == expected[k]);
            CHECK(steps[k].logprob == decisions[k].logprob);  // the raw row's, however penalized the draw
            REQUIRE(reset_policy_accept(reference[k], steps[k].token) == RESET_OK);
        }
        generated.push_back(steps[0].token);
    }
    for (reset_policy *r : reference) reset_policy_free(r);
    // The penalties act: under a strong frequency penalty no token of 40 takes more than a few turns, while
    // greedy without one settles into a loop on this model.
    std::vector<int> count(64, 0);
    for (int32_t t : generated) ++count[size_t(t)];
    CHECK(*std::max_element(count.begin(), count.end()) <= 8);
    reset_policy_params greedy;
    reset_policy_params_init(&greedy);
    greedy.reset_state = 1;
    REQUIRE(reset_set_policy(s.session, &greedy) == RESET_OK);
    REQUIRE(reset_session_reset(s.session) == RESET_OK);
    REQUIRE(reset_prefill(s.session, prompt, 4) == RESET_OK);
    std::vector<int32_t> plain = greedy_tokens(s.session, 2, 30);
    greedy.frequency_penalty = 2.0f;
    REQUIRE(reset_set_policy(s.session, &greedy) == RESET_OK);
    REQUIRE(reset_session_reset(s.session) == RESET_OK);
    REQUIRE(reset_prefill(s.session, prompt, 4) == RESET_OK);
    std::vector<int32_t> penalized = greedy_tokens(s.session, 2, 30);
    std::fill(count.begin(), count.end(), 0);
    for (int32_t t : plain) ++count[size_t(t)];
    const int plain_max = *std::max_element(count.begin(), count.end());
    std::fill(count.begin(), count.end(), 0);
    for (int32_t t : penalized) ++count[size_t(t)];
    INFO("most frequent token: ", plain_max, " times unpenalized, ", *std::max_element(count.begin(), count.end()),
         " penalized");
    CHECK(plain != penalized);
    CHECK(*std::max_element(count.begin(), count.end()) < plain_max);
    // get_policy returns the penalties.
    reset_policy_params back;
    reset_policy_params_init(&back);
    REQUIRE(reset_session_get_policy(s.session, &back) == RESET_OK);
    CHECK(back.frequency_penalty == 2.0f);
    CHECK(back.presence_penalty == 0.0f);
    CHECK(back.repetition_penalty == 1.0f);
    // A repetition penalty alone, against the same rule written out here: a prompt whose greedy next token
    // is one of its own tokens, so that r = 3 must turn greedy to the penalized row's argmax.
    greedy.frequency_penalty = 0.0f;
    int found = 0;
    for (int32_t c = 0; c < 64 && found < 3; ++c) {
        const int32_t ask[] = {c, 7, 8, 9, 10};
        greedy.repetition_penalty = 1.0f;
        REQUIRE(reset_set_policy(s.session, &greedy) == RESET_OK);
        REQUIRE(reset_session_reset(s.session) == RESET_OK);
        REQUIRE(reset_prefill(s.session, ask, 5) == RESET_OK);
        std::vector<float> z = logits_of(s.session, 0);
        const int32_t raw = int32_t(std::max_element(z.begin(), z.end()) - z.begin());
        if (std::find(std::begin(ask), std::end(ask), raw) == std::end(ask)) continue;
        for (int32_t t : ask) z[size_t(t)] = z[size_t(t)] > 0 ? z[size_t(t)] / 3.0f : z[size_t(t)] * 3.0f;
        const int32_t want = int32_t(std::max_element(z.begin(), z.end()) - z.begin());
        greedy.repetition_penalty = 3.0f;
        REQUIRE(reset_set_policy(s.session, &greedy) == RESET_OK);
        reset_step steps[2];
        reset_step_init(steps, 2);
        REQUIRE(reset_decode_step(s.session, steps, 2, nullptr) == RESET_OK);
        INFO("prompt starting with ", c, ": raw argmax ", raw, ", penalized ", want);
        CHECK(want != raw);
        CHECK(steps[0].token == want);
        CHECK(steps[1].token == want);
        ++found;
    }
    CHECK(found > 0);  // else the checks above never ran
}

TEST_CASE("a session starts with generation_config.json's repetition penalty, greedy or sampling") {
    TinyShape shape;
    const std::string dir = write_tiny_model(shape, 6, "repetition-config");
    for (const char *generation : {R"({"repetition_penalty": 1.25})",
                                   R"({"do_sample": true, "temperature": 0.7, "repetition_penalty": 1.25})"}) {
        write_file(dir + "/generation_config.json", generation);
        ModelGuard m{load(dir)};
        SessionGuard s{session_on(m.model)};
        reset_policy_params p;
        reset_policy_params_init(&p);
        REQUIRE(reset_session_get_policy(s.session, &p) == RESET_OK);
        INFO(generation);
        CHECK(p.repetition_penalty == 1.25f);
    }
    write_file(dir + "/generation_config.json", R"({"repetition_penalty": 20})");
    reset_model *model = nullptr;
    CHECK(reset_model_load(dir.c_str(), nullptr, &model) == RESET_ERR_FORMAT);
    CHECK(std::string(reset_last_error()).find("generation_config.json: repetition_penalty 20") != std::string::npos);
}

TEST_CASE("reset_session_get_policy: the model's own sampling, then what was set, presets resolved") {
    // qwen3-tied's generation_config.json samples at 0.6 with top_k 20, top_p 0.95.
    ModelGuard m{load(std::string(RESET_SOURCE_DIR) + "/tests/fixtures/models/qwen3-tied")};
    SessionGuard s{session_on(m.model)};
    reset_policy_params p;
    reset_policy_params_init(&p);
    p.preset = "left alone?";
    REQUIRE(reset_session_get_policy(s.session, &p) == RESET_OK);
    CHECK(p.kind == RESET_POLICY_FIXED);
    CHECK(p.temperature == 0.6f);
    CHECK(p.top_k == 20);
    CHECK(p.top_p == 0.95f);
    CHECK(p.preset == nullptr);
    CHECK(p.struct_size == sizeof p);
    // Get, change one field, set: `reset chat --top-p 0.5` over the model's sampling.
    p.top_p = 0.5f;
    REQUIRE(reset_set_policy(s.session, &p) == RESET_OK);
    reset_policy_params q;
    reset_policy_params_init(&q);
    REQUIRE(reset_session_get_policy(s.session, &q) == RESET_OK);
    CHECK((q.kind == RESET_POLICY_FIXED && q.temperature == 0.6f && q.top_k == 20 && q.top_p == 0.5f));
    // A named preset comes back resolved (reset-algorithm.md's table: Qwen3-8B is T_low 0.1, tau0 0.5505).
    reset_policy_params r;
    reset_policy_params_init(&r);
    r.kind = RESET_POLICY_RESET;
    r.preset = "Qwen3-8B";
    r.window = 7;
    REQUIRE(reset_set_policy(s.session, &r) == RESET_OK);
    REQUIRE(reset_session_get_policy(s.session, &q) == RESET_OK);
    CHECK((q.kind == RESET_POLICY_RESET && q.t_low == 0.1f && q.tau0 == 0.5505f && q.window == 7 && !q.preset));
    // An older caller's smaller struct gets only its fields.
    reset_policy_params old;
    std::memset(&old, 0x5a, sizeof old);
    old.struct_size = offsetof(reset_policy_params, top_k);
    REQUIRE(reset_session_get_policy(s.session, &old) == RESET_OK);
    CHECK((old.kind == RESET_POLICY_RESET && old.struct_size == offsetof(reset_policy_params, top_k)));
    CHECK(old.top_k == 0x5a5a5a5a);
    // Misuse.
    CHECK(reset_session_get_policy(s.session, nullptr) == RESET_ERR_INVALID_ARGUMENT);
    q.struct_size = 2;
    CHECK(reset_session_get_policy(s.session, &q) == RESET_ERR_INVALID_ARGUMENT);
    q.struct_size = offsetof(reset_policy_params, preset) + 4;
    CHECK(reset_session_get_policy(s.session, &q) == RESET_ERR_INVALID_ARGUMENT);
    reset_policy_params_init(&q);
    CHECK(reset_session_get_policy(nullptr, &q) == RESET_ERR_INVALID_ARGUMENT);
}

TEST_CASE("top_logprobs: each step's most likely tokens, from the logits the token was drawn from") {
    TinyShape shape;
    ModelGuard m{load(write_tiny_model(shape, 3, "top"))};
    // Out of range at creation, with the field named.
    for (int32_t bad : {-1, RESET_MAX_TOP_LOGPROBS + 1}) {
        reset_session_options options;
        reset_session_options_init(&options);
        options.top_logprobs = bad;
        reset_session *session = nullptr;
        CHECK(reset_session_create(m.model, &options, &session) == RESET_ERR_INVALID_ARGUMENT);
        CHECK(session == nullptr);
        CHECK(last_error().find("top_logprobs") != std::string::npos);
    }
    constexpr int kSequences = 2;
    constexpr int32_t kTop = 5;
    reset_session_options options;
    reset_session_options_init(&options);
    CHECK(options.top_logprobs == 0);
    options.sequences = kSequences;
    options.top_logprobs = kTop;
    SessionGuard s{nullptr};
    REQUIRE(reset_session_create(m.model, &options, &s.session) == RESET_OK);
    reset_policy_params p;
    reset_policy_params_init(&p);
    p.kind = RESET_POLICY_FIXED;
    p.temperature = 1.5f;
    p.seed = 4;
    REQUIRE(reset_set_policy(s.session, &p) == RESET_OK);
    const int32_t prompt[] = {5, 9, 2, 40};
    REQUIRE(reset_prefill(s.session, prompt, 4) == RESET_OK);
    int among = 0;
    for (int i = 0; i < 12; ++i) {
        std::vector<std::vector<float>> before(kSequences, std::vector<float>(64));
        for (int k = 0; k < kSequences; ++k)
            REQUIRE(reset_session_logits(s.session, k, before[size_t(k)].data(), 64) == RESET_OK);
        reset_step steps[kSequences];
        reset_step_init(steps, kSequences);
        CHECK(steps[0].top_logprob_count == 0);
        CHECK(steps[0].top_logprobs == nullptr);
        int32_t active = 0;
        REQUIRE(reset_decode_step(s.session, steps, kSequences, &active) == RESET_OK);
        for (int k = 0; k < kSequences; ++k) {
            const reset_step &r = steps[k];
            const std::vector<float> &z = before[size_t(k)];
            INFO("step ", i, " sequence ", k);
            REQUIRE(r.top_logprob_count == kTop);
            REQUIRE(r.top_logprobs != nullptr);
            // The reference: the logits sorted by (value descending, id ascending), log-softmax in double.
            std::vector<int32_t> order(64);
            std::iota(order.begin(), order.end(), 0);
            std::stable_sort(order.begin(), order.end(),
                             [&](int32_t a, int32_t b) { return z[size_t(a)] > z[size_t(b)]; });
            const double max = z[size_t(order[0])];
            double sum = 0.0;
            for (float v : z) sum += std::exp(double(v) - max);
            for (int32_t j = 0; j < kTop; ++j) {
                const reset_token_logprob &e = r.top_logprobs[j];
                CHECK(e.token == order[size_t(j)]);
                // Tolerance: another summation order in double, the result rounded to FP32 (a few ulp).
                CHECK(e.logprob == doctest::Approx(double(z[size_t(e.token)]) - max - std::log(sum)).epsilon(1e-6));
                if (j > 0) CHECK(e.logprob <= r.top_logprobs[j - 1].logprob);
                if (e.token == r.token) {
                    CHECK(e.logprob == r.logprob);  // bit for bit (reset.h)
                    ++among;
                }
            }
        }
        if (active < kSequences) break;
    }
    CHECK(among > 0);  // T 1.5 on a 64-token row draws from the top five often: the equality was exercised

    // Greedy: the first entry is the token itself.  A step array of 0.3's size (80-byte entries, which
    // end where 0.4's fields begin) decodes, nothing written past an entry.
    p.kind = RESET_POLICY_GREEDY;
    REQUIRE(reset_set_policy(s.session, &p) == RESET_OK);
    reset_step full[kSequences];
    reset_step_init(full, kSequences);
    REQUIRE(reset_decode_step(s.session, full, kSequences, nullptr) == RESET_OK);
    for (const reset_step &r : full)
        if (r.token >= 0) {
            CHECK(r.top_logprobs[0].token == r.token);
            CHECK(r.top_logprobs[0].logprob == r.logprob);
        }
    const size_t old_size = offsetof(reset_step, top_logprobs);
    std::vector<unsigned char> older(old_size * kSequences + 16, 0xA5);
    reset_step_init_sized(reinterpret_cast<reset_step *>(older.data()), kSequences, old_size);
    REQUIRE(reset_decode_step(s.session, reinterpret_cast<reset_step *>(older.data()), kSequences, nullptr) ==
            RESET_OK);
    for (size_t i = old_size * kSequences; i < older.size(); ++i) CHECK(older[i] == 0xA5);

    // A session that asks for none reports none.
    SessionGuard none{session_on(m.model)};
    REQUIRE(reset_prefill(none.session, prompt, 4) == RESET_OK);
    reset_step step;
    reset_step_init(&step, 1);
    REQUIRE(reset_decode_step(none.session, &step, 1, nullptr) == RESET_OK);
    CHECK(step.top_logprob_count == 0);
    CHECK(step.top_logprobs == nullptr);
}

TEST_CASE("a sequence that has ended reports no token and no text on later steps") {
    // The chat fixture (sentencepiece with byte fallback, EOS id 3 of 512) sampled near-uniformly,
    // so sequences end at random and some end while a character's bytes are held back: the EOS
    // step then flushes them as text.  Before session 24 every later step of that sequence
    // reported that text again (with token -1).  Seed 1 ends all 8 sequences within the step
    // bound, and at least one of them with text on its EOS step.
    ModelGuard m{load(std::string(RESET_SOURCE_DIR) + "/tests/fixtures/chat-model")};
    constexpr int kSequences = 8;
    SessionGuard s{session_on(m.model, kSequences, 8192)};
    reset_policy_params p;
    reset_policy_params_init(&p);
    p.kind = RESET_POLICY_FIXED;
    p.temperature = 50.0f;
    p.seed = 1;
    REQUIRE(reset_set_policy(s.session, &p) == RESET_OK);
    const int32_t prompt[] = {10, 11, 12};
    REQUIRE(reset_prefill(s.session, prompt, 3) == RESET_OK);
    std::vector<bool> ended(kSequences, false);
    int ended_with_text = 0, finished_steps = 0;
    for (int step = 0; step < 8000; ++step) {
        reset_step steps[kSequences];
        reset_step_init(steps, kSequences);
        for (reset_step &r : steps) r.logprob = 0.0f;  // the library must write NaN itself
        int32_t active = 0;
        if (reset_decode_step(s.session, steps, kSequences, &active) != RESET_OK) break;
        for (int k = 0; k < kSequences; ++k) {
            const reset_step &r = steps[k];
            if (ended[size_t(k)]) {
                ++finished_steps;
                CHECK(r.token == -1);
                CHECK(r.end_reason == RESET_END_FINISHED);
                CHECK(r.text_len == 0);
                CHECK(std::isnan(r.logprob));
                CHECK(r.top_logprob_count == 0);
            } else {
                CHECK(r.logprob <= 0.0f);  // the EOS token too: a token was drawn
            }
            if (!ended[size_t(k)] && r.end_reason == RESET_END_EOS) {
                ended[size_t(k)] = true;
                ended_with_text += r.text_len > 0;
            }
        }
        if (active == 0) break;
    }
    CHECK(std::count(ended.begin(), ended.end(), true) == kSequences);
    CHECK(ended_with_text > 0);  // otherwise the checks above test nothing
    CHECK(finished_steps > 0);

    // New prompt text for one ended sequence makes it generate again; the others stay ended.
    const int32_t more[] = {13, 14};
    REQUIRE(reset_prefill_sequence(s.session, 5, more, 2) == RESET_OK);
    reset_step steps[kSequences];
    reset_step_init(steps, kSequences);
    int32_t active = -1;
    REQUIRE(reset_decode_step(s.session, steps, kSequences, &active) == RESET_OK);
    for (int k = 0; k < kSequences; ++k) CHECK((steps[k].token >= 0) == (k == 5));
    CHECK(active <= 1);
}

TEST_CASE("reset_tokenizer_free refuses a model's own tokenizer, which stays usable") {
    ModelGuard m{load(std::string(RESET_SOURCE_DIR) + "/tests/fixtures/chat-model")};
    const reset_tokenizer *own = reset_model_tokenizer(m.model);
    REQUIRE(own != nullptr);
    reset_tokenizer_free(const_cast<reset_tokenizer *>(own));
    CHECK(last_error().find("belongs to its model") != std::string::npos);
    int32_t ids[16];
    size_t n = 0;
    CHECK(reset_tokenize(own, "hello", 5, 0, ids, 16, &n) == RESET_OK);  // still live
    SessionGuard s{session_on(m.model)};
    REQUIRE(reset_prefill(s.session, ids, n) == RESET_OK);
    reset_step step;
    reset_step_init(&step, 1);
    CHECK(reset_decode_step(s.session, &step, 1, nullptr) == RESET_OK);  // decodes text with it
}

TEST_CASE("NaN logits from the model are a backend failure, not the caller's invalid argument") {
    // lm_head row 5 all NaN: every decode step's logits hold a NaN.  Before session 24 the CPU
    // backend answered RESET_ERR_INVALID_ARGUMENT, as if the caller had passed the logits; the
    // CUDA backend answers RESET_ERR_BACKEND.
    TinyShape shape;
    std::vector<RawTensor> tensors = tiny_tensors(shape, 9);
    for (RawTensor &t : tensors) {
        if (t.name != "lm_head.weight") continue;
        for (int64_t i = 5 * shape.hidden; i < 6 * shape.hidden; ++i) {
            t.bytes[size_t(2 * i)] = char(0xC0);  // BF16 0x7FC0: a quiet NaN
            t.bytes[size_t(2 * i + 1)] = char(0x7F);
        }
    }
    const std::string dir = write_model(shape, tensors, "nan-logits");
    reset_model_options options;
    reset_model_options_init(&options);
    options.weights = RESET_WEIGHTS_BF16;
    options.backend = RESET_BACKEND_CPU;
    reset_model *model = nullptr;
    REQUIRE(reset_model_load(dir.c_str(), &options, &model) == RESET_OK);
    ModelGuard m{model};
    SessionGuard s{session_on(m.model)};
    const int32_t ids[] = {2, 3};
    REQUIRE(reset_prefill(s.session, ids, 2) == RESET_OK);
    reset_step step;
    reset_step_init(&step, 1);
    CHECK(reset_decode_step(s.session, &step, 1, nullptr) == RESET_ERR_BACKEND);
    CHECK(last_error().find("the model produced unusable logits for sequence 0") != std::string::npos);
    CHECK(reset_session_length(s.session, 0) == 2);  // unchanged
}

TEST_CASE("a config claiming more layers than the checkpoint holds names the missing tensor") {
    // Found by hand while writing the fuzz targets (tests/fuzz; a fuzz seed with each shape field set to
    // 2^30): num_hidden_layers = 2^30 was "out of host memory" (the layer table was sized before any layer
    // was read); 3 for a 2-layer checkpoint was already SHAPE.
    TinyShape shape;
    const std::string dir = write_tiny_model(shape, 11, "layers");
    const std::string config = test_support::tiny_config_json(shape);
    const std::string key = "\"num_hidden_layers\":" + std::to_string(shape.layers);
    REQUIRE(config.find(key) != std::string::npos);
    for (const std::string layers : {"1073741824", "3"}) {
        std::string claimed = config;
        claimed.replace(claimed.find(key), key.size(), "\"num_hidden_layers\":" + layers);
        test_support::write_file(dir + "/config.json", claimed);
        reset_model *model = nullptr;
        CHECK(reset_model_load(dir.c_str(), nullptr, &model) == RESET_ERR_SHAPE);
        CHECK(model == nullptr);
        const std::string missing = "model.layers." + std::to_string(std::stol(layers) - 1) + ".";
        CHECK_MESSAGE(last_error().find(missing) != std::string::npos, last_error());
    }
}

TEST_CASE("NULL and freed handles are refused with precise statuses") {
    TinyShape shape;
    const std::string dir = write_tiny_model(shape, 5, "handles");
    reset_model *model = load(dir);
    reset_session *session = session_on(model);
    reset_model_info info;
    reset_model_info_init(&info);
    CHECK(reset_model_get_info(nullptr, &info) == RESET_ERR_INVALID_ARGUMENT);
    CHECK(last_error().find("model is NULL") != std::string::npos);
    CHECK(reset_prefill(nullptr, nullptr, 0) == RESET_ERR_INVALID_ARGUMENT);
    reset_session_free(session);
    const int32_t prompt[] = {1};
    CHECK(reset_prefill(session, prompt, 1) == RESET_ERR_INVALID_HANDLE);
    CHECK(last_error().find("not a live handle") != std::string::npos);
    CHECK(reset_session_cancel(session) == RESET_ERR_INVALID_HANDLE);
    CHECK(reset_prefill_sequence(session, 0, prompt, 1) == RESET_ERR_INVALID_HANDLE);
    CHECK(reset_truncate(session, 0) == RESET_ERR_INVALID_HANDLE);
    CHECK(reset_truncate_sequence(session, 0, 0) == RESET_ERR_INVALID_HANDLE);
    size_t n_ids = 5;
    CHECK(reset_session_tokens(session, 0, nullptr, 0, &n_ids) == RESET_ERR_INVALID_HANDLE);
    CHECK(n_ids == 0);
    CHECK(reset_session_max_context(session) == -1);
    reset_session_free(session);  // a double free is harmless
    reset_model_free(model);
    CHECK(reset_model_get_info(model, &info) == RESET_ERR_INVALID_HANDLE);
    reset_model_free(nullptr);
    reset_session_free(nullptr);
}

TEST_CASE("a session keeps its model alive after the model handle is freed") {
    TinyShape shape;
    reset_model *model = load(write_tiny_model(shape, 6, "lifetime"));
    SessionGuard s{session_on(model)};
    reset_model_free(model);
    const int32_t prompt[] = {1, 2};
    CHECK(reset_prefill(s.session, prompt, 2) == RESET_OK);
    reset_step step;
    reset_step_init(&step, 1);
    CHECK(reset_decode_step(s.session, &step, 1, nullptr) == RESET_OK);
}

TEST_CASE("out-of-range ids, context overflow and misuse leave the session unchanged") {
    TinyShape shape;
    ModelGuard m{load(write_tiny_model(shape, 7, "errors"))};
    SessionGuard s{session_on(m.model, 1, 6)};
    CHECK(reset_session_max_context(s.session) == 6);
    // 0 resolves to the model's maximum (the tiny model's 64 positions, under the 4096 default).
    SessionGuard whole{session_on(m.model, 1, 0)};
    CHECK(reset_session_max_context(whole.session) == 64);
    CHECK(reset_session_max_context(nullptr) == -1);
    reset_step step;
    reset_step_init(&step, 1);
    CHECK(reset_decode_step(s.session, &step, 1, nullptr) == RESET_ERR_STATE);
    std::vector<float> logits(64);
    CHECK(reset_session_logits(s.session, 0, logits.data(), 64) == RESET_ERR_STATE);

    const int32_t bad[] = {1, 64};
    CHECK(reset_prefill(s.session, bad, 2) == RESET_ERR_OUT_OF_RANGE);
    CHECK(last_error().find("64") != std::string::npos);
    const int32_t negative[] = {-1};
    CHECK(reset_prefill(s.session, negative, 1) == RESET_ERR_OUT_OF_RANGE);
    CHECK(reset_session_length(s.session, 0) == 0);

    const int32_t prompt[] = {2, 3, 4, 5};
    REQUIRE(reset_prefill(s.session, prompt, 4) == RESET_OK);
    std::vector<float> before(64), after(64);
    REQUIRE(reset_session_logits(s.session, 0, before.data(), 64) == RESET_OK);
    CHECK(reset_prefill(s.session, prompt, 3) == RESET_ERR_CONTEXT_OVERFLOW);
    CHECK(reset_session_length(s.session, 0) == 4);
    REQUIRE(reset_session_logits(s.session, 0, after.data(), 64) == RESET_OK);
    CHECK(before == after);
    CHECK(reset_session_logits(s.session, 0, after.data(), 10) == RESET_ERR_BUFFER_TOO_SMALL);
    CHECK(reset_session_logits(s.session, 1, after.data(), 64) == RESET_ERR_OUT_OF_RANGE);

    // Decode until the context is full, then the overflow is an error, not a crash.
    reset_status status = RESET_OK;
    for (int i = 0; i < 10 && status == RESET_OK; ++i) {
        reset_step_init(&step, 1);
        status = reset_decode_step(s.session, &step, 1, nullptr);
        if (status == RESET_OK && step.end_of_generation) break;
    }
    if (reset_session_length(s.session, 0) == 6) CHECK(status == RESET_ERR_CONTEXT_OVERFLOW);
    CHECK(reset_decode_step(s.session, &step, 0, nullptr) == RESET_ERR_BUFFER_TOO_SMALL);
}

TEST_CASE("bad options and struct sizes are invalid arguments naming the field") {
    TinyShape shape;
    ModelGuard m{load(write_tiny_model(shape, 8, "options"))};
    reset_session_options options;
    reset_session_options_init(&options);
    options.sequences = 9;
    reset_session *session = nullptr;
    CHECK(reset_session_create(m.model, &options, &session) == RESET_ERR_INVALID_ARGUMENT);
    CHECK(last_error().find("sequences") != std::string::npos);
    CHECK(session == nullptr);
    reset_session_options_init(&options);
    options.max_context = 100000;
    CHECK(reset_session_create(m.model, &options, &session) == RESET_ERR_INVALID_ARGUMENT);
    CHECK(last_error().find("max_context") != std::string::npos);
    options.struct_size = 3;
    CHECK(reset_session_create(m.model, &options, &session) == RESET_ERR_INVALID_ARGUMENT);
    CHECK(last_error().find("struct_size") != std::string::npos);
    reset_session_options_init(&options);
    options.kv_cache = static_cast<reset_kv_cache>(7);
    CHECK(reset_session_create(m.model, &options, &session) == RESET_ERR_INVALID_ARGUMENT);
    CHECK(last_error().find("kv_cache") != std::string::npos);
    reset_session_options_init(&options);
    options.eager = 2;
    CHECK(reset_session_create(m.model, &options, &session) == RESET_ERR_INVALID_ARGUMENT);
    CHECK(last_error().find("eager") != std::string::npos);
    reset_session_options_init(&options);
    options.prefill_gemm_tokens = -2;
    CHECK(reset_session_create(m.model, &options, &session) == RESET_ERR_INVALID_ARGUMENT);
    CHECK(last_error().find("prefill_gemm_tokens") != std::string::npos);
    reset_session_options_init(&options);
    options.programmatic_launch = 1;  // 0 (on where supported) and -1 (off) only
    CHECK(reset_session_create(m.model, &options, &session) == RESET_ERR_INVALID_ARGUMENT);
    CHECK(last_error().find("programmatic_launch") != std::string::npos);
    CHECK(session == nullptr);
    // The CPU backend ignores the CUDA launch choice: -1 is accepted.
    reset_session_options_init(&options);
    options.programmatic_launch = -1;
    REQUIRE(reset_session_create(m.model, &options, &session) == RESET_OK);
    reset_session_free(session);
    session = nullptr;
    // An older caller's struct (without kv_cache and eager) still works: the defaults fill them.
    reset_session_options_init(&options);
    options.struct_size = offsetof(reset_session_options, kv_cache);
    REQUIRE(reset_session_create(m.model, &options, &session) == RESET_OK);
    reset_session_free(session);
    session = nullptr;

    reset_model_options model_options;
    reset_model_options_init(&model_options);
    model_options.weights = static_cast<reset_weights>(42);
    reset_model *model = nullptr;
    CHECK(reset_model_load("/nonexistent", &model_options, &model) == RESET_ERR_INVALID_ARGUMENT);
    CHECK(reset_model_load(nullptr, nullptr, &model) == RESET_ERR_INVALID_ARGUMENT);
    CHECK(reset_model_load("/nonexistent", nullptr, nullptr) == RESET_ERR_INVALID_ARGUMENT);
}

TEST_CASE("reset_session_get_options gives the options a session was created with, max_context resolved") {
    TinyShape shape;
    ModelGuard m{load(write_tiny_model(shape, 8, "get-options"))};
    reset_model_info info;
    reset_model_info_init(&info);
    REQUIRE(reset_model_get_info(m.model, &info) == RESET_OK);
    reset_session_options options;
    reset_session_options_init(&options);
    options.sequences = 3;
    options.kv_cache = RESET_KV_CACHE_FP8;
    options.eager = 1;
    options.prefill_gemm_tokens = -1;
    options.programmatic_launch = -1;
    options.top_logprobs = 5;
    SessionGuard s;
    REQUIRE(reset_session_create(m.model, &options, &s.session) == RESET_OK);
    reset_session_options got;
    reset_session_options_init(&got);
    REQUIRE(reset_session_get_options(s.session, &got) == RESET_OK);
    CHECK(got.struct_size == sizeof got);
    CHECK(got.max_context == std::min(info.max_position_embeddings, 4096));  // 0 resolved
    CHECK(got.max_context == reset_session_max_context(s.session));
    CHECK(got.sequences == 3);
    CHECK(got.kv_cache == RESET_KV_CACHE_FP8);
    CHECK(got.eager == 1);
    CHECK(got.prefill_gemm_tokens == -1);
    CHECK(got.programmatic_launch == -1);
    CHECK(got.top_logprobs == 5);

    // An older caller's struct (before top_logprobs): its part is written, nothing past it.
    reset_session_options old;
    std::memset(&old, 0x5a, sizeof old);
    old.struct_size = offsetof(reset_session_options, top_logprobs);
    REQUIRE(reset_session_get_options(s.session, &old) == RESET_OK);
    CHECK(old.struct_size == offsetof(reset_session_options, top_logprobs));
    CHECK(old.kv_cache == RESET_KV_CACHE_FP8);
    CHECK(old.top_logprobs == 0x5a5a5a5a);

    got.struct_size = 3;
    CHECK(reset_session_get_options(s.session, &got) == RESET_ERR_INVALID_ARGUMENT);
    CHECK(last_error().find("struct_size") != std::string::npos);
    CHECK(reset_session_get_options(s.session, nullptr) == RESET_ERR_INVALID_ARGUMENT);
    CHECK(reset_session_get_options(nullptr, &got) == RESET_ERR_INVALID_ARGUMENT);
    reset_session *freed = nullptr;
    REQUIRE(reset_session_create(m.model, nullptr, &freed) == RESET_OK);
    reset_session_free(freed);
    reset_session_options_init(&got);
    CHECK(reset_session_get_options(freed, &got) == RESET_ERR_INVALID_HANDLE);
    // Given max_context is kept as it was given.
    reset_session_options_init(&options);
    options.max_context = 17;
    SessionGuard t;
    REQUIRE(reset_session_create(m.model, &options, &t.session) == RESET_OK);
    REQUIRE(reset_session_get_options(t.session, &got) == RESET_OK);
    CHECK(got.max_context == 17);
    CHECK(got.kv_cache == RESET_KV_CACHE_BF16);
    CHECK(got.sequences == 1);
}

namespace {
// The last-position logits of a fixed prompt on a W4A16 model loaded with these options.
std::vector<float> w4a16_logits(const std::string &dir, reset_model_options options) {
    options.weights = RESET_WEIGHTS_NVFP4_W4A16;
    options.backend = RESET_BACKEND_CPU;
    ModelGuard m;
    const reset_status status = reset_model_load(dir.c_str(), &options, &m.model);
    INFO(reset_last_error());
    REQUIRE(status == RESET_OK);
    SessionGuard s{session_on(m.model)};
    const int32_t prompt[] = {5, 9, 2, 40};
    REQUIRE(reset_prefill(s.session, prompt, 4) == RESET_OK);
    std::vector<float> logits(64);
    REQUIRE(reset_session_logits(s.session, 0, logits.data(), logits.size()) == RESET_OK);
    return logits;
}
}  // namespace

TEST_CASE("W4A16 activations: FP16 by default, FP32 on the CPU only, other values refused") {
    TinyShape shape;
    const std::string dir = write_tiny_model(shape, 8, "activations");
    reset_model_options options;
    reset_model_options_init(&options);
    CHECK(options.w4a16_activations == RESET_ACTIVATIONS_FP16);
    const std::vector<float> fp16 = w4a16_logits(dir, options);
    options.w4a16_activations = RESET_ACTIVATIONS_FP32;
    const std::vector<float> fp32 = w4a16_logits(dir, options);
    // The FP16 rounding (2^-11 relative per activation) moves the logits a little, not a lot.
    double num = 0, den = 0;
    for (size_t i = 0; i < fp16.size(); ++i) {
        num += (double(fp16[i]) - fp32[i]) * (double(fp16[i]) - fp32[i]);
        den += double(fp32[i]) * fp32[i];
    }
    CHECK(num > 0);
    CHECK(std::sqrt(num / den) < 1e-2);
    // An older caller's struct ends before the field: whatever lies beyond is not read, FP16 is used.
    reset_model_options_init(&options);
    options.w4a16_activations = static_cast<reset_activations>(7);
    options.struct_size = offsetof(reset_model_options, w4a16_activations);
    CHECK(w4a16_logits(dir, options) == fp16);

    reset_model_options_init(&options);
    options.w4a16_activations = static_cast<reset_activations>(7);
    reset_model *model = nullptr;
    CHECK(reset_model_load(dir.c_str(), &options, &model) == RESET_ERR_INVALID_ARGUMENT);
    CHECK(last_error().find("w4a16_activations") != std::string::npos);
    CHECK(model == nullptr);
    // FP32 is the CPU reference's: an explicit CUDA request is refused whether or not a device is present.
    options.w4a16_activations = RESET_ACTIVATIONS_FP32;
    options.backend = RESET_BACKEND_CUDA;
    CHECK(reset_model_load(dir.c_str(), &options, &model) == RESET_ERR_UNSUPPORTED);
    CHECK(last_error().find("RESET_ACTIVATIONS_FP32") != std::string::npos);
    CHECK(model == nullptr);
    // AUTO: refused when it finds a device, else it loads on the CPU.
    options.backend = RESET_BACKEND_AUTO;
    std::string why;
    if (reset::cuda_backend_available(&why)) {
        CHECK(reset_model_load(dir.c_str(), &options, &model) == RESET_ERR_UNSUPPORTED);
    } else {
        ModelGuard m;
        CHECK(reset_model_load(dir.c_str(), &options, &m.model) == RESET_OK);
    }
}

TEST_CASE("file access: a model read into memory decodes as the mapped one, files truncated or not; other values refused") {
    TinyShape shape;
    const std::string dir = write_tiny_model(shape, 9, "file-access");
    reset_model_options options;
    reset_model_options_init(&options);
    CHECK(options.file_access == RESET_FILE_ACCESS_MAP);
    options.backend = RESET_BACKEND_CPU;  // the BF16 weights are read where the store holds them
    const int32_t prompt[] = {5, 9, 2, 40, 17};
    auto logits_of = [&](reset_model *model) {
        SessionGuard s{session_on(model)};
        REQUIRE(reset_prefill(s.session, prompt, 5) == RESET_OK);
        std::vector<float> logits(64);
        REQUIRE(reset_session_logits(s.session, 0, logits.data(), logits.size()) == RESET_OK);
        return logits;
    };
    std::vector<float> mapped;
    {
        ModelGuard m;
        REQUIRE(reset_model_load(dir.c_str(), &options, &m.model) == RESET_OK);
        mapped = logits_of(m.model);
    }
    options.file_access = RESET_FILE_ACCESS_READ;
    ModelGuard m;
    const reset_status status = reset_model_load(dir.c_str(), &options, &m.model);
    INFO(reset_last_error());
    REQUIRE(status == RESET_OK);
    CHECK(logits_of(m.model) == mapped);  // the same bytes through the same code
    // The copy is the model's own: the file cut to nothing changes nothing (a mapped CPU model would die
    // of SIGBUS here).
    REQUIRE(::truncate((dir + "/model.safetensors").c_str(), 0) == 0);
    CHECK(logits_of(m.model) == mapped);

    reset_model_options_init(&options);
    options.file_access = static_cast<reset_file_access>(2);
    reset_model *refused = nullptr;
    CHECK(reset_model_load(dir.c_str(), &options, &refused) == RESET_ERR_INVALID_ARGUMENT);
    CHECK(last_error().find("file_access") != std::string::npos);
    CHECK(refused == nullptr);
}

TEST_CASE("RESET_BACKEND_CUDA without a usable device is RESET_ERR_BACKEND with the reason; AUTO falls back to the CPU") {
    std::string why;
    if (reset::cuda_backend_available(&why)) return;  // a machine with a GPU runs tests/gpu/test_cuda_engine instead
    TinyShape shape;
    const std::string dir = write_tiny_model(shape, 8, "cuda-backend");
    reset_model_options options;
    reset_model_options_init(&options);
    options.backend = RESET_BACKEND_CUDA;
    reset_model *model = nullptr;
    CHECK(reset_model_load(dir.c_str(), &options, &model) == RESET_ERR_BACKEND);
    CHECK(model == nullptr);
    CHECK(last_error().find("RESET_BACKEND_CUDA") != std::string::npos);
    CHECK((last_error().find("without CUDA") != std::string::npos || last_error().find("CUDA device") != std::string::npos));
    options.backend = RESET_BACKEND_AUTO;
    ModelGuard m{nullptr};
    REQUIRE(reset_model_load(dir.c_str(), &options, &m.model) == RESET_OK);
    reset_model_info info;
    reset_model_info_init(&info);
    REQUIRE(reset_model_get_info(m.model, &info) == RESET_OK);
    CHECK(info.backend == RESET_BACKEND_CPU);
    CHECK(info.device_bytes == 0);
    SessionGuard s;
    REQUIRE(reset_session_create(m.model, nullptr, &s.session) == RESET_OK);
    CHECK(reset_session_device_bytes(s.session) == 0);
    CHECK(reset_session_device_bytes(nullptr) == 0);
    options.device = -1;
    reset_model *bad = nullptr;
    CHECK(reset_model_load(dir.c_str(), &options, &bad) == RESET_ERR_INVALID_ARGUMENT);
}

TEST_CASE("loading broken model directories gives the right status, never a crash") {
    reset_model *model = nullptr;
    CHECK(reset_model_load("/nonexistent/model", nullptr, &model) == RESET_ERR_IO);
    CHECK(model == nullptr);

    TinyShape shape;
    SUBCASE("unsupported architecture") {
        const std::string dir = write_tiny_model(shape, 9, "arch");
        write_file(dir + "/config.json", "{\"model_type\":\"gpt2\",\"vocab_size\":5}");
        CHECK(reset_model_load(dir.c_str(), nullptr, &model) == RESET_ERR_UNSUPPORTED);
        CHECK(last_error().find("gpt2") != std::string::npos);
    }
    SUBCASE("invalid JSON") {
        const std::string dir = write_tiny_model(shape, 9, "json");
        write_file(dir + "/config.json", "{\"model_type\": ");
        CHECK(reset_model_load(dir.c_str(), nullptr, &model) == RESET_ERR_FORMAT);
    }
    SUBCASE("missing tensor") {
        auto tensors = tiny_tensors(shape, 9);
        tensors.erase(tensors.begin() + 3);  // a q_proj
        const std::string dir = write_tiny_model(shape, 9, "missing");
        write_file(dir + "/model.safetensors", safetensors_bytes(tensors));
        CHECK(reset_model_load(dir.c_str(), nullptr, &model) == RESET_ERR_SHAPE);
        CHECK(last_error().find("is missing") != std::string::npos);
    }
    SUBCASE("wrong shape") {
        TinyShape other = shape;
        other.intermediate = 40;
        const std::string dir = write_tiny_model(shape, 9, "shape");
        write_file(dir + "/model.safetensors", safetensors_bytes(tiny_tensors(other, 9)));
        CHECK(reset_model_load(dir.c_str(), nullptr, &model) == RESET_ERR_SHAPE);
        CHECK(last_error().find("config.json implies") != std::string::npos);
    }
    SUBCASE("truncated safetensors") {
        const std::string dir = write_tiny_model(shape, 9, "trunc");
        write_file(dir + "/model.safetensors", safetensors_bytes(tiny_tensors(shape, 9)).substr(0, 4000));
        CHECK(reset_model_load(dir.c_str(), nullptr, &model) == RESET_ERR_FORMAT);
    }
    SUBCASE("quantized weights without a quantization config") {
        auto tensors = tiny_tensors(shape, 9);
        tensors[3].dtype = "U8";
        tensors[3].shape = {int64_t(tensors[3].bytes.size())};
        const std::string dir = write_tiny_model(shape, 9, "u8");
        write_file(dir + "/model.safetensors", safetensors_bytes(tensors));
        CHECK(reset_model_load(dir.c_str(), nullptr, &model) != RESET_OK);
    }
    SUBCASE("a ModelOpt export of another algorithm") {
        const std::string dir = write_tiny_model(shape, 9, "fp8");
        write_file(dir + "/hf_quant_config.json", "{\"quantization\":{\"quant_algo\":\"FP8\"}}");
        CHECK(reset_model_load(dir.c_str(), nullptr, &model) == RESET_ERR_UNSUPPORTED);
        CHECK(last_error().find("FP8") != std::string::npos);
    }
    CHECK(model == nullptr);
}

TEST_CASE("cancel from another thread stops a prefill and keeps the session as it was") {
    TinyShape shape;
    shape.hidden = 256;
    shape.intermediate = 1024;
    shape.layers = 4;
    shape.max_position = 4096;
    ModelGuard m{load(write_tiny_model(shape, 10, "cancel"))};
    SessionGuard s{session_on(m.model, 1, 4096)};
    std::vector<int32_t> prompt(3000);
    for (size_t i = 0; i < prompt.size(); ++i) prompt[i] = int32_t(i % 60) + 2;
    std::atomic<bool> started{false};
    std::thread canceller([&] {
        while (!started.load()) std::this_thread::yield();
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        reset_session_cancel(s.session);
    });
    started = true;
    const reset_status status = reset_prefill(s.session, prompt.data(), prompt.size());
    canceller.join();
    CHECK(status == RESET_ERR_CANCELLED);
    CHECK(reset_session_length(s.session, 0) == 0);
    // The cancel was consumed: the next call runs.
    const int32_t small[] = {2, 3};
    CHECK(reset_prefill(s.session, small, 2) == RESET_OK);
}

TEST_CASE("a cancel request no call consumed is dropped by reset_session_reset") {
    TinyShape shape;
    ModelGuard m{load(write_tiny_model(shape, 4, "cancel-reset"))};
    SessionGuard s{session_on(m.model)};
    const int32_t ids[] = {2, 3};
    REQUIRE(reset_session_cancel(s.session) == RESET_OK);
    REQUIRE(reset_session_reset(s.session) == RESET_OK);
    CHECK(reset_prefill(s.session, ids, 2) == RESET_OK);  // was RESET_ERR_CANCELLED before session 24
    // Without a reset, the request waits for the next call, as reset.h says.
    REQUIRE(reset_session_cancel(s.session) == RESET_OK);
    CHECK(reset_prefill(s.session, ids, 2) == RESET_ERR_CANCELLED);
    CHECK(reset_prefill(s.session, ids, 2) == RESET_OK);
}

TEST_CASE("reset_session_cancel racing reset_session_free never touches a freed session") {
    // Under AddressSanitizer (scripts/test.sh) a cancel that reached a freed session would be a
    // heap-use-after-free report.  Each round frees the session while another thread calls
    // reset_session_cancel on it in a loop: every call must return RESET_OK (before the free) or
    // RESET_ERR_INVALID_HANDLE (after it).  (A new session may reuse the address; reset.h says
    // such a handle cannot be told apart, and nothing here uses the new one.)
    TinyShape shape;
    ModelGuard m{load(write_tiny_model(shape, 4, "cancel-free"))};
    int ok = 0, refused = 0, other = 0;
    for (int round = 0; round < 200; ++round) {
        reset_session *s = session_on(m.model);
        std::atomic<bool> started{false}, stop{false};
        std::thread canceller([&] {
            do {
                const reset_status status = reset_session_cancel(s);
                (status == RESET_OK ? ok : status == RESET_ERR_INVALID_HANDLE ? refused : other) += 1;
                started = true;  // after a first call, which therefore precedes the free
            } while (!stop.load());
        });
        while (!started.load()) std::this_thread::yield();
        reset_session_free(s);
        for (int spin = 0; spin < 100; ++spin) std::this_thread::yield();
        stop = true;
        canceller.join();
    }
    CHECK(other == 0);
    CHECK(ok > 0);
    CHECK(refused > 0);
}

TEST_CASE("the load progress callback sees every layer, and can cancel the load") {
    TinyShape shape;
    shape.layers = 3;
    const std::string dir = write_tiny_model(shape, 11, "progress");
    struct Seen {
        std::vector<float> fractions;
        int stop_at = -1;
    } seen;
    reset_model_options options;
    reset_model_options_init(&options);
    options.weights = RESET_WEIGHTS_NVFP4_W4A16;
    options.progress = [](float fraction, void *user) {
        auto *s = static_cast<Seen *>(user);
        s->fractions.push_back(fraction);
        return int(s->stop_at >= 0 && int(s->fractions.size()) > s->stop_at);
    };
    options.progress_user_data = &seen;
    reset_model *model = nullptr;
    REQUIRE(reset_model_load(dir.c_str(), &options, &model) == RESET_OK);
    reset_model_free(model);
    REQUIRE(seen.fractions.size() == 4);  // one per layer, then 1.0
    CHECK(std::is_sorted(seen.fractions.begin(), seen.fractions.end()));
    CHECK(seen.fractions.back() == 1.0f);

    seen.fractions.clear();
    seen.stop_at = 1;
    model = nullptr;
    CHECK(reset_model_load(dir.c_str(), &options, &model) == RESET_ERR_CANCELLED);
    CHECK(model == nullptr);
}
