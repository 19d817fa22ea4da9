// test_top_logprobs.cu — top_logprobs (kernels/top_logprobs.cu) against the
// CPU session's implementation (sampling/top_logprobs.cpp) given the same
// maximum and log Σe: the same tokens in the same order and the same
// logprobs, bit for bit (both apply rules/top_logprobs.h and rules/logprob.h,
// with no contraction into FMAs), and against a full sort of the row
// written here.  Rows: random, heavily tied (quarter steps, all equal),
// -0 beside +0, -inf entries (fewer finite logits than entries asked), a
// row whose top entries all belong to one thread (ids 256 apart: the
// per-thread bound is met exactly) and one whose top entries all fall in the
// last, partial CTA; vocabularies from 1 to 152,064, ld > vocab, counts 1,
// 5 and 20, batches 1 to 8.  Outputs are poisoned first: an active row's
// entries must all be written, a skipped or failed row's none.  Repeated
// launches and graph replays check that the arrival counters return to
// zero.  Fresh random data every run (seed printed, argv[1] repeats it).
// RESET_GPU_TEST_QUICK=1: fewer shapes, no timing (compute-sanitizer).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "api/errors.h"
#include "gpu_test_util.h"
#include "kernels/top_logprobs.h"
#include "sampling/top_logprobs.h"

using namespace gpu_test;

