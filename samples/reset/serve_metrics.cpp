// serve_metrics.cpp — `reset serve`'s GET /metrics: counters, gauges and
// histograms of what the server has done, in Prometheus' text exposition
// format (version 0.0.4), under vLLM's metric names with libreset's prefix
// (serve.h says why).
#include <algorithm>
#include <charconv>
#include <string>

#include "serve.h"

namespace cli::serve {

// Upper bounds, seconds.  The first token is a prefill (milliseconds cached, a second or more for a long
// prompt); a step is 2-8 ms on the GPU for the models this library serves (a CPU step 20-500 ms), so its
// buckets are fine there; a whole request runs seconds to minutes at reasoning lengths.
const std::vector<double> ServerMetrics::kFirstTokenBuckets = {0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1,
                                                               0.25,  0.5,   0.75, 1.0,  2.5,  5.0,  7.5,  10.0,
                                                               20.0,  40.0,  80.0, 160.0};
const std::vector<double> ServerMetrics::kStepBuckets = {0.001, 0.002, 0.0025, 0.003, 0.0035, 0.004, 0.005,
                                                         0.006, 0.008, 0.01,   0.015, 0.02,   0.03,  0.05,
                                                         0.1,   0.25,  0.5,    1.0,   2.5};
const std::vector<double> ServerMetrics::kLatencyBuckets = {0.3,  0.5,  0.8,   1.0,   1.5,   2.0,   2.5,
                                                            5.0,  10.0, 15.0,  20.0,  30.0,  40.0,  50.0,
                                                            60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0};
const std::vector<double> ServerMetrics::kQueueBuckets = {0.001, 0.01, 0.1, 0.3, 0.5, 0.8, 1.0, 2.5, 5.0, 10.0,
                                                          20.0,  40.0, 80.0, 160.0, 320.0, 640.0};

namespace {

// A label value as the format writes it: backslash, double quote and line feed escaped.
std::string escape_label(const std::string &value) {
    std::string out;
    for (char c : value) {
        if (c == '\\') out += "\\\\";
        else if (c == '"') out += "\\\"";
        else if (c == '\n') out += "\\n";
        else out += c;
    }
    return out;
}

// A sample's value: the shortest text that reads back as the same double.
std::string number(double v) {
    char buffer[32];
    return std::string(buffer, std::to_chars(buffer, buffer + sizeof buffer, v).ptr);
}

std::string number(uint64_t v) { return std::to_string(v); }
std::string number(int64_t v) { return std::to_string(v); }

void header(std::string &out, const char *name, const char *type, const char *help) {
    out += "# HELP ";
    out += name;
    out += ' ';
    out += help;
    out += "\n# TYPE ";
    out += name;
    out += ' ';
    out += type;
    out += '\n';
}

template <class V>
void sample(std::string &out, const std::string &name, const std::string &labels, V value) {
    out += name;
    out += '{';
    out += labels;
    out += "} ";
    out += number(value);
    out += '\n';
}

}  // namespace

void ServerMetrics::Histogram::observe(double v) {
    // The first bucket whose bound is at least v (Prometheus buckets are "less than or equal").
    const size_t bucket = size_t(std::lower_bound(bounds->begin(), bounds->end(), v) - bounds->begin());
    ++counts[bucket];
    sum += v;
    ++count;
}

ServerMetrics::ServerMetrics(std::string model_name)
    : label_("model_name=\"" + escape_label(model_name) + "\""),
      first_token_{&kFirstTokenBuckets, std::vector<uint64_t>(kFirstTokenBuckets.size() + 1)},
      step_{&kStepBuckets, std::vector<uint64_t>(kStepBuckets.size() + 1)},
      e2e_{&kLatencyBuckets, std::vector<uint64_t>(kLatencyBuckets.size() + 1)},
      queue_{&kQueueBuckets, std::vector<uint64_t>(kQueueBuckets.size() + 1)} {}

void ServerMetrics::request_waiting() {
    std::lock_guard<std::mutex> lock(mutex_);
    ++waiting_;
}

void ServerMetrics::request_running(double queue_seconds) {
    std::lock_guard<std::mutex> lock(mutex_);
    --waiting_;
    ++running_;
    queue_.observe(queue_seconds);
}

void ServerMetrics::request_done() {
    std::lock_guard<std::mutex> lock(mutex_);
    --running_;
}

void ServerMetrics::first_token(double seconds, int64_t kv_tokens_held) {
    std::lock_guard<std::mutex> lock(mutex_);
    first_token_.observe(seconds);
    kv_tokens_ = kv_tokens_held;
}

void ServerMetrics::step(double seconds, int64_t kv_tokens_held) {
    std::lock_guard<std::mutex> lock(mutex_);
    step_.observe(seconds);
    kv_tokens_ = kv_tokens_held;
}

void ServerMetrics::request_finished(size_t prompt_tokens, size_t cached_tokens, size_t generation_tokens,
                                     double e2e_seconds, const std::vector<std::string> &finish_reasons) {
    std::lock_guard<std::mutex> lock(mutex_);
    prompt_tokens_ += prompt_tokens;
    cached_tokens_ += cached_tokens;
    generation_tokens_ += generation_tokens;
    e2e_.observe(e2e_seconds);
    for (const std::string &reason : finish_reasons) ++finished_[reason];
}

void ServerMetrics::kv_cache(int64_t tokens_held, int64_t capacity) {
    std::lock_guard<std::mutex> lock(mutex_);
    kv_tokens_ = tokens_held;
    kv_capacity_ = capacity;
}

void ServerMetrics::error(int http_status) {
    std::lock_guard<std::mutex> lock(mutex_);
    ++errors_[http_status];
}

std::string ServerMetrics::text() const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::string out;
    header(out, "reset:num_requests_running", "gauge", "Requests generating now (one at a time).");
    sample(out, "reset:num_requests_running", label_, running_);
    header(out, "reset:num_requests_waiting", "gauge", "Requests waiting for the model's turn.");
    sample(out, "reset:num_requests_waiting", label_, waiting_);
    // vLLM's fraction of its block pool in use; here of the one session's positions, which the prompt
    // cache keeps filled between requests.
    header(out, "reset:kv_cache_usage_perc", "gauge",
           "KV-cache usage: 1 means 100 percent (tokens held of sequences x max_context).");
    const double kv_usage = kv_capacity_ > 0 ? double(kv_tokens_) / double(kv_capacity_) : 0.0;
    sample(out, "reset:kv_cache_usage_perc", label_, kv_usage);
    header(out, "reset:prompt_tokens_total", "counter", "Prompt tokens of finished requests, cached ones included.");
    sample(out, "reset:prompt_tokens_total", label_, prompt_tokens_);
    header(out, "reset:prefix_cache_hits_total", "counter",
           "Prompt tokens the session already held (the prompt cache), not prefilled again.");
    sample(out, "reset:prefix_cache_hits_total", label_, cached_tokens_);
    header(out, "reset:generation_tokens_total", "counter", "Tokens generated by finished requests.");
    sample(out, "reset:generation_tokens_total", label_, generation_tokens_);
    header(out, "reset:request_success_total", "counter",
           "Finished choices by how they ended (abort: the client went away).");
    for (const auto &[reason, n] : finished_)
        sample(out, "reset:request_success_total", label_ + ",finished_reason=\"" + escape_label(reason) + "\"", n);
    header(out, "reset:request_errors_total", "counter", "Requests answered with an error object, by HTTP status.");
    for (const auto &[status, n] : errors_)
        sample(out, "reset:request_errors_total", label_ + ",status=\"" + std::to_string(status) + "\"", n);
    const auto histogram = [&](const char *name, const char *help, const Histogram &h) {
        header(out, name, "histogram", help);
        uint64_t cumulative = 0;
        for (size_t i = 0; i <= h.bounds->size(); ++i) {
            cumulative += h.counts[i];
            const std::string le = i < h.bounds->size() ? number((*h.bounds)[i]) : "+Inf";
            sample(out, std::string(name) + "_bucket", label_ + ",le=\"" + le + "\"", cumulative);
        }
        sample(out, std::string(name) + "_sum", label_, h.sum);
        sample(out, std::string(name) + "_count", label_, h.count);
    };
    histogram("reset:time_to_first_token_seconds", "From a request's arrival to its first token.", first_token_);
    histogram("reset:inter_token_latency_seconds",
              "Decode steps of running requests: each sample's time from one token to the next.", step_);
    histogram("reset:e2e_request_latency_seconds", "From a request's arrival to the end of its response.", e2e_);
    histogram("reset:request_queue_time_seconds", "How long a checked request waited for the model's turn.", queue_);
    return out;
}

}  // namespace cli::serve
