// serve.cpp — `reset serve`: an OpenAI-compatible HTTP server over one model
// (serve.h says what it speaks).  cpp-httplib (Debian's libcpp-httplib-dev)
// serves HTTP; every request is read and checked on its connection's thread,
// and the model serves one generation at a time, in the order they came.
#include <httplib.h>
#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <ctime>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

#include "serve.h"

namespace cli {

namespace serve {
namespace {

// --- the model's one session ----------------------------------------------------------------------

// Requests take turns on the model in the order they arrived (a std::mutex promises no order).
class TurnQueue {
public:
    class Turn {
    public:
        explicit Turn(TurnQueue &queue) : queue_(queue) {
            std::unique_lock<std::mutex> lock(queue_.mutex_);
            const uint64_t ticket = queue_.next_++;
            queue_.ready_.wait(lock, [&] { return queue_.serving_ == ticket; });
        }
        ~Turn() {
            std::lock_guard<std::mutex> lock(queue_.mutex_);
            ++queue_.serving_;
            queue_.ready_.notify_all();
        }

    private:
        TurnQueue &queue_;
    };

private:
    std::mutex mutex_;
    std::condition_variable ready_;
    uint64_t next_ = 0, serving_ = 0;
};

// What serving one request came to.
struct Outcome {
    size_t cached_tokens = 0;  // prompt tokens the session already held (not prefilled again)
    double decode_seconds = 0;  // from the prefill's end to the last step
    double emit_seconds = 0;    // of decode_seconds, the server's own between steps: a chunk built and queued
    bool client_gone = false;  // the stream's reader went away: generation stopped there
};

// A session's shape: its parallel sequences and whether its steps report top_logprobs.  Both are
// fixed when a session is created, so a request of another shape gets a new session (and the
// prompt cache starts over): a session for every shape at once would hold their KV caches at once.
struct Shape {
    int sequences;
    int top_logprobs;
    bool operator==(const Shape &o) const { return sequences == o.sequences && top_logprobs == o.top_logprobs; }
};

class Engine {
public:
    Engine(reset_model *model, reset_session_options options, ServerMetrics &metrics)
        : model_(model), options_(options), metrics_(metrics) {}
    ~Engine() { reset_session_free(session_); }

    // The session of `shape`, made now: at start, to reserve the largest one the server may need.
    reset_session *session_for(Shape shape) {
        if (session_ && shape_ == shape) return session_;
        {
            std::lock_guard<std::mutex> lock(session_mutex_);
            reset_session_free(session_);
            session_ = nullptr;
        }
        reset_session_options options = options_;
        options.sequences = shape.sequences;
        options.top_logprobs = shape.top_logprobs;
        reset_session *created = nullptr;
        const reset_status status = reset_session_create(model_, &options, &created);
        if (status != RESET_OK) throw library_error(status, "cannot create a session");
        std::lock_guard<std::mutex> lock(session_mutex_);
        session_ = created;
        shape_ = shape;
        return session_;
    }

    // Serve one request that arrived at `arrival` (now_seconds()): prefill what the session does not
    // already hold of its prompt, then decode until every sample has ended; each step's output goes
    // to `emit`, which returns false when the client has gone (the generation stops there).  Throws
    // ApiError.
    Outcome run(const GenerationRequest &request, double arrival,
                const std::function<bool(const SampleStep &)> &emit) {
        metrics_.request_waiting();
        const double queued = now_seconds();
        TurnQueue::Turn turn(queue_);
        metrics_.request_running(now_seconds() - queued);
        struct Running {  // running no more however this ends
            ServerMetrics &metrics;
            ~Running() { metrics.request_done(); }
        } running{metrics_};
        if (stopping_) throw ApiError(503, "the server is shutting down");
        try {
            return generate(request, arrival, emit);
        } catch (const ApiError &e) {
            // A device failure leaves a session refusing work until it is reset (reset.h): start
            // the next request on a new one.
            if (e.http_status == 500) drop_session();
            throw;
        } catch (const std::bad_alloc &) {
            drop_session();
            throw ApiError(503, "out of host memory");
        } catch (const std::exception &e) {  // a CliError from a helper: nothing may leave as another type
            drop_session();
            throw ApiError(500, e.what());
        }
    }

