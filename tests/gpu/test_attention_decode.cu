// test_attention_decode.cu — split-KV GQA decode attention (kernels/
// attention_decode.cu) against a double-precision reference over the same
// cache, BF16 and FP8 E4M3 (scales 1 and 0.05/0.3; the reference reads the
// stored E4M3 values times the scales): head_dim 16/32/64/128 (16 and 32:
// the project's own small models, reset-arith-4m's 8 heads / 4 KV heads of
// 32), group sizes 1/2/4/7/8, batch 1..8, contexts 1 to 32,768, automatic and
// forced split counts, one CUDA graph replayed at several context lengths
// (head_dim 16, 32 and 128), row -> slot
// maps (rows scattered over a larger cache; prefill chunks of up to 512 rows
// sharing a slot at consecutive positions with causal lengths; two chunks
// interleaved; head_dim 16/32 as well as 64/128), and the argument checks
// (head_dims other than 16/32/64/128 rejected).  Fresh random data every run (the
// seed is printed; argv[1] repeats it); outputs are poisoned with NaN first.
// Every launch also checks out_amax (each row's max |out|, exactly, where it
// exceeds 32768, else untouched; values of up to 1e5 meet both sides) and
// out16 (out rounded to FP16, nothing written past a row), and the same launch
// repeated gives the same bits (determinism).
// RESET_GPU_TEST_QUICK=1 runs the small cases only (for compute-sanitizer).
// Prints "timing:" lines: BF16 and FP8 at 32k (Qwen3-8B and -32B heads),
// batch 8, 1k, and prefill chunks.
#include <algorithm>
#include <string>
#include <tuple>

#include <cuda_fp16.h>

#include <cstring>

#include "api/errors.h"
#include "gpu_test_util.h"
#include "kernels/attention_decode.h"
#include "rules/w4a16.h"

using namespace gpu_test;

namespace {

struct Shape {
    int batch, n_kv_heads, group, head_dim, capacity;
};

// The cache's element type and (FP8) scales; values are uniform in
// [-value_range, value_range] (past FP16's row limit in the out_amax cases).
struct Format {
    reset::KvCacheType type = reset::KvCacheType::kBFloat16;
    float k_scale = 1.0f, v_scale = 1.0f;
    float value_range = 2.0f;
    bool fp8() const { return type == reset::KvCacheType::kFp8E4M3; }
};

// One batch of random queries and a random BF16 cache, on host and device.
// Row b reads slot b, or slot_map[b] when a map is given (then the cache has
// n_slots slots).
struct Problem {
    Shape s;
    std::vector<int32_t> slot_map;  // empty: slot b
    int n_slots;
    Format f;
    std::vector<float> q;
    std::vector<uint8_t> keys, values;  // the cache's bytes (BF16 or E4M3 elements)
    std::vector<int32_t> lengths;
    DeviceBuffer d_q, d_keys, d_values, d_lengths, d_slots, d_out;

    Problem(const Shape &shape, const std::vector<int32_t> &lens, const std::vector<int32_t> &map = {}, int slots = 0,
            const Format &format = {})
        : s(shape),
          slot_map(map),
          n_slots(map.empty() ? shape.batch : slots),
          f(format),
          lengths(lens),
          d_q(size_t(shape.batch) * shape.n_kv_heads * shape.group * shape.head_dim * sizeof(float)),
          d_keys(size_t(n_slots) * shape.n_kv_heads * shape.capacity * shape.head_dim *
                 size_t(reset::kv_cache_element_bytes(format.type))),
          d_values(d_keys.bytes),
          d_lengths(size_t(shape.batch) * sizeof(int32_t)),
          d_slots(std::max<size_t>(1, map.size()) * sizeof(int32_t)),
          d_out(d_q.bytes) {
        q.resize(d_q.bytes / sizeof(float));
        // Query magnitudes vary per head so some softmaxes are flat and some peaked.
        const int heads = s.batch * s.n_kv_heads * s.group;
        for (int h = 0; h < heads; ++h) {
            const float sigma = uniform(0.2f, 3.0f);
            for (int d = 0; d < s.head_dim; ++d) q[size_t(h) * s.head_dim + d] = normal(sigma);
        }
        keys.resize(d_keys.bytes);
        values.resize(keys.size());
        if (f.fp8()) {
            for (auto &k : keys) k = double_to_e4m3(double(normal(1.0f) / f.k_scale));
            for (auto &v : values) v = double_to_e4m3(double(uniform(-f.value_range, f.value_range) / f.v_scale));
        } else {
            for (size_t i = 0; i < keys.size(); i += 2) {
                const uint16_t k = float_to_bf16(normal(1.0f)),
                               v = float_to_bf16(uniform(-f.value_range, f.value_range));
                std::memcpy(&keys[i], &k, 2);
                std::memcpy(&values[i], &v, 2);
            }
        }
        d_q.upload(q);
        d_keys.upload(keys);
        d_values.upload(values);
        d_lengths.upload(lengths);
        if (!slot_map.empty()) d_slots.upload(slot_map);
    }

