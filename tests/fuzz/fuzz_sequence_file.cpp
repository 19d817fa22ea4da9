// fuzz_sequence_file.cpp — a fuzzed sequence file (docs/sequence-file.md)
// loaded into a session of the chat fixture (tests/fixtures/chat-model) by
// reset_load_sequence_from_memory, straight from the input (at an odd
// address: the loader asks for no alignment), then decoded, saved to a file
// and loaded again from it: both readers and both writers.  (Writing no file
// for a refused input did not make it faster: ~11 inputs a second under
// libFuzzer both ways, the three sessions each input creates being the cost.)
//
// Input: one byte of options (bits 0-1: the KV cache, BF16, FP8 or FP32;
// bit 2: the target sequence, 0 or 1; bits 3-7: max_context 8 + 4 × them),
// then the file's bytes.  The seeds are files the library saved
// (tests/fuzz/make_seeds.py), so mutations reach every field's check.
// The CPU backend, or with RESET_FUZZ_BACKEND=cuda the CUDA one (the FP32
// cache, which the CUDA backend lacks, then means BF16).
//
// Checked, as reset.h promises:
//   - the load answers RESET_OK or one of the statuses reset.h lists for a
//     file's bytes (FORMAT, UNSUPPORTED, SHAPE, CONTEXT_OVERFLOW,
//     OUT_OF_MEMORY), with a message, never INTERNAL;
//   - a refused load leaves both sequences as they were: tokens and logits
//     bit for bit, and the same draws;
//   - an accepted one holds the file's tokens, and its state is one the
//     library reproduces: saved to a file and loaded from it into a new
//     session, it saves to memory as the same bytes as that file;
//   - decoding it succeeds, or fails only as a crafted state may make it
//     (RESET_ERR_BACKEND for logits a NaN key or value turned bad,
//     RESET_ERR_STATE for a sequence that has ended or has no logits,
//     RESET_ERR_CONTEXT_OVERFLOW at max_context), leaving the session usable.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "fuzz_support.h"

using reset_fuzz::expect;
using reset_fuzz::finding;
using reset_fuzz::ok_or_listed_error;