    // At shutdown: the running generation stops at its next step, and no other starts.
    void stop() {
        stopping_ = true;
        std::lock_guard<std::mutex> lock(session_mutex_);
        if (session_) reset_session_cancel(session_);
    }

private:
    reset_model *model_;
    reset_session_options options_;
    ServerMetrics &metrics_;
    reset_session *session_ = nullptr;
    Shape shape_{0, 0};
    std::mutex session_mutex_;  // session_ as stop() sees it, from the signal thread
    TurnQueue queue_;
    std::atomic<bool> stopping_{false};

    void drop_session() {
        std::lock_guard<std::mutex> lock(session_mutex_);
        reset_session_free(session_);
        session_ = nullptr;
        metrics_.kv_cache(0, 0);
    }

    // The tokens the session's sequences hold, as /metrics' KV-cache usage; returns the count.
    int64_t publish_kv_cache(reset_session *session, int sequences) {
        int64_t held = 0;
        for (int s = 0; s < sequences; ++s) held += std::max(reset_session_length(session, s), 0);
        metrics_.kv_cache(held, int64_t(sequences) * reset_session_max_context(session));
        return held;
    }

    static void check_call(reset_status status, const char *what) {
        if (status != RESET_OK) throw library_error(status, what);
    }

    // Keep the longest prefix of the prompt that every sequence already holds, as llama.cpp's server
    // does (a chat's next turn prefills only the new messages).  At least the prompt's last token is
    // prefilled again, for its logits, and every sequence is cut, so its sampler starts over: an
    // answer depends on the request and its seed alone, not on what the session held before.
    size_t reuse_prefix(reset_session *session, int sequences, const std::vector<int32_t> &prompt) {
        size_t keep = prompt.size() - 1;
        size_t shortest = SIZE_MAX;
        for (int s = 0; s < sequences; ++s) {
            const std::vector<int32_t> held = session_tokens(session, s);
            size_t common = 0;
            while (common < held.size() && common < prompt.size() && held[common] == prompt[common]) ++common;
            keep = std::min(keep, common);
            shortest = std::min(shortest, held.size());
        }
        // A sequence holding exactly `keep` tokens would be left as it is, its sampler's last tokens
        // and draw counter with it (reset.h); cut one more, so that every sequence starts over.
        if (keep > 0 && keep == shortest) --keep;
        check_call(keep == 0 ? reset_session_reset(session) : reset_truncate(session, int32_t(keep)), "prompt cache");
        return keep;
    }

    // thinking_token_budget (one sample): once the reasoning has used the budget, the text a stop
    // string held back goes out, then "</think>" is appended as prompt text and goes out as the
    // answer's text, and the sample may use what is left of max_tokens (a prefill starts the
    // library's count again).  False when the context cannot hold "</think>": the sample ends
    // there ("length").
    bool close_reasoning_at_budget(reset_session *session, const GenerationRequest &request,
                                   ReasoningTracker &reasoning, const std::string &text, int32_t generated,
                                   const std::function<bool(const SampleStep &)> &emit) {
        reasoning.see(text);
        if (!reasoning.thinking || reasoning.tokens < request.thinking_budget) return true;
        SampleStep held;
        held.text = held_text(session);
        std::string appended;
        std::vector<int32_t> appended_ids;
        const reset_status closed = close_reasoning(session, reset_model_tokenizer(model_), reasoning.after_newline,
                                                    &appended, &appended_ids);
        if (closed == RESET_ERR_CONTEXT_OVERFLOW) {
            held.finish = "length";
            emit(held);
            return false;
        }
        check_call(closed, "closing the reasoning");
        reasoning.closed();
        held.text += appended;
        request.stop.set(session, request.max_tokens - generated);
        emit(held);
        return true;
    }