namespace {

bool g_quick = false;

enum class Shape { kRandom, kQuarterTies, kAllEqual, kSignedZeros, kMostlyMasked, kOneThread, kLastCta };
const char *name_of(Shape s) {
    switch (s) {
        case Shape::kRandom: return "random";
        case Shape::kQuarterTies: return "quarter ties";
        case Shape::kAllEqual: return "all equal";
        case Shape::kSignedZeros: return "signed zeros";
        case Shape::kMostlyMasked: return "mostly -inf";
        case Shape::kOneThread: return "one thread's";
        case Shape::kLastCta: return "last CTA's";
    }
    return "?";
}

std::vector<float> make_row(Shape shape, int32_t vocab) {
    std::vector<float> z(static_cast<size_t>(vocab));
    for (float &v : z) v = normal(3.0f);
    switch (shape) {
        case Shape::kRandom: break;
        case Shape::kQuarterTies:
            for (float &v : z) v = std::round(v * 4.0f) / 4.0f;
            break;
        case Shape::kAllEqual: std::fill(z.begin(), z.end(), 1.5f); break;
        case Shape::kSignedZeros:
            for (size_t i = 0; i < z.size(); ++i) z[i] = (i % 3 == 0) ? -0.0f : (i % 3 == 1 ? 0.0f : -std::fabs(z[i]));
            break;
        case Shape::kMostlyMasked:  // every 97th finite, and the last (the sampler refuses an all -inf row)
            for (size_t i = 0; i + 1 < z.size(); ++i)
                if (i % 97 != 5) z[i] = -INFINITY;
            break;
        case Shape::kOneThread:
            // Ids 256 apart share a thread: the top 20 all in thread 7 of the first CTA.
            for (int j = 0; j < 20; ++j)
                if (7 + 256 * j < vocab) z[size_t(7 + 256 * j)] = 50.0f - float(j);
            break;
        case Shape::kLastCta:
            for (int j = 0; j < 20 && j < vocab; ++j) z[size_t(vocab - 1 - j)] = 40.0f + 0.5f * float(j % 3);
            break;
    }
    return z;
}

// The sampler's two numbers for a row (as sampling/entropy.cpp: FP32 max, log Σ e^(z - max) in double).
void stats_of(const std::vector<float> &z, float *max, double *lse) {
    float m = -INFINITY;
    for (float v : z) m = std::max(m, v);
    double sum = 0.0;
    for (float v : z) sum += std::exp(double(v - m));
    *max = m;
    *lse = std::log(sum);
}

struct Case {
    int batch;
    int32_t vocab;
    int64_t ld;
    int32_t count;
};

void run_case(const Case &c, int launches, bool graph) {
    const size_t rows = size_t(c.batch);
    std::vector<float> host(rows * size_t(c.ld), NAN);  // the gap past vocab is NaN: never read
    std::vector<Shape> shapes(rows);
    std::vector<reset::SamplingSignalsDevice> signals(rows);
    std::vector<int32_t> active(rows, 1);
    for (size_t b = 0; b < rows; ++b) {
        shapes[b] = static_cast<Shape>((b + size_t(c.vocab)) % 7);
        const std::vector<float> z = make_row(shapes[b], c.vocab);
        std::copy(z.begin(), z.end(), host.begin() + std::ptrdiff_t(b * size_t(c.ld)));
        signals[b] = {};
        signals[b].status = reset::kSamplingOk;
        stats_of(z, &signals[b].raw_max, &signals[b].log_sum_exp);
    }
    // Row 1 skipped by the mask and row 2 failed in the sampler, where there are such rows: both untouched.
    if (rows > 1) active[1] = 0;
    if (rows > 2) signals[2].status = reset::kSamplingBadLogit;
    DeviceBuffer d_logits(host.size() * 4), d_signals(rows * sizeof(reset::SamplingSignalsDevice)),
        d_active(rows * 4), d_out(rows * size_t(c.count) * sizeof(reset_token_logprob)),
        d_work(reset::top_logprobs_workspace_bytes(c.batch, c.vocab));
    d_logits.upload(host);
    d_signals.upload(signals);
    d_active.upload(active);
    CUDA_OK(cudaMemset(d_work.ptr, 0, d_work.bytes));
    reset::TopLogprobsArgs a;
    a.batch = c.batch;
    a.vocab = c.vocab;
    a.logits = d_logits.as<float>();
    a.ld_logits = c.ld;
    a.count = c.count;
    a.signals = d_signals.as<reset::SamplingSignalsDevice>();
    a.active = d_active.as<int32_t>();
    a.workspace = d_work.ptr;
    a.out = d_out.as<reset_token_logprob>();
    cudaStream_t stream;
    CUDA_OK(cudaStreamCreate(&stream));
    cudaGraphExec_t exec = nullptr;
    if (graph) {
        cudaGraph_t g;
        CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed));
        reset::top_logprobs(a, stream);
        CUDA_OK(cudaStreamEndCapture(stream, &g));
        CUDA_OK(cudaGraphInstantiate(&exec, g, 0));
        CUDA_OK(cudaGraphDestroy(g));
    }
    for (int launch = 0; launch < launches; ++launch) {
        d_out.poison();
        if (graph) CUDA_OK(cudaGraphLaunch(exec, stream));
        else reset::top_logprobs(a, stream);
        CUDA_OK(cudaGetLastError());
        CUDA_OK(cudaStreamSynchronize(stream));
        const auto out = d_out.download<reset_token_logprob>(rows * size_t(c.count));
        for (size_t b = 0; b < rows; ++b) {
            const reset_token_logprob *got = &out[b * size_t(c.count)];
            const char *shape = name_of(shapes[b]);
            if (!active[b] || signals[b].status != reset::kSamplingOk) {
                bool untouched = true;
                for (int32_t i = 0; i < c.count; ++i) {
                    uint32_t bits[2];
                    std::memcpy(bits, &got[i], 8);
                    untouched = untouched && bits[0] == 0xFFFFFFFFu && bits[1] == 0xFFFFFFFFu;
                }
                EXPECT(untouched, "vocab %d count %d row %zu (%s): a skipped row was written", c.vocab, c.count, b,
                       active[b] ? "failed" : "inactive");
                continue;
            }
            const float *z = &host[b * size_t(c.ld)];
            std::vector<reset_token_logprob> want(size_t(c.count));
            reset::top_logprobs(z, c.vocab, c.count, signals[b].raw_max, signals[b].log_sum_exp, want.data());
            std::vector<int32_t> order(static_cast<size_t>(c.vocab));
            std::iota(order.begin(), order.end(), 0);
            std::stable_sort(order.begin(), order.end(), [&](int32_t x, int32_t y) { return z[x] > z[y]; });
            int wrong = 0, first = -1;
            for (int32_t i = 0; i < c.count; ++i) {
                const bool same = got[i].token == want[size_t(i)].token && got[i].token == order[size_t(i)] &&
                                  std::memcmp(&got[i].logprob, &want[size_t(i)].logprob, 4) == 0;
                if (!same && first < 0) first = i;
                wrong += same ? 0 : 1;
            }
            EXPECT(wrong == 0,
                   "batch %d vocab %d ld %lld count %d launch %d%s row %zu (%s): %d entries differ, first %d: "
                   "got (%d, %.9g), CPU (%d, %.9g), sort %d",
                   c.batch, c.vocab, (long long)c.ld, c.count, launch, graph ? " (graph)" : "", b, shape, wrong,
                   first, first >= 0 ? got[first].token : 0, first >= 0 ? got[first].logprob : 0.0f,
                   first >= 0 ? want[size_t(first)].token : 0, first >= 0 ? want[size_t(first)].logprob : 0.0f,
                   first >= 0 ? order[size_t(first)] : 0);
        }
        // The arrival counters are back at zero for the next launch.
        const auto counters = d_work.download<unsigned>(d_work.bytes / 4);
        const size_t tail = size_t(c.batch);
        bool zero = true;
        for (size_t i = counters.size() - tail; i < counters.size(); ++i) zero = zero && counters[i] == 0;
        EXPECT(zero, "vocab %d batch %d: arrival counters not back at zero", c.vocab, c.batch);
    }
    if (exec) CUDA_OK(cudaGraphExecDestroy(exec));
    CUDA_OK(cudaStreamDestroy(stream));
}

