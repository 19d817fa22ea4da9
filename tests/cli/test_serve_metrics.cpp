// test_serve_metrics.cpp — `reset serve`'s GET /metrics text (samples/reset/serve_metrics.cpp): the
// samples a known series of events must give, in Prometheus' text format.  test_serve.py reads the
// live endpoint with prometheus_client's parser (an independent reader of the format).
#include <doctest/doctest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "serve.h"

using namespace cli::serve;

namespace {

// The sample lines of `text` (comments dropped).
std::vector<std::string> samples(const std::string &text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        if (!line.empty() && line[0] != '#') out.push_back(line);
    return out;
}

// The value of the sample `name{labels}` (NaN if absent).
double value(const std::string &text, const std::string &sample) {
    for (const std::string &s : samples(text))
        if (s.rfind(sample + " ", 0) == 0) return std::stod(s.substr(sample.size() + 1));
    return std::nan("");
}

bool has(const std::string &text, const std::string &line) {
    for (const std::string &s : samples(text))
        if (s == line) return true;
    return false;
}

}  // namespace

TEST_CASE("serve metrics: counters, gauges and histograms after known events") {
    ServerMetrics m("qwen \"8b\"\\x");
    const std::string label = "model_name=\"qwen \\\"8b\\\"\\\\x\"";  // the format's escapes
    CHECK(has(m.text(), "reset:num_requests_running{" + label + "} 0"));
    CHECK(has(m.text(), "reset:time_to_first_token_seconds_count{" + label + "} 0"));
    CHECK(has(m.text(), "reset:kv_cache_usage_perc{" + label + "} 0"));  // no session yet: 0 of 0
    m.kv_cache(300, 2 * 512);
    CHECK(has(m.text(), "reset:kv_cache_usage_perc{" + label + "} 0.29296875"));  // 300 / 1024, exact
    m.kv_cache(0, 0);  // the session dropped
    CHECK(has(m.text(), "reset:kv_cache_usage_perc{" + label + "} 0"));

    m.request_waiting();
    m.request_waiting();
    CHECK(has(m.text(), "reset:num_requests_waiting{" + label + "} 2"));
    m.request_running(0.2);  // one's turn came after 0.2 s
    CHECK(has(m.text(), "reset:num_requests_waiting{" + label + "} 1"));
    CHECK(has(m.text(), "reset:num_requests_running{" + label + "} 1"));
    m.first_token(0.05, 1);
    m.step(0.0027, 2);  // two 2.7 ms steps and one of exactly a bucket's bound (it counts there: "le")
    m.step(0.0027, 3);
    m.step(0.003, 4);
    m.request_finished(1024, 1000, 3, 0.061, {"stop"});
    m.request_done();
    m.request_running(1.5);
    m.first_token(2.0, 1);
    m.request_finished(10, 0, 16, 2.1, {"length", "stop", "abort"});
    m.request_done();
    m.error(400);
    m.error(400);
    m.error(503);

    const std::string t = m.text();
    CHECK(has(t, "reset:num_requests_running{" + label + "} 0"));
    CHECK(has(t, "reset:num_requests_waiting{" + label + "} 0"));
    CHECK(has(t, "reset:prompt_tokens_total{" + label + "} 1034"));
    CHECK(has(t, "reset:prefix_cache_hits_total{" + label + "} 1000"));
    CHECK(has(t, "reset:generation_tokens_total{" + label + "} 19"));
    CHECK(has(t, "reset:request_success_total{" + label + ",finished_reason=\"stop\"} 2"));
    CHECK(has(t, "reset:request_success_total{" + label + ",finished_reason=\"length\"} 1"));
    CHECK(has(t, "reset:request_success_total{" + label + ",finished_reason=\"abort\"} 1"));
    CHECK(has(t, "reset:request_errors_total{" + label + ",status=\"400\"} 2"));
    CHECK(has(t, "reset:request_errors_total{" + label + ",status=\"503\"} 1"));
    // Buckets are cumulative, "+Inf" holds every observation, _sum and _count close the histogram.
    const std::string itl = "reset:inter_token_latency_seconds";
    CHECK(has(t, itl + "_bucket{" + label + ",le=\"0.0025\"} 0"));
    CHECK(has(t, itl + "_bucket{" + label + ",le=\"0.003\"} 3"));
    CHECK(has(t, itl + "_bucket{" + label + ",le=\"+Inf\"} 3"));
    CHECK(has(t, itl + "_count{" + label + "} 3"));
    CHECK(value(t, itl + "_sum{" + label + "}") == doctest::Approx(0.0084).epsilon(1e-12));  // written to 17 digits
    const std::string ttft = "reset:time_to_first_token_seconds";
    CHECK(has(t, ttft + "_bucket{" + label + ",le=\"0.04\"} 0"));
    CHECK(has(t, ttft + "_bucket{" + label + ",le=\"0.06\"} 1"));
    CHECK(has(t, ttft + "_bucket{" + label + ",le=\"1\"} 1"));
    CHECK(has(t, ttft + "_bucket{" + label + ",le=\"2.5\"} 2"));
    CHECK(has(t, "reset:request_queue_time_seconds_count{" + label + "} 2"));
    CHECK(has(t, "reset:e2e_request_latency_seconds_count{" + label + "} 2"));
    // Every bucket list ends with +Inf and is in order: one line per bound, in the declared order.
    size_t buckets = 0;
    for (const std::string &s : samples(t))
        if (s.rfind(ttft + "_bucket", 0) == 0) ++buckets;
    CHECK(buckets == ServerMetrics::kFirstTokenBuckets.size() + 1);
}