    Outcome generate(const GenerationRequest &request, double arrival,
                     const std::function<bool(const SampleStep &)> &emit) {
        reset_session *session =
            session_for({request.n, request.top_logprobs > 0 ? RESET_MAX_TOP_LOGPROBS : 0});
        Outcome outcome;
        outcome.cached_tokens = reuse_prefix(session, request.n, request.prompt);

        reset_policy_params policy = request.policy.params;
        policy.reset_state = 1;
        check_call(reset_set_policy(session, &policy), "sampling");
        request.stop.set(session, request.max_tokens);
        check_call(reset_set_logit_bias(session, request.logit_bias.data(), request.logit_bias.size()), "logit_bias");

        check_call(reset_prefill(session, request.prompt.data() + outcome.cached_tokens,
                                 request.prompt.size() - outcome.cached_tokens),
                   "prefill");
        int64_t kv_held = publish_kv_cache(session, request.n);

        const double decode_start = now_seconds();
        double last_step = 0;  // when the previous step returned (0: none yet)
        std::vector<reset_step> steps(size_t(request.n));
        std::vector<bool> ended(size_t(request.n), false);  // for a step that fails at the end of the context
        ReasoningTracker reasoning;  // thinking_token_budget's count (n = 1)
        reasoning.thinking = request.reasoning_first;
        int32_t generated = 0;       // the one sample's tokens, for the budget's max_tokens
        for (bool done = false; !done;) {
            // A stop that came while the session was being made found nothing to cancel.
            if (stopping_) throw ApiError(503, "the server is shutting down");
            reset_step_init(steps.data(), steps.size());
            int32_t still_active = 0;
            const reset_status status = reset_decode_step(session, steps.data(), steps.size(), &still_active);
            if (status == RESET_ERR_CONTEXT_OVERFLOW) {
                // Not reached (max_tokens keeps the answer inside the context), but if it were: the
                // answers end at the context, with the text a stop string held back.
                for (int i = 0; i < request.n; ++i) {
                    if (ended[size_t(i)]) continue;
                    SampleStep last;
                    last.index = i;
                    last.text = held_text(session, i);
                    last.finish = "length";
                    if (!emit(last)) outcome.client_gone = true;
                }
                break;
            }
            check_call(status, "decode");
            const double stepped = now_seconds();
            // One KV position per sample that drew a token; the exact count again at the end.
            for (const reset_step &step : steps) kv_held += step.token >= 0;
            if (last_step == 0) metrics_.first_token(stepped - arrival, kv_held);
            else metrics_.step(stepped - last_step, kv_held);
            last_step = stepped;
            for (int i = 0; i < request.n; ++i) {
                const reset_step &step = steps[size_t(i)];
                if (step.token < 0) continue;  // ended in an earlier step
                SampleStep out;
                out.index = i;
                out.token = step.token;
                out.text.assign(step.text, step.text_len);
                out.logprob = step.logprob;
                // The session reports RESET_MAX_TOP_LOGPROBS (its shape); the request asked for its own.
                out.top.assign(step.top_logprobs,
                               step.top_logprobs + std::min(step.top_logprob_count, int32_t(request.top_logprobs)));
                if (step.end_of_generation) {
                    ended[size_t(i)] = true;
                    out.finish = step.end_reason == RESET_END_LENGTH ? "length" : "stop";
                    if (step.end_reason == RESET_END_STOP) {
                        out.stop_string = step.stop_index;
                        out.stop_id = step.stop_index < 0;
                    }
                    // The end-of-generation token's own text is not part of the answer (vLLM skips
                    // special tokens); text a stop string held back before it is.  A stop id's text
                    // stays unless it is a special token's, as the library and vLLM report it.
                    if (step.end_reason == RESET_END_EOS) {
                        const std::string own = token_text(reset_model_tokenizer(model_), step.token);
                        if (out.text.size() >= own.size() &&
                            out.text.compare(out.text.size() - own.size(), own.size(), own) == 0)
                            out.text.resize(out.text.size() - own.size());
                    }
                }
                const double emit_start = now_seconds();
                if (!emit(out)) outcome.client_gone = true;
                outcome.emit_seconds += now_seconds() - emit_start;
                ++generated;
                if (request.thinking_budget >= 0 && !step.end_of_generation && !outcome.client_gone &&
                    !close_reasoning_at_budget(session, request, reasoning, out.text, generated, emit)) {
                    done = true;  // the context cannot hold "</think>": the answer ends there
                    break;
                }
            }
            done = done || outcome.client_gone || still_active == 0;
        }
        outcome.decode_seconds = now_seconds() - decode_start;
        publish_kv_cache(session, request.n);
        return outcome;
    }
};

// --- HTTP ------------------------------------------------------------------------------------------

// "libreset-0.10.0": the library's version, which with the model decides the answers.
std::string fingerprint() {
    const std::string version = reset_version_string();
    return "libreset-" + version.substr(0, version.find(' '));
}

std::string dump(const Json &json) { return json.dump(-1, ' ', false, Json::error_handler_t::replace); }

void send_json(httplib::Response &res, int status, const Json &body) {
    res.status = status;
    res.set_content(dump(body), "application/json");
}

void send_error(httplib::Response &res, const ApiError &e) { send_json(res, e.http_status, e.body()); }

// A stream's server-sent events, made and written on a thread of their own.  The decode steps are
// synchronous (reset_decode_step returns the tokens), so host time between two steps is time the GPU
// waits: a chunk's JSON and its write to the socket (which runs the loopback's TCP work) were ~2% of
// a batch-1 step on the H100 (docs/serve.md).  The decode loop only queues what makes an event (the
// step, copied: the choice's text and logprobs are added to it here, session 43); events queued
// together go out in one write.
class EventWriter {
public:
    explicit EventWriter(httplib::DataSink &sink) : sink_(sink), thread_([this] { run(); }) {}
    ~EventWriter() { finish(); }
    EventWriter(const EventWriter &) = delete;
    EventWriter &operator=(const EventWriter &) = delete;

