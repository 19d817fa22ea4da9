// attention_decode_bench.cu — decode attention (kernels/attention_decode.cu)
// at the Qwen3-8B shape (32 query heads, 8 KV heads, head_dim 128), batch 1
// and 8, contexts 1k, 8k and 32k, BF16 and FP8 E4M3 caches, against the
// streaming read bandwidth measured in the same run.
//
// Each case replays a CUDA graph of 36 launches, one per layer, each over its
// own cache (36 layers of random, non-zero K/V), so every layer starts with a
// cold L2 as in a decode step; programmatic dependent launch is on where the
// engine turns it on (sm_90+).  The cache capacity is 32,768 positions for
// every case (the engine's graph is sized for the capacity and reads the
// lengths at run time, so the split count is the one the engine would use).
// Median of 25 replays (after one warm-up), divided by 36.
//
// Output: one JSON line per case on stdout (us_per_layer, kv_bytes_per_layer,
// gbps, pct_of_stream, ...).  Usage: attention_decode_bench [layers [reps
// [cache:batch:context|all [splits]]]].  The third picks one case, e.g.
// fp8:1:32768 (batch 1, 2, 4 or 8, any context up to 32768; "all" runs batch 1 and 8 at 1k,
// 8k and 32k); the fourth
// forces a split count instead of attention_decode_splits'.  Without a CUDA
// device it says so and exits 0.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "gpu_test_util.h"
#include "kernels/attention_decode.h"
#include "kernels/dependent_launch.cuh"

using gpu_test::DeviceBuffer;

#ifdef RESET_ATTENTION_TRACE
// Trace mode (tests/bench/build_attention_trace.sh builds it, the kernel file with the same macro):
// each case is followed by one more replay whose last launch's per-CTA timeline
// (kernels/attention_decode.cu, g_attention_trace) is summarized on one more JSON line with
// "trace": true, times in µs from the launch's earliest CTA entry.
namespace reset {
int attention_decode_trace_read(unsigned long long *, int);
void attention_decode_trace_clear();
}  // namespace reset

#endif
namespace {

constexpr int kHeads = 32, kKvHeads = 8, kHeadDim = 128, kCapacity = 32768;

__device__ uint32_t hash(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return uint32_t(x ^ (x >> 31));
}

// Random cache words: BF16 pairs uniform in (-2, 2), or four E4M3 bytes with
// the top exponent bit clear (|x| < 2, never NaN); q uniform in (-1, 1).
__global__ void fill_cache(uint32_t *words, size_t n, bool fp8, uint64_t seed) {
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
        const uint32_t h = hash(seed + i);
        if (fp8) {
            words[i] = h & 0xbfbfbfbfu;
        } else {
            const float lo = (h & 0xffffu) * (4.0f / 65536.0f) - 2.0f, hi = (h >> 16) * (4.0f / 65536.0f) - 2.0f;
            words[i] = (__float_as_uint(lo) >> 16) | (__float_as_uint(hi) & 0xffff0000u);
        }
    }
}

__global__ void fill_query(float *q, size_t n, uint64_t seed) {
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
        q[i] = hash(seed + i) * (2.0f / 4294967296.0f) - 1.0f;
}

// The streaming read ceiling: a sum over `n` 16-byte words.
__global__ void sum_words(const uint4 *words, size_t n, unsigned *result) {
    unsigned total = 0;
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
        const uint4 w = __ldcs(words + i);
        total += w.x + w.y + w.z + w.w;
    }
    for (int o = 16; o > 0; o >>= 1) total += __shfl_xor_sync(0xffffffffu, total, o);
    if (threadIdx.x % 32 == 0 && total == 0x12345678u) atomicAdd(result, total);  // keeps the loads
}

#ifdef RESET_ATTENTION_TRACE
constexpr int kTraceWords = 16;  // the kernel's words per CTA record

