// Saving a sequence to a file and loading it back (reset_save_sequence,
// reset_load_sequence).
//
// The reference is the one test_copy_sequence.cpp uses: sequences that
// advance in lockstep under a deterministic draw (top-k 1) reach one state,
// yet draw with their own keys once the policy samples.  A sequence loaded
// from a file, in the same session or a new one, must recreate that state
// exactly: on the CPU backend tokens, texts, signals and logits match bit for
// bit.  Every malformed, inconsistent or foreign file is refused with its
// status and leaves the sequence as it was.
#include <doctest/doctest.h>
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "reset.h"
#include "session_steps.h"
#include "test_support.h"

using namespace test_support;
using namespace session_steps;
using json = nlohmann::json;

namespace {

constexpr uint64_t kSeed = 23;

void set_policy_fields(reset_session *session, int32_t top_k, int32_t window) {
    reset_policy_params p;
    reset_policy_params_init(&p);
    REQUIRE(reset_session_get_policy(session, &p) == RESET_OK);
    p.top_k = top_k;
    p.window = window;
    p.reset_state = 0;
    REQUIRE(reset_set_policy(session, &p) == RESET_OK);
}

void set_top_k(reset_session *session, int32_t top_k) { set_policy_fields(session, top_k, 4); }

std::string held_text(const reset_session *session, int32_t sequence) {
    const char *text = nullptr;
    size_t length = 0;
    REQUIRE(reset_session_held_text(session, sequence, &text, &length) == RESET_OK);
    return std::string(text, length);
}

std::vector<float> logits_of(const reset_session *session, int32_t sequence) {
    std::vector<float> z(kVocab);
    REQUIRE(reset_session_logits(session, sequence, z.data(), kVocab) == RESET_OK);
    return z;
}

std::string read_file(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// A sequence file's header and payload, to make a foreign or broken file from a good one.
struct Parsed {
    json header;
    std::string payload;

    explicit Parsed(const std::string &bytes) {
        REQUIRE(bytes.size() >= 8);
        uint64_t n = 0;
        for (int i = 7; i >= 0; --i) n = (n << 8) | uint8_t(bytes[size_t(i)]);
        header = json::parse(bytes.substr(8, size_t(n)));
        payload = bytes.substr(8 + size_t(n));
    }
    std::string bytes() const {
        std::string text = header.dump();
        std::string out(8, '\0');
        for (int i = 0; i < 8; ++i) out[size_t(i)] = char((uint64_t(text.size()) >> (8 * i)) & 0xff);
        return out + text + payload;
    }
    // The bytes of a tensor in the payload (modifiable in place).
    char *data(const std::string &name) {
        REQUIRE(header.contains(name));
        return &payload[header[name]["data_offsets"][0].get<size_t>()];
    }
    void set_meta(const std::string &key, const std::string &value) { header["__metadata__"][key] = value; }
};

// The files a directory holds, for checking that a failed save leaves nothing behind.
std::vector<std::string> listing(const std::string &dir) {
    std::vector<std::string> names;
    if (DIR *d = opendir(dir.c_str())) {
        while (const dirent *e = readdir(d))
            if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") names.push_back(e->d_name);
        closedir(d);
    }
    std::sort(names.begin(), names.end());
    return names;
}

// A session of reset_session_for whose sequences hold the prompt and 6 sampled steps: every piece of
// sampler state (the window, the penalties' counts, the draw counter) in use.
reset_session *session_with_history(reset_model *model, int32_t sequences) {
    reset_session *session = reset_session_for(model, sequences, kSeed);
    REQUIRE(reset_prefill(session, kPrompt, kPromptLength) == RESET_OK);
    decode(session, sequences, 6);
    return session;
}

}  // namespace

TEST_CASE("a loaded sequence continues as the saved one would, in its session or another") {
    ModelGuard m{load_chat_model()};
    const std::string dir = temp_directory("sequence-file");
    const int lockstep_steps = 11, sampled_steps = 16;

    // The reference: two sequences advance together for 11 deterministic steps, then sample.
    SessionGuard want{reset_session_for(m.model, 2, kSeed)};
    set_top_k(want.session, 1);
    REQUIRE(reset_prefill(want.session, kPrompt, kPromptLength) == RESET_OK);
    decode(want.session, 2, lockstep_steps);
    set_top_k(want.session, 0);
    const auto want_after = decode(want.session, 2, sampled_steps);
    REQUIRE(generated_tokens(want_after[0]) != generated_tokens(want_after[1]));

    // The same 11 steps in sequence 0 of another session; sequence 1 goes elsewhere.
    SessionGuard got{reset_session_for(m.model, 2, kSeed)};
    set_top_k(got.session, 1);
    REQUIRE(reset_prefill(got.session, kPrompt, kPromptLength) == RESET_OK);
    decode(got.session, 2, 6);
    REQUIRE(reset_truncate_sequence(got.session, 1, 2) == RESET_OK);
    const int32_t other[] = {30, 31, 32};
    REQUIRE(reset_prefill_sequence(got.session, 1, other, 3) == RESET_OK);
    decode(got.session, 2, lockstep_steps - 6);
    const std::string path = dir + "/sequence.safetensors";
    REQUIRE(reset_save_sequence(got.session, 0, path.c_str()) == RESET_OK);
    const std::vector<int32_t> saved_tokens = tokens_of(got.session, 0);
    const std::vector<float> saved_logits = logits_of(got.session, 0);

    SUBCASE("into another sequence of the same session") {
        REQUIRE(tokens_of(got.session, 1) != saved_tokens);
        REQUIRE(reset_load_sequence(got.session, 1, path.c_str()) == RESET_OK);
        CHECK(tokens_of(got.session, 1) == saved_tokens);
        CHECK(logits_of(got.session, 1) == saved_logits);
        set_top_k(got.session, 0);
        check_same_steps(decode(got.session, 2, sampled_steps), want_after);
    }
    SUBCASE("into both sequences of a new session") {
        SessionGuard fresh{reset_session_for(m.model, 2, kSeed)};
        REQUIRE(reset_load_sequence(fresh.session, 0, path.c_str()) == RESET_OK);
        REQUIRE(reset_load_sequence(fresh.session, 1, path.c_str()) == RESET_OK);
        CHECK(tokens_of(fresh.session, 1) == saved_tokens);
        CHECK(logits_of(fresh.session, 0) == saved_logits);
        check_same_steps(decode(fresh.session, 2, sampled_steps), want_after);
    }
    SUBCASE("a file saved again from a loaded sequence is the same file") {
        SessionGuard fresh{reset_session_for(m.model, 1, kSeed)};
        REQUIRE(reset_load_sequence(fresh.session, 0, path.c_str()) == RESET_OK);
        const std::string again = dir + "/again.safetensors";
        REQUIRE(reset_save_sequence(fresh.session, 0, again.c_str()) == RESET_OK);
        CHECK(read_file(again) == read_file(path));
    }
}

TEST_CASE("a loaded sequence keeps its held text, incomplete character, end and max_tokens count") {
    ModelGuard m{load_chat_model()};
    const std::string dir = temp_directory("sequence-file-text");
    // The fixture's sentencepiece model spells this character as three byte tokens.
    int32_t bytes[4];
    size_t n = 0;
    REQUIRE(reset_tokenize(reset_model_tokenizer(m.model), "\xe4\xb8\xad", 3, 0, bytes, 4, &n) == RESET_OK);
    REQUIRE(n == 3);

    auto greedy = [&](int32_t sequences) {
        reset_session *session = create_session(m.model, sequences, 256);
        reset_policy_params p;
        reset_policy_params_init(&p);
        p.kind = RESET_POLICY_GREEDY;
        REQUIRE(reset_set_policy(session, &p) == RESET_OK);
        return session;
    };
    // The greedy text of the prompt, to find a step with text.
    SessionGuard probe{greedy(1)};
    reset_stop_options stop;
    reset_stop_options_init(&stop);
    stop.ignore_eos = 1;
    REQUIRE(reset_set_stop(probe.session, &stop) == RESET_OK);
    REQUIRE(reset_prefill(probe.session, kPrompt, kPromptLength) == RESET_OK);
    const std::vector<Step> reference = decode(probe.session, 1, 20)[0];
    size_t k = 0;
    while (k < reference.size() && reference[k].text.empty()) ++k;
    REQUIRE(k + 3 < reference.size());

    SUBCASE("held text, the end and the max_tokens count") {
        // A stop string beginning with step k's text holds it back; max_tokens ends 3 steps later.
        const std::string never = reference[k].text + "\x7f\x01\x7f\x02";
        const char *strings[] = {never.c_str()};
        stop.strings = strings;
        stop.string_count = 1;
        stop.max_tokens = int32_t(k) + 4;
        SessionGuard a{greedy(1)};
        REQUIRE(reset_set_stop(a.session, &stop) == RESET_OK);
        REQUIRE(reset_prefill(a.session, kPrompt, kPromptLength) == RESET_OK);
        decode(a.session, 1, int(k) + 1);
        REQUIRE(held_text(a.session, 0) == reference[k].text);
        const std::string path = dir + "/held.safetensors";
        REQUIRE(reset_save_sequence(a.session, 0, path.c_str()) == RESET_OK);

        SessionGuard b{greedy(1)};
        REQUIRE(reset_set_stop(b.session, &stop) == RESET_OK);
        REQUIRE(reset_load_sequence(b.session, 0, path.c_str()) == RESET_OK);
        CHECK(held_text(b.session, 0) == reference[k].text);
        std::string text;
        for (int j = 0; j < 3; ++j) {
            reset_step r;
            reset_step_init(&r, 1);
            REQUIRE(reset_decode_step(b.session, &r, 1, nullptr) == RESET_OK);
            CAPTURE(j);
            CHECK(r.token == reference[k + 1 + size_t(j)].token);
            CHECK(r.end_of_generation == (j == 2 ? 1 : 0));  // the count came with the file
            text.append(r.text, r.text_len);
        }
        CHECK(text.rfind(reference[k].text, 0) == 0);  // the held text comes first
        // An ended sequence saved and loaded is still ended.
        const std::string ended = dir + "/ended.safetensors";
        REQUIRE(reset_save_sequence(b.session, 0, ended.c_str()) == RESET_OK);
        SessionGuard c{greedy(1)};
        REQUIRE(reset_load_sequence(c.session, 0, ended.c_str()) == RESET_OK);
        reset_step r;
        reset_step_init(&r, 1);
        CHECK(reset_decode_step(c.session, &r, 1, nullptr) == RESET_ERR_STATE);
    }
    SUBCASE("an incomplete character") {
        // The prompt ends in two bytes of the character's three; the reference prefills it in one go.
        SessionGuard a{greedy(1)};
        std::vector<int32_t> prompt(kPrompt, kPrompt + kPromptLength);
        prompt.push_back(bytes[0]);
        prompt.push_back(bytes[1]);
        REQUIRE(reset_prefill(a.session, prompt.data(), prompt.size()) == RESET_OK);
        const std::string path = dir + "/pending.safetensors";
        REQUIRE(reset_save_sequence(a.session, 0, path.c_str()) == RESET_OK);
        SessionGuard b{greedy(1)};
        const int32_t plain = 40;
        REQUIRE(reset_prefill(b.session, &plain, 1) == RESET_OK);
        REQUIRE(reset_load_sequence(b.session, 0, path.c_str()) == RESET_OK);
        check_same_steps(decode(b.session, 1, 4), decode(a.session, 1, 4));
    }
}

TEST_CASE("a loaded sampler state takes the session's window as reset_set_policy does") {
    ModelGuard m{load_chat_model()};
    const std::string dir = temp_directory("sequence-file-window");
    SessionGuard a{session_with_history(m.model, 1)};
    const std::string path = dir + "/window.safetensors";
    REQUIRE(reset_save_sequence(a.session, 0, path.c_str()) == RESET_OK);
    // The saved window has 4 slots and the step 6 entropies (no boundary yet), so Ĥ is the step's
    // mean.  Grown to 8 slots, Ĥ is the window's mean of the 4 kept until the step reaches 8 tokens:
    // a ring left at 4 slots would show in the signals.  Shrunk to 2, the 2 latest are kept.
    for (const int32_t window : {8, 2}) {
        CAPTURE(window);
        // The reference: the saving session, made again, moves to the new window and goes on.
        SessionGuard again{session_with_history(m.model, 1)};
        set_policy_fields(again.session, 0, window);
        const auto want = decode(again.session, 1, 12);
        SessionGuard b{reset_session_for(m.model, 1, kSeed)};
        set_policy_fields(b.session, 0, window);
        REQUIRE(reset_load_sequence(b.session, 0, path.c_str()) == RESET_OK);
        check_same_steps(decode(b.session, 1, 12), want);
    }
}

TEST_CASE("an empty sequence and one cut back save and load without logits") {
    ModelGuard m{load_chat_model()};
    const std::string dir = temp_directory("sequence-file-empty");
    SessionGuard a{session_with_history(m.model, 2)};
    const std::string empty = dir + "/empty.safetensors", cut = dir + "/cut.safetensors";
    {
        SessionGuard blank{reset_session_for(m.model, 1, kSeed)};
        REQUIRE(reset_save_sequence(blank.session, 0, empty.c_str()) == RESET_OK);
    }
    REQUIRE(reset_load_sequence(a.session, 1, empty.c_str()) == RESET_OK);
    CHECK(reset_session_length(a.session, 1) == 0);
    std::vector<float> z(kVocab);
    CHECK(reset_session_logits(a.session, 1, z.data(), kVocab) == RESET_ERR_STATE);
    CHECK(tokens_of(a.session, 0).size() == size_t(kPromptLength + 6));  // the other sequence untouched

    REQUIRE(reset_truncate_sequence(a.session, 0, 4) == RESET_OK);
    REQUIRE(reset_save_sequence(a.session, 0, cut.c_str()) == RESET_OK);
    SessionGuard b{reset_session_for(m.model, 1, kSeed)};
    REQUIRE(reset_load_sequence(b.session, 0, cut.c_str()) == RESET_OK);
    CHECK(tokens_of(b.session, 0) == tokens_of(a.session, 0));
    CHECK(reset_session_logits(b.session, 0, z.data(), kVocab) == RESET_ERR_STATE);
    // Prefilled with the same token, both continue identically under a deterministic draw.
    set_top_k(a.session, 1);
    set_top_k(b.session, 1);
    const int32_t next = 50;
    REQUIRE(reset_prefill_sequence(a.session, 0, &next, 1) == RESET_OK);
    REQUIRE(reset_prefill_sequence(a.session, 1, &next, 1) == RESET_OK);  // the empty one, so a can decode
    REQUIRE(reset_prefill_sequence(b.session, 0, &next, 1) == RESET_OK);
    const auto x = decode(a.session, 2, 5);
    check_same_steps(decode(b.session, 1, 5), x);
}

TEST_CASE("reset_save_sequence refuses bad arguments and leaves no file behind") {
    ModelGuard m{load_chat_model()};
    const std::string dir = temp_directory("sequence-file-save");
    SessionGuard a{session_with_history(m.model, 2)};
    const std::string path = dir + "/s.safetensors";
    CHECK(reset_save_sequence(nullptr, 0, path.c_str()) == RESET_ERR_INVALID_ARGUMENT);
    CHECK(reset_save_sequence(a.session, 0, nullptr) == RESET_ERR_INVALID_ARGUMENT);
    CHECK(reset_save_sequence(a.session, 2, path.c_str()) == RESET_ERR_OUT_OF_RANGE);
    CHECK(reset_save_sequence(a.session, -1, path.c_str()) == RESET_ERR_OUT_OF_RANGE);
    const std::string missing_dir = dir + "/no/such/dir/s.safetensors";
    CHECK(reset_save_sequence(a.session, 0, missing_dir.c_str()) == RESET_ERR_IO);
    CHECK(last_error().find(missing_dir) != std::string::npos);
    CHECK(last_error().find("No such file or directory") != std::string::npos);
    // A directory in the way: written, then the rename fails, and the partial file is removed.
    const std::string blocked = dir + "/blocked";
    REQUIRE(mkdir(blocked.c_str(), 0755) == 0);
    mkdir((blocked + "/inside").c_str(), 0755);  // a non-empty directory: rename(2) cannot replace it
    CHECK(reset_save_sequence(a.session, 0, blocked.c_str()) == RESET_ERR_IO);
    CHECK(listing(dir) == std::vector<std::string>{"blocked"});
    // A good save replaces an earlier file whole.
    write_file(path, "old");
    REQUIRE(reset_save_sequence(a.session, 0, path.c_str()) == RESET_OK);
    CHECK(read_file(path).size() > 1000);
    CHECK(listing(dir) == (std::vector<std::string>{"blocked", "s.safetensors"}));
    // A freed session is a bad handle.
    reset_session *freed = create_session(m.model, 1, 16);
    reset_session_free(freed);
    CHECK(reset_save_sequence(freed, 0, path.c_str()) == RESET_ERR_INVALID_HANDLE);
}

TEST_CASE("reset_load_sequence refuses foreign and broken files and changes nothing") {
    ModelGuard m{load_chat_model()};
    const std::string dir = temp_directory("sequence-file-load");
    SessionGuard a{session_with_history(m.model, 2)};
    const std::string good = dir + "/good.safetensors";
    REQUIRE(reset_save_sequence(a.session, 0, good.c_str()) == RESET_OK);
    const std::string good_bytes = read_file(good);
    // The target: sequence 1 of another session, holding something else.
    SessionGuard b{reset_session_for(m.model, 2, kSeed)};
    const int32_t prompt[] = {20, 21, 22};
    REQUIRE(reset_prefill(b.session, prompt, 3) == RESET_OK);
    const std::vector<int32_t> before_tokens = tokens_of(b.session, 1);
    const std::vector<float> before_logits = logits_of(b.session, 1);
    auto refused = [&](const std::string &path, reset_status want, const std::string &message) {
        CAPTURE(path);
        CHECK(reset_load_sequence(b.session, 1, path.c_str()) == want);
        const std::string error = last_error();  // CAPTURE keeps a reference: a named string, not a temporary
        CAPTURE(error);
        CHECK(error.find(message) != std::string::npos);
        CHECK(tokens_of(b.session, 1) == before_tokens);
        CHECK(logits_of(b.session, 1) == before_logits);
    };
    int variant = 0;
    auto broken = [&](const std::function<void(Parsed &)> &change) {
        Parsed parsed(good_bytes);
        change(parsed);
        const std::string path = dir + "/broken-" + std::to_string(variant++) + ".safetensors";
        write_file(path, parsed.bytes());
        return path;
    };

    SUBCASE("arguments") {
        CHECK(reset_load_sequence(nullptr, 0, good.c_str()) == RESET_ERR_INVALID_ARGUMENT);
        CHECK(reset_load_sequence(b.session, 0, nullptr) == RESET_ERR_INVALID_ARGUMENT);
        CHECK(reset_load_sequence(b.session, 2, good.c_str()) == RESET_ERR_OUT_OF_RANGE);
        refused(dir + "/missing.safetensors", RESET_ERR_IO, "missing.safetensors");
    }
    SUBCASE("not a sequence file") {
        const std::string text = dir + "/text.safetensors";
        write_file(text, "hello");
        refused(text, RESET_ERR_FORMAT, "truncated");
        const std::string truncated = dir + "/truncated.safetensors";
        write_file(truncated, good_bytes.substr(0, good_bytes.size() - 100));
        refused(truncated, RESET_ERR_FORMAT, "truncated");
        refused(std::string(RESET_SOURCE_DIR) + "/tests/fixtures/chat-model/model.safetensors", RESET_ERR_FORMAT,
                "not a valid libreset sequence file");
        refused(broken([](Parsed &p) { p.set_meta("format", "pt"); }), RESET_ERR_FORMAT, "\"pt\"");
        refused(broken([](Parsed &p) { p.header["__metadata__"].erase("sampler.step_sum"); }), RESET_ERR_FORMAT,
                "no \"sampler.step_sum\"");
    }
    SUBCASE("a newer format") {
        refused(broken([](Parsed &p) { p.set_meta("format_version", "2"); }), RESET_ERR_UNSUPPORTED,
                "format version 2");
    }
    SUBCASE("another model, weights format or cache type") {
        refused(broken([](Parsed &p) { p.set_meta("hidden_size", "4096"); }), RESET_ERR_SHAPE, "hidden 4096");
        refused(broken([](Parsed &p) { p.set_meta("model_fingerprint", "0123456789abcdef"); }), RESET_ERR_SHAPE,
                "fingerprint");
        // Real files from other models and sessions.
        TinyShape shape;
        const std::string tiny_a = write_tiny_model(shape, 1, "seqfile-tiny-a");
        const std::string tiny_b = write_tiny_model(shape, 2, "seqfile-tiny-b");  // same shapes, other weights
        reset_model_options options;
        reset_model_options_init(&options);
        reset_model *ma = nullptr, *mb = nullptr, *mq = nullptr;
        REQUIRE(reset_model_load(tiny_a.c_str(), &options, &ma) == RESET_OK);
        REQUIRE(reset_model_load(tiny_b.c_str(), &options, &mb) == RESET_OK);
        options.weights = RESET_WEIGHTS_NVFP4_W4A16;
        REQUIRE(reset_model_load(tiny_a.c_str(), &options, &mq) == RESET_OK);
        ModelGuard ga{ma}, gb{mb}, gq{mq};
        SessionGuard sa{create_session(ma, 1, 32)}, sb{create_session(mb, 1, 32)}, sq{create_session(mq, 1, 32)};
        const int32_t ids[] = {3, 4, 5};
        REQUIRE(reset_prefill(sa.session, ids, 3) == RESET_OK);
        const std::string from_a = dir + "/tiny-a.safetensors";
        REQUIRE(reset_save_sequence(sa.session, 0, from_a.c_str()) == RESET_OK);
        CHECK(reset_load_sequence(sb.session, 0, from_a.c_str()) == RESET_ERR_SHAPE);
        CHECK(last_error().find("fingerprint") != std::string::npos);
        CHECK(reset_load_sequence(sq.session, 0, from_a.c_str()) == RESET_ERR_SHAPE);
        CHECK(last_error().find("weights bf16; this session has nvfp4-w4a16") != std::string::npos);
        refused(from_a, RESET_ERR_SHAPE, "a model of qwen3, 2 layers, hidden 32");
        reset_session_options so;
        reset_session_options_init(&so);
        so.kv_cache = RESET_KV_CACHE_FP32;
        reset_session *fp32 = nullptr;
        REQUIRE(reset_session_create(ma, &so, &fp32) == RESET_OK);
        SessionGuard gf{fp32};
        CHECK(reset_load_sequence(fp32, 0, from_a.c_str()) == RESET_ERR_SHAPE);
        CHECK(last_error().find("KV cache of bf16; this session has fp32") != std::string::npos);
        // The same model and cache type load.
        SessionGuard again{create_session(ma, 1, 32)};
        CHECK(reset_load_sequence(again.session, 0, from_a.c_str()) == RESET_OK);
    }
    SUBCASE("longer than max_context") {
        SessionGuard shorter{create_session(m.model, 1, kPromptLength + 5)};
        CHECK(reset_load_sequence(shorter.session, 0, good.c_str()) == RESET_ERR_CONTEXT_OVERFLOW);
        CHECK(last_error().find("max_context 11") != std::string::npos);
    }
    SUBCASE("inconsistent contents") {
        refused(broken([](Parsed &p) { p.data("tokens")[4 * 2 + 1] = 0x7f; }), RESET_ERR_FORMAT,
                "outside the vocabulary");
        refused(broken([](Parsed &p) { p.set_meta("length", "5"); }), RESET_ERR_FORMAT, "tensor 'tokens' is I32 [12]");
        refused(broken([](Parsed &p) { p.set_meta("length", "-1"); }), RESET_ERR_FORMAT, "\"length\" is \"-1\"");
        refused(broken([](Parsed &p) { p.set_meta("has_logits", "yes"); }), RESET_ERR_FORMAT, "\"has_logits\"");
        refused(broken([](Parsed &p) { p.set_meta("has_logits", "0"); }), RESET_ERR_FORMAT, "tensor 'logits'");
        refused(broken([](Parsed &p) {
                    const float nan = NAN;
                    std::memcpy(p.data("logits") + 4 * 7, &nan, 4);
                }),
                RESET_ERR_FORMAT, "logit 7");
        refused(broken([](Parsed &p) {
                    const float negative = -1.0f;
                    std::memcpy(p.data("sampler.ring") + 4, &negative, 4);
                }),
                RESET_ERR_FORMAT, "window's slot 1");
        refused(broken([](Parsed &p) { p.set_meta("sampler.window_next", "4"); }), RESET_ERR_FORMAT,
                "\"sampler.window_next\"");
        refused(broken([](Parsed &p) { p.set_meta("sampler.step_count", "99"); }), RESET_ERR_FORMAT,
                "\"sampler.step_count\"");
        refused(broken([](Parsed &p) { p.set_meta("sampler.total_sum", "nan"); }), RESET_ERR_FORMAT,
                "\"sampler.total_sum\"");
        refused(broken([](Parsed &p) { p.set_meta("sampler.total_sum", " 1"); }), RESET_ERR_FORMAT,
                "\"sampler.total_sum\"");
        refused(broken([](Parsed &p) {
                    p.set_meta("sampler.step_count", "0");
                    p.set_meta("sampler.step_sum", "1.5");
                }),
                RESET_ERR_FORMAT, "over no tokens");
        refused(broken([](Parsed &p) { p.set_meta("sampler.last_token", "512"); }), RESET_ERR_FORMAT,
                "\"sampler.last_token\"");
        refused(broken([](Parsed &p) { p.set_meta("layers", "x"); }), RESET_ERR_FORMAT, "\"layers\" is \"x\"");
        refused(broken([](Parsed &p) { p.header["layers.0.keys"]["dtype"] = "F16"; }), RESET_ERR_FORMAT,
                "tensor 'layers.0.keys' is F16");
        refused(broken([](Parsed &p) { p.header.erase("layers.1.values"); }), RESET_ERR_FORMAT,
                "no tensor 'layers.1.values'");
        refused(broken([](Parsed &p) {
                    p.header["extra"] = {{"dtype", "U8"}, {"shape", {0}}, {"data_offsets", {0, 0}}};
                }),
                RESET_ERR_FORMAT, "holds 12 tensors, not the 11");
    }
    SUBCASE("text that cannot be") {
        // 'held' and 'stream.pending' are the last tensors: grow the payload and point them at new bytes.
        auto with_bytes = [&](const std::string &name, const std::string &bytes) {
            return broken([&](Parsed &p) {
                const size_t at = p.payload.size();
                p.payload += bytes;
                p.header[name]["shape"] = {bytes.size()};
                p.header[name]["data_offsets"] = {at, at + bytes.size()};
            });
        };
        refused(with_bytes("held", "ok\xff"), RESET_ERR_FORMAT, "'held' is not valid UTF-8");
        refused(with_bytes("stream.pending", "\x80"), RESET_ERR_FORMAT, "'stream.pending'");
        refused(with_bytes("stream.pending", "\xe4\xb8\xad"), RESET_ERR_FORMAT, "'stream.pending'");
        // The start of a character is what a stream may hold: that file loads.
        CHECK(reset_load_sequence(b.session, 1, with_bytes("stream.pending", "\xe4\xb8").c_str()) == RESET_OK);
    }
}

TEST_CASE("a sequence saved to memory is its file's bytes, and loads from memory as from the file") {
    ModelGuard m{load_chat_model()};
    const std::string dir = temp_directory("sequence-memory");
    SessionGuard a{session_with_history(m.model, 2)};
    const std::string path = dir + "/s.safetensors";
    REQUIRE(reset_save_sequence(a.session, 0, path.c_str()) == RESET_OK);
    const std::string file_bytes = read_file(path);

    // The size first, as for every buffer the library fills.
    size_t size = 1;
    CHECK(reset_save_sequence_to_memory(a.session, 0, nullptr, 0, &size) == RESET_ERR_BUFFER_TOO_SMALL);
    CHECK(size == file_bytes.size());
    // One byte short: nothing written (the poison stays), the size reported again.
    std::vector<uint8_t> buffer(file_bytes.size() + 9, 0xa5);
    size = 0;
    CHECK(reset_save_sequence_to_memory(a.session, 0, buffer.data(), file_bytes.size() - 1, &size) ==
          RESET_ERR_BUFFER_TOO_SMALL);
    CHECK(size == file_bytes.size());
    CHECK(std::count(buffer.begin(), buffer.end(), uint8_t(0xa5)) == std::ptrdiff_t(buffer.size()));
    // At an odd address (no alignment is asked for), with room to spare: the file's bytes and nothing past them.
    uint8_t *odd = buffer.data() + 1;
    size = 0;
    REQUIRE(reset_save_sequence_to_memory(a.session, 0, odd, buffer.size() - 1, &size) == RESET_OK);
    REQUIRE(size == file_bytes.size());
    CHECK(std::string(reinterpret_cast<const char *>(odd), size) == file_bytes);
    CHECK(buffer[0] == 0xa5);
    CHECK(std::count(odd + size, buffer.data() + buffer.size(), uint8_t(0xa5)) == 8);

    // Loaded from the odd address into a new session, it continues as the same bytes loaded from the file do.
    SessionGuard from_file{reset_session_for(m.model, 2, kSeed)}, from_memory{reset_session_for(m.model, 2, kSeed)};
    for (int32_t s = 0; s < 2; ++s) {
        REQUIRE(reset_load_sequence(from_file.session, s, path.c_str()) == RESET_OK);
        REQUIRE(reset_load_sequence_from_memory(from_memory.session, s, odd, size) == RESET_OK);
    }
    CHECK(tokens_of(from_memory.session, 1) == tokens_of(a.session, 0));
    CHECK(logits_of(from_memory.session, 1) == logits_of(a.session, 0));
    check_same_steps(decode(from_memory.session, 2, 12), decode(from_file.session, 2, 12));

    SUBCASE("bad arguments") {
        CHECK(reset_save_sequence_to_memory(a.session, 0, buffer.data(), buffer.size(), nullptr) ==
              RESET_ERR_INVALID_ARGUMENT);
        CHECK(reset_save_sequence_to_memory(a.session, 0, nullptr, 16, &size) == RESET_ERR_INVALID_ARGUMENT);
        CHECK(last_error().find("buffer is NULL with capacity 16") != std::string::npos);
        CHECK(reset_save_sequence_to_memory(a.session, 2, buffer.data(), buffer.size(), &size) ==
              RESET_ERR_OUT_OF_RANGE);
        CHECK(size == 0);
        CHECK(reset_save_sequence_to_memory(nullptr, 0, buffer.data(), buffer.size(), &size) ==
              RESET_ERR_INVALID_ARGUMENT);
        CHECK(reset_load_sequence_from_memory(a.session, 0, nullptr, 16) == RESET_ERR_INVALID_ARGUMENT);
        CHECK(reset_load_sequence_from_memory(a.session, -1, odd, size) == RESET_ERR_OUT_OF_RANGE);
        reset_session *freed = create_session(m.model, 1, 16);
        reset_session_free(freed);
        CHECK(reset_save_sequence_to_memory(freed, 0, nullptr, 0, &size) == RESET_ERR_INVALID_HANDLE);
        CHECK(reset_load_sequence_from_memory(freed, 0, file_bytes.data(), file_bytes.size()) ==
              RESET_ERR_INVALID_HANDLE);
    }
    SUBCASE("broken bytes are refused, naming the memory, and change nothing") {
        const std::vector<int32_t> before = tokens_of(a.session, 1);
        const std::vector<float> before_logits = logits_of(a.session, 1);
        auto refused = [&](const std::string &bytes, reset_status want, const std::string &message) {
            CHECK(reset_load_sequence_from_memory(a.session, 1, bytes.data(), bytes.size()) == want);
            const std::string error = last_error();
            CAPTURE(error);
            CHECK(error.find(message) != std::string::npos);
            CHECK(error.find("'<memory>'") != std::string::npos);
            CHECK(tokens_of(a.session, 1) == before);
            CHECK(logits_of(a.session, 1) == before_logits);
        };
        refused("", RESET_ERR_FORMAT, "truncated");
        refused(file_bytes.substr(0, file_bytes.size() - 1), RESET_ERR_FORMAT, "truncated");
        Parsed newer(file_bytes);
        newer.set_meta("format_version", "2");
        refused(newer.bytes(), RESET_ERR_UNSUPPORTED, "format version 2");
        Parsed foreign(file_bytes);
        foreign.set_meta("kv_cache", "fp8");
        refused(foreign.bytes(), RESET_ERR_SHAPE, "KV cache of fp8; this session has bf16");
        SessionGuard shorter{create_session(m.model, 1, kPromptLength + 5)};
        CHECK(reset_load_sequence_from_memory(shorter.session, 0, file_bytes.data(), file_bytes.size()) ==
              RESET_ERR_CONTEXT_OVERFLOW);
    }
}

// A file an older library wrote must keep loading: the format and the model fingerprint are a promise
// to every saved conversation (`reset chat --session`, `--prompt-cache`).  The fixture was saved by
// libreset 0.11.0 (tests/fixtures/make_sequence_fixture.sh: 30 raw prompt tokens of the chat fixture,
// CPU, BF16 cache).  Session 43 moved the fingerprint's embedding rows to the load (the CUDA backend
// lets go of the mapping they were read from); the same bytes must still hash the same.
TEST_CASE("a sequence file saved by libreset 0.11 loads and continues as a fresh prefill of its tokens") {
    const std::string path = std::string(RESET_SOURCE_DIR) + "/tests/fixtures/sequence-0.11/chat-model.safetensors";
    ModelGuard m{load_chat_model()};
    SessionGuard loaded{create_session(m.model, 1, 64)};
    const reset_status status = reset_load_sequence(loaded.session, 0, path.c_str());
    INFO(reset_last_error());
    REQUIRE(status == RESET_OK);
    REQUIRE(reset_session_length(loaded.session, 0) == 30);
    std::vector<int32_t> tokens(30);
    size_t n = 0;
    REQUIRE(reset_session_tokens(loaded.session, 0, tokens.data(), tokens.size(), &n) == RESET_OK);
    // The file's record of its tokens: the prompt as `reset generate --raw` tokenizes it (BOS first).
    std::vector<int32_t> encoded(64);
    size_t n_encoded = 0;
    const char prompt[] = "The quick brown fox jumps over the lazy dog.";
    REQUIRE(reset_tokenize(reset_model_tokenizer(m.model), prompt, sizeof prompt - 1, RESET_TOKENIZE_ADD_BOS,
                           encoded.data(), encoded.size(), &n_encoded) == RESET_OK);
    encoded.resize(n_encoded);
    CHECK(tokens == encoded);

    SessionGuard fresh{create_session(m.model, 1, 64)};
    REQUIRE(reset_prefill(fresh.session, tokens.data(), tokens.size()) == RESET_OK);
    // The file's logits were computed by 0.11's CPU engine, on however many threads that machine had:
    // the same products, summed in FP32 in a thread-dependent order (2^-24 relative per addition).
    const std::vector<float> a = logits_of(loaded.session, 0), b = logits_of(fresh.session, 0);
    double num = 0, den = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        num += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
        den += double(b[i]) * b[i];
    }
    CHECK(std::sqrt(num / den) < 1e-5);
    // Greedy from either state: the same 8 tokens (the loaded KV cache carries the continuation).
    for (reset_session *s : {loaded.session, fresh.session}) {
        reset_policy_params greedy;
        reset_policy_params_init(&greedy);
        greedy.kind = RESET_POLICY_GREEDY;
        REQUIRE(reset_set_policy(s, &greedy) == RESET_OK);
        for (int step = 0; step < 8; ++step) {
            reset_step out;
            reset_step_init(&out, 1);
            REQUIRE(reset_decode_step(s, &out, 1, nullptr) == RESET_OK);
        }
    }
    std::vector<int32_t> after_loaded(38), after_fresh(38);
    size_t n1 = 0, n2 = 0;
    REQUIRE(reset_session_tokens(loaded.session, 0, after_loaded.data(), after_loaded.size(), &n1) == RESET_OK);
    REQUIRE(reset_session_tokens(fresh.session, 0, after_fresh.data(), after_fresh.size(), &n2) == RESET_OK);
    CHECK(n1 == n2);
    CHECK(after_loaded == after_fresh);
}