    int slot(int b) const { return slot_map.empty() ? b : slot_map[size_t(b)]; }

    // The value element i of the K or V cache stands for (the scale applied).
    double key(size_t i) const {
        if (f.fp8()) return e4m3_to_double(keys[i]) * double(f.k_scale);
        uint16_t bits;
        std::memcpy(&bits, &keys[2 * i], 2);
        return bf16_to_float(bits);
    }
    double value(size_t i) const {
        if (f.fp8()) return e4m3_to_double(values[i]) * double(f.v_scale);
        uint16_t bits;
        std::memcpy(&bits, &values[2 * i], 2);
        return bf16_to_float(bits);
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
        a.cache.type = f.type;
        a.cache.k_scale = f.k_scale;
        a.cache.v_scale = f.v_scale;
        a.lengths = d_lengths.as<int32_t>();
        a.slots = slot_map.empty() ? nullptr : d_slots.as<int32_t>();
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
#if defined(_OPENMP)
#pragma omp parallel for collapse(2) schedule(dynamic)
#endif
        for (int b = 0; b < s.batch; ++b)
            for (int h = 0; h < heads; ++h) {
                const int kv = h / s.group, len = lengths[size_t(b)];
                const size_t base = (size_t(slot(b)) * s.n_kv_heads + kv) * s.capacity * d_head;
                const float *qh = q.data() + (size_t(b) * heads + h) * d_head;
                std::vector<double> scores(static_cast<size_t>(len));
                double max_score = -INFINITY;
                for (int t = 0; t < len; ++t) {
                    double dot = 0.0;
                    for (int d = 0; d < d_head; ++d) dot += double(qh[d]) * key(base + size_t(t) * d_head + d);
                    scores[size_t(t)] = dot * scale;
                    max_score = std::max(max_score, scores[size_t(t)]);
                }
                double total = 0.0;
                for (auto &x : scores) total += (x = std::exp(x - max_score));
                double *o = out.data() + (size_t(b) * heads + h) * d_head;
                for (int d = 0; d < d_head; ++d) o[d] = 0.0;
                for (int t = 0; t < len; ++t) {
                    const double p = scores[size_t(t)] / total;
                    for (int d = 0; d < d_head; ++d) o[d] += p * value(base + size_t(t) * d_head + d);
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
        EXPECT(worst <= 2e-5, "%s (%s cache, batch %d, kv heads %d, group %d, head_dim %d, capacity %d, splits %d): "
               "worst per-head relative L2 %.3g", what, f.fp8() ? "FP8" : "BF16", s.batch, s.n_kv_heads, s.group,
               s.head_dim, s.capacity, splits, worst);
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

// Rows whose max |out| passed FP16's row limit, and rows that did not, over all launches: the
// run must meet both sides of check_out_amax's rule.
int g_rows_past_limit = 0, g_rows_within_limit = 0;

// out_amax (AttentionDecodeArgs): each row's max |out| over what was stored, exactly, where it
// exceeds 32768; left at its 0 where it does not.
void check_out_amax(const Problem &p, const DeviceBuffer &amax, const char *what) {
    const std::vector<float> got = amax.download<float>(size_t(p.s.batch));
    const std::vector<float> out = p.d_out.download<float>(p.q.size());
    const size_t row = out.size() / size_t(p.s.batch);
    for (int b = 0; b < p.s.batch; ++b) {
        float max_out = 0.0f;
        for (size_t i = 0; i < row; ++i) max_out = std::fmax(max_out, std::fabs(out[size_t(b) * row + i]));
        const bool past = max_out > reset::w4a16::kFp16RowLimit;
        ++(past ? g_rows_past_limit : g_rows_within_limit);
        const float expected = past ? max_out : 0.0f;
        EXPECT(got[size_t(b)] == expected, "%s: out_amax of row %d is %.9g, max |out| %.9g", what, b,
               double(got[size_t(b)]), double(max_out));
    }
}

// out16 (AttentionDecodeArgs): out rounded to FP16 in its own rows; the gap after each row untouched.
void check_out16(const Problem &p, const DeviceBuffer &out16, int64_t ld, const char *what) {
    const std::vector<float> out = p.d_out.download<float>(p.q.size());
    const std::vector<__half> got = out16.download<__half>(out16.bytes / 2);
    const int64_t row = int64_t(out.size()) / p.s.batch;
    bool rounded = true, untouched = true;
    for (int b = 0; b < p.s.batch; ++b)
        for (int64_t i = 0; i < ld; ++i) {
            const __half h = got[size_t(b * ld + i)];
            uint16_t bits;
            std::memcpy(&bits, &h, 2);
            if (i >= row) {
                untouched = untouched && bits == 0xFFFF;
                continue;
            }
            const __half want = __float2half_rn(out[size_t(b * row + i)]);
            rounded = rounded && std::memcmp(&h, &want, 2) == 0;
        }
    EXPECT(rounded, "%s: out16 is not out rounded to FP16", what);
    EXPECT(untouched, "%s: out16 written past a row", what);
}

void run_problem(Problem &p, int forced_splits, const char *what) {
    const Shape &s = p.s;
    const int splits = forced_splits > 0 ? forced_splits : reset::attention_decode_splits(s.batch, s.n_kv_heads, s.capacity);
    DeviceBuffer workspace(reset::attention_decode_workspace_bytes(s.batch, p.n_heads(), s.head_dim, splits));
    prepare_attention_workspace(workspace, s.batch, s.n_kv_heads);  // the kernel must write every partial it reads
    DeviceBuffer amax(size_t(s.batch) * sizeof(float));
    CUDA_OK(cudaMemset(amax.ptr, 0, amax.bytes));
    p.d_out.poison();
    const int64_t ld16 = int64_t(p.n_heads()) * s.head_dim + 8;
    DeviceBuffer out16(size_t(s.batch * ld16) * 2);
    out16.poison();
    auto a = p.args(splits, &workspace);
    a.out_amax = amax.as<float>();
    a.out16 = out16.ptr;
    a.ld_out16 = ld16;
    reset::attention_decode(a, nullptr);
    CUDA_OK(cudaDeviceSynchronize());
    g_worst = std::max(g_worst, p.check(what, splits));
    check_out_amax(p, amax, what);
    check_out16(p, out16, ld16, what);
}

// The same launch three times (one workspace, as a graph replays it) gives
// the same bits: the merge weighs the splits in split order, whatever order
// the CTAs arrive in.
void test_determinism(const Format &f) {
    for (const Shape &s : {Shape{1, 8, 4, 128, 8192}, Shape{3, 2, 8, 64, 5000}}) {
        Problem p(s, s.batch == 1 ? std::vector<int32_t>{s.capacity} : random_lengths(s.batch, s.capacity), {}, 0, f);
        const int splits = reset::attention_decode_splits(s.batch, s.n_kv_heads, s.capacity);
        DeviceBuffer workspace(reset::attention_decode_workspace_bytes(s.batch, p.n_heads(), s.head_dim, splits));
        prepare_attention_workspace(workspace, s.batch, s.n_kv_heads);
        std::vector<float> first;
        for (int run = 0; run < 3; ++run) {
            p.d_out.poison();
            reset::attention_decode(p.args(splits, &workspace), nullptr);
            CUDA_OK(cudaDeviceSynchronize());
            const std::vector<float> got = p.d_out.download<float>(p.q.size());
            if (run == 0) first = got;
            else
                EXPECT(std::memcmp(got.data(), first.data(), got.size() * sizeof(float)) == 0,
                       "determinism (%s, head_dim %d, %d splits): run %d differs from run 0", f.fp8() ? "FP8" : "BF16",
                       s.head_dim, splits, run);
        }
        // Launches that must give run 0's bits.
        const auto same_as_first = [&](const reset::AttentionDecodeArgs &a, const char *change) {
            p.d_out.poison();
            reset::attention_decode(a, nullptr);
            CUDA_OK(cudaDeviceSynchronize());
            const std::vector<float> got = p.d_out.download<float>(p.q.size());
            EXPECT(std::memcmp(got.data(), first.data(), got.size() * sizeof(float)) == 0,
                   "determinism (%s, head_dim %d, %d splits): %s changes the result", f.fp8() ? "FP8" : "BF16",
                   s.head_dim, splits, change);
        };
        // A workspace 8 bytes past a 16-byte boundary: the merge copies the partials 8 bytes at a
        // time instead of 16, the same values in the same order, so the same bits.
        DeviceBuffer shifted(workspace.bytes + 16);
        CUDA_OK(cudaMemset(shifted.ptr, 0, shifted.bytes));
        auto a = p.args(splits, &workspace);
        a.workspace = shifted.as<float>() + 2;
        a.workspace_bytes = workspace.bytes;
        same_as_first(a, "a workspace off 16-byte alignment");
        // The L2 prefetch each CTA asks for as it finishes (AttentionDecodeArgs::prefetch; here
        // of the cache itself, 16-byte aligned; issued where the launch's K/V are at most 16 MB,
        // as in the second shape) is a hint.
        auto hinted = p.args(splits, &workspace);
        hinted.prefetch.first[0] = hinted.cache.keys;
        hinted.prefetch.bytes[0] = 1u << 20;
        hinted.prefetch.first[1] = hinted.cache.values;
        hinted.prefetch.bytes[1] = 4096 + 16;
        same_as_first(hinted, "the weight prefetch");
    }
}

void run_case(const Shape &s, const std::vector<int32_t> &lens, int forced_splits, const char *what,
              const Format &f = {}) {
    Problem p(s, lens, {}, 0, f);
    run_problem(p, forced_splits, what);
}

// One workspace for launches of different shapes, in turn, zeroed once (as a
// session holds it: decode steps of a few rows with many splits, prefill
// chunks of more rows with fewer): every launch must find its merge counters
// at zero, whatever the earlier launches left in the partials.
void test_shared_workspace(const Format &f) {
    Problem decode({1, 8, 4, 128, 8192}, {8192}, {}, 0, f);
    Problem chunk({8, 8, 4, 128, 8192}, random_lengths(8, 8192), {}, 0, f);
    const size_t bytes = std::max(reset::attention_decode_workspace_bytes(1, 32, 128, 64),
                                  reset::attention_decode_workspace_bytes(8, 32, 128, 8));
    DeviceBuffer workspace(bytes);
    CUDA_OK(cudaMemset(workspace.ptr, 0, bytes));
    for (int round = 0; round < 2; ++round)
        for (auto [problem, splits] : {std::pair<Problem *, int>{&decode, 64}, {&chunk, 8}, {&decode, 17}}) {
            problem->d_out.poison();
            reset::attention_decode(problem->args(splits, &workspace), nullptr);
            CUDA_OK(cudaDeviceSynchronize());
            g_worst = std::max(g_worst, problem->check("shared workspace", splits));
        }
}

// Rows mapped to cache slots: scattered over a larger cache, and prefill
// chunks (consecutive positions of one slot as rows, causal lengths p + 1;
// two sequences' chunks interleaved in one launch).
void test_slot_maps(bool quick, const Format &f) {
    for (int head_dim : {16, 32, 128}) {
        const Shape s{5, 2, 4, head_dim, 700};
        Problem p(s, random_lengths(5, 700), {7, 0, 3, 8, 5}, 9, f);
        run_problem(p, 0, "slot map");
        run_problem(p, 1, "slot map");
    }
    for (int rows : quick ? std::vector<int>{17} : std::vector<int>{64, 512}) {
        const int capacity = rows + 900;
        const int first = std::uniform_int_distribution<int>(0, capacity - rows)(g_rng);
        std::vector<int32_t> lens(static_cast<size_t>(rows)), map(static_cast<size_t>(rows), 2);
        for (int i = 0; i < rows; ++i) lens[size_t(i)] = first + i + 1;
        for (int head_dim : {16, 32, 128})
            for (int group : {4, 8}) {
                Problem p({rows, 2, group, head_dim, capacity}, lens, map, 3, f);
                run_problem(p, 0, "prefill chunk");
                run_problem(p, 1, "prefill chunk");
                run_problem(p, 5, "prefill chunk");
            }
        // From position 0 (the first chunk of a prompt), head_dim 64, 32 and 16.
        for (int i = 0; i < rows; ++i) lens[size_t(i)] = i + 1;
        for (int head_dim : {16, 32, 64}) {
            Problem p0({rows, 2, 4, head_dim, capacity}, lens, map, 3, f);
            run_problem(p0, 0, "prefill chunk from 0");
        }
        // Two sequences: rows alternate between slots 1 and 0.
        std::vector<int32_t> lens2(static_cast<size_t>(rows)), map2(static_cast<size_t>(rows));
        for (int i = 0; i < rows; ++i) {
            map2[size_t(i)] = 1 - i % 2;
            lens2[size_t(i)] = (i % 2 ? 300 : first) + i / 2 + 1;
        }
        Problem p2({rows, 2, 4, 128, capacity}, lens2, map2, 2, f);
        run_problem(p2, 0, "two prefill chunks");
        Problem p3({rows, 4, 2, 32, capacity}, lens2, map2, 2, f);  // reset-arith-4m heads
        run_problem(p3, 0, "two prefill chunks");
        run_problem(p3, 3, "two prefill chunks");
    }
}

// One graph, captured once, replayed with new lengths written to device memory.
void test_graph_replay(const Format &f, int head_dim) {
    const Shape s{2, 4, 4, head_dim, 4096};
    Problem p(s, {1, 1}, {}, 0, f);
    const int splits = reset::attention_decode_splits(s.batch, s.n_kv_heads, s.capacity);
    DeviceBuffer workspace(reset::attention_decode_workspace_bytes(s.batch, p.n_heads(), s.head_dim, splits));
    prepare_attention_workspace(workspace, s.batch, s.n_kv_heads);
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

void test_rejections() {
    Problem p({1, 2, 4, 64, 256}, {10});
    for (int head_dim : {0, 8, 24, 48, 80, 96, 256}) {
        const std::string message = expect_error(RESET_ERR_UNSUPPORTED, "unsupported head_dim", [&] {
            auto a = p.args(1, nullptr);
            a.cache.head_dim = head_dim;
            reset::attention_decode(a, nullptr);
        });
        EXPECT(message.find("16, 32, 64 and 128") != std::string::npos, "head_dim %d: message \"%s\"", head_dim,
               message.c_str());
    }
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
    expect_error(RESET_ERR_INVALID_ARGUMENT, "unknown cache type", [&] {
        auto a = p.args(1, nullptr);
        a.cache.type = static_cast<reset::KvCacheType>(2);
        reset::attention_decode(a, nullptr);
    });
    for (float scale : {0.0f, -2.0f, NAN, INFINITY})
        expect_error(RESET_ERR_INVALID_ARGUMENT, "bad FP8 scale", [&] {
            auto a = p.args(1, nullptr);
            a.cache.type = reset::KvCacheType::kFp8E4M3;
            a.cache.k_scale = scale;
            reset::attention_decode(a, nullptr);
        });
    expect_error(RESET_ERR_INVALID_ARGUMENT, "unaligned prefetch", [&] {
        auto a = p.args(1, nullptr);
        a.prefetch.first[1] = static_cast<const char *>(a.cache.keys) + 4;
        a.prefetch.bytes[1] = 64;
        reset::attention_decode(a, nullptr);
    });
    expect_error(RESET_ERR_INVALID_ARGUMENT, "batch 65536", [&] {
        auto a = p.args(1, nullptr);
        a.batch = 65536;
        reset::attention_decode(a, nullptr);
    });
    expect_error(RESET_ERR_INVALID_ARGUMENT, "out16 rows shorter than out's", [&] {
        auto a = p.args(1, nullptr);
        a.out16 = a.out;
        a.ld_out16 = int64_t(a.n_heads) * a.cache.head_dim - 1;
        reset::attention_decode(a, nullptr);
    });
}

// Effective bandwidth (K + V bytes read) at one shape, median of 20 launches.
// Full contexts, unless `lens` and a slot map are given (a prefill chunk:
// then the figure counts each row's K/V bytes, most of them served by L2).
void time_case(const Format &f, const Shape &s, const std::vector<int32_t> &lens = {},
               const std::vector<int32_t> &map = {}, int n_slots = 0, const char *label = "decode") {
    Problem p(s, lens.empty() ? std::vector<int32_t>(size_t(s.batch), s.capacity) : lens, map, n_slots, f);
    const int splits = reset::attention_decode_splits(s.batch, s.n_kv_heads, s.capacity);
    DeviceBuffer workspace(reset::attention_decode_workspace_bytes(s.batch, p.n_heads(), s.head_dim, splits));
    prepare_attention_workspace(workspace, s.batch, s.n_kv_heads);
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
    double positions = 0.0;
    for (int32_t l : p.lengths) positions += l;
    const double bytes = 2.0 * s.n_kv_heads * positions * s.head_dim * reset::kv_cache_element_bytes(f.type);
    std::printf("  timing: %s %s, batch %d, %d kv heads x group %d, head_dim %d, context %d, %d splits: median %.1f us "
                "(min %.1f, max %.1f), %.0f GB/s of K+V\n",
                f.fp8() ? "FP8" : "BF16", label, s.batch, s.n_kv_heads, s.group, s.head_dim, s.capacity, splits, ms[ms.size() / 2] * 1e3,
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
        const Format bf16{}, fp8{reset::KvCacheType::kFp8E4M3, 1.0f, 1.0f},
            fp8_scaled{reset::KvCacheType::kFp8E4M3, 0.05f, 0.3f};
        const std::vector<Format> formats = quick ? std::vector<Format>{bf16, fp8_scaled} : std::vector<Format>{bf16, fp8, fp8_scaled};
        for (const Format &f : formats) {
            for (int head_dim : {16, 32, 64, 128})
                for (int group : {1, 2, 4, 8})
                    for (int batch : batches) {
                        const Shape s{batch, 2, group, head_dim, capacity};
                        run_case(s, random_lengths(batch, capacity), 0, "auto splits", f);
                    }
            // DeepSeek-R1-Distill-Qwen-7B's group of 7 (a padded kernel instance).
            for (int head_dim : {16, 32, 128})
                run_case({2, 4, 7, head_dim, capacity}, random_lengths(2, capacity), 0, "group 7", f);
            // reset-arith-4m's heads: 4 KV heads x group 2, head_dim 32.
            run_case({3, 4, 2, 32, capacity}, random_lengths(3, capacity), 0, "reset-arith-4m heads", f);
            // Forced splits: one (direct output), a few, and more splits than tiles (empty partials).
            for (int head_dim : {16, 32, 128})
                for (int group : {1, 2, 4, 8})
                    for (int splits : {1, 3, 40})
                        run_case({3, 2, group, head_dim, capacity}, random_lengths(3, capacity), splits, "forced splits",
                                 f);
            // Many live splits for the fused merge (the engine's 32k steps merge ~47 on an H100): forced 64
            // and automatic, lengths across the whole range.
            run_case({2, 2, 4, 128, 8192}, {8192, 5000}, 64, "64 live splits", f);
            run_case({3, 2, 8, 64, 8192}, random_lengths(3, 8192), 0, "auto splits at 8k", f);
            // 17 and 24 live splits (32 forced, one piece each, on any GPU): the merge's one round of
            // 24 (kWideMergeRound), as a 1k step's contexts (1025-1088) take at batch 1.
            run_case({2, 2, 4, 128, 2048}, {1088, 1536}, 32, "17 and 24 live splits", f);
            test_shared_workspace(f);
            test_determinism(f);
            for (int head_dim : {16, 32, 128}) test_graph_replay(f, head_dim);
            test_slot_maps(quick, f);
        }
        // Values past FP16's row limit (out_amax raised): row 0 attends to one position, so its
        // output is one value row, up to 1e5; the long rows' averages mostly stay below.
        for (const Format &f : {Format{reset::KvCacheType::kBFloat16, 1.0f, 1.0f, 1e5f},
                                Format{reset::KvCacheType::kFp8E4M3, 0.05f, 256.0f, 1e5f}})
            for (int batch : {1, 3})
                run_case({batch, 2, 4, 128, capacity}, random_lengths(batch, capacity), 0, "values past 32768", f);
        EXPECT(g_rows_past_limit > 0 && g_rows_within_limit > 0,
               "out_amax met %d rows past FP16's row limit and %d within it: both sides must be checked",
               g_rows_past_limit, g_rows_within_limit);
        if (!quick) {
            for (const Format &f : {bf16, fp8}) {
                // Long contexts: the Qwen3-8B attention shape, and group 8 at batch 8.
                run_case({2, 8, 4, 128, 32768}, {32768, std::uniform_int_distribution<int32_t>(16000, 32767)(g_rng)}, 0,
                         "32k context", f);
                run_case({8, 1, 8, 64, 32768}, random_lengths(8, 32768), 0, "32k context, batch 8", f);
                run_case({8, 4, 2, 32, 32768}, random_lengths(8, 32768), 0, "32k context, head_dim 32", f);
                run_case({3, 2, 8, 16, 32768}, random_lengths(3, 32768), 0, "32k context, head_dim 16", f);
            }
            for (const Format &f : {bf16, fp8}) {
                time_case(f, {1, 8, 4, 128, 32768});
                time_case(f, {8, 8, 4, 128, 32768});
                time_case(f, {1, 8, 4, 128, 1024});
                time_case(f, {1, 8, 8, 128, 32768});  // Qwen3-32B heads (group 8)
                // Prefill chunks through this kernel (rows sharing one slot, causal lengths): 512 rows at
                // the start of a prompt, and 128 rows at the end of a 32k context.
                for (const auto &[rows, first, cap] : {std::tuple<int, int, int>{512, 0, 512}, {128, 32640, 32768}}) {
                    std::vector<int32_t> lens(static_cast<size_t>(rows));
                    for (int i = 0; i < rows; ++i) lens[size_t(i)] = first + i + 1;
                    time_case(f, {rows, 8, 4, 128, cap}, lens, std::vector<int32_t>(size_t(rows), 0), 1, "prefill chunk");
                }
            }
        }
    } catch (const reset::Error &e) {
        std::fprintf(stderr, "FAIL: unexpected reset::Error %d: %s\n", static_cast<int>(e.status()), e.what());
        return 1;
    }
    std::printf("test_attention_decode: worst per-head relative L2 vs FP64: %.3g\n", g_worst);
    return finish("test_attention_decode");
}