namespace {

constexpr int32_t kVocab = 512;

struct SessionFree {
    void operator()(reset_session *s) const { reset_session_free(s); }
};
using SessionPtr = std::unique_ptr<reset_session, SessionFree>;

reset_model *chat_model() {
    static reset_model *model = [] {
        reset_model_options options;
        reset_model_options_init(&options);
        options.backend = reset_fuzz::cuda_backend() ? RESET_BACKEND_CUDA : RESET_BACKEND_CPU;
        options.threads = 1;
        reset_model *m = nullptr;
        const std::string dir = std::string(RESET_SOURCE_DIR) + "/tests/fixtures/chat-model";
        if (reset_model_load(dir.c_str(), &options, &m) != RESET_OK)
            finding(std::string("cannot load the chat fixture: ") + reset_last_error());
        return m;
    }();
    return model;
}

SessionPtr make_session(reset_kv_cache kv, int32_t max_context) {
    reset_session_options options;
    reset_session_options_init(&options);
    options.sequences = 2;
    options.max_context = max_context;
    options.kv_cache = kv;
    reset_session *s = nullptr;
    ok_or_listed_error(reset_session_create(chat_model(), &options, &s), "reset_session_create", {});
    reset_policy_params p;
    reset_policy_params_init(&p);
    p.kind = RESET_POLICY_RESET;  // every piece of sampler state the file carries is read
    p.t_low = 0.5f;
    p.tau0 = 4.0f;
    p.window = 4;
    p.seed = 3;
    p.presence_penalty = 0.5f;
    p.repetition_penalty = 1.2f;
    ok_or_listed_error(reset_set_policy(s, &p), "reset_set_policy", {});
    return SessionPtr(s);
}

std::vector<int32_t> tokens_of(reset_session *s, int32_t sequence) {
    size_t n = 0;
    reset_session_tokens(s, sequence, nullptr, 0, &n);
    std::vector<int32_t> ids(n);
    ok_or_listed_error(reset_session_tokens(s, sequence, ids.data(), ids.size(), &n), "reset_session_tokens", {});
    return ids;
}

// The sequence's logits, or empty when it has none.
std::vector<float> logits_of(reset_session *s, int32_t sequence) {
    std::vector<float> z(kVocab);
    const reset_status status = reset_session_logits(s, sequence, z.data(), z.size());
    if (!ok_or_listed_error(status, "reset_session_logits", {RESET_ERR_STATE})) z.clear();
    return z;
}

bool same_bits(const std::vector<float> &a, const std::vector<float> &b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// Up to `steps` decode steps, each refused only as reset.h lists for a state a file may hold.
void decode(reset_session *s, int steps) {
    for (int i = 0; i < steps; ++i) {
        reset_step r[2];
        reset_step_init(r, 2);
        if (!ok_or_listed_error(reset_decode_step(s, r, 2, nullptr), "reset_decode_step",
                                {RESET_ERR_BACKEND, RESET_ERR_STATE, RESET_ERR_CONTEXT_OVERFLOW}))
            return;
        for (const reset_step &x : r)
            expect(x.token >= -1 && x.token < kVocab && reset_fuzz::valid_utf8({x.text, x.text_len}),
                   "a step after a load drew a token outside the vocabulary or text that is not UTF-8");
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    const uint8_t options = data[0];
    const reset_kv_cache caches[] = {RESET_KV_CACHE_BF16, RESET_KV_CACHE_FP8, RESET_KV_CACHE_FP32,
                                     RESET_KV_CACHE_BF16};
    reset_kv_cache kv = caches[options & 3];
    if (kv == RESET_KV_CACHE_FP32 && reset_fuzz::cuda_backend()) kv = RESET_KV_CACHE_BF16;
    const int32_t target = (options >> 2) & 1;
    const int32_t max_context = 8 + 4 * (options >> 3);
    static const std::string directory = reset_fuzz::write_directory({});
    const std::string path = directory + "/saved.safetensors";

    // Both sequences hold something first, so a refused load has something to leave alone.
    SessionPtr session = make_session(kv, max_context), twin = make_session(kv, max_context);
    const int32_t prompt[] = {10, 11, 12, 13};
    for (reset_session *s : {session.get(), twin.get()}) {
        ok_or_listed_error(reset_prefill(s, prompt, 4), "reset_prefill", {});
        const int32_t more = 20;
        ok_or_listed_error(reset_prefill_sequence(s, 1, &more, 1), "reset_prefill_sequence", {});
    }
    const reset_status loaded = reset_load_sequence_from_memory(session.get(), target, data + 1, size - 1);
    if (!ok_or_listed_error(loaded, "reset_load_sequence_from_memory",
                            {RESET_ERR_FORMAT, RESET_ERR_UNSUPPORTED, RESET_ERR_SHAPE, RESET_ERR_CONTEXT_OVERFLOW,
                             RESET_ERR_OUT_OF_MEMORY})) {
        for (int32_t s = 0; s < 2; ++s) {
            expect(tokens_of(session.get(), s) == tokens_of(twin.get(), s), "a refused load changed the tokens");
            expect(same_bits(logits_of(session.get(), s), logits_of(twin.get(), s)),
                   "a refused load changed the logits");
        }
        // The same draws as a session that never saw the file.
        for (int i = 0; i < 3; ++i) {
            reset_step a[2], b[2];
            reset_step_init(a, 2);
            reset_step_init(b, 2);
            const reset_status sa = reset_decode_step(session.get(), a, 2, nullptr);
            const reset_status sb = reset_decode_step(twin.get(), b, 2, nullptr);
            expect(sa == sb, "a refused load changed whether the session decodes");
            if (sa != RESET_OK) break;
            expect(a[0].token == b[0].token && a[1].token == b[1].token, "a refused load changed the draws");
        }
        return 0;
    }
    const std::vector<int32_t> held = tokens_of(session.get(), target);
    expect(int32_t(held.size()) == reset_session_length(session.get(), target) && int32_t(held.size()) <= max_context,
           "a loaded sequence's length disagrees with its tokens or max_context");
    // What was accepted is a state the library reproduces.
    ok_or_listed_error(reset_save_sequence(session.get(), target, path.c_str()), "reset_save_sequence", {});
    SessionPtr other = make_session(kv, max_context);
    ok_or_listed_error(reset_load_sequence(other.get(), 1 - target, path.c_str()), "reset_load_sequence", {});
    size_t again_size = 0;
    expect(reset_save_sequence_to_memory(other.get(), 1 - target, nullptr, 0, &again_size) ==
                   RESET_ERR_BUFFER_TOO_SMALL && again_size > 0,
           "asking a sequence's size in memory did not give it");
    std::string again(again_size, '\0');
    ok_or_listed_error(reset_save_sequence_to_memory(other.get(), 1 - target, again.data(), again.size(), &again_size),
                       "reset_save_sequence_to_memory", {});
    expect(reset_fuzz::read_file(path) == again, "a sequence saved, loaded and saved again gave other bytes");
    expect(tokens_of(other.get(), 1 - target) == held, "a sequence loaded again holds other tokens");
    decode(session.get(), 4);
    // Whatever the decode did, the session still works after a reset.
    ok_or_listed_error(reset_session_reset(session.get()), "reset_session_reset", {});
    ok_or_listed_error(reset_prefill(session.get(), prompt, 4), "reset_prefill after the reset", {});
    decode(session.get(), 1);
    return 0;
}
