// policy_api.cpp — the C functions of the standalone ReSET policy, of policy
// parameters, traces and calibration (reset.h, "The standalone ReSET policy").
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <memory>
#include <vector>

#include "api/errors.h"
#include "api/handles.h"
#include "engine/loaded_model.h"
#include "reset.h"
#include "rules/reset_rule.h"
#include "sampling/entropy.h"
#include "sampling/calibration.h"
#include "sampling/policy.h"
#include "sampling/sampler.h"
#include "sampling/trace.h"
#include "text/tokenizer.h"

// The handle behind reset_policy: one sequence's sampler and its Philox stream.
struct reset_policy {
    reset::SequenceSampler sampler;
    int32_t sequence = 0;
    // The model's vocabulary for reset_policy_create_for_model (logit-bias
    // tokens are checked against it), else 0: each call's n_vocab decides.
    int32_t vocab = 0;
    explicit reset_policy(reset::DelimiterSets sets) : sampler(std::move(sets)) {}
};

namespace reset {

std::shared_ptr<LoadedModel> shared_model(const reset_model *handle);  // api/model_api.cpp

DelimiterSets read_delimiters(const reset_policy_options &options) {
    DelimiterSets sets;
    auto copy = [](const int32_t *ids, size_t n, const char *what, std::vector<int32_t> &to) {
        if (n > 0 && !ids) fail(RESET_ERR_INVALID_ARGUMENT, "options->", what, " is NULL but its count is ", n);
        for (size_t i = 0; i < n; ++i) {
            if (ids[i] < 0) fail(RESET_ERR_INVALID_ARGUMENT, "options->", what, "[", i, "] is ", ids[i], " (ids are >= 0)");
            to.push_back(ids[i]);
        }
    };
    copy(options.newline_ids, options.n_newline_ids, "newline_ids", sets.newline);
    copy(options.double_newline_ids, options.n_double_newline_ids, "double_newline_ids", sets.double_newline);
    return sets;
}

reset_policy_options read_policy_options(const reset_policy_options *given) {
    reset_policy_options options = read_options(given, reset_policy_options_init_sized, "options");
    if (options.sequence < 0)
        fail(RESET_ERR_INVALID_ARGUMENT, "options->sequence is ", options.sequence, " (must be >= 0)");
    return options;
}

reset_policy_params read_policy_params(const reset_policy_params *given) {
    require(given, "params");
    return read_options(given, reset_policy_params_init_sized, "params");
}

reset_policy *new_policy_handle(const Policy &policy, DelimiterSets sets, int32_t sequence, int32_t vocab) {
    auto handle = std::make_unique<reset_policy>(std::move(sets));
    handle->sampler.set_policy(policy, true);
    handle->sequence = sequence;
    handle->vocab = vocab;
    HandleRegistry<reset_policy>::instance().add(handle.get());
    return handle.release();
}

namespace {

int32_t checked_vocab(const float *logits, size_t n_vocab) {
    require(logits, "logits");
    if (n_vocab == 0 || n_vocab > static_cast<size_t>(INT32_MAX))
        fail(RESET_ERR_INVALID_ARGUMENT, "n_vocab is ", n_vocab, " (must be in 1..INT32_MAX)");
    return static_cast<int32_t>(n_vocab);
}


void write_decision(const SamplerSignals &s, reset_decision *out) {
    reset_decision d;
    reset_decision_init(&d);
    d.temperature = s.temperature;
    d.entropy = s.entropy;
    d.step_entropy = s.step_entropy;
    d.global_mean = s.global_mean;
    d.threshold = s.threshold;
    d.step_index = s.step_index;
    d.boundary = s.boundary ? 1 : 0;
    d.uncertain = s.uncertain ? 1 : 0;
    d.logprob = s.logprob;
    const uint32_t size = out->struct_size;
    std::memcpy(out, &d, std::min<size_t>(size, sizeof d));
    out->struct_size = size;
}

void copy_line(const std::string &line, char *buffer, size_t capacity, size_t *out_length) {
    if (out_length) *out_length = line.size();
    if (!buffer || capacity < line.size() + 1)
        fail(RESET_ERR_BUFFER_TOO_SMALL, "the JSON line needs ", line.size() + 1, " bytes; the buffer has ",
             buffer ? capacity : 0);
    std::memcpy(buffer, line.data(), line.size());
    buffer[line.size()] = '\0';
}

void write_table(const PercentileTable &table, uint64_t n, reset_calibration_result *out) {
    reset_calibration_result r;
    reset_calibration_result_init(&r);
    r.tau0 = table.value;
    std::memcpy(r.percentiles, table.percentiles, sizeof r.percentiles);
    r.mean = table.mean;
    r.n_tokens = n;
    const uint32_t size = out->struct_size;
    // n_prompts / n_finished are set by the caller of this helper when known.
    std::memcpy(out, &r, std::min<size_t>(size, sizeof r));
    out->struct_size = size;
}

// A session call inside reset_calibrate: its failure is calibration's, with
// the session's message.
void session_check(reset_status status, const char *call) {
    if (status != RESET_OK) fail(status, "reset_calibrate: ", call, ": ", reset_last_error());
}

// Owns a session for the duration of one prompt.
struct SessionGuard {
    reset_session *session = nullptr;
    ~SessionGuard() { reset_session_free(session); }
};

// The paper's recipe over the public session API: decode every prompt at the
// fixed seeded temperature and gather one entropy per generated token.
std::vector<float> calibration_entropies(reset_model *model, const int32_t *const *prompts,
                                         const size_t *prompt_lengths, size_t n_prompts,
                                         const reset_calibration_options &o, int32_t *n_finished) {
    reset_model_info info;
    reset_model_info_init(&info);
    session_check(reset_model_get_info(model, &info), "reset_model_get_info");
    const int32_t vocab = info.vocab_size;
    std::vector<float> logits(static_cast<size_t>(vocab));
    std::vector<float> entropies;
    *n_finished = 0;
    for (size_t i = 0; i < n_prompts; ++i) {
        if (prompt_lengths[i] == 0) fail(RESET_ERR_INVALID_ARGUMENT, "prompt ", i, " is empty");
        require(prompts[i], "a prompt");
        // Room for the prompt and every new token, within the model's context.
        const int64_t wanted = static_cast<int64_t>(prompt_lengths[i]) + o.max_new_tokens;
        const int64_t limit = info.max_position_embeddings > 0 ? info.max_position_embeddings : wanted;
        if (static_cast<int64_t>(prompt_lengths[i]) >= limit)
            fail(RESET_ERR_CONTEXT_OVERFLOW, "prompt ", i, " has ", prompt_lengths[i],
                 " tokens: no room left to generate in the model's context of ", limit);
        reset_session_options so;
        reset_session_options_init(&so);
        so.sequences = 1;
        so.max_context = static_cast<int32_t>(std::min(wanted, limit));
        SessionGuard guard;
        session_check(reset_session_create(model, &so, &guard.session), "reset_session_create");
        reset_policy_params params;
        reset_policy_params_init(&params);
        params.kind = RESET_POLICY_FIXED;
        params.temperature = o.temperature;
        params.top_p = o.top_p;
        params.seed = o.seed + i;
        session_check(reset_set_policy(guard.session, &params), "reset_set_policy");
        session_check(reset_prefill(guard.session, prompts[i], prompt_lengths[i]), "reset_prefill");
        for (int32_t t = 0; t < o.max_new_tokens; ++t) {
            if (reset_session_length(guard.session, 0) >= so.max_context) break;  // context full
            const float done = (float(i) + float(t) / float(o.max_new_tokens)) / float(n_prompts);
            if (o.progress && o.progress(done, o.progress_user_data))
                fail(RESET_ERR_CANCELLED, "calibration cancelled by the progress callback");
            session_check(reset_session_logits(guard.session, 0, logits.data(), logits.size()),
                          "reset_session_logits");
            // The spec's calibration measures H_t exactly as the policy does;
            // the processed-score option measures what was sampled from.
            entropies.push_back(o.processed_scores
                                    ? processed_entropy(logits.data(), vocab, o.temperature, 0, o.top_p, 0.0f)
                                    : logit_stats(logits.data(), vocab).entropy);
            reset_step step;
            reset_step_init(&step, 1);
            int32_t active = 0;
            session_check(reset_decode_step(guard.session, &step, 1, &active), "reset_decode_step");
            if (step.end_of_generation) {
                *n_finished += 1;
                break;
            }
        }
    }
    if (o.progress && o.progress(1.0f, o.progress_user_data))
        fail(RESET_ERR_CANCELLED, "calibration cancelled by the progress callback");
    return entropies;
}

// A trace record of the decision fields that reset_step and reset_decision share.
template <class Decision>
TraceRecord decision_record(const Decision &d, int32_t sequence, int32_t token) {
    TraceRecord r;
    r.sequence = sequence;
    r.token = token;
    r.logprob = d.logprob;
    r.entropy = d.entropy;
    r.step_entropy = d.step_entropy;
    r.global_mean = d.global_mean;
    r.threshold = d.threshold;
    r.temperature = d.temperature;
    r.step_index = d.step_index;
    r.boundary = d.boundary != 0;
    r.uncertain = d.uncertain != 0;
    return r;
}

}  // namespace
}  // namespace reset

