// test_attention_decode.cu — split-KV GQA decode attention (kernels/
// attention_decode.cu) against a double-precision reference over the same
// BF16 cache: head_dim 64/128, group sizes 1/4/7/8, batch 1..8, contexts 1 to
// 32,768, automatic and forced split counts, one CUDA graph replayed at
// several context lengths, and the argument checks.  Fresh random data every
// run (the seed is printed; argv[1] repeats it); outputs are poisoned with NaN
// first.  RESET_GPU_TEST_QUICK=1 runs the small cases only (for
// compute-sanitizer).  Prints a bandwidth figure for the Qwen3-8B shape at 32k.
#include <algorithm>
#include <string>

#include "api/errors.h"
#include "gpu_test_util.h"
#include "kernels/attention_decode.h"

using namespace gpu_test;

namespace {

struct Shape {
    int batch, n_kv_heads, group, head_dim, capacity;
};

// One batch of random queries and a random BF16 cache, on host and device.
struct Problem {
    Shape s;
    std::vector<float> q;
    std::vector<uint16_t> keys, values;
    std::vector<int32_t> lengths;
    DeviceBuffer d_q, d_keys, d_values, d_lengths, d_out;

    Problem(const Shape &shape, const std::vector<int32_t> &lens)
        : s(shape),
          lengths(lens),
          d_q(size_t(shape.batch) * shape.n_kv_heads * shape.group * shape.head_dim * sizeof(float)),
          d_keys(size_t(shape.batch) * shape.n_kv_heads * shape.capacity * shape.head_dim * 2),
          d_values(d_keys.bytes),
          d_lengths(size_t(shape.batch) * sizeof(int32_t)),
          d_out(d_q.bytes) {
        q.resize(d_q.bytes / sizeof(float));
        // Query magnitudes vary per head so some softmaxes are flat and some peaked.
        const int heads = s.batch * s.n_kv_heads * s.group;
        for (int h = 0; h < heads; ++h) {
            const float sigma = uniform(0.2f, 3.0f);
            for (int d = 0; d < s.head_dim; ++d) q[size_t(h) * s.head_dim + d] = normal(sigma);
        }
        keys.resize(d_keys.bytes / 2);
        values.resize(keys.size());
        for (auto &k : keys) k = float_to_bf16(normal(1.0f));
        for (auto &v : values) v = float_to_bf16(uniform(-2.0f, 2.0f));
        d_q.upload(q);
        d_keys.upload(keys);
        d_values.upload(values);
        d_lengths.upload(lengths);
    }

    int n_heads() const { return s.n_kv_heads * s.group; }

    reset::AttentionDecodeArgs args(int splits, DeviceBuffer *workspace) const {
        reset::AttentionDecodeArgs a;
        a.batch = s.batch;
        a.n_heads = n_heads();
        a.scale = 1.0f / std::sqrt(float(s.head_dim));
        a.q = d_q.as<float>();
        a.cache.keys = d_keys.ptr;
        a.cache.values = d_values.ptr;
        a.cache.capacity = s.capacity;
        a.cache.n_kv_heads = s.n_kv_heads;
        a.cache.head_dim = s.head_dim;
        a.lengths = d_lengths.as<int32_t>();
        a.out = d_out.as<float>();
        a.splits = splits;
        a.workspace = workspace ? workspace->as<float>() : nullptr;
        a.workspace_bytes = workspace ? workspace->bytes : 0;
        return a;
    }

    // The reference: softmax over exact double scores, then Σ p·v in double.
    std::vector<double> reference() const {
        const int heads = n_heads(), d_head = s.head_dim;
        std::vector<double> out(size_t(s.batch) * heads * d_head);
        const double scale = 1.0 / std::sqrt(double(d_head));
#pragma omp parallel for collapse(2) schedule(dynamic)
        for (int b = 0; b < s.batch; ++b)
            for (int h = 0; h < heads; ++h) {
                const int kv = h / s.group, len = lengths[size_t(b)];
                const size_t base = (size_t(b) * s.n_kv_heads + kv) * s.capacity * d_head;
                const float *qh = q.data() + (size_t(b) * heads + h) * d_head;
                std::vector<double> scores(static_cast<size_t>(len));
                double max_score = -INFINITY;
                for (int t = 0; t < len; ++t) {
                    double dot = 0.0;
                    for (int d = 0; d < d_head; ++d) dot += double(qh[d]) * bf16_to_float(keys[base + size_t(t) * d_head + d]);
                    scores[size_t(t)] = dot * scale;
                    max_score = std::max(max_score, scores[size_t(t)]);
                }
                double total = 0.0;
                for (auto &x : scores) total += (x = std::exp(x - max_score));
                double *o = out.data() + (size_t(b) * heads + h) * d_head;
                for (int d = 0; d < d_head; ++d) o[d] = 0.0;
                for (int t = 0; t < len; ++t) {
                    const double p = scores[size_t(t)] / total;
                    for (int d = 0; d < d_head; ++d) o[d] += p * bf16_to_float(values[base + size_t(t) * d_head + d]);
                }
            }
        return out;
    }