// The trace line of one launch's records r (kTraceWords words per CTA, see print_trace).
void print_trace_line(const std::vector<unsigned long long> &r, const char *cache, int batch, int context, int splits,
                      int layers, double replay_us_per_layer) {
    const int ctas = int(r.size() / kTraceWords);
    const auto at = [&](int c, int k) { return r[size_t(c) * kTraceWords + size_t(k)]; };
    const auto delta_us = [&](int c, int from, int to) { return (double(at(c, to)) - double(at(c, from))) * 1e-3; };
    unsigned long long t0 = ~0ull, t_end = 0;
    for (int c = 0; c < ctas; ++c)
        if (at(c, 0)) t0 = std::min(t0, at(c, 0));
    const auto us = [&](unsigned long long t) { return (double(t) - double(t0)) * 1e-3; };
    // min, median, max of a list (zeros when empty).
    struct Stat { double min = 0, med = 0, max = 0; };
    const auto stat = [](std::vector<double> v) {
        Stat s;
        if (v.empty()) return s;
        std::sort(v.begin(), v.end());
        s.min = v.front();
        s.med = v[v.size() / 2];
        s.max = v.back();
        return s;
    };
    std::vector<double> entry, after_wait, loop_start, loop_end, loop, partials, merge, merge_start, merge_end;
    std::vector<int> per_sm;
    std::vector<unsigned long long> stamps;  // every stamp, for the timer's tick
    struct Slow { double loop_us; int sm, positions; };
    std::vector<Slow> slow;
    int live = 0, merging = 0;
    double last_start = 0, last_end = -1;  // the merge that ends last
    int last_merger = -1;                  // its CTA
    std::vector<double> store_issue, fence_atomic;  // live CTAs that wrote partials and did not merge
    for (int c = 0; c < ctas; ++c) {
        if (!at(c, 0)) continue;
        entry.push_back(us(at(c, 0)));
        for (const int k : {0, 1, 2, 3, 4, 5, 8, 9, 10, 11, 14, 15})
            if (at(c, k)) stamps.push_back(at(c, k));
        if (!at(c, 7)) continue;  // past the context: left at once
        ++live;
        after_wait.push_back(us(at(c, 1)));
        loop_start.push_back(us(at(c, 2)));
        loop_end.push_back(us(at(c, 3)));
        loop.push_back((double(at(c, 3)) - double(at(c, 2))) * 1e-3);
        partials.push_back(us(at(c, 4)));
        t_end = std::max({t_end, at(c, 4), at(c, 5)});
        const int sm = int(at(c, 6));
        if (sm >= int(per_sm.size())) per_sm.resize(size_t(sm) + 1, 0);
        ++per_sm[size_t(sm)];
        slow.push_back({loop.back(), sm, int(at(c, 7))});
        if (at(c, 5)) {
            ++merging;
            merge.push_back((double(at(c, 5)) - double(at(c, 4))) * 1e-3);
            merge_start.push_back(us(at(c, 4)));
            merge_end.push_back(us(at(c, 5)));
            if (merge_end.back() > last_end) {
                last_end = merge_end.back();
                last_start = merge_start.back();
                last_merger = c;
            }
        } else if (at(c, 14)) {
            store_issue.push_back(delta_us(c, 3, 14));
            fence_atomic.push_back(delta_us(c, 14, 4));
        }
    }
    // The last-ending merge's phases ([4] arrival, [8] first round issued, [9] weights, [10] first round
    // summed, [15] last round issued, [11] summed and stored, [5] = [11]) and its rounds and splits per
    // round.  merge_first_wait_us is the first round trip and sum; merge_sum_us = merge_later_rounds_us
    // (rounds after the first, their round trips included; 0 with one round) + merge_last_sum_us.
    const bool lm = last_merger >= 0;
    const double merge_issue = lm ? delta_us(last_merger, 4, 8) : 0.0,
                 merge_weights = lm ? delta_us(last_merger, 8, 9) : 0.0,
                 merge_first_wait = lm ? delta_us(last_merger, 9, 10) : 0.0,
                 merge_sum = lm ? delta_us(last_merger, 10, 11) : 0.0,
                 merge_store = lm ? delta_us(last_merger, 11, 5) : 0.0,
                 merge_later_rounds = lm ? delta_us(last_merger, 10, 15) : 0.0,
                 merge_last_sum = lm ? delta_us(last_merger, 15, 11) : 0.0;
    const int merge_rounds = lm ? int(at(last_merger, 12)) : 0, merge_batch = lm ? int(at(last_merger, 13)) : 0;
    int sms = 0, sm_min = 0, sm_max = 0;
    for (const int n : per_sm)
        if (n > 0) {
            sm_min = sms ? std::min(sm_min, n) : n;
            sm_max = std::max(sm_max, n);
            ++sms;
        }
    std::sort(stamps.begin(), stamps.end());
    unsigned long long tick = 0;  // the smallest step between distinct stamps: the timer's resolution, at best
    for (size_t i = 1; i < stamps.size(); ++i)
        if (stamps[i] > stamps[i - 1] && (!tick || stamps[i] - stamps[i - 1] < tick)) tick = stamps[i] - stamps[i - 1];
    std::sort(slow.begin(), slow.end(), [](const Slow &x, const Slow &y) { return x.loop_us > y.loop_us; });
    char slowest[256] = "";
    for (size_t i = 0, n = 0; i < std::min<size_t>(5, slow.size()); ++i)
        n += size_t(std::snprintf(slowest + n, sizeof slowest - n, "%s[%d, %d, %.2f]", i ? ", " : "", slow[i].sm,
                                  slow[i].positions, slow[i].loop_us));
    const Stat e = stat(entry), w = stat(after_wait), ls = stat(loop_start), le = stat(loop_end), lp = stat(loop),
               pa = stat(partials), mg = stat(merge), ms = stat(merge_start), me = stat(merge_end),
               si = stat(store_issue), fa = stat(fence_atomic);
    std::printf("{\"bench\": \"attention_decode\", \"trace\": true, \"cache\": \"%s\", \"batch\": %d, "
                "\"context\": %d, \"splits\": %d, \"layers\": %d, \"replay_us_per_layer\": %.2f, "
                "\"ctas\": %d, \"live_ctas\": %d, \"merging_ctas\": %d, \"tick_ns\": %llu, "
                "\"entry_us\": [%.2f, %.2f, %.2f], \"after_wait_us\": [%.2f, %.2f, %.2f], "
                "\"loop_start_med_us\": %.2f, \"loop_us\": [%.2f, %.2f, %.2f], \"loop_end_us\": [%.2f, %.2f, %.2f], "
                "\"partials_end_us\": [%.2f, %.2f, %.2f], \"merge_start_us\": [%.2f, %.2f, %.2f], "
                "\"merge_end_us\": [%.2f, %.2f, %.2f], \"last_merge_start_end_us\": [%.2f, %.2f], "
                "\"merge_us_med_max\": [%.2f, %.2f], \"span_us\": %.2f, \"span_after_wait_us\": %.2f, \"sms\": %d, "
                "\"live_ctas_per_sm_min_max\": [%d, %d], \"slowest_sm_positions_loop_us\": [%s], "
                "\"merge_issue_us\": %.2f, \"merge_weights_us\": %.2f, \"merge_first_wait_us\": %.2f, "
                "\"merge_sum_us\": %.2f, \"merge_store_us\": %.2f, \"merge_rounds\": %d, \"merge_batch\": %d, "
                "\"merge_later_rounds_us\": %.2f, \"merge_last_sum_us\": %.2f, "
                "\"store_issue_us\": %.2f, \"fence_atomic_us\": %.2f}\n",
                cache, batch, context, splits, layers, replay_us_per_layer, ctas, live, merging, tick, e.min,
                e.med, e.max, w.min, w.med, w.max, ls.med, lp.min, lp.med, lp.max, le.min, le.med, le.max, pa.min,
                pa.med, pa.max, ms.min, ms.med, ms.max, me.min, me.med, me.max, merging ? last_start : 0.0,
                merging ? last_end : 0.0, mg.med, mg.max,
                live ? us(t_end) : 0.0, live ? us(t_end) - w.min : 0.0, sms, sm_min, sm_max, slowest, merge_issue,
                merge_weights, merge_first_wait, merge_sum, merge_store, merge_rounds, merge_batch, merge_later_rounds,
                merge_last_sum, si.med, fa.med);
    std::fflush(stdout);
}