    // What makes one event's payload, called on the writer's thread in queue order; null: no event.
    using Maker = std::function<Json()>;

    // Queues one event ("data: <payload>"); false once a write has failed (the client went away).
    // Waits while kMaxQueued events are waiting: a client that reads slowly slows the generation,
    // as it did when the events were written inline, rather than the queue growing without bound.
    // Once a write has failed the makers still run, unwritten: they add each step to its choice,
    // whose token count the log and /metrics report.
    bool push(Maker make) {
        std::unique_lock<std::mutex> lock(mutex_);
        room_.wait(lock, [&] { return queue_.size() < kMaxQueued || failed_; });
        queue_.push_back(std::move(make));
        const bool open = !failed_;
        lock.unlock();
        ready_.notify_one();
        return open;
    }

    // Writes what is queued and ends the thread (once); whether every write succeeded.  After it, the
    // caller may write to the sink itself.
    bool finish() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            closed_ = true;
        }
        ready_.notify_one();
        if (thread_.joinable()) thread_.join();
        return !failed_;
    }

private:
    static constexpr size_t kMaxQueued = 1024;

    void run() {
        std::string events;
        std::unique_lock<std::mutex> lock(mutex_);
        for (;;) {
            ready_.wait(lock, [&] { return !queue_.empty() || closed_; });
            if (queue_.empty()) return;  // closed, and everything written
            std::deque<Maker> batch;
            batch.swap(queue_);
            bool ok = !failed_;
            lock.unlock();
            room_.notify_all();
            try {
                events.clear();
                for (const Maker &make : batch)
                    if (const Json payload = make(); ok && !payload.is_null())
                        events += "data: " + dump(payload) + "\n\n";
                if (ok && !events.empty()) ok = sink_.write(events.data(), events.size());
            } catch (...) {  // out of memory making an event: the stream ends short
                ok = false;
            }
            lock.lock();
            if (!ok && !failed_) {
                failed_ = true;
                room_.notify_all();
            }
        }
    }