using reset::api_call;
using reset::fail;

extern "C" {

void reset_policy_params_init_sized(reset_policy_params *params, size_t struct_size) {
    reset_policy_params defaults;
    std::memset(&defaults, 0, sizeof defaults);
    defaults.kind = RESET_POLICY_GREEDY;
    defaults.temperature = 0.6f;
    defaults.top_k = 0;
    defaults.top_p = 1.0f;
    defaults.min_p = 0.0f;
    defaults.seed = 0;
    defaults.t_high = 1.0f;
    defaults.t_low = -1.0f;
    defaults.tau0 = -1.0f;
    defaults.window = 32;
    defaults.preset = nullptr;
    defaults.reset_state = 0;
    defaults.presence_penalty = 0.0f;
    defaults.frequency_penalty = 0.0f;
    defaults.repetition_penalty = 1.0f;
    reset::write_defaults(params, struct_size, defaults);
}

// Programs built before 0.3 call this: their struct is 0.2's, whose tail padding reserved now fills.
void (reset_policy_params_init)(reset_policy_params *params) {
    reset_policy_params_init_sized(params, offsetof(reset_policy_params, repetition_penalty));
}

void reset_policy_options_init_sized(reset_policy_options *options, size_t struct_size) {
    reset_policy_options defaults;
    std::memset(&defaults, 0, sizeof defaults);
    reset::write_defaults(options, struct_size, defaults);
}

void (reset_policy_options_init)(reset_policy_options *options) {
    reset_policy_options_init_sized(options, sizeof *options);
}

void reset_decision_init_sized(reset_decision *decision, size_t struct_size) {
    reset_decision defaults;
    std::memset(&defaults, 0, sizeof defaults);
    defaults.logprob = NAN;  // no token drawn
    reset::write_defaults(decision, struct_size, defaults);
}

// Programs built before 0.3 call this: their struct ends before logprob.
void (reset_decision_init)(reset_decision *decision) {
    reset_decision_init_sized(decision, offsetof(reset_decision, logprob));
}

reset_status reset_policy_create(const reset_policy_params *params, const reset_policy_options *options,
                                 reset_policy **out_policy) {
    if (out_policy) *out_policy = nullptr;
    return api_call([&] {
        reset::require(out_policy, "out_policy");
        const reset_policy_params p = reset::read_policy_params(params);
        const reset_policy_options o = reset::read_policy_options(options);
        const reset::Policy policy = reset::validate_policy(p, nullptr);
        *out_policy = reset::new_policy_handle(policy, reset::read_delimiters(o), o.sequence, 0);
    });
}

reset_status reset_policy_create_for_model(const reset_model *model, const reset_policy_params *params,
                                           const reset_policy_options *options, reset_policy **out_policy) {
    if (out_policy) *out_policy = nullptr;
    return api_call([&] {
        reset::require(out_policy, "out_policy");
        const std::shared_ptr<reset::LoadedModel> loaded = reset::shared_model(model);
        const reset_policy_params p = reset::read_policy_params(params);
        const reset_policy_options o = reset::read_policy_options(options);
        const reset::Policy policy = reset::validate_policy(p, &loaded->config);
        reset::DelimiterSets sets = reset::read_delimiters(o);
        if (sets.newline.empty() && sets.double_newline.empty()) {
            // Without the caller's sets, the tokenizer's: a model without one
            // cannot say which ids are "\n" and "\n\n".
            if (!loaded->tokenizer)
                fail(RESET_ERR_UNSUPPORTED, "the model at '", loaded->directory,
                     "' has no tokenizer, so its step delimiters are unknown: pass the ids of \"\\n\" and of "
                     "tokens containing \"\\n\\n\" in options->newline_ids / options->double_newline_ids");
            const reset::Tokenizer &tokenizer = reset::tokenizer_of(loaded->tokenizer);
            sets.newline = tokenizer.newline_ids();
            sets.double_newline = tokenizer.double_newline_ids();
        }
        *out_policy = reset::new_policy_handle(policy, std::move(sets), o.sequence, loaded->config.vocab_size);
    });
}

void reset_policy_free(reset_policy *policy) {
    if (!policy) return;
    // A pointer that is not live is left alone rather than freed twice.
    if (reset::HandleRegistry<reset_policy>::instance().remove(policy)) delete policy;
}

reset_status reset_policy_set_params(reset_policy *policy, const reset_policy_params *params) {
    return api_call([&] {
        reset_policy *h = reset::checked_handle(policy, "policy");
        const reset_policy_params p = reset::read_policy_params(params);
        // A standalone policy has no model: presets must be named.
        const reset::Policy validated = reset::validate_policy(p, nullptr);
        h->sampler.set_policy(validated, validated.reset_state);
    });
}

reset_status reset_policy_decide(reset_policy *policy, const float *logits, size_t n_vocab, reset_decision *out) {
    return api_call([&] {
        reset_policy *h = reset::checked_handle(policy, "policy");
        reset::require(out, "out");
        reset::check_caller_struct<reset_decision>(out->struct_size, "out", "reset_decision_init");
        const int32_t vocab = reset::checked_vocab(logits, n_vocab);
        reset::write_decision(h->sampler.decide(logits, vocab), out);
    });
}

reset_status reset_policy_sample(reset_policy *policy, const float *logits, size_t n_vocab, int32_t *out_token,
                                 reset_decision *out) {
    return api_call([&] {
        reset_policy *h = reset::checked_handle(policy, "policy");
        reset::require(out_token, "out_token");
        if (out) reset::check_caller_struct<reset_decision>(out->struct_size, "out", "reset_decision_init");
        const int32_t vocab = reset::checked_vocab(logits, n_vocab);
        reset::SamplerSignals signals;
        *out_token = h->sampler.sample(logits, vocab, h->sequence, &signals);
        if (out) reset::write_decision(signals, out);
    });
}

reset_status reset_policy_accept(reset_policy *policy, int32_t token) {
    return api_call([&] {
        reset_policy *h = reset::checked_handle(policy, "policy");
        if (token < 0) fail(RESET_ERR_OUT_OF_RANGE, "token ", token, " is negative");
        h->sampler.accept(token);
    });
}

reset_status reset_policy_add_context(reset_policy *policy, const int32_t *ids, size_t n_ids) {
    return api_call([&] {
        reset_policy *h = reset::checked_handle(policy, "policy");
        if (n_ids > 0) reset::require(ids, "ids");
        for (size_t i = 0; i < n_ids; ++i)
            if (ids[i] < 0) fail(RESET_ERR_OUT_OF_RANGE, "ids[", i, "] is ", ids[i], " (token ids are >= 0)");
        h->sampler.add_context(ids, n_ids);
    });
}

reset_status reset_policy_set_logit_bias(reset_policy *policy, const reset_logit_bias *entries, size_t count) {
    return api_call([&] {
        reset_policy *h = reset::checked_handle(policy, "policy");
        // Without a model, tokens are checked against each call's logits instead (reset_policy_sample).
        const int32_t vocab = h->vocab > 0 ? h->vocab : reset::kUnknownVocabulary;
        auto bias = std::make_shared<const reset::LogitBias>(reset::make_logit_bias(entries, count, vocab));
        h->sampler.set_logit_bias(bias->empty() ? nullptr : std::move(bias));
    });
}

reset_status reset_policy_reset(reset_policy *policy) {
    return api_call([&] { reset::checked_handle(policy, "policy")->sampler.clear(); });
}

reset_status reset_step_to_json(const reset_step *step, char *buffer, size_t capacity, size_t *out_length) {
    if (out_length) *out_length = 0;
    return api_call([&] {
        reset::require(step, "step");
        reset::check_caller_struct<reset_step>(step->struct_size, "step", "reset_step_init");
        // Read only the fields an older caller's struct has.
        reset_step s;
        std::memset(&s, 0, sizeof s);
        std::memcpy(&s, step, std::min<size_t>(step->struct_size, sizeof s));
        reset::TraceRecord r = reset::decision_record(s, s.sequence, s.token);
        r.has_logprob = step->struct_size >= offsetof(reset_step, logprob) + sizeof s.logprob;
        if (s.top_logprob_count < 0 || s.top_logprob_count > RESET_MAX_TOP_LOGPROBS)
            reset::fail(RESET_ERR_INVALID_ARGUMENT, "step->top_logprob_count = ", s.top_logprob_count,
                        " is outside 0..", RESET_MAX_TOP_LOGPROBS);
        if (s.top_logprob_count > 0 && !s.top_logprobs)
            reset::fail(RESET_ERR_INVALID_ARGUMENT, "step->top_logprobs is NULL with top_logprob_count ",
                        s.top_logprob_count);
        r.top = s.top_logprobs;
        r.top_count = s.top_logprob_count;
        r.has_end = true;
        r.end = s.end_of_generation != 0;
        r.end_reason = reset::enum_as_int(s.end_reason);
        // 0.4's struct has the same size (stop_index fills its tail padding), which
        // reset_step_init and reset_decode_step write: only a 0.5 reason reads it.
        const bool has_stop_index = step->struct_size >= offsetof(reset_step, stop_index) + sizeof s.stop_index;
        r.stop_index = has_stop_index ? s.stop_index : -1;
        r.text = s.text ? s.text : "";
        r.text_len = s.text ? s.text_len : 0;
        reset::copy_line(reset::trace_line(r), buffer, capacity, out_length);
    });
}

reset_status reset_decision_to_json(const reset_decision *decision, int32_t sequence, int32_t token, char *buffer,
                                    size_t capacity, size_t *out_length) {
    if (out_length) *out_length = 0;
    return api_call([&] {
        reset::require(decision, "decision");
        reset::check_caller_struct<reset_decision>(decision->struct_size, "decision", "reset_decision_init");
        reset_decision d;
        reset_decision_init(&d);
        std::memcpy(&d, decision, std::min<size_t>(decision->struct_size, sizeof d));
        reset::TraceRecord r = reset::decision_record(d, sequence, token);
        r.has_logprob = decision->struct_size >= offsetof(reset_decision, logprob) + sizeof d.logprob;
        reset::copy_line(reset::trace_line(r), buffer, capacity, out_length);
    });
}

void reset_calibration_options_init_sized(reset_calibration_options *options, size_t struct_size) {
    reset_calibration_options defaults;
    std::memset(&defaults, 0, sizeof defaults);
    defaults.temperature = 0.6f;
    defaults.top_p = 0.95f;
    defaults.seed = 0;
    defaults.max_new_tokens = 4096;
    defaults.percentile = 80.0f;
    defaults.processed_scores = 0;
    reset::write_defaults(options, struct_size, defaults);
}

void (reset_calibration_options_init)(reset_calibration_options *options) {
    reset_calibration_options_init_sized(options, sizeof *options);
}

void reset_calibration_result_init_sized(reset_calibration_result *result, size_t struct_size) {
    reset_calibration_result defaults;
    std::memset(&defaults, 0, sizeof defaults);
    reset::write_defaults(result, struct_size, defaults);
}

void (reset_calibration_result_init)(reset_calibration_result *result) {
    reset_calibration_result_init_sized(result, sizeof *result);
}

reset_status reset_entropy_percentiles(const float *entropies, size_t n, float percentile,
                                       reset_calibration_result *out) {
    return api_call([&] {
        reset::require(out, "out");
        reset::check_caller_struct<reset_calibration_result>(out->struct_size, "out", "reset_calibration_result_init");
        if (n > 0) reset::require(entropies, "entropies");
        std::vector<float> values(entropies, entropies + n);
        reset::write_table(reset::percentile_table(values, percentile), n, out);
    });
}

reset_status reset_calibrate(reset_model *model, const int32_t *const *prompts, const size_t *prompt_lengths,
                             size_t n_prompts, const reset_calibration_options *options,
                             reset_calibration_result *out) {
    return api_call([&] {
        reset::checked_handle(model, "model");
        reset::require(out, "out");
        reset::check_caller_struct<reset_calibration_result>(out->struct_size, "out", "reset_calibration_result_init");
        if (n_prompts == 0) fail(RESET_ERR_INVALID_ARGUMENT, "n_prompts is 0 (calibration needs prompts)");
        reset::require(prompts, "prompts");
        reset::require(prompt_lengths, "prompt_lengths");
        const reset_calibration_options o =
            reset::read_options(options, reset_calibration_options_init_sized, "options");
        if (!(o.temperature > reset::rule::kGreedyTemperature) || !std::isfinite(o.temperature))
            fail(RESET_ERR_INVALID_ARGUMENT, "options->temperature is ", o.temperature,
                 " (calibration samples: it must be finite and > 1e-6)");
        if (!(o.top_p > 0.0f && o.top_p <= 1.0f))
            fail(RESET_ERR_INVALID_ARGUMENT, "options->top_p is ", o.top_p, " (must be in (0, 1])");
        if (o.max_new_tokens < 1)
            fail(RESET_ERR_INVALID_ARGUMENT, "options->max_new_tokens is ", o.max_new_tokens, " (must be >= 1)");
        if (!(o.percentile >= 0.0f && o.percentile <= 100.0f))
            fail(RESET_ERR_INVALID_ARGUMENT, "options->percentile is ", o.percentile, " (must be in [0, 100])");
        if (o.processed_scores != 0 && o.processed_scores != 1)
            fail(RESET_ERR_INVALID_ARGUMENT, "options->processed_scores is ", o.processed_scores,
                 " (must be 0 or 1)");
        int32_t finished = 0;
        std::vector<float> entropies =
            reset::calibration_entropies(model, prompts, prompt_lengths, n_prompts, o, &finished);
        if (entropies.empty()) fail(RESET_ERR_STATE, "reset_calibrate: no token was generated");
        const size_t n = entropies.size();
        reset::write_table(reset::percentile_table(entropies, o.percentile), n, out);
        reset_calibration_result full;
        reset_calibration_result_init(&full);
        full.n_prompts = static_cast<int32_t>(n_prompts);
        full.n_finished = finished;
        // The counts sit after the table: write them only if the caller's struct has them.
        const size_t size = out->struct_size;
        if (size >= offsetof(reset_calibration_result, n_prompts) + sizeof(int32_t)) out->n_prompts = full.n_prompts;
        if (size >= offsetof(reset_calibration_result, n_finished) + sizeof(int32_t))
            out->n_finished = full.n_finished;
    });
}

}  // extern "C"