// Two more replays of `exec` (all its layers; the second timed), then the last launch's per-CTA records
// ([0] entry, [1] after the PDL wait, [2] loop start, [3] loop end, [4] partials written and
// arrival counted, [5] merge end or 0, all ns; [6] SM; [7] positions, 0 for a CTA past the
// context; the merging CTA's [8] first round issued, [9] weights, [10] first round summed,
// [11] summed and stored, ns, [12] rounds, [13] splits per round, [15] last round issued, ns; [14]
// partials' stores issued, ns, for every CTA of more than one live split), summarized on one
// JSON line.  Times in µs from the earliest entry; the merge phases ("merge_*_us") are the
// last-ending merge's, "store_issue_us" ([14] - [3]) and "fence_atomic_us" ([4] - [14]) medians
// over live CTAs that did not merge.
void print_trace(const char *cache, int batch, int context, int splits, int layers, cudaGraphExec_t exec,
                 cudaStream_t stream) {
    constexpr int kTraceCtas = 4096;  // the kernel's record count
    const int ctas = std::min(kTraceCtas, splits * kKvHeads * batch);
    reset::attention_decode_trace_clear();
    // The records hold the last launch of the timed replay (the warm-up's are overwritten).
    const float replay_us =
        gpu_test::sorted_us([&](int) { CUDA_OK(cudaGraphLaunch(exec, stream)); }, 1, stream).front();
    std::vector<unsigned long long> r(size_t(ctas) * kTraceWords);
    CUDA_OK(static_cast<cudaError_t>(reset::attention_decode_trace_read(r.data(), ctas)));
    print_trace_line(r, cache, batch, context, splits, layers, replay_us / layers);
}