    // Largest per-head relative L2 error of the device output, after a check
    // that nothing stayed NaN.
    double check(const char *what, int splits) const {
        const std::vector<float> got = d_out.download<float>(q.size());
        const std::vector<double> ref = reference();
        EXPECT(count_nan(got) == 0, "%s: %zu outputs unwritten or NaN", what, count_nan(got));
        double worst = 0.0;
        const size_t d_head = size_t(s.head_dim);
        for (size_t h = 0; h < got.size() / d_head; ++h) {
            std::vector<float> g(got.begin() + h * d_head, got.begin() + (h + 1) * d_head);
            std::vector<double> r(ref.begin() + h * d_head, ref.begin() + (h + 1) * d_head);
            worst = std::max(worst, relative_l2(g, r));
            if (std::isnan(relative_l2(g, r))) worst = NAN;
        }
        EXPECT(worst <= 2e-5, "%s (batch %d, kv heads %d, group %d, head_dim %d, capacity %d, splits %d): "
               "worst per-head relative L2 %.3g", what, s.batch, s.n_kv_heads, s.group, s.head_dim, s.capacity,
               splits, worst);
        return worst;
    }
};

double g_worst = 0.0;

std::vector<int32_t> random_lengths(int batch, int capacity) {
    std::vector<int32_t> lens(static_cast<size_t>(batch));
    for (auto &l : lens) l = std::uniform_int_distribution<int32_t>(1, capacity)(g_rng);
    // The edges: a single position and a full cache.
    lens[0] = 1;
    if (batch > 1) lens[size_t(batch) - 1] = capacity;
    return lens;
}

void run_case(const Shape &s, const std::vector<int32_t> &lens, int forced_splits, const char *what) {
    Problem p(s, lens);
    const int splits = forced_splits > 0 ? forced_splits : reset::attention_decode_splits(s.batch, s.n_kv_heads, s.capacity);
    DeviceBuffer workspace(reset::attention_decode_workspace_bytes(s.batch, p.n_heads(), s.head_dim, splits));
    workspace.poison();  // the kernel must write every partial it reads
    p.d_out.poison();
    reset::attention_decode(p.args(splits, &workspace), nullptr);
    CUDA_OK(cudaDeviceSynchronize());
    g_worst = std::max(g_worst, p.check(what, splits));
}

// One graph, captured once, replayed with new lengths written to device memory.
void test_graph_replay() {
    const Shape s{2, 4, 4, 128, 4096};
    Problem p(s, {1, 1});
    const int splits = reset::attention_decode_splits(s.batch, s.n_kv_heads, s.capacity);
    DeviceBuffer workspace(reset::attention_decode_workspace_bytes(s.batch, p.n_heads(), s.head_dim, splits));
    cudaStream_t stream;
    CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    reset::attention_decode(p.args(splits, &workspace), stream);
    CUDA_OK(cudaStreamEndCapture(stream, &graph));
    CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
    for (const std::vector<int32_t> &lens : {std::vector<int32_t>{1, 4096}, {129, 2}, {4096, 3000}, {128, 1}}) {
        p.lengths = lens;
        p.d_lengths.upload(lens);
        p.d_out.poison();
        CUDA_OK(cudaGraphLaunch(exec, stream));
        CUDA_OK(cudaStreamSynchronize(stream));
        g_worst = std::max(g_worst, p.check("graph replay", splits));
    }
    CUDA_OK(cudaGraphExecDestroy(exec));
    CUDA_OK(cudaGraphDestroy(graph));
    CUDA_OK(cudaStreamDestroy(stream));
}

template <typename F>
void expect_error(reset_status status, const char *what, F &&f) {
    try {
        f();
        EXPECT(false, "%s: no error", what);
    } catch (const reset::Error &e) {
        EXPECT(e.status() == status, "%s: status %d (%s)", what, int(e.status()), e.what());
    }
}

void test_rejections() {
    Problem p({1, 2, 4, 64, 256}, {10});
    expect_error(RESET_ERR_UNSUPPORTED, "head_dim 96", [&] {
        auto a = p.args(1, nullptr);
        a.cache.head_dim = 96;
        reset::attention_decode(a, nullptr);
    });
    expect_error(RESET_ERR_UNSUPPORTED, "group 16", [&] {
        auto a = p.args(1, nullptr);
        a.n_heads = 32;
        reset::attention_decode(a, nullptr);
    });
    expect_error(RESET_ERR_INVALID_ARGUMENT, "heads not a multiple", [&] {
        auto a = p.args(1, nullptr);
        a.n_heads = 7;
        reset::attention_decode(a, nullptr);
    });
    expect_error(RESET_ERR_INVALID_ARGUMENT, "splits without workspace",
                 [&] { reset::attention_decode(p.args(2, nullptr), nullptr); });
}

// Effective bandwidth (K + V bytes read) at one shape, median of 20 launches.
void time_case(const Shape &s) {
    Problem p(s, std::vector<int32_t>(size_t(s.batch), s.capacity));
    const int splits = reset::attention_decode_splits(s.batch, s.n_kv_heads, s.capacity);
    DeviceBuffer workspace(reset::attention_decode_workspace_bytes(s.batch, p.n_heads(), s.head_dim, splits));
    const auto a = p.args(splits, &workspace);
    cudaEvent_t start, stop;
    CUDA_OK(cudaEventCreate(&start));
    CUDA_OK(cudaEventCreate(&stop));
    for (int i = 0; i < 3; ++i) reset::attention_decode(a, nullptr);
    std::vector<float> ms;
    for (int i = 0; i < 20; ++i) {
        CUDA_OK(cudaEventRecord(start));
        reset::attention_decode(a, nullptr);
        CUDA_OK(cudaEventRecord(stop));
        CUDA_OK(cudaEventSynchronize(stop));
        float t = 0.0f;
        CUDA_OK(cudaEventElapsedTime(&t, start, stop));
        ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    const double bytes = 2.0 * s.batch * s.n_kv_heads * double(s.capacity) * s.head_dim * 2;
    std::printf("  timing: batch %d, %d kv heads x group %d, head_dim %d, context %d, %d splits: median %.1f us "
                "(min %.1f, max %.1f), %.0f GB/s of K+V\n",
                s.batch, s.n_kv_heads, s.group, s.head_dim, s.capacity, splits, ms[ms.size() / 2] * 1e3,
                ms.front() * 1e3, ms.back() * 1e3, bytes / (ms[ms.size() / 2] * 1e-3) / 1e9);
    CUDA_OK(cudaEventDestroy(start));
    CUDA_OK(cudaEventDestroy(stop));
}

}  // namespace

int main(int argc, char **argv) {
    if (!start("test_attention_decode", argc, argv)) return 0;
    const bool quick = std::getenv("RESET_GPU_TEST_QUICK") != nullptr;
    try {
        test_rejections();
        const std::vector<int> batches = quick ? std::vector<int>{1, 3} : std::vector<int>{1, 3, 8};
        const int capacity = quick ? 300 : 1500;
        for (int head_dim : {64, 128})
            for (int group : {1, 4, 8})
                for (int batch : batches) {
                    const Shape s{batch, 2, group, head_dim, capacity};
                    run_case(s, random_lengths(batch, capacity), 0, "auto splits");
                }
        // DeepSeek-R1-Distill-Qwen-7B's group of 7 (a padded kernel instance).
        run_case({2, 4, 7, 128, capacity}, random_lengths(2, capacity), 0, "group 7");
        // Forced splits: one (direct output), a few, and more splits than tiles (empty partials).
        for (int splits : {1, 3, 40}) run_case({3, 2, 4, 128, capacity}, random_lengths(3, capacity), splits, "forced splits");
        test_graph_replay();
        if (!quick) {
            // Long contexts: the Qwen3-8B attention shape, and group 8 at batch 8.
            run_case({2, 8, 4, 128, 32768}, {32768, std::uniform_int_distribution<int32_t>(16000, 32767)(g_rng)}, 0,
                     "32k context");
            run_case({8, 1, 8, 64, 32768}, random_lengths(8, 32768), 0, "32k context, batch 8");
            time_case({1, 8, 4, 128, 32768});
            time_case({8, 8, 4, 128, 32768});
            time_case({1, 8, 4, 128, 1024});
        }
    } catch (const reset::Error &e) {
        std::fprintf(stderr, "FAIL: unexpected reset::Error %d: %s\n", static_cast<int>(e.status()), e.what());
        return 1;
    }
    std::printf("test_attention_decode: worst per-head relative L2 vs FP64: %.3g\n", g_worst);
    return finish("test_attention_decode");
}