void expect_refused(reset::TopLogprobsArgs a, reset_status status, const char *what) {
    bool refused = false;
    try {
        reset::top_logprobs(a, nullptr);
    } catch (const reset::Error &e) {
        refused = e.status() == status;
    }
    EXPECT(refused, "%s was not refused with status %d", what, int(status));
}

// µs per launch at a Qwen3 vocabulary (151,936), batch 1 and 8, count 20: what a step pays for the option.
void timing() {
    for (int batch : {1, 8}) {
        const int32_t vocab = 151936;
        std::vector<float> host(size_t(batch) * size_t(vocab));
        for (float &v : host) v = normal(3.0f);
        std::vector<reset::SamplingSignalsDevice> signals(static_cast<size_t>(batch));
        for (auto &s : signals) {
            s = {};
            s.raw_max = 20.0f;
            s.log_sum_exp = 12.0;
        }
        DeviceBuffer d_logits(host.size() * 4), d_signals(signals.size() * sizeof(signals[0])),
            d_out(size_t(batch) * 20 * 8), d_work(reset::top_logprobs_workspace_bytes(batch, vocab));
        d_logits.upload(host);
        d_signals.upload(signals);
        CUDA_OK(cudaMemset(d_work.ptr, 0, d_work.bytes));
        reset::TopLogprobsArgs a;
        a.batch = batch;
        a.vocab = vocab;
        a.logits = d_logits.as<float>();
        a.ld_logits = vocab;
        a.count = 20;
        a.signals = d_signals.as<reset::SamplingSignalsDevice>();
        a.workspace = d_work.ptr;
        a.out = d_out.as<reset_token_logprob>();
        // The logits are in L2 when the step runs it (the lm_head and the sampler just touched them): warm.
        const float us = median_us([&] { reset::top_logprobs(a, nullptr); }, 200);
        std::printf("top_logprobs: vocab %d batch %d count 20: %.2f us (median of 200, warm L2)\n", vocab, batch, us);
        // Where the time goes: the kernel stopped after each phase (1 loads and thread maxima, 2 threshold
        // and candidates, 3 the CTA's ranked list, 4 published and arrived; the last CTA's merge is the rest).
        for (int phase = 1; phase <= 4; ++phase) {
            a.stop_after_phase = phase;
            const float part = median_us([&] { reset::top_logprobs(a, nullptr); }, 200);
            std::printf("top_logprobs: vocab %d batch %d, stopped after phase %d: %.2f us\n", vocab, batch, phase,
                        part);
        }
        a.stop_after_phase = 0;
        // Every row inactive: each CTA returns at once, so this is the launch alone, timed the same way.
        DeviceBuffer d_inactive(static_cast<size_t>(batch) * 4);
        CUDA_OK(cudaMemset(d_inactive.ptr, 0, d_inactive.bytes));
        a.active = d_inactive.as<int32_t>();
        const float empty = median_us([&] { reset::top_logprobs(a, nullptr); }, 200);
        std::printf("top_logprobs: vocab %d batch %d, every row inactive (the launch alone): %.2f us\n", vocab, batch,
                    empty);
    }
}

}  // namespace