    httplib::DataSink &sink_;
    std::mutex mutex_;
    std::condition_variable ready_, room_;
    std::deque<Maker> queue_;
    bool closed_ = false, failed_ = false;
    std::thread thread_;  // last: it starts once the members above exist
};

class Server {
public:
    Server(Engine &engine, const ServedModel &served, std::string api_key, CorsPolicy cors, ServerMetrics &metrics)
        : engine_(engine), served_(served), api_key_(std::move(api_key)), cors_(std::move(cors)), metrics_(metrics),
          created_(long(std::time(nullptr))) {
        http_.set_payload_max_length(size_t(32) << 20);
        // CORS (--allowed-origins): an allowed Origin gets Access-Control-Allow-Origin on every
        // response, errors included (a page reads those too), and a preflight is answered here,
        // before the API key is asked for (browsers send none with it).
        if (cors_.enabled())
            http_.set_pre_routing_handler([this](const httplib::Request &req, httplib::Response &res) {
                const std::string allowed = cors_.allow(req.get_header_value("Origin"));
                if (allowed.empty()) return httplib::Server::HandlerResponse::Unhandled;
                res.set_header("Access-Control-Allow-Origin", allowed);
                if (allowed != "*") res.set_header("Vary", "Origin");
                if (req.method != "OPTIONS" || !req.has_header("Access-Control-Request-Method"))
                    return httplib::Server::HandlerResponse::Unhandled;
                res.status = 204;
                res.set_header("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
                const std::string asked = req.get_header_value("Access-Control-Request-Headers");
                res.set_header("Access-Control-Allow-Headers", asked.empty() ? "Authorization, Content-Type" : asked);
                res.set_header("Access-Control-Max-Age", "600");
                return httplib::Server::HandlerResponse::Handled;
            });
        // A stream writes one small event per token: sent at once, not held for the last one's
        // acknowledgement (Nagle's algorithm against a client's delayed ACK).
        http_.set_tcp_nodelay(true);
        http_.Get("/health", [](const httplib::Request &, httplib::Response &res) {
            send_json(res, 200, {{"status", "ok"}});
        });
        // Like vLLM's, open without the API key (which guards the API): counts and times, no text.
        http_.Get("/metrics", [this](const httplib::Request &, httplib::Response &res) {
            res.set_content(metrics_.text(), "text/plain; version=0.0.4; charset=utf-8");
        });
        http_.Get("/v1/models", [this](const httplib::Request &req, httplib::Response &res) {
            if (!authorised(req, res)) return;
            send_json(res, 200, {{"object", "list"}, {"data", Json::array({model_card()})}});
        });
        http_.Get(R"(/v1/models/(.+))", [this](const httplib::Request &req, httplib::Response &res) {
            if (!authorised(req, res)) return;
            if (req.matches[1] != served_.name)
                return refuse(res, ApiError(404, "the model `" + std::string(req.matches[1]) + "` does not exist",
                                                "model", "model_not_found"));
            send_json(res, 200, model_card());
        });
        http_.Post("/v1/chat/completions",
                   [this](const httplib::Request &req, httplib::Response &res) { complete(req, res, true); });
        http_.Post("/v1/completions",
                   [this](const httplib::Request &req, httplib::Response &res) { complete(req, res, false); });
        for (auto [path, respond] : {std::make_pair("/tokenize", &tokenize_response),
                                     std::make_pair("/detokenize", &detokenize_response)}) {
            http_.Post(path, [this, respond = respond](const httplib::Request &req, httplib::Response &res) {
                if (!authorised(req, res)) return;
                try {
                    send_json(res, 200, respond(served_, req.body));
                } catch (const ApiError &e) {
                    refuse(res, e);
                }
            });
        }
        // Anything else: the API's error object rather than an empty page.
        http_.set_error_handler([this](const httplib::Request &req, httplib::Response &res) {
            if (!res.body.empty()) return;
            metrics_.error(res.status);
            const std::string what = res.status == 404   ? "no such endpoint: " + req.method + " " + req.path
                                     : res.status == 413 ? "the request body is too large (32 MiB at most)"
                                                         : "the request was refused (HTTP " +
                                                               std::to_string(res.status) + ")";
            send_json(res, res.status, ApiError(res.status, what).body());
        });
        http_.set_exception_handler([this](const httplib::Request &, httplib::Response &res, std::exception_ptr ep) {
            std::string what = "internal error";
            try {
                std::rethrow_exception(ep);
            } catch (const std::exception &e) {
                what += std::string(": ") + e.what();
            } catch (...) {
            }
            refuse(res, ApiError(500, what));
        });
    }

    // Bind (port 0: any free port); returns the port.
    int bind(const std::string &host, int port) {
        const int bound = port == 0 ? http_.bind_to_any_port(host) : http_.bind_to_port(host, port) ? port : -1;
        if (bound < 0)
            fail("cannot listen on " + host + ":" + std::to_string(port) +
                 " (the port is in use, or the address is not this machine's)");
        return bound;
    }
    void listen() { http_.listen_after_bind(); }
    void stop() { http_.stop(); }

private:
    Engine &engine_;
    const ServedModel &served_;
    std::string api_key_;
    CorsPolicy cors_;
    ServerMetrics &metrics_;
    long created_;
    httplib::Server http_;

    Json model_card() const {
        return {{"id", served_.name}, {"object", "model"}, {"created", created_}, {"owned_by", "libreset"},
                {"max_model_len", served_.max_context}};
    }

    bool authorised(const httplib::Request &req, httplib::Response &res) const {
        if (api_key_.empty()) return true;
        const std::string given = req.get_header_value("Authorization");
        const std::string expected = "Bearer " + api_key_;
        // Compared in full whatever the first difference, so the time says nothing of the key.
        unsigned char difference = given.size() == expected.size() ? 0 : 1;
        for (size_t i = 0; i < given.size() && i < expected.size(); ++i) difference |= given[i] ^ expected[i];
        if (difference == 0) return true;
        refuse(res, ApiError(401, "a valid API key is required (Authorization: Bearer KEY)", "",
                                 "invalid_api_key"));
        return false;
    }

    void log(const GenerationRequest &request, const Outcome &outcome, const std::vector<ChoiceBuilder> &choices,
             const char *note = "") const {
        size_t tokens = 0;
        for (const ChoiceBuilder &c : choices) tokens += size_t(c.tokens());
        // The serving time per token is host time the GPU waits through: the next step starts after it.
        std::fprintf(stderr,
                     "reset serve: %s n=%d: %zu prompt tokens (%zu cached), %zu generated, %.1f tokens/s (%.1f us "
                     "of serving per token)%s\n",
                     request.chat ? "chat" : "completion", request.n, request.prompt.size(), outcome.cached_tokens,
                     tokens, outcome.decode_seconds > 0 ? double(tokens) / outcome.decode_seconds : 0.0,
                     tokens ? 1e6 * outcome.emit_seconds / double(tokens) : 0.0, note);
    }

    // The error object, counted by its status.
    void refuse(httplib::Response &res, const ApiError &e) const {
        metrics_.error(e.http_status);
        send_error(res, e);
    }

    // A response's end in the metrics: its tokens, its time since `arrival`, how each choice ended
    // ("abort" for one the client left).
    void count_finished(const GenerationRequest &request, const Outcome &outcome,
                        const std::vector<ChoiceBuilder> &choices, double arrival) {
        size_t generated = 0;
        std::vector<std::string> reasons;
        for (const ChoiceBuilder &c : choices) {
            generated += size_t(c.tokens());
            reasons.emplace_back(c.finish_reason() && !outcome.client_gone ? c.finish_reason() : "abort");
        }
        metrics_.request_finished(request.prompt.size(), outcome.cached_tokens, generated, now_seconds() - arrival,
                                  reasons);
    }

    void complete(const httplib::Request &req, httplib::Response &res, bool chat) {
        const double arrival = now_seconds();
        if (!authorised(req, res)) return;
        // The request as a shared object: a stream's provider runs after this handler returns.
        std::shared_ptr<GenerationRequest> request;
        try {
            request = std::make_shared<GenerationRequest>(read_request(served_, req.body, chat));
        } catch (const ApiError &e) {
            return refuse(res, e);
        }
        if (request->stream) return stream(res, request, arrival);

        std::vector<ChoiceBuilder> choices;
        for (int i = 0; i < request->n; ++i) choices.emplace_back(served_, *request, i);
        Outcome outcome;
        try {
            outcome = engine_.run(*request, arrival, [&](const SampleStep &step) {
                choices[size_t(step.index)].add(step);
                return true;
            });
        } catch (const ApiError &e) {
            return refuse(res, e);
        }
        log(*request, outcome, choices);
        Json body = {{"id", new_response_id(chat)},
                     {"object", chat ? "chat.completion" : "text_completion"},
                     {"created", long(std::time(nullptr))},
                     {"model", served_.name},
                     {"system_fingerprint", fingerprint()},
                     {"choices", Json::array()}};
        size_t generated = 0;
        for (const ChoiceBuilder &c : choices) {
            body["choices"].push_back(c.choice());
            generated += size_t(c.tokens());
        }
        body["usage"] = usage_json(request->prompt.size(), outcome.cached_tokens, generated);
        send_json(res, 200, body);
        count_finished(*request, outcome, choices, arrival);
    }

    // Server-sent events as OpenAI streams them: chunks of deltas, a last chunk per choice with its
    // finish_reason, the usage if asked for, then "data: [DONE]".  A failure after the first
    // chunk can no longer change the HTTP status: it is sent as an event with the error object.
    void stream(httplib::Response &res, std::shared_ptr<GenerationRequest> request, double arrival) {
        const std::string id = new_response_id(request->chat);
        const long created = long(std::time(nullptr));
        res.set_header("Cache-Control", "no-cache");
        // The provider runs after this handler has returned, on the same thread.
        res.set_chunked_content_provider("text/event-stream",
                                         [this, request, id, created, arrival](size_t, httplib::DataSink &sink) {
                                             try {
                                                 stream_events(*request, id, created, arrival, sink);
                                             } catch (...) {  // out of memory building an event: the stream
                                                 sink.done();  // ends short, and nothing reaches httplib
                                             }
                                             return true;
                                         });
    }

    void stream_events(const GenerationRequest &request, const std::string &id, long created, double arrival,
                       httplib::DataSink &sink) {
        const bool chat = request.chat;
        auto chunk = [&](Json choices) {
            Json c = {{"id", id},
                      {"object", chat ? "chat.completion.chunk" : "text_completion"},
                      {"created", created},
                      {"model", served_.name},
                      {"system_fingerprint", fingerprint()},
                      {"choices", std::move(choices)}};
            if (request.include_usage) c["usage"] = nullptr;
            return c;
        };
        std::vector<ChoiceBuilder> choices;
        for (int i = 0; i < request.n; ++i) choices.emplace_back(served_, request, i);
        EventWriter writer(sink);
        bool open = true;
        // The choices belong to the writer's thread until writer.finish().
        for (const ChoiceBuilder &c : choices)
            if (chat || !request.echo_text.empty())
                open = open && writer.push([&chunk, &c] { return chunk(Json::array({c.start_chunk()})); });
        Outcome outcome;
        outcome.client_gone = !open;
        try {
            if (open)
                outcome = engine_.run(request, arrival, [&](const SampleStep &step) {
                    return writer.push([&chunk, &choices, step] {
                        Json part = choices[size_t(step.index)].add(step);
                        return part.is_null() ? Json() : chunk(Json::array({std::move(part)}));
                    });
                });
        } catch (const ApiError &e) {
            metrics_.error(e.http_status);
            if (writer.finish()) {
                const std::string event = "data: " + dump(e.body()) + "\n\n";
                sink.write(event.data(), event.size());
            }
            sink.done();
            return;
        }
        if (!outcome.client_gone && request.include_usage)
            writer.push([&chunk, &choices, &request, cached = outcome.cached_tokens] {
                size_t generated = 0;
                for (const ChoiceBuilder &c : choices) generated += size_t(c.tokens());
                Json last = chunk(Json::array());
                last["usage"] = usage_json(request.prompt.size(), cached, generated);
                return last;
            });
        // A write that failed after the last step still means the client went away.
        outcome.client_gone = !writer.finish() || outcome.client_gone;
        // Counted before [DONE] goes out: a client that scrapes /metrics once its stream has ended
        // finds the request there (counted after it, it was missing now and then: session 43).
        count_finished(request, outcome, choices, arrival);
        log(request, outcome, choices, outcome.client_gone ? " (the client went away: stopped)" : "");
        if (!outcome.client_gone) {
            static const char kDone[] = "data: [DONE]\n\n";
            sink.write(kDone, sizeof kDone - 1);
        }
        sink.done();
    }
};

}  // namespace
}  // namespace serve

