// fuzz_session.cpp — one session driven by a fuzzed sequence of API calls on
// the chat fixture (tests/fixtures/chat-model: Qwen3, 512 ids, end-of-
// generation ids 3 and 1, a sentencepiece tokenizer with byte fallback):
// prefill, reset_prefill_sequence, decode steps, policies, logits, reset and
// cancel, in any order and with any arguments.
//
// Input: a byte stream (Bytes, fuzz_support.h): the weight format and the
// session's options (sequences 0..9, max_context, KV cache), then one
// operation after another until the input runs out (at most kMaxOperations
// and kMaxDecodeSteps; one operation runs up to 64 decode steps, until a
// sequence ends).
//
// Checked, as reset.h promises:
//   - each call fails only with the statuses its comment lists, never
//     RESET_ERR_INTERNAL, and always with a message;
//   - a failed call leaves the session as it was: a twin session that is
//     given only the calls that succeeded (and no cancel) holds the same
//     lengths and the same logits bit for bit, reads back the same policy,
//     and draws the same tokens with the same signals and text;
//   - lengths follow the calls: a prefill adds its ids to every sequence,
//     reset_prefill_sequence to its one, a decode step one to each sequence
//     that drew a token other than an end-of-generation id;
//   - nothing decodes before a prefill, after every sequence has ended, or
//     past max_context, and nothing prefills past it;
//   - a step reports each sequence once and in order: a token inside the
//     vocabulary, or -1 with RESET_END_FINISHED and no text for a sequence
//     that had ended; n_active counts the others; the text is valid UTF-8; a
//     caller's older reset_step (a smaller struct_size, which is also the
//     stride) gets nothing written past `sequences` entries of its size;
//   - top_logprobs (the option from the KV cache byte's high bits): the
//     session's count per drawn token, sorted, the drawn token's entry its
//     logprob bit for bit, the twin's exactly;
//   - stop conditions (0.5, reset_set_stop from the get-policy operation's
//     byte): refused exactly when a string is empty, too long or not UTF-8,
//     an id is outside the vocabulary, a count or max_tokens out of range,
//     and then nothing changes (the twin never sees the call); a step ends a
//     sequence with "stop" only on a listed id or string (stop_index), with
//     "length" only at max_tokens tokens since its last prefill (kept in the
//     context), and text reported since the conditions were set never holds a
//     stop string (with include_stop_string, only at the very end); the text
//     held back is the twin's, valid UTF-8, and none once a sequence ended;
//   - cutting back (0.6, reset_truncate and reset_truncate_sequence from the
//     logits operation's shape byte): refused exactly when the sequence or
//     the length is out of range, and then nothing changes; a sequence cut
//     holds `length` tokens (reset_session_tokens: the twin's), no longer
//     counts as ended, and has no logits and decodes nothing until a prefill
//     gives it some; one holding exactly `length` is left as it was; a cut
//     never consumes a cancel request;
//   - copies (0.7, reset_copy_sequence from the logits operation's shape
//     byte, 64..127): refused exactly when either sequence is out of range,
//     and then nothing changes; a copy holds its source's tokens and length,
//     ends and lacks logits with it, and counts its generated tokens toward
//     max_tokens from its source's count;
//   - sequence files (0.8, reset_save_sequence then reset_load_sequence from
//     the logits operation's shape byte, 48..55; 0.9, the same through
//     memory, reset_save_sequence_to_memory and _from_memory, 56..63):
//     refused exactly when a sequence is out of range; a sequence loaded
//     from another's saved state is the twin's copy of it
//     (reset_copy_sequence) bit for bit from then on;
//   - the logit bias (0.6, reset_set_logit_bias from the get-policy
//     operation's byte, 64..127): refused exactly when a token is outside
//     the vocabulary or listed twice, a bias is NaN, +inf or outside
//     [-100, 100] and not -inf, or there are too many, and then nothing
//     changes; a step never draws a banned token;
//   - cancel: while a request is pending no prefill or decode call succeeds,
//     the first that gets past its argument checks answers
//     RESET_ERR_CANCELLED and consumes it, reset_session_reset drops it, and
//     without one nothing answers RESET_ERR_CANCELLED.
//
// RESET_FUZZ_BACKEND=cuda runs the sessions on the CUDA backend (a replay on
// the GPU machine), where the twin comparison holds as well: the two sessions
// run the same kernels on the same data.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <memory>

#include "fuzz_support.h"

using reset_fuzz::Bytes;
using reset_fuzz::expect;
using reset_fuzz::finding;
using reset_fuzz::ok_or_listed_error;

