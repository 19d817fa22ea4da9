// session_api.cpp — the C ABI of sessions: create, prefill, decode, policies.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "api/errors.h"
#include "api/handles.h"
#include "engine/session.h"
#include "reset.h"

struct reset_session {
    std::unique_ptr<reset::Session> session;
    reset_session_options options;  // as given (reset_session_get_options resolves max_context from the session)
};

namespace reset {
std::shared_ptr<LoadedModel> shared_model(const reset_model *handle);
}  // namespace reset

using namespace reset;

namespace {
Session &session_of(reset_session *handle) { return *checked_handle(handle, "session")->session; }
const Session &session_of(const reset_session *handle) { return *checked_handle(handle, "session")->session; }
}  // namespace

extern "C" {

void reset_session_options_init_sized(reset_session_options *options, size_t struct_size) {
    reset_session_options defaults;
    std::memset(&defaults, 0, sizeof defaults);
    defaults.max_context = 0;
    defaults.sequences = 1;
    write_defaults(options, struct_size, defaults);
}

// Programs built before 0.4 call this: their struct ends before top_logprobs.
void (reset_session_options_init)(reset_session_options *options) {
    reset_session_options_init_sized(options, offsetof(reset_session_options, top_logprobs));
}

reset_status reset_session_create(reset_model *model, const reset_session_options *options,
                                  reset_session **out_session) {
    if (out_session) *out_session = nullptr;
    return api_call([&] {
        std::shared_ptr<LoadedModel> loaded = shared_model(model);
        require(out_session, "out_session");
        const reset_session_options o = read_options(options, reset_session_options_init_sized, "options");
        if (o.sequences < 1 || o.sequences > kMaxSequences)
            fail(RESET_ERR_INVALID_ARGUMENT, "options->sequences = ", o.sequences, " is outside 1..", kMaxSequences);
        const int32_t model_max = loaded->config.max_position_embeddings;
        if (o.max_context < 0 || o.max_context > model_max)
            fail(RESET_ERR_INVALID_ARGUMENT, "options->max_context = ", o.max_context, " is outside 0..", model_max,
                 " (the model's max_position_embeddings)");
        const int32_t kv_cache = enum_as_int(o.kv_cache);
        if (kv_cache != RESET_KV_CACHE_BF16 && kv_cache != RESET_KV_CACHE_FP8 && kv_cache != RESET_KV_CACHE_FP32)
            fail(RESET_ERR_INVALID_ARGUMENT, "options->kv_cache = ", kv_cache, " is not a reset_kv_cache value");
        if (o.eager != 0 && o.eager != 1)
            fail(RESET_ERR_INVALID_ARGUMENT, "options->eager = ", o.eager, " (must be 0 or 1)");
        if (o.prefill_gemm_tokens < -1)
            fail(RESET_ERR_INVALID_ARGUMENT, "options->prefill_gemm_tokens = ", o.prefill_gemm_tokens,
                 " (must be -1, 0 or a token count)");
        if (o.programmatic_launch != 0 && o.programmatic_launch != -1)
            fail(RESET_ERR_INVALID_ARGUMENT, "options->programmatic_launch = ", o.programmatic_launch,
                 " (must be 0 or -1)");
        if (o.top_logprobs < 0 || o.top_logprobs > RESET_MAX_TOP_LOGPROBS)
            fail(RESET_ERR_INVALID_ARGUMENT, "options->top_logprobs = ", o.top_logprobs, " is outside 0..",
                 RESET_MAX_TOP_LOGPROBS);
        const int32_t context = o.max_context ? o.max_context : std::min(model_max, kDefaultMaxContext);
        SessionOptions session_options;
        session_options.max_context = context;
        session_options.sequences = o.sequences;
        session_options.kv_cache = o.kv_cache;
        session_options.cuda_graph = o.eager == 0;
        session_options.prefill_gemm_tokens = o.prefill_gemm_tokens;
        session_options.programmatic_launch = o.programmatic_launch == 0;
        session_options.top_logprobs = o.top_logprobs;
        auto handle = std::make_unique<reset_session>();
        handle->session = std::make_unique<Session>(std::move(loaded), session_options);
        handle->options = o;
        HandleRegistry<reset_session>::instance().add(handle.get());
        *out_session = handle.release();
    });
}

void reset_session_free(reset_session *session) {
    if (!session) return;
    if (HandleRegistry<reset_session>::instance().remove(session)) delete session;
}

reset_status reset_session_reset(reset_session *session) {
    return api_call([&] { session_of(session).reset(); });
}

reset_status reset_session_cancel(reset_session *session) {
    // An atomic store inside the registry's lock: a reset_session_free racing
    // with this call on another thread cannot free the session in between.
    return api_call([&] {
        with_checked_handle(session, "session", [](reset_session *live) { live->session->request_cancel(); });
    });
}

reset_status reset_prefill(reset_session *session, const int32_t *ids, size_t n_ids) {
    return api_call([&] { session_of(session).prefill(ids, n_ids); });
}

reset_status reset_prefill_sequence(reset_session *session, int32_t sequence, const int32_t *ids, size_t n_ids) {
    return api_call([&] { session_of(session).prefill_sequence(sequence, ids, n_ids); });
}

reset_status reset_truncate(reset_session *session, int32_t length) {
    return api_call([&] { session_of(session).truncate(length); });
}

reset_status reset_truncate_sequence(reset_session *session, int32_t sequence, int32_t length) {
    return api_call([&] { session_of(session).truncate_sequence(sequence, length); });
}

reset_status reset_copy_sequence(reset_session *session, int32_t from, int32_t to) {
    return api_call([&] { session_of(session).copy_sequence(from, to); });
}

reset_status reset_save_sequence(const reset_session *session, int32_t sequence, const char *path) {
    return api_call([&] {
        const Session &s = session_of(session);
        require(path, "path");
        s.save_sequence(sequence, path);
    });
}

reset_status reset_load_sequence(reset_session *session, int32_t sequence, const char *path) {
    return api_call([&] {
        Session &s = session_of(session);
        require(path, "path");
        s.load_sequence(sequence, path);
    });
}

reset_status reset_save_sequence_to_memory(const reset_session *session, int32_t sequence, void *buffer,
                                          size_t capacity, size_t *size) {
    if (size) *size = 0;
    return api_call([&] {
        const Session &s = session_of(session);
        require(size, "size");
        if (!buffer && capacity > 0) fail(RESET_ERR_INVALID_ARGUMENT, "buffer is NULL with capacity ", capacity);
        *size = s.save_sequence_to_memory(sequence, static_cast<uint8_t *>(buffer), capacity);
        if (*size > capacity)
            fail(RESET_ERR_BUFFER_TOO_SMALL, "sequence ", sequence, "'s state takes ", *size,
                 " bytes; the buffer holds ", capacity);
    });
}

reset_status reset_load_sequence_from_memory(reset_session *session, int32_t sequence, const void *data, size_t size) {
    return api_call([&] {
        Session &s = session_of(session);
        require(data, "data");
        s.load_sequence_from_memory(sequence, static_cast<const uint8_t *>(data), size);
    });
}

reset_status reset_session_get_options(const reset_session *session, reset_session_options *out) {
    return api_call([&] {
        const reset_session *live = checked_handle(session, "session");
        reset_session_options o = live->options;
        o.max_context = live->session->max_context();  // 0 given: resolved at creation
        require(out, "out");
        check_caller_struct<reset_session_options>(out->struct_size, "out", "reset_session_options_init");
        const uint32_t size = out->struct_size;
        std::memcpy(out, &o, std::min<size_t>(size, sizeof o));  // a newer caller's tail is left alone
        out->struct_size = size;
    });
}

reset_status reset_session_tokens(const reset_session *session, int32_t sequence, int32_t *ids, size_t capacity,
                                  size_t *n_ids) {
    if (n_ids) *n_ids = 0;
    return api_call([&] {
        const Session &s = session_of(session);
        require(n_ids, "n_ids");
        const SharedTokens &tokens = s.tokens(sequence);
        std::vector<int32_t> out(size_t(tokens.size()));
        for (size_t i = 0; i < out.size(); ++i) out[i] = tokens[int64_t(i)];
        copy_out(out.data(), out.size(), ids, capacity, n_ids);
    });
}

reset_status reset_session_logits(const reset_session *session, int32_t sequence, float *out, size_t capacity) {
    return api_call([&] { session_of(session).copy_logits(sequence, out, capacity); });
}

uint64_t reset_session_device_bytes(const reset_session *session) {
    uint64_t bytes = 0;
    const reset_status status = api_call([&] { bytes = session_of(session).device_bytes(); });
    return status == RESET_OK ? bytes : 0;
}

int32_t reset_session_length(const reset_session *session, int32_t sequence) {
    int32_t length = -1;
    const reset_status status = api_call([&] { length = session_of(session).length(sequence); });
    return status == RESET_OK ? length : -1;
}

int32_t reset_session_max_context(const reset_session *session) {
    int32_t max_context = -1;
    const reset_status status = api_call([&] { max_context = session_of(session).max_context(); });
    return status == RESET_OK ? max_context : -1;
}

reset_status reset_set_policy(reset_session *session, const reset_policy_params *params) {
    return api_call([&] {
        Session &s = session_of(session);
        require(params, "params");
        s.set_policy(read_options(params, reset_policy_params_init_sized, "params"));
    });
}

reset_status reset_session_get_policy(const reset_session *session, reset_policy_params *out) {
    return api_call([&] {
        const reset_policy_params p = policy_params(session_of(session).policy());
        require(out, "out");
        check_caller_struct<reset_policy_params>(out->struct_size, "out", "reset_policy_params_init");
        const uint32_t size = out->struct_size;
        std::memcpy(out, &p, std::min<size_t>(size, sizeof p));  // a newer caller's tail is left alone
        out->struct_size = size;
    });
}

void reset_stop_options_init_sized(reset_stop_options *options, size_t struct_size) {
    reset_stop_options defaults;
    std::memset(&defaults, 0, sizeof defaults);
    write_defaults(options, struct_size, defaults);
}

void (reset_stop_options_init)(reset_stop_options *options) {
    reset_stop_options_init_sized(options, sizeof(reset_stop_options));
}

reset_status reset_set_stop(reset_session *session, const reset_stop_options *options) {
    return api_call([&] {
        Session &s = session_of(session);
        if (!options) return s.set_stop(nullptr);
        const reset_stop_options o = read_options(options, reset_stop_options_init_sized, "options");
        s.set_stop(&o);
    });
}

reset_status reset_set_logit_bias(reset_session *session, const reset_logit_bias *entries, size_t count) {
    return api_call([&] { session_of(session).set_logit_bias(entries, count); });
}

reset_status reset_session_held_text(const reset_session *session, int32_t sequence, const char **text,
                                     size_t *text_len) {
    if (text) *text = "";
    if (text_len) *text_len = 0;
    return api_call([&] {
        const Session &s = session_of(session);
        require(text, "text");
        require(text_len, "text_len");
        const std::string &held = s.held_text(sequence);
        *text = held.data();
        *text_len = held.size();
    });
}

void reset_step_init_sized(reset_step *steps, size_t count, size_t struct_size) {
    if (!steps) return;
    reset_step defaults;
    std::memset(&defaults, 0, sizeof defaults);
    defaults.token = -1;
    defaults.text = "";
    defaults.logprob = NAN;
    defaults.stop_index = -1;
    // The caller's entries are struct_size bytes apart (reset_decode_step reads the same stride).
    for (size_t i = 0; i < count; ++i)
        write_defaults(reinterpret_cast<reset_step *>(reinterpret_cast<char *>(steps) + i * struct_size), struct_size,
                       defaults);
}

// Programs built before 0.3 call this: their entries end before logprob.
void (reset_step_init)(reset_step *steps, size_t count) {
    reset_step_init_sized(steps, count, offsetof(reset_step, logprob));
}

reset_status reset_decode_step(reset_session *session, reset_step *steps, size_t capacity, int32_t *n_active) {
    return api_call([&] {
        const int32_t active = session_of(session).decode_step(steps, capacity);
        if (n_active) *n_active = active;
    });
}

}  // extern "C"
