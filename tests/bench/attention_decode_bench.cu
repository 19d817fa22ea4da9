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
// [cache:batch:context|all [splits]]]] (the third picks one case, e.g.
// fp8:1:32768; the fourth forces a split count instead of
// attention_decode_splits'); without a CUDA device it says so and exits 0.
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
        for (const int batch : {1, 8})
            for (const int context : {1024, 8192, 32768}) {
                char name[64];
                std::snprintf(name, sizeof name, "%s:%d:%d", fp8 ? "fp8" : "bf16", batch, context);
                if (argc > 3 && std::strcmp(argv[3], "all") != 0 && std::strcmp(argv[3], name) != 0) continue;
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
                CUDA_OK(cudaGraphExecDestroy(exec));
                CUDA_OK(cudaGraphDestroy(graph));
            }
    }
    CUDA_OK(cudaStreamDestroy(stream));
    return 0;
}