int cmd_serve(int argc, char **argv) {
    using namespace serve;
    std::set<std::string> valued = {"host", "port", "api-key", "allowed-origins", "served-model-name", "parallel",
                                    "reasoning-format",
                                    "kv-cache"};
    valued.insert(kModelValued.begin(), kModelValued.end());
    const Args args = parse_args(argc, argv, 2, with_model_flags({"help"}), valued);
    if (args.has("help") || args.positional.size() > 1) {
        std::printf(
            "usage: reset serve [MODEL_DIR] [--host ADDR] [--port N] [--api-key KEY] [--allowed-origins LIST]\n"
            "                   [--served-model-name NAME] [--parallel N] [--reasoning-format split|none]\n"
            "                   [--context N] [--kv-cache bf16|fp8] [--no-mmap]\n"
            "An OpenAI-compatible HTTP server (vLLM's and llama.cpp's dialect; docs/serve.md):\n"
            "  POST /v1/chat/completions, /v1/completions (streamed with \"stream\": true), /tokenize, /detokenize;\n"
            "  GET /v1/models, /health, /metrics (Prometheus' format, vLLM's names with reset: for vllm:).\n"
            "One generation runs at a time; others wait their turn.\n"
            "  --host ADDR                default 127.0.0.1; 0.0.0.0 listens on every address\n"
            "  --port N                   default 8080; 0 picks a free one (printed on stderr)\n"
            "  --api-key KEY              (or RESET_API_KEY) all but /health and /metrics need\n"
            "                             \"Authorization: Bearer KEY\"\n"
            "  --allowed-origins LIST     CORS for browser pages: * or comma-separated origins\n"
            "                             (https://ui.example.com); none by default\n"
            "  --served-model-name NAME   the API's model id (default: the directory's name)\n"
            "  --parallel N               1..8 (default 1): the most samples (\"n\") per request\n"
            "  --reasoning-format split   (default) <think>...</think> is returned as reasoning_content;\n"
            "                   none      all of the text as content\n"
            "  --context N                tokens per sequence, prompt and answer together (default: min(model\n"
            "                             maximum, 4096))\n"
            "Requests take OpenAI's fields (temperature, top_p, max_tokens, n, stop, seed, logprobs, ...), vLLM's\n"
            "(top_k, min_p, repetition_penalty, stop_token_ids, ignore_eos, chat_template_kwargs.enable_thinking,\n"
            "thinking_token_budget)\n"
            "and \"policy\": libreset's sampler in reset's words (\"reset t_low=0.6 tau0=1.2\").  Fields a request\n"
            "leaves out take the model's generation_config.json sampling.  Ctrl-C stops the server.\n");
        return args.has("help") ? 0 : 2;
    }
    const std::string host = args.get("host", "127.0.0.1");
    const int port = int(args.get_int("port", 8080, 0, 65535));
    const int parallel = int(args.get_int("parallel", 1, 1, 8));
    const std::string reasoning_format = args.get("reasoning-format", "split");
    if (reasoning_format != "split" && reasoning_format != "none")
        usage_error("--reasoning-format: split or none, not '" + reasoning_format + "'");
    std::string api_key = args.get("api-key", "");
    if (api_key.empty())
        if (const char *env = std::getenv("RESET_API_KEY")) api_key = env;
    const reset_kv_cache kv_cache = kv_cache_from_args(args);
    CorsPolicy cors;
    std::string cors_error;
    if (args.has("allowed-origins") && !cors.parse(args.get("allowed-origins", ""), &cors_error))
        usage_error("--allowed-origins: " + cors_error);

    const std::string path = model_path_or_default(args, 0);
    Model model(path, args);
    ServedModel served;
    served.model = model.handle;
    served.tokenizer = model.tokenizer();
    served.vocab_size = model.info.vocab_size;
    served.parallel = parallel;
    served.split_reasoning = reasoning_format == "split";
    std::string name = path;
    while (name.size() > 1 && name.back() == '/') name.pop_back();
    served.name = args.get("served-model-name", name.substr(name.find_last_of('/') + 1));

    reset_session_options options;
    reset_session_options_init(&options);
    options.max_context = int32_t(args.get_int("context", 0, 0, 1 << 24));
    options.kv_cache = kv_cache;
    ServerMetrics metrics(served.name);
    Engine engine(model.handle, options, metrics);
    // The largest session a request may need is made now, so that memory runs out at start, not
    // at a request (the first request of another shape replaces it).
    try {
        reset_session *largest = engine.session_for({parallel, RESET_MAX_TOP_LOGPROBS});
        served.max_context = reset_session_max_context(largest);
        reset_policy_params_init(&served.sampling);
        check(reset_session_get_policy(largest, &served.sampling), "the model's sampling");
        served.sampling.preset = nullptr;
    } catch (const ApiError &e) {
        fail(e.what());
    }

    // SIGINT and SIGTERM go to one thread, which stops the server: the running generation ends at
    // its next step.  Blocked here, before the server's threads exist, so they inherit the mask.
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
    ::signal(SIGPIPE, SIG_IGN);  // a client that went away is a failed write, not the end of the server

    Server server(engine, served, api_key, std::move(cors), metrics);
    const int bound = server.bind(host, port);
    std::fprintf(stderr,
                 "reset serve: %s on http://%s:%d/v1 (backend %s, context %d tokens, up to %d samples per "
                 "request%s); Ctrl-C stops\n",
                 served.name.c_str(), host.c_str(), bound, backend_name(model.info.backend), served.max_context,
                 parallel, api_key.empty() ? "" : ", API key required");
    std::atomic<bool> done{false};
    std::thread signal_thread([&] {
        int signal_number = 0;
        sigwait(&stop_signals, &signal_number);
        if (done) return;
        std::fprintf(stderr, "reset serve: stopping\n");
        engine.stop();
        server.stop();
    });
    server.listen();
    done = true;
    pthread_kill(signal_thread.native_handle(), SIGTERM);  // wakes sigwait if no signal came
    signal_thread.join();
    return 0;
}

}  // namespace cli