namespace {

constexpr int kMaxOperations = 200;
// Decode steps per input: a few hundred reach sequences that end; thousands
// at a 4096-token context (attention over every earlier position) only make
// an input slow enough to time out.
constexpr int kMaxDecodeSteps = 512;
constexpr int32_t kVocab = 512;  // the chat fixture's

// The chat fixture loaded once per weight format.
reset_model *fixture_model(int format) {
    static std::array<reset_model *, 3> models{};
    if (!models[size_t(format)]) {
        reset_model_options options;
        reset_model_options_init(&options);
        const reset_weights weights[] = {RESET_WEIGHTS_BF16, RESET_WEIGHTS_NVFP4_W4A16, RESET_WEIGHTS_NVFP4_W4A4};
        options.weights = weights[format];
        options.backend = reset_fuzz::cuda_backend() ? RESET_BACKEND_CUDA : RESET_BACKEND_CPU;
        options.threads = 1;  // as fuzz_model_load: a 64-wide model gains nothing from an OpenMP team
        const std::string dir = std::string(RESET_SOURCE_DIR) + "/tests/fixtures/chat-model";
        if (reset_model_load(dir.c_str(), &options, &models[size_t(format)]) != RESET_OK)
            finding("cannot load " + dir + ": " + reset_last_error());
    }
    return models[size_t(format)];
}

struct SessionFree {
    void operator()(reset_session *s) const { reset_session_free(s); }
};
using SessionPtr = std::unique_ptr<reset_session, SessionFree>;

// Prompt ids: 0..249 (the end-of-generation ids among them), sometimes -1,
// the vocabulary size or raw bits (ids the model draws cover the rest).
std::vector<int32_t> read_ids(Bytes &in) {
    std::vector<int32_t> ids(in.u8() % 16);
    for (int32_t &id : ids) {
        const uint8_t b = in.u8();
        id = b < 250 ? int32_t(b) : b == 250 ? -1 : b == 251 ? kVocab : in.raw<int32_t>();
    }
    return ids;
}

// A sequence index: -1..9 (the session has 1..8), or raw bits.
int32_t read_sequence(Bytes &in) {
    const uint8_t b = in.u8();
    return b < 240 ? int32_t(b % 11) - 1 : in.raw<int32_t>();
}

// Policy parameters: any kind (4: none), temperatures up to 16 (hot enough
// to end sequences at random), the rest as fuzz_policy reads them.
reset_policy_params read_policy(Bytes &in) {
    reset_policy_params p;
    reset_policy_params_init(&p);
    const int32_t kind = in.u8() % 5;
    std::memcpy(&p.kind, &kind, sizeof kind);
    const uint8_t t = in.u8();
    p.temperature = t < 128 ? float(t) / 8.0f : in.number();
    p.top_k = in.integer();
    p.top_p = in.number();
    p.min_p = in.number() / 4.0f;
    p.seed = in.raw<uint64_t>();
    p.t_high = in.number() * 8.0f;
    p.t_low = in.number();
    p.tau0 = in.number() * 4.0f;
    p.window = in.integer();
    const uint8_t preset = in.u8() % 4;
    p.preset = preset == 1 ? "Qwen3-8B" : preset == 2 ? "nope" : nullptr;
    const uint8_t flags = in.u8();
    p.reset_state = flags % 2;
    // The penalties (0.2) only where bit 1 asks for them, so an input of the
    // corpus grown before them reads its other bytes as it did, mostly.
    if (flags & 2) {
        p.presence_penalty = in.number() * 1.5f;
        p.frequency_penalty = in.number() * 1.5f;
    }
    if (flags & 4) p.repetition_penalty = 0.5f + in.number();  // (0.3) mostly 0.25..2.2; raw bits out of range
    return p;
}

// What the harness knows of the session from the calls that succeeded.
struct Shadow {
    std::vector<int32_t> lengths;
    std::vector<bool> ended;
    bool prefilled = false;
    bool cancel_pending = false;
    int32_t max_context = 0;
    int32_t top_logprobs = 0;  // the session's option (0.4)
    // Stop conditions (0.5) in force, and per sequence: tokens generated since its last prefill,
    // and the text reported since then or since the conditions were set (if every step's was seen).
    std::vector<std::string> stop_strings;
    std::vector<int32_t> stop_ids;
    int32_t max_tokens = 0;
    bool include_stop_string = false;
    std::vector<int32_t> generated;
    std::vector<std::string> window;
    std::vector<bool> window_known;
    std::vector<bool> no_logits;  // cut back (0.6) and not prefilled since
    std::vector<int32_t> banned;  // the logit bias's -inf tokens (0.6)
    void new_window(size_t s) {
        window[s].clear();
        window_known[s] = true;
    }
    // Sequence `to` became what `from` is (reset_copy_sequence, or a load of its file).
    void copy(int32_t from, int32_t to) {
        const size_t f = size_t(from), t = size_t(to);
        lengths[t] = lengths[f];
        ended[t] = ended[f];
        no_logits[t] = no_logits[f];
        generated[t] = generated[f];
        window[t] = window[f];
        window_known[t] = window_known[f];
        prefilled = std::any_of(lengths.begin(), lengths.end(), [](int32_t length) { return length > 0; });
    }
    int active() const {
        int n = 0;
        for (bool e : ended) n += e ? 0 : 1;
        return n;
    }
};

// Whether `text` contains one of the stop strings.
bool holds_stop(const Shadow &shadow, std::string_view text) {
    for (const std::string &stop : shadow.stop_strings)
        if (text.find(stop) != std::string_view::npos) return true;
    return false;
}

// reset_set_stop with options from the input: 0..3 strings of 0..7 raw bytes (empty, NUL-cut
// or not UTF-8 at times; single characters of the fixture's text often), sometimes 17; 0..3
// ids (the end-of-generation ids, -1 and 512 among them), max_tokens 0..15 or raw bits,
// include_stop_string 0..2; or NULL options.
void set_stop(Bytes &in, reset_session *main, reset_session *twin, Shadow &shadow) {
    const uint8_t shape = in.u8();
    std::vector<std::string> strings(shape % 4 == 3 && shape & 4 ? RESET_MAX_STOP_STRINGS + 1 : shape % 4);
    for (std::string &text : strings) {
        text.resize(in.u8() % 8);
        for (char &c : text) c = char(in.u8());
    }
    std::vector<int32_t> ids(in.u8() % 4);
    for (int32_t &id : ids) {
        const uint8_t b = in.u8();
        id = b < 250 ? int32_t(b) : b == 250 ? -1 : kVocab;
    }
    reset_stop_options o;
    reset_stop_options_init(&o);
    std::vector<const char *> pointers;
    for (const std::string &text : strings) pointers.push_back(text.c_str());
    o.strings = pointers.data();
    o.string_count = pointers.size();
    o.ids = ids.data();
    o.id_count = ids.size();
    const uint8_t limit = in.u8();
    o.max_tokens = limit < 250 ? limit % 16 : in.raw<int32_t>();
    o.include_stop_string = in.u8() % 3;
    const bool clear = shape >= 240;
    const reset_status status = reset_set_stop(main, clear ? nullptr : &o);
    const bool ok = ok_or_listed_error(status, "reset_set_stop",
                                       {RESET_ERR_INVALID_ARGUMENT, RESET_ERR_BAD_UTF8, RESET_ERR_OUT_OF_RANGE});
    // What reset.h refuses, from the harness's own reading (a string ends at its first NUL).
    bool bad = strings.size() > RESET_MAX_STOP_STRINGS || o.max_tokens < 0 || o.include_stop_string > 1;
    std::vector<std::string> cut;
    for (const std::string &text : strings) {
        cut.emplace_back(text.c_str());
        bad = bad || cut.back().empty() || !reset_fuzz::valid_utf8(cut.back());
    }
    for (int32_t id : ids) bad = bad || id < 0 || id >= kVocab;
    expect(ok == (clear || !bad), std::string("reset_set_stop: ") + reset_status_name(status) +
                                      (bad ? " for bad options" : " for good options"));
    if (!ok) return;
    ok_or_listed_error(reset_set_stop(twin, clear ? nullptr : &o), "reset_set_stop (twin)", {});
    shadow.stop_strings = clear ? std::vector<std::string>() : cut;
    shadow.stop_ids = clear ? std::vector<int32_t>() : ids;
    shadow.max_tokens = clear ? 0 : o.max_tokens;
    shadow.include_stop_string = !clear && o.include_stop_string == 1;
    for (size_t s = 0; s < shadow.window.size(); ++s) shadow.new_window(s);
}

// The twin holds what the main session holds: lengths, logits (status and
// bits) and policy.
void compare_with_twin(reset_session *main, reset_session *twin, const Shadow &shadow, const char *after) {
    const std::string where = std::string(" (after ") + after + ")";
    const int32_t n = int32_t(shadow.lengths.size());
    std::vector<float> a(kVocab), b(kVocab);
    for (int32_t s = 0; s < n; ++s) {
        expect(reset_session_length(main, s) == shadow.lengths[size_t(s)],
               "sequence " + std::to_string(s) + " holds " + std::to_string(reset_session_length(main, s)) +
                   " tokens, not the " + std::to_string(shadow.lengths[size_t(s)]) + " its calls add up to" + where);
        expect(reset_session_length(twin, s) == shadow.lengths[size_t(s)], "the twin's length differs" + where);
        const reset_status sa = reset_session_logits(main, s, a.data(), a.size());
        const reset_status sb = reset_session_logits(twin, s, b.data(), b.size());
        ok_or_listed_error(sa, "reset_session_logits", {RESET_ERR_STATE});
        expect(sa == sb, "logits of sequence " + std::to_string(s) + ": " + reset_status_name(sa) + ", the twin's " +
                             reset_status_name(sb) + where);
        expect(sa != RESET_OK || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0,
               "logits of sequence " + std::to_string(s) + " differ from the twin's" + where);
        // (0.5) Text held back for a stop string: the twin's, valid UTF-8, none for an ended sequence.
        const char *held = nullptr, *twin_held = nullptr;
        size_t held_len = 0, twin_held_len = 0;
        ok_or_listed_error(reset_session_held_text(main, s, &held, &held_len), "reset_session_held_text", {});
        ok_or_listed_error(reset_session_held_text(twin, s, &twin_held, &twin_held_len), "reset_session_held_text", {});
        const std::string_view held_text(held, held_len);
        expect(held_text == std::string_view(twin_held, twin_held_len), "held text differs from the twin's" + where);
        expect(reset_fuzz::valid_utf8(held_text), "held text is not valid UTF-8" + where);
        expect(held_text.empty() || !shadow.ended[size_t(s)], "an ended sequence holds text" + where);
        // Every sequence has logits once prefilled, but for one that ended on the CUDA backend and
        // one cut back (0.6) and not prefilled since, which has none.
        expect(!shadow.prefilled || sa == RESET_OK || shadow.ended[size_t(s)] || shadow.no_logits[size_t(s)],
               "no logits for a live sequence" + where);
        expect(!shadow.no_logits[size_t(s)] || sa == RESET_ERR_STATE, "logits for a sequence just cut back" + where);
        // (0.6) The tokens it holds: as many as its length, the twin's.
        size_t count = 0, twin_count = 0;
        std::vector<int32_t> held_ids(size_t(shadow.lengths[size_t(s)]) + 1, -9), twin_ids(held_ids.size(), -9);
        ok_or_listed_error(reset_session_tokens(main, s, held_ids.data(), held_ids.size(), &count),
                           "reset_session_tokens", {});
        ok_or_listed_error(reset_session_tokens(twin, s, twin_ids.data(), twin_ids.size(), &twin_count),
                           "reset_session_tokens (twin)", {});
        expect(count == size_t(shadow.lengths[size_t(s)]) && held_ids == twin_ids && held_ids.back() == -9,
               "reset_session_tokens: " + std::to_string(count) + " tokens, or not the twin's" + where);
    }
    expect(reset_session_length(main, n) == -1 && reset_session_length(main, -1) == -1,
           "reset_session_length of a sequence outside the session is not -1");
    expect(reset_session_max_context(main) == shadow.max_context, "reset_session_max_context changed" + where);
    reset_policy_params pa, pb;
    reset_policy_params_init(&pa);
    reset_policy_params_init(&pb);
    ok_or_listed_error(reset_session_get_policy(main, &pa), "reset_session_get_policy", {});
    ok_or_listed_error(reset_session_get_policy(twin, &pb), "reset_session_get_policy", {});
    expect(std::memcmp(&pa, &pb, sizeof pa) == 0, "the policy read back differs from the twin's" + where);
}

// reset_set_logit_bias (0.6) with 0..4 entries from the input: ids (-1 and 512 among them), biases
// in [-100, 100] or -inf, NaN, +inf, 150; or RESET_MAX_LOGIT_BIAS + 1 entries.
void set_logit_bias(Bytes &in, reset_session *main, reset_session *twin, Shadow &shadow) {
    const uint8_t shape = in.u8();
    std::vector<reset_logit_bias> entries(shape % 6 == 5 ? RESET_MAX_LOGIT_BIAS + 1 : shape % 6 == 4 ? 0 : shape % 6);
    if (entries.size() > 4) {
        for (size_t i = 0; i < entries.size(); ++i) entries[i] = {int32_t(i % kVocab), 1.0f};
    } else {
        for (reset_logit_bias &e : entries) {
            const uint8_t t = in.u8(), b = in.u8();
            e.token = t < 250 ? int32_t(t) : t == 250 ? -1 : kVocab;
            e.bias = b == 0 ? -INFINITY : b == 1 ? NAN : b == 2 ? INFINITY : b == 3 ? 150.0f : float(b - 130) / 1.25f;
        }
    }
    const reset_status status = reset_set_logit_bias(main, entries.data(), entries.size());
    const bool ok = ok_or_listed_error(status, "reset_set_logit_bias", {RESET_ERR_INVALID_ARGUMENT, RESET_ERR_OUT_OF_RANGE});
    bool bad = entries.size() > RESET_MAX_LOGIT_BIAS;
    std::vector<int32_t> banned, tokens;
    for (const reset_logit_bias &e : entries) {
        bad = bad || e.token < 0 || e.token >= kVocab || std::isnan(e.bias) || e.bias == INFINITY ||
              (e.bias != -INFINITY && std::fabs(e.bias) > 100.0f) ||
              std::find(tokens.begin(), tokens.end(), e.token) != tokens.end();
        tokens.push_back(e.token);
        if (e.bias == -INFINITY) banned.push_back(e.token);
    }
    expect(ok == !bad, std::string("reset_set_logit_bias: ") + reset_status_name(status) +
                           (bad ? " for bad entries" : " for good entries"));
    if (!ok) return;
    ok_or_listed_error(reset_set_logit_bias(twin, entries.data(), entries.size()), "reset_set_logit_bias (twin)", {});
    shadow.banned = banned;
}

// reset_truncate (every sequence) or reset_truncate_sequence (`sequence`, as read) to a length
// near what the sequences hold: a few tokens less, sometimes more (refused) or negative.
void cut(Bytes &in, bool one, int32_t sequence, reset_session *main, reset_session *twin, Shadow &shadow) {
    const int32_t n = int32_t(shadow.lengths.size());
    const bool valid_sequence = !one || (sequence >= 0 && sequence < n);
    int32_t shortest = shadow.max_context;
    for (int32_t s = 0; s < n; ++s)
        if (!one || s == sequence) shortest = std::min(shortest, shadow.lengths[size_t(s)]);
    const uint8_t b = in.u8();
    const int32_t length = b >= 250 ? int32_t(b) - 252 + (valid_sequence ? shortest : 0) : shortest - int32_t(b % 25);
    const reset_status status =
        one ? reset_truncate_sequence(main, sequence, length) : reset_truncate(main, length);
    const char *name = one ? "reset_truncate_sequence" : "reset_truncate";
    const bool ok = ok_or_listed_error(status, name, {RESET_ERR_OUT_OF_RANGE});
    const bool fits = valid_sequence && length >= 0 && length <= shortest;
    expect(ok == fits, std::string(name) + " to " + std::to_string(length) + " tokens: " + reset_status_name(status) +
                           (fits ? ", though every sequence holds that many" : ", though out of range"));
    if (!ok) return;
    ok_or_listed_error(one ? reset_truncate_sequence(twin, sequence, length) : reset_truncate(twin, length),
                       "reset_truncate (twin)", {});
    bool any = false;
    for (int32_t s = 0; s < n; ++s) {
        if ((one && s != sequence) || shadow.lengths[size_t(s)] == length) {
            any = any || shadow.lengths[size_t(s)] > 0;
            continue;
        }
        shadow.lengths[size_t(s)] = length;
        shadow.ended[size_t(s)] = false;
        shadow.no_logits[size_t(s)] = true;
        shadow.generated[size_t(s)] = 0;
        shadow.new_window(size_t(s));
        any = any || length > 0;
    }
    shadow.prefilled = any;  // no sequence holds a token: as after reset_session_reset
}

// reset_copy_sequence (0.7) from `from` to a sequence the input names: refused exactly when either
// is outside [0, sequences); then the copy holds what its source holds (the twin's tokens, lengths
// and logits, compared after every operation), ended or not, logits or not, with its generated
// count and text window, and later steps go on as the twin's.
void copy(Bytes &in, int32_t from, reset_session *main, reset_session *twin, Shadow &shadow) {
    const int32_t n = int32_t(shadow.lengths.size());
    const int32_t to = read_sequence(in);
    const reset_status status = reset_copy_sequence(main, from, to);
    const bool ok = ok_or_listed_error(status, "reset_copy_sequence", {RESET_ERR_OUT_OF_RANGE});
    const bool valid = from >= 0 && from < n && to >= 0 && to < n;
    expect(ok == valid, "reset_copy_sequence from " + std::to_string(from) + " to " + std::to_string(to) + ": " +
                            reset_status_name(status));
    if (!ok) return;
    ok_or_listed_error(reset_copy_sequence(twin, from, to), "reset_copy_sequence (twin)", {});
    auto tokens_of = [&](int32_t s) {
        std::vector<int32_t> ids(size_t(shadow.lengths[size_t(s)]));
        size_t count = 0;
        ok_or_listed_error(reset_session_tokens(main, s, ids.data(), ids.size(), &count), "reset_session_tokens", {});
        return ids;
    };
    shadow.copy(from, to);
    expect(tokens_of(to) == tokens_of(from), "a copy does not hold its source's tokens");
}

// (0.8) Sequence `from` of the main session saved to a file (0.9: or to memory) and loaded into `to`:
// the twin is given reset_copy_sequence(from, to), which reset.h makes the same state, so the twin
// comparison after every operation holds a loaded sequence to a copy bit for bit (logits, draws,
// text, lengths).
void save_and_load(Bytes &in, int32_t from, bool in_memory, reset_session *main, reset_session *twin,
                   Shadow &shadow) {
    const int32_t n = int32_t(shadow.lengths.size());
    const int32_t to = read_sequence(in);
    static const std::string path = reset_fuzz::write_directory({}) + "/sequence.safetensors";
    std::string image;
    reset_status saved;
    if (in_memory) {
        size_t size = 0;
        saved = reset_save_sequence_to_memory(main, from, nullptr, 0, &size);
        if (saved == RESET_ERR_BUFFER_TOO_SMALL) {
            image.assign(size, '\0');
            saved = reset_save_sequence_to_memory(main, from, image.data(), image.size(), &size);
            expect(size == image.size(), "reset_save_sequence_to_memory wrote another size than it asked for");
        }
    } else {
        saved = reset_save_sequence(main, from, path.c_str());
    }
    const char *save_name = in_memory ? "reset_save_sequence_to_memory" : "reset_save_sequence";
    const bool save_ok = ok_or_listed_error(saved, save_name, {RESET_ERR_OUT_OF_RANGE});
    expect(save_ok == (from >= 0 && from < n),
           std::string(save_name) + " of sequence " + std::to_string(from) + ": " + reset_status_name(saved));
    if (!save_ok) return;
    const reset_status loaded = in_memory ? reset_load_sequence_from_memory(main, to, image.data(), image.size())
                                          : reset_load_sequence(main, to, path.c_str());
    const bool load_ok = ok_or_listed_error(loaded, "reset_load_sequence", {RESET_ERR_OUT_OF_RANGE});
    expect(load_ok == (to >= 0 && to < n), "reset_load_sequence into sequence " + std::to_string(to) + ": " +
                                               reset_status_name(loaded));
    if (!load_ok) return;
    ok_or_listed_error(reset_copy_sequence(twin, from, to), "reset_copy_sequence (twin of a load)", {});
    shadow.copy(from, to);
}

// A decode step into a caller's array of `capacity` entries of `stride`
// bytes, guarded past its end; the twin steps with a plain array when the
// main call succeeded.
// Returns whether the step succeeded.
bool decode(size_t capacity, uint8_t layout, reset_session *main, reset_session *twin, Shadow &shadow) {
    const int32_t n = int32_t(shadow.lengths.size());
    const size_t stride = layout == 0   ? 4  // refused: no room past struct_size
                          : layout == 1 ? offsetof(reset_step, entropy)
                          : layout == 2 ? offsetof(reset_step, text)
                          : layout == 4 ? offsetof(reset_step, top_logprobs)  // 0.3's struct
                                        : sizeof(reset_step);
    constexpr uint8_t kGuard = 0xA5;
    std::vector<uint8_t> buffer(std::max<size_t>(capacity, 1) * stride + 64, kGuard);
    for (size_t i = 0; i < capacity; ++i) {
        uint32_t size = uint32_t(stride);
        std::memcpy(buffer.data() + i * stride, &size, sizeof size);
    }
    const std::vector<uint8_t> before = buffer;
    const bool pass_null = capacity == 0 && layout == 7;
    int32_t n_active = -5;
    const reset_status status = reset_decode_step(
        main, pass_null ? nullptr : reinterpret_cast<reset_step *>(buffer.data()), capacity, &n_active);
    const bool ok = ok_or_listed_error(status, "reset_decode_step",
                            {RESET_ERR_STATE, RESET_ERR_CONTEXT_OVERFLOW, RESET_ERR_CANCELLED,
                             RESET_ERR_BUFFER_TOO_SMALL, RESET_ERR_INVALID_ARGUMENT});
    expect(!(shadow.cancel_pending && ok), "a decode step succeeded with a cancel request pending");
    expect(shadow.cancel_pending || status != RESET_ERR_CANCELLED, "a decode step was cancelled with no request");
    if (status == RESET_ERR_CANCELLED) shadow.cancel_pending = false;
    if (!ok) return false;
    expect(shadow.prefilled, "a decode step succeeded before any prefill");
    expect(shadow.active() > 0, "a decode step succeeded after every sequence had ended");
    for (int32_t s = 0; s < n; ++s)
        expect(shadow.ended[size_t(s)] || !shadow.no_logits[size_t(s)],
               "a decode step succeeded with sequence " + std::to_string(s) + " cut back and not prefilled");
    for (int32_t s = 0; s < n; ++s)
        expect(shadow.ended[size_t(s)] || shadow.lengths[size_t(s)] < shadow.max_context,
               "a decode step succeeded with a sequence at max_context");
    for (size_t i = size_t(n) * stride; i < buffer.size(); ++i)
        expect(buffer[i] == before[i], "reset_decode_step wrote past the caller's " + std::to_string(n) +
                                           " entries of " + std::to_string(stride) + " bytes");

    std::vector<reset_step> expected(static_cast<size_t>(n));
    reset_step_init(expected.data(), expected.size());
    int32_t twin_active = -5;
    ok_or_listed_error(reset_decode_step(twin, expected.data(), expected.size(), &twin_active), "reset_decode_step (twin)", {});
    expect(n_active == twin_active, "n_active differs from the twin's");
    int32_t active = 0;
    for (int32_t s = 0; s < n; ++s) {
        reset_step r;
        reset_step_init(&r, 1);
        std::memcpy(&r, buffer.data() + size_t(s) * stride, stride);
        const reset_step &e = expected[size_t(s)];
        const std::string which = "step of sequence " + std::to_string(s) + ": ";
        expect(r.sequence == s, which + "reports sequence " + std::to_string(r.sequence));
        expect(r.token >= -1 && r.token < kVocab, which + "token " + std::to_string(r.token));
        expect(std::find(shadow.banned.begin(), shadow.banned.end(), r.token) == shadow.banned.end(),
               which + "drew token " + std::to_string(r.token) + ", which the logit bias bans");
        expect(r.token == e.token && r.end_of_generation == e.end_of_generation && r.end_reason == e.end_reason,
               which + "differs from the twin's");
        if (shadow.ended[size_t(s)]) {
            expect(r.token == -1 && r.end_reason == RESET_END_FINISHED && r.end_of_generation == 1,
                   which + "an ended sequence did not report FINISHED with token -1");
        } else {
            expect(r.token >= 0 && r.end_reason != RESET_END_FINISHED, which + "a live sequence drew no token");
            const bool eos = r.token == 3 || r.token == 1;
            const bool stop_id = std::count(shadow.stop_ids.begin(), shadow.stop_ids.end(), r.token) > 0;
            const bool at_limit = shadow.max_tokens > 0 && shadow.generated[size_t(s)] + 1 >= shadow.max_tokens;
            const bool has_index = stride == sizeof(reset_step);  // older layouts end before stop_index
            expect(r.end_of_generation == (r.end_reason != RESET_END_NONE), which + "end_of_generation disagrees "
                   "with the end reason");
            expect(!has_index || r.stop_index == -1 || r.end_reason == RESET_END_STOP,
                   which + "a stop_index without a stop");
            if (r.end_reason == RESET_END_EOS) {
                expect(eos, which + "a bad end-of-generation");
            } else if (r.end_reason == RESET_END_STOP) {
                // A string (stop_index >= 0) may end it on any token; an id only if listed.
                expect(!has_index || (r.stop_index >= -1 && r.stop_index < int32_t(shadow.stop_strings.size()) &&
                                      (r.stop_index >= 0 || stop_id)),
                       which + "a stop on no listed id or string (stop_index " + std::to_string(r.stop_index) + ")");
            } else if (r.end_reason == RESET_END_LENGTH) {
                expect(at_limit, which + "\"length\" after " + std::to_string(shadow.generated[size_t(s)] + 1) +
                                     " tokens, max_tokens " + std::to_string(shadow.max_tokens));
            } else {
                expect(r.end_reason == RESET_END_NONE, which + "a bad end reason");
                expect(!eos && !stop_id && !at_limit, which + "went on past an end-of-generation id, a stop id or "
                       "max_tokens");
            }
            // Only the max_tokens-th token of the stopping ones enters the context.
            if (r.end_reason == RESET_END_NONE || r.end_reason == RESET_END_LENGTH) shadow.lengths[size_t(s)] += 1;
            shadow.generated[size_t(s)] += 1;
            if (r.end_reason != RESET_END_NONE) {
                shadow.ended[size_t(s)] = true;
                static const bool verbose = std::getenv("RESET_FUZZ_VERBOSE") != nullptr;
                if (verbose) std::fprintf(stderr, "  sequence %d ended (%d)\n", s, int(r.end_reason));
            }
            if (!has_index) {
                shadow.window_known[size_t(s)] = false;  // this step's text is not visible
            } else if (shadow.window_known[size_t(s)]) {
                std::string &window = shadow.window[size_t(s)];
                window.append(r.text ? r.text : "", r.text_len);
                const bool included = shadow.include_stop_string && r.end_reason == RESET_END_STOP && r.stop_index >= 0;
                if (included) {
                    const std::string &stop = shadow.stop_strings[size_t(r.stop_index)];
                    expect(window.size() >= stop.size() &&
                               window.compare(window.size() - stop.size(), stop.size(), stop) == 0,
                           which + "the text does not end with the stop string it included");
                }
                // With it included, the string completes at the last byte and nothing before.
                expect(!holds_stop(shadow, std::string_view(window).substr(0, window.size() - (included ? 1 : 0))),
                       which + "the text reported holds a stop string");
            }
        }
        active += shadow.ended[size_t(s)] ? 0 : 1;
        // The signals, entropy through uncertain (not the padding before text).
        constexpr size_t kSignals = offsetof(reset_step, uncertain) + sizeof(int32_t) - offsetof(reset_step, entropy);
        if (stride > offsetof(reset_step, entropy))
            expect(std::memcmp(&r.entropy, &e.entropy, kSignals) == 0, which + "signals differ from the twin's");
        if (stride == sizeof(reset_step)) {
            const std::string_view text(r.text ? r.text : "", r.text_len), twin_text(e.text ? e.text : "", e.text_len);
            expect(text == twin_text, which + "text differs from the twin's");
            expect(reset_fuzz::valid_utf8(text), which + "text is not valid UTF-8");
            expect(r.token >= 0 || text.empty(), which + "an ended sequence reported text");
            // top_logprobs (0.4): the session's count for a drawn token, none for an ended sequence;
            // most likely first (ties in id order), inside the vocabulary, the drawn token's entry equal
            // to its logprob bit for bit, and the twin's exactly.
            const int32_t want = r.token >= 0 ? std::min(shadow.top_logprobs, kVocab) : 0;
            expect(r.top_logprob_count == want && e.top_logprob_count == want && (want == 0) == !r.top_logprobs,
                   which + std::to_string(r.top_logprob_count) + " top_logprobs, not " + std::to_string(want));
            if (r.top_logprob_count == want && e.top_logprob_count == want && want > 0 && r.top_logprobs &&
                e.top_logprobs) {
                expect(std::memcmp(r.top_logprobs, e.top_logprobs, size_t(want) * sizeof(reset_token_logprob)) == 0,
                       which + "top_logprobs differ from the twin's");
                for (int32_t i = 0; i < want; ++i) {
                    const reset_token_logprob &t = r.top_logprobs[i];
                    expect(t.token >= 0 && t.token < kVocab && !(t.logprob > 0.0f) && !std::isnan(t.logprob),
                           which + "top_logprobs entry " + std::to_string(i) + " out of range");
                    if (i > 0) {
                        const reset_token_logprob &u = r.top_logprobs[i - 1];
                        expect(u.logprob > t.logprob || (u.logprob == t.logprob && u.token < t.token),
                               which + "top_logprobs out of order at entry " + std::to_string(i));
                    }
                    if (t.token == r.token)
                        expect(std::memcmp(&t.logprob, &r.logprob, sizeof(float)) == 0,
                               which + "the drawn token's top_logprobs entry is not its logprob");
                }
            }
        }
    }
    expect(n_active == active, "n_active " + std::to_string(n_active) + ", but " + std::to_string(active) +
                                   " sequences are still generating");
    return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    Bytes in(data, size);
    reset_model *model = fixture_model(in.u8() % 3);
    reset_session_options options;
    reset_session_options_init(&options);
    options.sequences = in.u8() % 10;  // 0 and 9 are refused
    const uint8_t context = in.u8();
    options.max_context = context < 250 ? context % 64 : context == 250 ? -1 : context == 251 ? 40961 : 0;
    const uint8_t kv_byte = in.u8();
    const uint8_t kv = kv_byte % 8;
    const reset_kv_cache caches[] = {RESET_KV_CACHE_BF16, RESET_KV_CACHE_FP8, RESET_KV_CACHE_FP32};
    const int32_t kv_value = kv < 6 ? int32_t(caches[kv % 3]) : 7;
    std::memcpy(&options.kv_cache, &kv_value, sizeof kv_value);
    // (0.4) The byte's other bits: top_logprobs 0..31, of which 21..31 are refused.
    options.top_logprobs = kv_byte >> 3;
    reset_session *raw_main = nullptr, *raw_twin = nullptr;
    const reset_status created = reset_session_create(model, &options, &raw_main);
    if (!ok_or_listed_error(created, "reset_session_create",
                 {RESET_ERR_INVALID_ARGUMENT, RESET_ERR_UNSUPPORTED, RESET_ERR_OUT_OF_MEMORY})) {
        const bool bad_options = options.sequences < 1 || options.sequences > 8 || options.max_context < 0 ||
                                 options.max_context > 40960 || kv_value == 7 ||
                                 options.top_logprobs > RESET_MAX_TOP_LOGPROBS;
        expect(raw_main == nullptr, "a failed reset_session_create wrote a session");
        expect(bad_options || created != RESET_ERR_INVALID_ARGUMENT, "good session options refused");
        return 0;
    }
    SessionPtr main(raw_main);
    ok_or_listed_error(reset_session_create(model, &options, &raw_twin), "reset_session_create (twin)", {});
    SessionPtr twin(raw_twin);

    Shadow shadow;
    shadow.lengths.assign(size_t(options.sequences), 0);
    shadow.ended.assign(size_t(options.sequences), false);
    shadow.max_context = options.max_context ? options.max_context : 4096;
    shadow.top_logprobs = options.top_logprobs;
    shadow.generated.assign(size_t(options.sequences), 0);
    shadow.window.assign(size_t(options.sequences), std::string());
    shadow.window_known.assign(size_t(options.sequences), true);
    shadow.no_logits.assign(size_t(options.sequences), false);
    expect(options.top_logprobs <= RESET_MAX_TOP_LOGPROBS, "top_logprobs above the maximum accepted");
    compare_with_twin(main.get(), twin.get(), shadow, "creation");
    int decode_steps = 0;
    for (int op = 0; op < kMaxOperations && !in.empty(); ++op) {
        const uint8_t kind = in.u8() % 9;
        const char *name = "";
        switch (kind) {
        case 0:    // prefill
        case 1: {  // reset_prefill_sequence
            const bool one = kind == 1;
            const int32_t sequence = one ? read_sequence(in) : -1;
            const std::vector<int32_t> ids = read_ids(in);
            const int32_t *pointer = ids.empty() && in.u8() % 2 ? nullptr : ids.data();
            name = one ? "reset_prefill_sequence" : "reset_prefill";
            const reset_status status = one ? reset_prefill_sequence(main.get(), sequence, pointer, ids.size())
                                            : reset_prefill(main.get(), pointer, ids.size());
            const bool ok = ok_or_listed_error(status, name,
                                    {RESET_ERR_OUT_OF_RANGE, RESET_ERR_CONTEXT_OVERFLOW, RESET_ERR_INVALID_ARGUMENT,
                                     RESET_ERR_CANCELLED, RESET_ERR_STATE});
            expect(!(shadow.cancel_pending && ok), std::string(name) + " succeeded with a cancel request pending");
            expect(shadow.cancel_pending || status != RESET_ERR_CANCELLED,
                   std::string(name) + " was cancelled with no request");
            expect(one || status != RESET_ERR_STATE, "reset_prefill answered RESET_ERR_STATE on a working session");
            if (status == RESET_ERR_CANCELLED) shadow.cancel_pending = false;
            if (!ok) break;
            expect(!one || shadow.prefilled, "reset_prefill_sequence succeeded before any reset_prefill");
            ok_or_listed_error(one ? reset_prefill_sequence(twin.get(), sequence, ids.data(), ids.size())
                        : reset_prefill(twin.get(), ids.data(), ids.size()),
                    "prefill (twin)", {});
            for (int32_t s = 0; s < options.sequences; ++s) {
                if (one && s != sequence) continue;
                shadow.lengths[size_t(s)] += int32_t(ids.size());
                expect(shadow.lengths[size_t(s)] <= shadow.max_context, std::string(name) + " went past max_context");
                shadow.ended[size_t(s)] = false;
                shadow.no_logits[size_t(s)] = false;
                shadow.generated[size_t(s)] = 0;
                shadow.new_window(size_t(s));
            }
            shadow.prefilled = true;
            break;
        }
        case 2: {
            name = "reset_decode_step";
            const size_t capacity = in.u8() % 10;
            const uint8_t layout = in.u8() % 8;
            if (decode_steps++ < kMaxDecodeSteps) decode(capacity, layout, main.get(), twin.get(), shadow);
            break;
        }
        case 8: {
            // Up to 64 plain steps at once, until one fails or a sequence ends: what a short
            // input needs to reach sequences that end (2 of the chat fixture's 512 ids).
            name = "reset_decode_step (a run)";
            const int steps = 1 + in.u8() % 64;
            const int ended_before = int(std::count(shadow.ended.begin(), shadow.ended.end(), true));
            for (int i = 0; i < steps && decode_steps++ < kMaxDecodeSteps; ++i)
                if (!decode(size_t(options.sequences), 3, main.get(), twin.get(), shadow) ||
                    std::count(shadow.ended.begin(), shadow.ended.end(), true) > ended_before)
                    break;
            break;
        }
        case 3: {
            name = "reset_set_policy";
            const reset_policy_params params = read_policy(in);
            const reset_status status = reset_set_policy(main.get(), &params);
            if (ok_or_listed_error(status, name, {RESET_ERR_INVALID_ARGUMENT, RESET_ERR_UNSUPPORTED, RESET_ERR_OUT_OF_MEMORY}))
                ok_or_listed_error(reset_set_policy(twin.get(), &params), "reset_set_policy (twin)", {});
            break;
        }
        case 4: {
            const int32_t sequence = read_sequence(in);
            const uint8_t shape_byte = in.u8();
            if (shape_byte >= 128) {  // (0.6) the byte's high half: an input from before reads it mostly as it did
                const bool one = shape_byte & 1;
                name = one ? "reset_truncate_sequence" : "reset_truncate";
                cut(in, one, sequence, main.get(), twin.get(), shadow);
                break;
            }
            if (shape_byte >= 64) {  // (0.7) the low half's upper half, likewise
                name = "reset_copy_sequence";
                copy(in, sequence, main.get(), twin.get(), shadow);
                break;
            }
            if (shape_byte >= 48) {  // (0.8) the next quarter down, likewise
                const bool in_memory = shape_byte >= 56;  // (0.9)
                name = in_memory ? "reset_save_sequence_to_memory / _from_memory"
                                 : "reset_save_sequence / reset_load_sequence";
                save_and_load(in, sequence, in_memory, main.get(), twin.get(), shadow);
                break;
            }
            name = "reset_session_logits";
            const uint8_t shape = shape_byte % 4;
            std::vector<float> out(kVocab + 8, -7.0f);
            const size_t capacity = shape == 1 ? kVocab - 1 : shape == 2 ? kVocab + 5 : kVocab;
            const reset_status status =
                reset_session_logits(main.get(), sequence, shape == 3 ? nullptr : out.data(), capacity);
            if (ok_or_listed_error(status, name,
                        {RESET_ERR_STATE, RESET_ERR_OUT_OF_RANGE, RESET_ERR_BUFFER_TOO_SMALL,
                         RESET_ERR_INVALID_ARGUMENT}))
                for (size_t i = kVocab; i < out.size(); ++i)
                    expect(out[i] == -7.0f, "reset_session_logits wrote past vocab_size floats");
            break;
        }
        case 5:
            name = "reset_session_reset";
            ok_or_listed_error(reset_session_reset(main.get()), name, {});
            ok_or_listed_error(reset_session_reset(twin.get()), name, {});
            shadow.lengths.assign(shadow.lengths.size(), 0);
            shadow.ended.assign(shadow.ended.size(), false);
            shadow.no_logits.assign(shadow.no_logits.size(), false);
            shadow.generated.assign(shadow.generated.size(), 0);
            for (size_t s = 0; s < shadow.window.size(); ++s) shadow.new_window(s);
            shadow.prefilled = false;
            shadow.cancel_pending = false;
            break;
        case 6:
            name = "reset_session_cancel";
            ok_or_listed_error(reset_session_cancel(main.get()), name, {});
            shadow.cancel_pending = true;
            break;
        case 7: {
            const uint8_t which = in.u8();
            if (which >= 128) {  // (0.5) the byte's high half: an input from before reads it mostly as it did
                name = "reset_set_stop";
                set_stop(in, main.get(), twin.get(), shadow);
                break;
            }
            if (which >= 64) {  // (0.6) the low half's upper quarter, likewise
                name = "reset_set_logit_bias";
                set_logit_bias(in, main.get(), twin.get(), shadow);
                break;
            }
            name = "reset_session_get_policy";
            reset_policy_params p;
            reset_policy_params_init(&p);
            p.struct_size = which % 2 ? p.struct_size : 2;  // too small to hold even struct_size
            ok_or_listed_error(reset_session_get_policy(main.get(), &p), name, {RESET_ERR_INVALID_ARGUMENT});
            break;
        }
        }
        compare_with_twin(main.get(), twin.get(), shadow, name);
    }
    return 0;
}
