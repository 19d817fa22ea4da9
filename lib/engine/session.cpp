// session.cpp — prefill, the decode loop, and the rollback that makes every
// failing call leave the session as it was.
#include "engine/session.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

#include "api/errors.h"
#include "engine/sequence_file.h"
#include "sampling/policy.h"
#include "sampling/top_logprobs.h"

namespace reset {

namespace {

DelimiterSets delimiters_of(const LoadedModel &model) {
    DelimiterSets sets;
    if (model.tokenizer) {
        const Tokenizer &tokenizer = tokenizer_of(model.tokenizer);
        sets.newline = tokenizer.newline_ids();
        sets.double_newline = tokenizer.double_newline_ids();
    }
    return sets;
}

// The policy a session starts with: the checkpoint's own sampling defaults
// (generation_config.json) when it samples, else greedy; its repetition
// penalty either way.
reset_policy_params initial_policy(const ModelConfig &config) {
    reset_policy_params params;
    reset_policy_params_init(&params);
    if (config.generation.do_sample) {
        params.kind = RESET_POLICY_FIXED;
        params.temperature = config.generation.temperature;
        params.top_p = config.generation.top_p;
        params.top_k = config.generation.top_k;
    } else {
        params.kind = RESET_POLICY_GREEDY;
    }
    params.repetition_penalty = config.generation.repetition_penalty;
    return params;
}

}  // namespace

Session::Session(std::shared_ptr<LoadedModel> model, const SessionOptions &options)
    : model_(std::move(model)), max_context_(options.max_context),
      top_logprobs_(std::min(options.top_logprobs, model_->config.vocab_size)), kv_cache_(options.kv_cache) {
    const DelimiterSets delimiters = delimiters_of(*model_);
    if (model_->backend == RESET_BACKEND_CUDA) {
        if (options.kv_cache == RESET_KV_CACHE_FP32)
            fail(RESET_ERR_UNSUPPORTED, "the CUDA backend stores the KV cache in BF16 or FP8, not FP32");
        DeviceSessionOptions device;
        device.sequences = options.sequences;
        device.capacity = options.max_context;
        device.kv_cache = options.kv_cache;
        device.cuda_graph = options.cuda_graph;
        device.prefill_gemm_tokens = options.prefill_gemm_tokens;
        device.programmatic_launch = options.programmatic_launch;
        device.top_logprobs = top_logprobs_;
        device_ = create_device_session(*model_, device, delimiters);
    } else {
        cache_ = std::make_unique<KvCache>(model_->config, options.sequences, options.max_context, options.kv_cache,
                                           kv_cache_scales(model_->weights));
        scratch_ = std::make_unique<ForwardScratch>(model_->config, options.max_context);
    }
    if (model_->tokenizer) tokenizer_vocab_ = tokenizer_of(model_->tokenizer).vocab_size();
    const Policy policy = validate_policy(initial_policy(model_->config), &model_->config);
    sequences_.resize(size_t(options.sequences));
    for (auto &sequence : sequences_) {
        if (!device_) sequence.logits.assign(size_t(model_->config.vocab_size), 0.0f);
        sequence.sampler = SequenceSampler(delimiters);
        sequence.sampler.set_policy(policy, true);
        if (model_->tokenizer)
            sequence.stream = std::make_unique<StreamDecoder>(tokenizer_of(model_->tokenizer), /*skip_special=*/true);
    }
}

Session::~Session() = default;

void Session::reset() {
    for (auto &sequence : sequences_) {
        sequence.length = 0;
        sequence.ended = false;
        sequence.has_logits = false;
        sequence.tokens.clear();
        sequence.sampler.clear();
        if (sequence.stream) sequence.stream->reset();
        sequence.text.clear();
        sequence.top.clear();
        sequence.held.clear();
        sequence.generated = 0;
    }
    has_logits_ = false;
    lockstep_ = true;
    broken_.clear();
    // A cancel request that no call has consumed belongs to the work just forgotten.
    cancel_requested_.store(false, std::memory_order_relaxed);
}

Session::Snapshot Session::snapshot() const {
    Snapshot s;
    for (const auto &sequence : sequences_) {
        s.lengths.push_back(sequence.length);
        s.ended.push_back(sequence.ended);
        s.sequence_has_logits.push_back(sequence.has_logits);
        s.tokens.push_back(sequence.tokens);
        s.logits.push_back(sequence.logits);
        s.samplers.push_back(sequence.sampler);
        if (sequence.stream) s.streams.push_back(*sequence.stream);
        s.held.push_back(sequence.held);
        s.generated.push_back(sequence.generated);
    }
    s.lockstep = lockstep_;
    s.has_logits = has_logits_;
    return s;
}

void Session::restore(const Snapshot &saved) {
    for (size_t i = 0; i < sequences_.size(); ++i) {
        Sequence &sequence = sequences_[i];
        sequence.length = saved.lengths[i];
        sequence.ended = saved.ended[i];
        sequence.has_logits = saved.sequence_has_logits[i];
        sequence.tokens = saved.tokens[i];
        sequence.logits = saved.logits[i];
        sequence.sampler = saved.samplers[i];
        if (sequence.stream) *sequence.stream = saved.streams[i];
        sequence.held = saved.held[i];
        sequence.generated = saved.generated[i];
        sequence.text.clear();
        sequence.top.clear();
    }
    lockstep_ = saved.lockstep;
    has_logits_ = saved.has_logits;
}

void Session::throw_if_broken() const {
    if (!broken_.empty())
        fail(RESET_ERR_STATE, "the session stopped after a device failure (", broken_, "); call reset_session_reset");
}

void Session::throw_if_cancelled() {
    if (cancel_requested_.exchange(false, std::memory_order_relaxed))
        fail(RESET_ERR_CANCELLED, "cancelled by reset_session_cancel; the session is as it was before this call");
}

bool Session::is_eos(int32_t token) const {
    const auto &eos = model_->config.eos_ids;
    return std::find(eos.begin(), eos.end(), token) != eos.end();
}

void Session::check_sequence(int32_t sequence) const {
    if (sequence < 0 || sequence >= sequences())
        fail(RESET_ERR_OUT_OF_RANGE, "sequence ", sequence, " is outside [0, ", sequences(), ")");
}

void Session::prefill(const int32_t *ids, size_t n_ids) { append(ids, n_ids, -1); }

void Session::prefill_sequence(int32_t sequence, const int32_t *ids, size_t n_ids) {
    check_sequence(sequence);
    append(ids, n_ids, sequence);
}

void Session::truncate_sequence(int32_t sequence, int32_t length) {
    check_sequence(sequence);
    cut(sequence, length);
}

void Session::cut(int32_t only, int32_t length) {
    for (int32_t s = 0; s < sequences(); ++s) {
        if (only >= 0 && s != only) continue;
        const int32_t held = sequences_[size_t(s)].length;
        if (length < 0 || length > held)
            fail(RESET_ERR_OUT_OF_RANGE, "length ", length, " is outside [0, ", held, "], the tokens sequence ", s,
                 " holds");
    }
    throw_if_broken();
    const Snapshot saved = snapshot();
    try {
        for (int32_t s = 0; s < sequences(); ++s) {
            Sequence &sequence = sequences_[size_t(s)];
            if ((only >= 0 && s != only) || sequence.length == length) continue;  // nothing to remove
            // The sequence as a new session given its first `length` tokens as a prompt would hold it,
            // less the logits: the KV cache keeps positions [0, length) and the rest is overwritten
            // as the sequence grows again.
            sequence.length = length;
            sequence.tokens.truncate(length);
            sequence.has_logits = false;
            sequence.ended = false;
            sequence.text.clear();
            sequence.top.clear();
            sequence.held.clear();
            sequence.generated = 0;
            std::vector<int32_t> kept(static_cast<size_t>(length));
            for (int32_t i = 0; i < length; ++i) kept[size_t(i)] = sequence.tokens[i];
            sequence.sampler.clear();
            sequence.sampler.add_context(kept.data(), kept.size());
            if (sequence.stream) {
                sequence.stream->reset();
                for (int32_t id : kept)
                    if (id < tokenizer_vocab_) sequence.stream->push(id);
            }
        }
        rederive_sharing();
    } catch (...) {
        restore(saved);
        throw;
    }
}

void Session::rederive_sharing() {
    // Sequences that hold the same tokens (cut back to what they share, or copies) compute them once again.
    lockstep_ = true;
    has_logits_ = false;
    const Sequence &first = sequences_.front();
    for (const Sequence &sequence : sequences_) {
        has_logits_ = has_logits_ || sequence.length > 0;
        bool same = sequence.has_logits == first.has_logits && sequence.ended == first.ended &&
                    sequence.tokens.size() == first.tokens.size();
        for (int64_t i = 0; same && i < first.tokens.size(); ++i) same = sequence.tokens[i] == first.tokens[i];
        lockstep_ = lockstep_ && same;
    }
}

void Session::copy_sequence(int32_t from, int32_t to) {
    check_sequence(from);
    check_sequence(to);
    throw_if_broken();
    if (from == to) return;
    const Sequence &source = sequences_[size_t(from)];
    // Everything that allocates first, into the new state: a failure then leaves the session as it was.
    // The sampler's whole state (ReSET's step state, the penalties' counts, the draw counter) goes, so `to`
    // continues as `from` would; its draws stay its own, keyed by its index (reset.h).
    Sequence state;
    state.length = source.length;
    state.ended = source.ended;
    state.has_logits = source.has_logits;
    state.tokens = source.tokens;  // shared until either grows
    state.logits = source.logits;  // CPU backend (empty on the CUDA backend)
    state.sampler = source.sampler;
    if (source.stream) state.stream = std::make_unique<StreamDecoder>(*source.stream);
    state.held = source.held;
    state.generated = source.generated;
    // Then the KV cache's positions [0, length) and, on the device, the current logits.  A failed device
    // copy leaves `to`'s rows unknown: the session stops until a reset, as after other device failures.
    if (device_) {
        if (source.length > 0) breaking_on_failure([&] { device_->copy_sequence(from, to, source.length); });
    } else {
        cache_->copy_sequence(from, to, source.length);
    }
    replace_sequence(to, std::move(state));
}

void Session::replace_sequence(int32_t index, Sequence &&state) {
    sequences_[size_t(index)] = std::move(state);
    rederive_sharing();
}

SequenceRecord Session::sequence_record(int32_t index) const {
    const Sequence &sequence = sequences_[size_t(index)];
    SequenceRecord record;
    record.tokens.resize(size_t(sequence.length));
    for (size_t i = 0; i < record.tokens.size(); ++i) record.tokens[i] = sequence.tokens[int64_t(i)];
    record.has_logits = sequence.has_logits;
    if (sequence.has_logits && device_) {
        record.logits.resize(size_t(model_->config.vocab_size));
        device_->copy_logits(index, record.logits.data());
    } else if (sequence.has_logits) {
        record.logits = sequence.logits;
    }
    record.ended = sequence.ended;
    record.generated = sequence.generated;
    record.sampler = sequence.sampler.saved();
    if (sequence.stream) record.stream = sequence.stream->state();
    record.held = sequence.held;
    return record;
}

LayerReader Session::layer_reader(int32_t index) const {
    // Reading the device's cache changes nothing there: a failure leaves the session working.
    return [this, index](int32_t layer, uint8_t *keys, uint8_t *values) {
        const int32_t length = sequences_[size_t(index)].length;
        if (device_) device_->read_kv(index, layer, length, keys, values);
        else cache_->export_layer(layer, index, length, keys, values);
    };
}

void Session::save_sequence(int32_t index, const std::string &path) const {
    check_sequence(index);
    throw_if_broken();
    write_sequence_file(path, sequence_file_identity(*model_, kv_cache_), device_ ? "cuda" : "cpu",
                        sequence_record(index), layer_reader(index));
}

size_t Session::save_sequence_to_memory(int32_t index, uint8_t *buffer, size_t capacity) const {
    check_sequence(index);
    throw_if_broken();
    return write_sequence_memory(sequence_file_identity(*model_, kv_cache_), device_ ? "cuda" : "cpu",
                                 sequence_record(index), layer_reader(index), buffer, capacity);
}

void Session::load_sequence(int32_t index, const std::string &path) {
    check_sequence(index);
    throw_if_broken();
    install_sequence(index, read_sequence_file(path, sequence_file_identity(*model_, kv_cache_), max_context_));
}

void Session::load_sequence_from_memory(int32_t index, const uint8_t *bytes, size_t size) {
    check_sequence(index);
    throw_if_broken();
    install_sequence(index,
                     read_sequence_memory(bytes, size, sequence_file_identity(*model_, kv_cache_), max_context_));
}

void Session::install_sequence(int32_t index, SequenceFile file) {
    // Everything is checked and everything that allocates is built before the sequence changes.
    SequenceRecord &record = file.record;
    const Sequence &target = sequences_[size_t(index)];
    Sequence state;
    state.length = int32_t(record.tokens.size());
    state.ended = record.ended;
    state.has_logits = record.has_logits;
    state.tokens.append(record.tokens.data(), record.tokens.size());
    if (!device_)  // the CPU backend keeps a vocabulary's logits whether or not they are current
        state.logits =
            record.has_logits ? std::move(record.logits) : std::vector<float>(size_t(model_->config.vocab_size));
    state.sampler = target.sampler;  // this session's policy, delimiters and bias
    state.sampler.restore(record.sampler);
    if (target.stream) {
        state.stream = std::make_unique<StreamDecoder>(*target.stream);
        state.stream->restore(record.stream);
    }
    state.held = std::move(record.held);
    state.generated = record.generated;
    const int32_t length = state.length;
    if (device_) {
        // A failed upload leaves the sequence's rows unknown: the session stops until a reset.
        breaking_on_failure([&] {
            if (length > 0) device_->write_kv(index, length, file.keys, file.values);
            if (record.has_logits) device_->write_logits(index, record.logits.data());
        });
    } else {
        for (int32_t layer = 0; layer < model_->config.n_layers; ++layer)
            cache_->import_layer(layer, index, length, file.keys[size_t(layer)], file.values[size_t(layer)]);
    }
    replace_sequence(index, std::move(state));
}

const SharedTokens &Session::tokens(int32_t sequence) const {
    check_sequence(sequence);
    return sequences_[size_t(sequence)].tokens;
}

void Session::append(const int32_t *ids, size_t n_ids, int32_t only) {
    if (n_ids == 0) fail(RESET_ERR_INVALID_ARGUMENT, "n_ids is 0: nothing to prefill");
    require(ids, "ids");
    const int32_t vocab = model_->config.vocab_size;
    for (size_t i = 0; i < n_ids; ++i)
        if (ids[i] < 0 || ids[i] >= vocab)
            fail(RESET_ERR_OUT_OF_RANGE, "token id ", ids[i], " at index ", i, " is outside the vocabulary [0, ", vocab, ")");
    // The sequences that receive the tokens: every one, or `only`.
    std::vector<int32_t> targets;
    for (int32_t s = 0; s < sequences(); ++s)
        if (only < 0 || s == only) targets.push_back(s);
    for (int32_t s : targets) {
        const Sequence &sequence = sequences_[size_t(s)];
        if (uint64_t(sequence.length) + n_ids > uint64_t(max_context_))
            fail(RESET_ERR_CONTEXT_OVERFLOW, "prefill of ", n_ids, " tokens would grow ",
                 only < 0 ? "a sequence" : "the sequence", " from ", sequence.length, " to ",
                 uint64_t(sequence.length) + n_ids, " tokens, past max_context ", max_context_);
    }
    // One sequence continues from the prompt every sequence shares; it has no
    // other start (the rest would have no logits to decode from).
    if (only >= 0 && !has_logits_)
        fail(RESET_ERR_STATE, "no prompt yet: call reset_prefill first, then reset_prefill_sequence to continue one "
             "sequence");

    throw_if_broken();
    const Snapshot saved = snapshot();
    try {
        // Sequences holding the same tokens are computed once (sequence 0) and copied.
        const bool shared = only < 0 && lockstep_;
        const std::vector<int32_t> computed = shared ? std::vector<int32_t>{0} : targets;
        if (device_) prefill_device(ids, n_ids, computed, shared);
        else prefill_cpu(ids, n_ids, computed, shared);
        for (int32_t s : targets) {
            Sequence &sequence = sequences_[size_t(s)];
            // Prompt tokens are not streamed, but the decoder must know them
            // (sentencepiece treats the first piece of a text differently).
            if (sequence.stream)
                for (size_t i = 0; i < n_ids; ++i)
                    if (ids[i] < tokenizer_vocab_) sequence.stream->push(ids[i]);
            sequence.text.clear();
            sequence.length += int32_t(n_ids);
            sequence.tokens.append(ids, n_ids);
            sequence.has_logits = true;
            sequence.ended = false;  // new prompt text: the sequence generates again
            // A new generation: its own stop search and budget.  Text still held back belonged to
            // one the caller ended (reset.h: forgotten).
            sequence.held.clear();
            sequence.generated = 0;
            sequence.sampler.add_context(ids, n_ids);  // the repetition penalty's context
        }
        if (only >= 0 && sequences() > 1) lockstep_ = false;
        has_logits_ = true;
    } catch (...) {
        restore(saved);
        throw;
    }
}

void Session::prefill_cpu(const int32_t *ids, size_t n_ids, const std::vector<int32_t> &computed, bool copy_to_all) {
    for (int32_t s : computed) {
        Sequence &sequence = sequences_[size_t(s)];
        // kCpuForwardChunk tokens a pass: the same K/V and logits as one at a time, each weight read once.
        for (size_t i = 0; i < n_ids; i += size_t(kCpuForwardChunk)) {
            throw_if_cancelled();
            const int32_t count = int32_t(std::min(n_ids - i, size_t(kCpuForwardChunk)));
            const bool last = i + size_t(count) == n_ids;
            cpu_forward_chunk(*model_, ids + i, count, sequence.length + int32_t(i), s, *cache_, *scratch_,
                              last ? sequence.logits.data() : nullptr, [this] { throw_if_cancelled(); });
        }
    }
    if (copy_to_all)
        for (size_t s = 1; s < sequences_.size(); ++s) {
            cache_->copy_sequence(0, int32_t(s), sequences_[0].length + int32_t(n_ids));
            sequences_[s].logits = sequences_[0].logits;
        }
}

// Run device work after which the device may be ahead of the host: if anything
// throws (a device error, or a host allocation after the device ran), the
// caller restores the host's state, which then no longer matches the device's,
// so the session refuses work until a reset.
template <typename Work>
void Session::breaking_on_failure(Work &&work) {
    try {
        work();
    } catch (const std::exception &e) {
        broken_ = e.what();
        throw;
    } catch (...) {
        broken_ = "an unknown exception during device work";
        throw;
    }
}

void Session::prefill_device(const int32_t *ids, size_t n_ids, const std::vector<int32_t> &computed,
                             bool copy_to_all) {
    // In chunks of kDevicePrefillTokens tokens, with cancellation checked
    // before each.  Every sequence's last chunk, which alone computes logits,
    // runs after all the others and with no check in between: a cancelled
    // prefill (which the caller restores) leaves the device's current logits
    // as they were, like the host's.
    constexpr size_t kChunk = size_t(kDevicePrefillTokens);
    const size_t last_chunk = (n_ids - 1) / kChunk * kChunk;
    for (int32_t s : computed)
        for (size_t done = 0; done < last_chunk; done += kChunk) {
            throw_if_cancelled();
            device_->prefill(s, ids + done, int32_t(kChunk), sequences_[size_t(s)].length + int32_t(done), false);
        }
    throw_if_cancelled();
    // From here the device replaces current logits.
    breaking_on_failure([&] {
        for (int32_t s : computed)
            device_->prefill(s, ids + last_chunk, int32_t(n_ids - last_chunk),
                             sequences_[size_t(s)].length + int32_t(last_chunk), true);
        if (copy_to_all)
            for (size_t s = 1; s < sequences_.size(); ++s)
                device_->copy_sequence(0, int32_t(s), sequences_[0].length + int32_t(n_ids));
    });
}

void Session::copy_logits(int32_t sequence, float *out, size_t capacity) const {
    check_sequence(sequence);
    require(out, "out");
    if (!has_logits_) fail(RESET_ERR_STATE, "no logits yet: call reset_prefill first");
    if (!sequences_[size_t(sequence)].has_logits)
        fail(RESET_ERR_STATE, "sequence ", sequence, " has no logits since reset_truncate removed tokens from it; "
             "prefill at least one token first");
    throw_if_broken();
    const size_t vocab = size_t(model_->config.vocab_size);
    if (capacity < vocab) fail(RESET_ERR_BUFFER_TOO_SMALL, "capacity ", capacity, " is less than the vocabulary size ", vocab);
    // The CUDA step runs the token it draws in the same graph, so when that token ends the
    // sequence the logits it was drawn from are already replaced, and an ended row keeps running
    // in later steps' graphs: refuse rather than return them.
    if (device_ && sequences_[size_t(sequence)].ended)
        fail(RESET_ERR_STATE, "sequence ", sequence, " has ended: the CUDA backend does not keep an ended "
             "sequence's logits (the CPU backend does); prefill a new turn for new logits");
    if (device_) device_->copy_logits(sequence, out);
    else std::copy_n(sequences_[size_t(sequence)].logits.data(), vocab, out);
}

int32_t Session::length(int32_t sequence) const {
    if (sequence < 0 || sequence >= sequences()) return -1;
    return sequences_[size_t(sequence)].length;
}

void Session::set_stop(const reset_stop_options *options) {
    stop_ = make_stop_conditions(options, model_->config.vocab_size, model_->tokenizer != nullptr);
}

void Session::set_logit_bias(const reset_logit_bias *entries, size_t count) {
    auto bias = std::make_shared<const LogitBias>(make_logit_bias(entries, count, model_->config.vocab_size));
    // An upload that fails part way leaves the device's bias unknown: the session stops until a reset.
    if (device_) breaking_on_failure([&] { device_->set_logit_bias(*bias); });
    for (auto &sequence : sequences_) sequence.sampler.set_logit_bias(bias->empty() ? nullptr : bias);
}

const std::string &Session::held_text(int32_t sequence) const {
    check_sequence(sequence);
    return sequences_[size_t(sequence)].held;
}

void Session::set_policy(const reset_policy_params &params) {
    const Policy policy = validate_policy(params, &model_->config);
    if (device_) device_->reserve_policy_window(policy.window);
    for (auto &sequence : sequences_) sequence.sampler.set_policy(policy, policy.reset_state);
}

int32_t Session::decode_step(reset_step *steps, size_t capacity) {
    require(steps, "steps");
    if (capacity < sequences_.size())
        fail(RESET_ERR_BUFFER_TOO_SMALL, "steps holds ", capacity, " entries but the session has ", sequences_.size(),
             " sequences");
    const uint32_t stride = steps[0].struct_size;
    if (stride < offsetof(reset_step, entropy))
        fail(RESET_ERR_INVALID_ARGUMENT, "steps[0].struct_size is ", stride, "; call reset_step_init first");
    if (!has_logits_) fail(RESET_ERR_STATE, "nothing to decode from: call reset_prefill first");
    int32_t active = 0;
    for (size_t s = 0; s < sequences_.size(); ++s) {
        const Sequence &sequence = sequences_[s];
        if (sequence.ended) continue;
        ++active;
        if (!sequence.has_logits)
            fail(RESET_ERR_STATE, "sequence ", s, " has no logits to draw from since reset_truncate removed tokens "
                 "from it; prefill at least one token into it first (reset_prefill_sequence)");
        if (sequence.length >= max_context_)
            fail(RESET_ERR_CONTEXT_OVERFLOW, "a sequence holds ", sequence.length, " tokens, the session's max_context; "
                 "reset the session or create one with a larger max_context");
    }
    if (active == 0) fail(RESET_ERR_STATE, "every sequence has ended; reset the session or prefill a new turn");

    throw_if_broken();
    const Snapshot saved = snapshot();
    std::vector<reset_step> results(sequences_.size());
    // A step's text is that step's only: a sequence that has ended, or whose
    // token has no complete character yet, reports none.
    for (auto &sequence : sequences_) {
        sequence.text.clear();
        sequence.top.clear();
    }
    try {
        throw_if_cancelled();
        if (device_) sample_and_forward_device(results);
        else sample_and_forward_cpu(results);
    } catch (...) {
        restore(saved);
        throw;
    }

    int32_t still_active = 0;
    for (size_t s = 0; s < sequences_.size(); ++s) {
        results[s].text = sequences_[s].text.c_str();
        results[s].text_len = sequences_[s].text.size();
        results[s].top_logprob_count = int32_t(sequences_[s].top.size());
        results[s].top_logprobs = sequences_[s].top.empty() ? nullptr : sequences_[s].top.data();
        if (!sequences_[s].ended) ++still_active;
        // Write only what the caller's (possibly older or newer) struct has room for.
        auto *destination = reinterpret_cast<char *>(steps) + size_t(stride) * s;
        std::memcpy(destination + sizeof(uint32_t), reinterpret_cast<const char *>(&results[s]) + sizeof(uint32_t),
                    std::min<size_t>(stride, sizeof(reset_step)) - sizeof(uint32_t));
    }
    return still_active;
}

// Start sequence s's result of a step; for a sequence that has ended, fill it
// (no token) and return false.
bool Session::start_result(size_t s, reset_step &r) const {
    r.struct_size = sizeof(reset_step);
    r.sequence = int32_t(s);
    r.logprob = NAN;  // no token yet (reset.h)
    r.stop_index = -1;
    if (!sequences_[s].ended) return true;
    r.token = -1;
    r.end_of_generation = 1;
    r.end_reason = RESET_END_FINISHED;
    return false;
}

// Fill r for a token sequence s took, and end the sequence where the token is
// an end-of-generation id or meets a stop condition (reset_set_stop).
// Returns whether the token enters the context: the caller then runs its
// forward pass (the CPU backend) or counts it (the CUDA step already ran it).
bool Session::finish_token(size_t s, int32_t token, const SamplerSignals &signals, reset_step &r) {
    Sequence &sequence = sequences_[s];
    r.token = token;
    r.logprob = signals.logprob;
    r.entropy = signals.entropy;
    r.step_entropy = signals.step_entropy;
    r.global_mean = signals.global_mean;
    r.threshold = signals.threshold;
    r.temperature = signals.temperature;
    r.step_index = signals.step_index;
    r.boundary = signals.boundary;
    r.uncertain = signals.uncertain;
    // Embedding matrices are often padded past the tokenizer's vocabulary
    // (Qwen3: 151,936 rows, 151,669 tokens); such an id has no text.
    const bool has_text = sequence.stream && token < tokenizer_vocab_;
    std::string text = std::move(sequence.held);
    sequence.held.clear();
    if (has_text) text += sequence.stream->push(token);
    ++sequence.generated;
    // How the token itself ends the sequence, if it does.
    reset_end_reason reason = RESET_END_NONE;
    if (is_eos(token) && !stop_.ignore_eos) reason = RESET_END_EOS;
    else if (stop_.is_stop_id(token)) reason = RESET_END_STOP;
    else if (stop_.max_tokens > 0 && sequence.generated >= stop_.max_tokens) reason = RESET_END_LENGTH;
    // The generation's last text includes an incomplete character's bytes (as U+FFFD), searched too.
    if (reason != RESET_END_NONE && sequence.stream) text += sequence.stream->finish();
    if (!stop_.strings.empty()) {
        const StopMatch match = find_stop(stop_, text);
        if (match.index >= 0) {  // a stop string comes first, whatever the token is
            text.resize(stop_.include_stop_string ? match.end : match.start);  // nothing after it
            if (reason == RESET_END_NONE && sequence.stream) sequence.stream->finish();
            reason = RESET_END_STOP;
            r.stop_index = match.index;
        } else if (reason == RESET_END_NONE) {
            sequence.held = text.substr(text.size() - match.hold);
            text.resize(text.size() - match.hold);
        }  // else the generation is over: what was held back began no stop string after all
    }
    if (reason != RESET_END_NONE) {
        sequence.ended = true;
        r.end_of_generation = 1;
        r.end_reason = reason;
    }
    sequence.text = std::move(text);
    // A stop string's token leaves the context as a stop id's and an end-of-generation id's do.
    return reason == RESET_END_NONE || reason == RESET_END_LENGTH;
}

void Session::sample_and_forward_cpu(std::vector<reset_step> &results) {
    const int32_t vocab = model_->config.vocab_size;
    int32_t first_token = -1;
    bool all_same = true;
    for (size_t s = 0; s < sequences_.size(); ++s) {
        Sequence &sequence = sequences_[s];
        reset_step &r = results[s];
        if (!start_result(s, r)) {
            all_same = false;
            continue;
        }
        SamplerSignals signals;
        int32_t token = -1;
        try {
            token = sequence.sampler.sample(sequence.logits.data(), vocab, int32_t(s), &signals);
        } catch (const Error &e) {
            // The logits are the model's, not the caller's: NaN or +inf ones are a model (weights)
            // failure, as the CUDA backend reports them.
            if (e.status() != RESET_ERR_INVALID_ARGUMENT) throw;
            fail(RESET_ERR_BACKEND, "the model produced unusable logits for sequence ", s, ": ", e.what());
        }
        if (top_logprobs_ > 0) {  // before the forward pass replaces the logits
            sequence.top.resize(size_t(top_logprobs_));
            top_logprobs(sequence.logits.data(), vocab, top_logprobs_, signals.raw_max, signals.log_sum_exp,
                         sequence.top.data());
        }
        sequence.sampler.accept(token);
        const bool enters_context = finish_token(s, token, signals, r);
        if (first_token < 0) first_token = token;
        else if (token != first_token) all_same = false;
        if (sequence.ended) all_same = false;
        if (!enters_context) continue;
        throw_if_cancelled();
        cpu_forward(*model_, token, sequence.length, int32_t(s), *cache_, *scratch_, sequence.logits.data(),
                    [this] { throw_if_cancelled(); });
        sequence.length += 1;
        sequence.tokens.append(&token, 1);
    }
    if (!all_same) lockstep_ = false;
}

void Session::sample_and_forward_device(std::vector<reset_step> &results) {
    const size_t n = sequences_.size();
    std::vector<SequenceSampler *> samplers(n);
    std::vector<uint8_t> active(n);
    std::vector<int32_t> positions(n);
    for (size_t s = 0; s < n; ++s) {
        samplers[s] = &sequences_[s].sampler;
        active[s] = !sequences_[s].ended;
        positions[s] = sequences_[s].length;
    }
    std::vector<DeviceStepResult> device_results;
    int32_t first_token = -1;
    bool all_same = true;
    breaking_on_failure([&] {
        device_->step(samplers, active, positions, device_results);
        for (size_t s = 0; s < n; ++s) {
            Sequence &sequence = sequences_[s];
            reset_step &r = results[s];
            if (!start_result(s, r)) {  // an ended sequence: inactive in the device step too
                all_same = false;
                continue;
            }
            DeviceStepResult &d = device_results[s];
            // The device sampler's SamplingStatus (kernels/sampling.h: 1 a NaN or +inf logit, 2 every logit -inf,
            // 3 a policy out of range), in the CPU backend's words where they mean the same.
            if (d.status == 1 || d.status == 2)
                fail(RESET_ERR_BACKEND, "the model produced unusable logits for sequence ", s,
                     d.status == 1 ? " (a NaN or +inf logit)"
                                    : " (every logit -inf, counting those the logit bias bans)");
            if (d.status != 0)
                fail(RESET_ERR_BACKEND, "the device sampler rejected sequence ", s, "'s policy (status ", d.status,
                     ")");
            sequence.top = std::move(d.top);
            const bool enters_context = finish_token(s, d.token, d.signals, r);
            if (first_token < 0) first_token = d.token;
            else if (d.token != first_token) all_same = false;
            if (sequence.ended) all_same = false;
            if (enters_context) {  // the step's graph ran it
                sequence.length += 1;
                sequence.tokens.append(&d.token, 1);
            }
        }
    });
    if (!all_same) lockstep_ = false;
}

}  // namespace reset