int main(int argc, char **argv) {
    if (!start("test_top_logprobs", argc, argv)) return 0;
    g_quick = std::getenv("RESET_GPU_TEST_QUICK") != nullptr;
    if (std::getenv("RESET_TOP_LOGPROBS_TIMING_ONLY")) {  // for a profiler: the timed launches alone
        timing();
        return finish("test_top_logprobs");
    }
    try {
        const int32_t vocabs_full[] = {1, 3, 19, 20, 255, 256, 1000, 4096, 4097, 32768, 151936, 152064};
        const int32_t vocabs_quick[] = {1, 20, 4097, 151936};
        const std::vector<int32_t> vocabs =
            g_quick ? std::vector<int32_t>(std::begin(vocabs_quick), std::end(vocabs_quick))
                    : std::vector<int32_t>(std::begin(vocabs_full), std::end(vocabs_full));
        for (int32_t vocab : vocabs)
            for (int32_t count : {1, 5, 20}) {
                if (count > vocab) continue;
                for (int batch : {1, 3, 8}) {
                    if (g_quick && batch == 3) continue;
                    const int64_t ld = batch == 3 ? vocab + 37 : vocab;
                    run_case({batch, vocab, ld, count}, 2, false);
                }
                run_case({8, vocab, vocab, count}, 3, true);
            }

        // Argument checks: nothing launched.
        DeviceBuffer d_logits(64 * 4), d_signals(sizeof(reset::SamplingSignalsDevice) * 8), d_out(8 * 20 * 8),
            d_work(reset::top_logprobs_workspace_bytes(8, 64));
        reset::TopLogprobsArgs a;
        a.batch = 1;
        a.vocab = 64;
        a.logits = d_logits.as<float>();
        a.ld_logits = 64;
        a.count = 5;
        a.signals = d_signals.as<reset::SamplingSignalsDevice>();
        a.workspace = d_work.ptr;
        a.out = d_out.as<reset_token_logprob>();
        auto with = [&](auto change) {
            reset::TopLogprobsArgs b = a;
            change(b);
            return b;
        };
        expect_refused(with([](auto &b) { b.count = 0; }), RESET_ERR_INVALID_ARGUMENT, "count 0");
        expect_refused(with([](auto &b) { b.count = 21; }), RESET_ERR_INVALID_ARGUMENT, "count 21");
        expect_refused(with([](auto &b) { b.vocab = 4; b.ld_logits = 4; }), RESET_ERR_INVALID_ARGUMENT,
                       "count above the vocabulary");
        expect_refused(with([](auto &b) { b.batch = 9; }), RESET_ERR_INVALID_ARGUMENT, "batch 9");
        expect_refused(with([](auto &b) { b.ld_logits = 63; }), RESET_ERR_INVALID_ARGUMENT, "ld below vocab");
        expect_refused(with([](auto &b) { b.out = nullptr; }), RESET_ERR_INVALID_ARGUMENT, "null out");
        expect_refused(with([](auto &b) { b.signals = nullptr; }), RESET_ERR_INVALID_ARGUMENT, "null signals");
        expect_refused(with([](auto &b) { b.workspace = nullptr; }), RESET_ERR_INVALID_ARGUMENT, "null workspace");
        expect_refused(with([](auto &b) { b.vocab = (1 << 24) + 1; b.ld_logits = b.vocab; }),
                       RESET_ERR_UNSUPPORTED, "a vocabulary above 2^24");
        CUDA_OK(cudaDeviceSynchronize());
        if (!g_quick) timing();
    } catch (const reset::Error &e) {
        std::fprintf(stderr, "FAIL: unexpected reset::Error %d: %s\n", static_cast<int>(e.status()), e.what());
        return 1;
    }
    return finish("test_top_logprobs");
}