#endif
}  // namespace

int main(int argc, char **argv) {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        std::printf("attention_decode_bench: skipped (no CUDA device)\n");
        return 0;
    }
    cudaDeviceProp prop;
    CUDA_OK(cudaGetDeviceProperties(&prop, 0));
    const int reps = argc > 2 ? std::atoi(argv[2]) : 25;
    const size_t layer_max = size_t(8) * kKvHeads * kCapacity * kHeadDim * 2;  // batch 8, BF16: 512 MiB of K
    size_t free_bytes = 0, total_bytes = 0;
    CUDA_OK(cudaMemGetInfo(&free_bytes, &total_bytes));
    const size_t stream_bytes = size_t(1) << 30;
    int layers = argc > 1 ? std::atoi(argv[1]) : 36;
    const size_t spare = stream_bytes + (size_t(2) << 30);  // the bandwidth buffer and headroom
    const size_t room = free_bytes > spare ? (free_bytes - spare) / (2 * layer_max) : 0;
    layers = int(std::max<size_t>(1, std::min<size_t>(size_t(std::max(1, layers)), room)));

    // Streaming read bandwidth (1 GiB, read once per launch).
    double stream_gbps = 0.0;
    {
        DeviceBuffer words(stream_bytes), result(sizeof(unsigned));
        fill_cache<<<4 * prop.multiProcessorCount, 256>>>(words.as<uint32_t>(), stream_bytes / 4, true, 7);
        CUDA_OK(cudaGetLastError());
        const float us = gpu_test::median_us(
            [&] { sum_words<<<8 * prop.multiProcessorCount, 512>>>(words.as<uint4>(), stream_bytes / 16, result.as<unsigned>()); },
            reps);
        CUDA_OK(cudaGetLastError());
        stream_gbps = double(stream_bytes) / (us * 1e-6) / 1e9;
    }

    DeviceBuffer keys(layer_max * layers), values(layer_max * layers);
    DeviceBuffer q(size_t(8) * kHeads * kHeadDim * sizeof(float)), out(q.bytes), lengths(8 * sizeof(int32_t));
    fill_query<<<64, 256>>>(q.as<float>(), q.bytes / sizeof(float), 11);
    CUDA_OK(cudaGetLastError());
    cudaStream_t stream;
    CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    for (const bool fp8 : {false, true}) {
        const auto type = fp8 ? reset::KvCacheType::kFp8E4M3 : reset::KvCacheType::kBFloat16;
        fill_cache<<<8 * prop.multiProcessorCount, 256>>>(keys.as<uint32_t>(), keys.bytes / 4, fp8, 1);
        fill_cache<<<8 * prop.multiProcessorCount, 256>>>(values.as<uint32_t>(), values.bytes / 4, fp8, 2);
        CUDA_OK(cudaGetLastError());
        CUDA_OK(cudaDeviceSynchronize());
        // Batch 2 and 4 only when named (the split-count runs of docs/history/cuda-engine-sessions.md, session 10).
        const bool named = argc > 3 && std::strcmp(argv[3], "all") != 0;
        // A named case may name any context up to the capacity (e.g. fp8:1:1088, a 1k step's last).
        std::vector<int> contexts = {1024, 8192, 32768};
        int named_context = 0;
        if (named && std::sscanf(argv[3], "%*[a-z0-9]:%*d:%d", &named_context) == 1 &&
            named_context >= 1 && named_context <= kCapacity &&
            std::find(contexts.begin(), contexts.end(), named_context) == contexts.end())
            contexts.push_back(named_context);
        for (const int batch : {1, 2, 4, 8})
            for (const int context : contexts) {
                char name[64];
                std::snprintf(name, sizeof name, "%s:%d:%d", fp8 ? "fp8" : "bf16", batch, context);
                if (named ? std::strcmp(argv[3], name) != 0 : batch == 2 || batch == 4) continue;
                const int splits = argc > 4 && std::atoi(argv[4]) > 0 ? std::atoi(argv[4])
                                                                     : reset::attention_decode_splits(batch, kKvHeads, kCapacity);
                DeviceBuffer workspace(std::max<size_t>(16, reset::attention_decode_workspace_bytes(batch, kHeads, kHeadDim, splits)));
                CUDA_OK(cudaMemset(workspace.ptr, 0, workspace.bytes));
                lengths.upload(std::vector<int32_t>(size_t(batch), context));
                std::vector<reset::AttentionDecodeArgs> args(static_cast<size_t>(layers));
                for (int l = 0; l < layers; ++l) {
                    reset::AttentionDecodeArgs &a = args[size_t(l)];
                    a.batch = batch;
                    a.n_heads = kHeads;
                    a.scale = 1.0f / std::sqrt(float(kHeadDim));
                    a.q = q.as<float>();
                    a.cache.keys = keys.as<char>() + size_t(l) * layer_max;
                    a.cache.values = values.as<char>() + size_t(l) * layer_max;
                    a.cache.capacity = kCapacity;
                    a.cache.n_kv_heads = kKvHeads;
                    a.cache.head_dim = kHeadDim;
                    a.cache.type = type;
                    a.lengths = lengths.as<int32_t>();
                    a.out = out.as<float>();
                    a.splits = splits;
                    a.workspace = workspace.as<float>();
                    a.workspace_bytes = workspace.bytes;
                }
                cudaGraph_t graph;
                cudaGraphExec_t exec;
                const bool pdl = prop.major >= 9;
                {
                    const reset::cuda::ScopedDependentLaunch dependent(pdl);
                    CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
                    for (const auto &a : args) reset::attention_decode(a, stream);
                    CUDA_OK(cudaStreamEndCapture(stream, &graph));
                }
                CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
                // Per layer: each replay runs `layers` launches.
                std::vector<float> times =
                    gpu_test::sorted_us([&](int) { CUDA_OK(cudaGraphLaunch(exec, stream)); }, reps, stream);
                for (float &t : times) t /= float(layers);
                const double us = times[times.size() / 2];
                const double kv_bytes = 2.0 * batch * kKvHeads * double(context) * kHeadDim * (fp8 ? 1 : 2);
                const double gbps = kv_bytes / (us * 1e-6) / 1e9;
                std::printf("{\"bench\": \"attention_decode\", \"gpu\": \"%s\", \"cache\": \"%s\", \"batch\": %d, "
                            "\"context\": %d, \"capacity\": %d, \"heads\": %d, \"kv_heads\": %d, \"head_dim\": %d, "
                            "\"splits\": %d, \"layers\": %d, \"pdl\": %s, \"reps\": %d, \"us_per_layer\": %.2f, "
                            "\"us_min\": %.2f, \"us_max\": %.2f, \"kv_bytes_per_layer\": %.0f, \"gbps\": %.1f, "
                            "\"stream_gbps\": %.1f, \"pct_of_stream\": %.1f}\n",
                            prop.name, fp8 ? "fp8" : "bf16", batch, context, kCapacity, kHeads, kKvHeads, kHeadDim,
                            splits, layers, pdl ? "true" : "false", reps, us, times.front(), times.back(), kv_bytes,
                            gbps, stream_gbps, 100.0 * gbps / stream_gbps);
#ifdef RESET_ATTENTION_TRACE
                print_trace(fp8 ? "fp8" : "bf16", batch, context, splits, layers, exec, stream);
#endif
                CUDA_OK(cudaGraphExecDestroy(exec));
                CUDA_OK(cudaGraphDestroy(graph));
            }
    }
    CUDA_OK(cudaStreamDestroy(stream));
    return 0;
}
