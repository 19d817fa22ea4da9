// nvfp4_gemv_bench.cu — kernel benchmark of the NVFP4 GEMV against cuBLAS
// BF16 and cuBLASLt FP8 (W8A8), on every linear of the models in models.md.
//
// Method (performance.md): random weights made on the device (never zeros);
// each case rotates through enough weight copies to exceed 4x the L2, so no
// launch is served from cache; a CUDA graph of kLaunches launches (one per
// copy in turn) is replayed, timed with CUDA events, and the median over
// kSamples replays divided by kLaunches is the time per product; read-only
// streaming bandwidth is measured in the same run and every case is
// reported as a fraction of it.  Output: a table on stdout and JSON
// (--json FILE) that tests/bench/report.py turns into markdown.
//
// --warm-l2 measures the opposite case, for the analysis only: one copy of
// each weight that fits 60% of the L2, so after the first launch every launch
// reads it from the L2 (impl names end in "_warm_l2").  It tells how fast the
// kernel itself goes when the DRAM is out of the way: the rate a weight
// prefetched into the L2 ahead of a launch could at best be consumed at.
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "api/errors.h"
#include "kernels/dependent_launch.cuh"
#include "kernels/nvfp4_gemv.h"
#include "kernels/nvfp4_quantize_activations.h"

namespace {

constexpr int kLaunches = 20;
constexpr int kSamples = 25;

void cuda_ok(cudaError_t e, const char *what) {
    if (e != cudaSuccess) {
        std::fprintf(stderr, "CUDA error in %s: %s\n", what, cudaGetErrorString(e));
        std::exit(1);
    }
}
void cublas_ok(cublasStatus_t s, const char *what) {
    if (s != CUBLAS_STATUS_SUCCESS) {
        std::fprintf(stderr, "cuBLAS error %d in %s\n", static_cast<int>(s), what);
        std::exit(1);
    }
}
#define CUDA_OK(call) cuda_ok((call), #call)
#define CUBLAS_OK(call) cublas_ok((call), #call)

// Fill with a per-byte hash of the index and a seed: random, reproducible.
__global__ void fill_random(uint8_t *p, size_t n, uint32_t seed, uint8_t mask, uint8_t add) {
    for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<size_t>(gridDim.x) * blockDim.x) {
        uint32_t h = static_cast<uint32_t>(i) * 0x9E3779B1u ^ seed ^ static_cast<uint32_t>(i >> 32) * 0x85EBCA77u;
        h ^= h >> 15;
        h *= 0x2C1B3C6Du;
        h ^= h >> 12;
        p[i] = static_cast<uint8_t>((h & mask) + add);
    }
}

// Random finite values for BF16 / FP16 / FP8 buffers, in [-1, 1).
__global__ void fill_values(void *p, size_t n, int kind, uint32_t seed) {
    for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<size_t>(gridDim.x) * blockDim.x) {
        uint32_t h = static_cast<uint32_t>(i) * 0x9E3779B1u ^ seed;
        h ^= h >> 16;
        h *= 0x7FEB352Du;
        h ^= h >> 15;
        const float v = static_cast<float>(h & 0xFFFF) / 32768.0f - 1.0f;
        if (kind == 0) static_cast<__nv_bfloat16 *>(p)[i] = __float2bfloat16_rn(v);
        else if (kind == 1) static_cast<__half *>(p)[i] = __float2half_rn(v);
        else static_cast<__nv_fp8_e4m3 *>(p)[i] = __nv_fp8_e4m3(v);
    }
}

void random_bytes(void *p, size_t n, uint32_t seed, uint8_t mask = 0xff, uint8_t add = 0) {
    fill_random<<<1024, 256>>>(static_cast<uint8_t *>(p), n, seed, mask, add);
    CUDA_OK(cudaGetLastError());
}
void random_values(void *p, size_t n, int kind, uint32_t seed) {
    fill_values<<<1024, 256>>>(p, n, kind, seed);
    CUDA_OK(cudaGetLastError());
}

// Read-only streaming: every thread sums 16-byte words; one store per block.
__global__ void stream_read(const uint4 *p, size_t n, unsigned *sink) {
    unsigned acc = 0;
    for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<size_t>(gridDim.x) * blockDim.x) {
        const uint4 v = __ldcs(p + i);
        acc += v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x12345678u) sink[blockIdx.x] = acc;  // keeps the loads; practically never stores
}

// The same bytes as one NVFP4 weight (codes, then scales), read and
// discarded: what a launch that does nothing but stream them takes under the
// same timing.  It is the per-launch ceiling the GEMV is compared with (a
// product cannot read its weight faster than a plain read of it): each thread
// issues kUnroll independent 16-byte loads per round, and the CTAs let the next
// launch be placed at once (griddepcontrol.launch_dependents) and never wait,
// so the chained form overlaps consecutive reads as much as the GPU allows.
constexpr int kReadUnroll = 4;
__global__ void read_weight_bytes(const uint4 *codes, size_t code_words, const uint4 *scales, size_t scale_words,
                                  unsigned *sink) {
    reset::cuda::start_next_kernel();
    const size_t words = code_words + scale_words;
    const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
    unsigned acc = 0;
    for (size_t base = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; base < words;
         base += stride * kReadUnroll) {
        uint4 v[kReadUnroll];
#pragma unroll
        for (int u = 0; u < kReadUnroll; ++u) {
            const size_t i = base + u * stride;
            v[u] = i < code_words ? __ldcs(codes + i) : i < words ? __ldcs(scales + (i - code_words)) : make_uint4(0, 0, 0, 0);
        }
#pragma unroll
        for (int u = 0; u < kReadUnroll; ++u) acc += v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
    }
    if (acc == 0x12345678u) sink[blockIdx.x] = acc;  // keeps the loads; practically never stores
}

// Median time (µs) of one body launch, from graph replays of kLaunches
// launches; body(i) enqueues launch i on the stream.
double time_graph(cudaStream_t stream, const std::function<void(int)> &body) {
    for (int i = 0; i < kLaunches; ++i) body(i);  // warm-up, outside the graph (module load, handles)
    CUDA_OK(cudaStreamSynchronize(stream));
    cudaGraph_t graph;
    CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    for (int i = 0; i < kLaunches; ++i) body(i);
    CUDA_OK(cudaStreamEndCapture(stream, &graph));
    cudaGraphExec_t exec;
    CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
    cudaEvent_t start, stop;
    CUDA_OK(cudaEventCreate(&start));
    CUDA_OK(cudaEventCreate(&stop));
    CUDA_OK(cudaGraphLaunch(exec, stream));
    std::vector<double> samples;
    for (int s = 0; s < kSamples; ++s) {
        CUDA_OK(cudaEventRecord(start, stream));
        CUDA_OK(cudaGraphLaunch(exec, stream));
        CUDA_OK(cudaEventRecord(stop, stream));
        CUDA_OK(cudaEventSynchronize(stop));
        float ms = 0;
        CUDA_OK(cudaEventElapsedTime(&ms, start, stop));
        samples.push_back(1000.0 * ms / kLaunches);
    }
    CUDA_OK(cudaEventDestroy(start));
    CUDA_OK(cudaEventDestroy(stop));
    CUDA_OK(cudaGraphExecDestroy(exec));
    CUDA_OK(cudaGraphDestroy(graph));
    std::sort(samples.begin(), samples.end());
    return samples[samples.size() / 2];
}

struct Shape {
    std::string name;  // e.g. "Qwen3-8B gate_up"
    std::string model;
    std::string role;  // qkv, o, gate_up, down, lm_head
    int64_t n, k;
};

struct Model {
    const char *name;
    int64_t hidden, qkv, o_in, inter, vocab;
};

// models.md: qkv N, o K (= heads * head_dim), intermediate, vocab.
const Model kModels[] = {
    {"R1-Distill-Qwen-7B", 3584, 4608, 3584, 18944, 152064}, {"Qwen3-8B", 4096, 6144, 4096, 12288, 151936},
    {"Qwen3-14B", 5120, 7168, 5120, 17408, 151936},          {"R1-Distill-Qwen-14B", 5120, 7168, 5120, 13824, 152064},
    {"Qwen3-32B", 5120, 10240, 8192, 25600, 151936},
};

std::vector<Shape> model_shapes() {
    std::vector<Shape> shapes;
    for (const Model &m : kModels) {
        shapes.push_back({std::string(m.name) + " qkv", m.name, "qkv", m.qkv, m.hidden});
        shapes.push_back({std::string(m.name) + " o", m.name, "o", m.hidden, m.o_in});
        shapes.push_back({std::string(m.name) + " gate_up", m.name, "gate_up", 2 * m.inter, m.hidden});
        shapes.push_back({std::string(m.name) + " down", m.name, "down", m.hidden, m.inter});
        shapes.push_back({std::string(m.name) + " lm_head", m.name, "lm_head", m.vocab, m.hidden});
    }
    return shapes;
}

struct Result {
    std::string shape, model, role, impl;
    int64_t n, k;
    int m;
    double us, bytes;
    int splits;
};

int copies_for(double bytes, double l2) { return std::max(2, static_cast<int>(4.0 * l2 / bytes) + 1); }

// --warm-l2: shapes of at most this fraction of the L2 run from one copy (the rest is
// left for activations, outputs and the other partition's copies of hot lines).
constexpr double kWarmL2Fraction = 0.6;

// A layer's MLP as the decode step runs it: gate_up (SiLU·up and its row
// maxima into act, FP32) then down (reading act, adding into x), as two
// launches chained by programmatic dependent launch, and as one
// nvfp4_gemv_pair launch (claimed units, the second product waiting for the
// first's).  The weights of both rotate through copies that total more than
// 4x the L2.
void bench_mlp_pairs(cudaStream_t stream, double l2, double stream_gbps, const std::vector<int> &token_counts,
                     const std::string &only, std::vector<Result> &results) {
    int device = 0, major = 0;
    CUDA_OK(cudaGetDevice(&device));
    CUDA_OK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    for (const Model &model : kModels) {
        const std::string name = std::string(model.name) + " mlp";
        if (!only.empty() && name.find(only) == std::string::npos) continue;
        const reset::Nvfp4GemvDecode decode = reset::nvfp4_gemv_device_decode();
        const reset::Nvfp4GemvLayout gate_up = reset::nvfp4_gemv_layout(2 * model.inter, model.hidden, true, decode);
        const reset::Nvfp4GemvLayout down = reset::nvfp4_gemv_layout(model.hidden, model.inter, false, decode);
        const double bytes = (2.0 * model.inter * model.hidden + 1.0 * model.hidden * model.inter) * 0.5625;
        const int copies = copies_for(bytes, l2);
        const size_t ws_bytes = std::max(reset::nvfp4_gemv_workspace_bytes(gate_up), reset::nvfp4_gemv_workspace_bytes(down));
        std::vector<void *> buffers;
        auto device_buffer = [&](size_t n) {
            void *p;
            CUDA_OK(cudaMalloc(&p, std::max<size_t>(n, 16)));
            buffers.push_back(p);
            return p;
        };
        std::vector<reset::Nvfp4GemvWeight> gate_ups, downs;
        for (int c = 0; c < copies; ++c) {
            for (const auto *layout : {&gate_up, &down}) {
                void *codes = device_buffer(layout->code_bytes()), *scales = device_buffer(layout->scale_bytes());
                random_bytes(codes, layout->code_bytes(), 211 + c);
                random_bytes(scales, layout->scale_bytes(), 311 + c, 0x1f, 0x28);  // E4M3 2^-2 .. 2^2
                (layout == &gate_up ? gate_ups : downs).push_back({*layout, codes, scales, 0.01f});
            }
        }
        // Two pair states, alternated: a pair launch must not share its state with the launch
        // right before it in the stream (nvfp4_gemv.h), and here pairs follow each other.
        constexpr size_t kState = reset::kNvfp4GemvPairStateBytes;
        void *workspace = device_buffer(ws_bytes);
        uint8_t *states = static_cast<uint8_t *>(device_buffer(2 * kState));
        CUDA_OK(cudaMemset(workspace, 0, ws_bytes));
        CUDA_OK(cudaMemset(states, 0, 2 * kState));
        constexpr int kMaxM = 8;
        void *x16 = device_buffer(kMaxM * model.hidden * 2), *act = device_buffer(kMaxM * model.inter * 4),
             *x = device_buffer(kMaxM * model.hidden * 4), *amax = device_buffer(kMaxM * 4);
        random_values(x16, kMaxM * model.hidden, 1, 17);
        CUDA_OK(cudaMemset(act, 0, kMaxM * model.inter * 4));
        CUDA_OK(cudaMemset(x, 0, kMaxM * model.hidden * 4));
        CUDA_OK(cudaMemset(amax, 0, kMaxM * 4));
        for (int m : token_counts) {
            reset::Nvfp4GemvArgs first, second;
            first.tokens = second.tokens = m;
            first.x = x16;
            first.ldx = model.hidden;
            first.y = act;
            first.ldy = model.inter;
            first.y_amax = static_cast<float *>(amax);
            second.x = act;
            second.ldx = model.inter;
            second.x_amax = static_cast<float *>(amax);
            second.y = x;
            second.residual = x;
            second.ldy = second.ld_residual = model.hidden;
            for (reset::Nvfp4GemvArgs *a : {&first, &second}) {
                a->workspace = workspace;
                a->workspace_bytes = ws_bytes;
            }
            // The residual stream grows by the product each launch; the row maxima only rise.
            // Neither changes the time (no data-dependent work).
            const reset::cuda::ScopedDependentLaunch chained(major >= 9);
            const double two = time_graph(stream, [&](int i) {
                reset::nvfp4_gemv(gate_ups[i % copies], first, stream);
                reset::nvfp4_gemv(downs[i % copies], second, stream);
            });
            double pair = 0;
            const bool runs = reset::nvfp4_gemv_pair_runs(gate_ups[0], first, downs[0], second);
            if (runs)
                pair = time_graph(stream, [&](int i) {
                    reset::nvfp4_gemv_pair(gate_ups[i % copies], first, downs[i % copies], second, states + (i % 2) * kState,
                                           stream);
                });
            results.push_back({name, model.name, "mlp", "mlp_two_launches_chained", model.hidden, model.inter, m, two,
                               bytes, 0});
            if (runs)
                results.push_back({name, model.name, "mlp", "mlp_pair", model.hidden, model.inter, m, pair, bytes, 0});
            std::printf("%-30s M=%d  gate_up + down: two launches %8.2f us %5.1f%%   pair %8.2f us %5.1f%%%s\n",
                        name.c_str(), m, two, 100.0 * bytes / two / 1e3 / stream_gbps, pair,
                        runs ? 100.0 * bytes / pair / 1e3 / stream_gbps : 0.0, runs ? "" : " (pair does not run)");
        }
        for (void *p : buffers) CUDA_OK(cudaFree(p));
    }
}

}  // namespace

int main(int argc, char **argv) {
    std::string json_path, commit = "unknown", only;
    std::vector<int> token_counts = {1, 2, 4, 8};
    bool baselines = true, warm_l2 = false;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--json") && i + 1 < argc) json_path = argv[++i];
        else if (!std::strcmp(argv[i], "--commit") && i + 1 < argc) commit = argv[++i];
        else if (!std::strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];  // substring of shape names
        else if (!std::strcmp(argv[i], "--m") && i + 1 < argc) token_counts = {std::atoi(argv[++i])};  // one M (profiling)
        else if (!std::strcmp(argv[i], "--nvfp4-only")) baselines = false;  // skip cuBLAS / cuBLASLt
        else if (!std::strcmp(argv[i], "--warm-l2")) warm_l2 = true;        // weights served from the L2 (header)
        else {
            const bool help = !std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h");
            std::fprintf(help ? stdout : stderr,
                         "%s%susage: nvfp4_gemv_bench [--json FILE] [--commit TEXT] [--only SHAPE] [--m M] "
                         "[--nvfp4-only] [--warm-l2]\n",
                         help ? "" : "nvfp4_gemv_bench: unknown argument, or an option without its value: ",
                         help ? "" : (std::string(argv[i]) + "\n").c_str());
            return help ? 0 : 2;
        }
    }
    if (warm_l2) baselines = false;  // the baselines rotate copies: only the NVFP4 kernel is measured warm
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        // A benchmark that measured nothing must not look like a success to `reset bench gemv` or a script.
        std::fprintf(stderr, "nvfp4_gemv_bench: no CUDA device, nothing measured\n");
        return 1;
    }
    cudaDeviceProp prop;
    CUDA_OK(cudaGetDeviceProperties(&prop, 0));
    const double l2 = prop.l2CacheSize;
    cudaStream_t stream;
    CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

    // Streaming bandwidth, 2 GiB read once per launch.
    double stream_gbps = 0;
    {
        const size_t bytes = size_t(2) << 30;
        void *buf;
        unsigned *sink;
        CUDA_OK(cudaMalloc(&buf, bytes));
        CUDA_OK(cudaMalloc(&sink, 65536 * sizeof(unsigned)));
        random_bytes(buf, bytes, 7);
        const int blocks = prop.multiProcessorCount * 8;
        const double us = time_graph(stream, [&](int) {
            stream_read<<<blocks, 512, 0, stream>>>(static_cast<const uint4 *>(buf), bytes / 16, sink);
        });
        stream_gbps = bytes / us / 1e3;
        CUDA_OK(cudaFree(buf));
        CUDA_OK(cudaFree(sink));
    }
    std::printf("device %s, %d SMs, L2 %.0f MB, streaming read %.0f GB/s, decode %s\n", prop.name,
                prop.multiProcessorCount, l2 / 1e6, stream_gbps,
                reset::nvfp4_gemv_device_decode() == reset::Nvfp4GemvDecode::kNativeE2M1 ? "native" : "integer");

    cublasHandle_t blas;
    CUBLAS_OK(cublasCreate(&blas));
    CUBLAS_OK(cublasSetStream(blas, stream));
    cublasLtHandle_t lt;
    CUBLAS_OK(cublasLtCreate(&lt));
    const size_t blas_ws_bytes = 32 << 20;
    void *blas_ws;
    CUDA_OK(cudaMalloc(&blas_ws, blas_ws_bytes));
    CUBLAS_OK(cublasSetWorkspace(blas, blas_ws, blas_ws_bytes));

    constexpr int kMaxM = 8, kFp8M = 16;  // cuBLASLt FP8 runs M padded to 16 (its minimum alignment)
    std::vector<Result> results;
    std::vector<std::pair<std::pair<int64_t, int64_t>, std::string>> done_plain;  // (N, K) -> shape measured
    for (const Shape &shape : model_shapes()) {
        if (!only.empty() && shape.name.find(only) == std::string::npos) continue;
        const bool gate_up = shape.role == "gate_up";
        const int64_t n = shape.n, k = shape.k;
        // --- NVFP4 (both activation modes) ---
        {
            const reset::Nvfp4GemvLayout layout =
                reset::nvfp4_gemv_layout(n, k, gate_up, reset::nvfp4_gemv_device_decode());
            const double bytes = static_cast<double>(n) * k * 0.5625;
            if (warm_l2 && bytes > kWarmL2Fraction * l2) {
                std::printf("%-30s --warm-l2: %.1f MB does not fit %.0f%% of the L2, skipped\n", shape.name.c_str(),
                            bytes / 1e6, 100 * kWarmL2Fraction);
                continue;
            }
            const int copies = warm_l2 ? 1 : copies_for(bytes, l2);
            const std::string suffix = warm_l2 ? "_warm_l2" : "";
            std::vector<void *> codes(copies), scales(copies), ws(copies);
            const size_t ws_bytes = reset::nvfp4_gemv_workspace_bytes(layout);
            for (int c = 0; c < copies; ++c) {
                CUDA_OK(cudaMalloc(&codes[c], layout.code_bytes()));
                CUDA_OK(cudaMalloc(&scales[c], layout.scale_bytes()));
                CUDA_OK(cudaMalloc(&ws[c], ws_bytes));
                CUDA_OK(cudaMemset(ws[c], 0, ws_bytes));
                random_bytes(codes[c], layout.code_bytes(), 11 + c);
                random_bytes(scales[c], layout.scale_bytes(), 101 + c, 0x1f, 0x28);  // E4M3 2^-2 .. 2^2
            }
            void *x_bf16, *x16, *y;
            float *row_scale;
            CUDA_OK(cudaMalloc(&x_bf16, kMaxM * k * 2));
            CUDA_OK(cudaMalloc(&x16, kMaxM * k * 2));
            CUDA_OK(cudaMalloc(&row_scale, kMaxM * sizeof(float)));
            CUDA_OK(cudaMalloc(&y, kMaxM * n * 2));
            random_values(x_bf16, kMaxM * k, 0, 5);
            random_values(x16, kMaxM * k, 1, 6);
            // The per-launch ceiling: a plain read of the same bytes, plain and chained,
            // the fastest of a few grid sizes (CTAs of 256 threads per SM).
            {
                unsigned *sink;
                CUDA_OK(cudaMalloc(&sink, 65536 * sizeof(unsigned)));
                double best_plain = 1e30, best_chained = 1e30;
                for (int per_sm : {2, 4, 8}) {
                    const dim3 grid(static_cast<unsigned>(prop.multiProcessorCount * per_sm)), block(256);
                    auto read = [&](int i) {
                        reset::cuda::launch_kernel("read_weight_bytes", read_weight_bytes, grid, block, 0, stream,
                                                   static_cast<const uint4 *>(codes[i % copies]),
                                                   layout.code_bytes() / 16,
                                                   static_cast<const uint4 *>(scales[i % copies]),
                                                   layout.scale_bytes() / 16, sink);
                    };
                    best_plain = std::min(best_plain, time_graph(stream, read));
                    if (prop.major >= 9) {
                        const reset::cuda::ScopedDependentLaunch chained(true);
                        best_chained = std::min(best_chained, time_graph(stream, read));
                    }
                }
                CUDA_OK(cudaFree(sink));
                results.push_back({shape.name, shape.model, shape.role, "read_same_bytes" + suffix, n, k, 1, best_plain, bytes, 0});
                if (prop.major >= 9)
                    results.push_back({shape.name, shape.model, shape.role, "read_same_bytes_chained" + suffix, n, k, 1,
                                       best_chained, bytes, 0});
                std::printf("%-30s read of the same bytes %8.2f us %5.1f%%   chained %8.2f us %5.1f%%\n",
                            shape.name.c_str(), best_plain, 100.0 * bytes / best_plain / 1e3 / stream_gbps,
                            best_chained, 100.0 * bytes / best_chained / 1e3 / stream_gbps);
            }
            for (int m : token_counts) {
                auto gemv = [&](int i, const float *rs) {
                    reset::Nvfp4GemvWeight w{layout, codes[i % copies], scales[i % copies], 0.01f};
                    reset::Nvfp4GemvArgs a;
                    a.tokens = m;
                    a.x = x16;
                    a.ldx = k;
                    a.x_row_scale = rs;
                    a.y = y;
                    a.ldy = layout.outputs();
                    a.output = reset::Nvfp4GemvOutput::kBFloat16;
                    a.workspace = ws[i % copies];
                    a.workspace_bytes = ws_bytes;
                    reset::nvfp4_gemv(w, a, stream);
                };
                auto prepare = [&](reset::Nvfp4ActivationMode mode) {
                    reset::Nvfp4PrepareArgs pa;
                    pa.mode = mode;
                    pa.tokens = m;
                    pa.cols = k;
                    pa.x = x_bf16;
                    pa.ldx = k;
                    pa.input = reset::Nvfp4ActivationInput::kBFloat16;
                    pa.x16 = x16;
                    pa.ld_x16 = k;
                    pa.row_scale = row_scale;
                    reset::nvfp4_prepare_activations(pa, stream);
                };
                const int splits = reset::nvfp4_gemv_splits(layout, m, 0);
                // W4A16: FP16 activations as the engine's producers write them.
                const double w4a16 = time_graph(stream, [&](int i) { gemv(i, nullptr); });
                // The same launches chained as the engine's decode step chains them
                // (programmatic dependent launch: each GEMV's CTAs start, and load
                // their first weights, while the previous one drains; every launch
                // still waits for the previous to complete before reading x).
                double w4a16_chained = 0;
                {
                    const reset::cuda::ScopedDependentLaunch chained(prop.major >= 9);
                    w4a16_chained = time_graph(stream, [&](int i) { gemv(i, nullptr); });
                }
                // W4A4: the fused quantizer (dynamic per-token scale, BF16 input) then the GEMV.
                prepare(reset::Nvfp4ActivationMode::kW4A4);
                const double w4a4_gemv = time_graph(stream, [&](int i) { gemv(i, row_scale); });
                const double w4a4 = time_graph(stream, [&](int i) {
                    prepare(reset::Nvfp4ActivationMode::kW4A4);
                    gemv(i, row_scale);
                });
                results.push_back({shape.name, shape.model, shape.role, "nvfp4_w4a16" + suffix, n, k, m, w4a16, bytes, splits});
                if (prop.major >= 9)
                    results.push_back({shape.name, shape.model, shape.role, "nvfp4_w4a16_chained" + suffix, n, k, m,
                                       w4a16_chained, bytes, splits});
                results.push_back(
                    {shape.name, shape.model, shape.role, "nvfp4_w4a4_gemv" + suffix, n, k, m, w4a4_gemv, bytes, splits});
                results.push_back(
                    {shape.name, shape.model, shape.role, "nvfp4_w4a4_with_quantize" + suffix, n, k, m, w4a4, bytes, splits});
                std::printf("%-30s M=%d  W4A16 %8.2f us %6.0f GB/s %5.1f%%   chained %8.2f us %5.1f%%   W4A4 gemv %8.2f  "
                            "+quant %8.2f us  (runs per tile %d)\n",
                            shape.name.c_str(), m, w4a16, bytes / w4a16 / 1e3, 100.0 * bytes / w4a16 / 1e3 / stream_gbps,
                            w4a16_chained, 100.0 * bytes / w4a16_chained / 1e3 / stream_gbps, w4a4_gemv, w4a4, splits);
            }
            for (int c = 0; c < copies; ++c) {
                CUDA_OK(cudaFree(codes[c]));
                CUDA_OK(cudaFree(scales[c]));
                CUDA_OK(cudaFree(ws[c]));
            }
            CUDA_OK(cudaFree(x_bf16));
            CUDA_OK(cudaFree(x16));
            CUDA_OK(cudaFree(row_scale));
            CUDA_OK(cudaFree(y));
        }
        // --- cuBLAS BF16 and cuBLASLt FP8, once per (N, K) ---
        if (!baselines) continue;
        const auto measured = std::find_if(done_plain.begin(), done_plain.end(),
                                           [&](const auto &d) { return d.first == std::make_pair(n, k); });
        if (measured != done_plain.end()) {
            for (const Result &r : std::vector<Result>(results))
                if ((r.impl == "cublas_bf16" || r.impl == "cublaslt_fp8") && r.shape == measured->second)
                    results.push_back({shape.name, shape.model, shape.role, r.impl, n, k, r.m, r.us, r.bytes, 0});
            continue;
        }
        done_plain.push_back({{n, k}, shape.name});
        {
            const double bytes = static_cast<double>(n) * k * 2;
            const int copies = copies_for(bytes, l2);
            std::vector<void *> w(copies);
            for (int c = 0; c < copies; ++c) {
                CUDA_OK(cudaMalloc(&w[c], static_cast<size_t>(bytes)));
                random_values(w[c], static_cast<size_t>(n * k), 0, 21 + c);
            }
            void *x, *y;
            CUDA_OK(cudaMalloc(&x, kMaxM * k * 2));
            CUDA_OK(cudaMalloc(&y, kMaxM * n * 2));
            random_values(x, kMaxM * k, 0, 9);
            const float alpha = 1.0f, beta = 0.0f;
            for (int m : token_counts) {
                // Row-major y[m][n] = x[m][k] W[n][k]^T is column-major Y(n x m) = W^T(op) X.
                const double us = time_graph(stream, [&](int i) {
                    CUBLAS_OK(cublasGemmEx(blas, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(n), m, static_cast<int>(k),
                                           &alpha, w[i % copies], CUDA_R_16BF, static_cast<int>(k), x, CUDA_R_16BF,
                                           static_cast<int>(k), &beta, y, CUDA_R_16BF, static_cast<int>(n),
                                           CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
                });
                results.push_back({shape.name, shape.model, shape.role, "cublas_bf16", n, k, m, us, bytes, 0});
                std::printf("%-30s M=%d  cuBLAS BF16 %8.2f us %6.0f GB/s\n", shape.name.c_str(), m, us, bytes / us / 1e3);
            }
            for (int c = 0; c < copies; ++c) CUDA_OK(cudaFree(w[c]));
            CUDA_OK(cudaFree(x));
            CUDA_OK(cudaFree(y));
        }
        {
            const double bytes = static_cast<double>(n) * k;
            const int copies = copies_for(bytes, l2);
            std::vector<void *> w(copies);
            for (int c = 0; c < copies; ++c) {
                CUDA_OK(cudaMalloc(&w[c], static_cast<size_t>(bytes)));
                random_values(w[c], static_cast<size_t>(n * k), 2, 31 + c);
            }
            void *x, *y;
            float *scale;
            CUDA_OK(cudaMalloc(&x, kFp8M * k));
            CUDA_OK(cudaMalloc(&y, kFp8M * n * 2));
            CUDA_OK(cudaMalloc(&scale, sizeof(float)));
            const float one = 1.0f;
            CUDA_OK(cudaMemcpy(scale, &one, sizeof(float), cudaMemcpyHostToDevice));
            random_values(x, kFp8M * k, 2, 13);
            cublasLtMatmulDesc_t op;
            CUBLAS_OK(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
            const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
            CUBLAS_OK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)));
            CUBLAS_OK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)));
            CUBLAS_OK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &scale, sizeof(scale)));
            CUBLAS_OK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &scale, sizeof(scale)));
            cublasLtMatrixLayout_t la, lb, lc;
            CUBLAS_OK(cublasLtMatrixLayoutCreate(&la, CUDA_R_8F_E4M3, k, n, k));
            CUBLAS_OK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_8F_E4M3, k, kFp8M, k));
            CUBLAS_OK(cublasLtMatrixLayoutCreate(&lc, CUDA_R_16BF, n, kFp8M, n));
            cublasLtMatmulPreference_t pref;
            CUBLAS_OK(cublasLtMatmulPreferenceCreate(&pref));
            CUBLAS_OK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                           &blas_ws_bytes, sizeof(blas_ws_bytes)));
            cublasLtMatmulHeuristicResult_t heuristic;
            int found = 0;
            CUBLAS_OK(cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, lc, lc, pref, 1, &heuristic, &found));
            if (found) {
                const float alpha = 1.0f, beta = 0.0f;
                const double us = time_graph(stream, [&](int i) {
                    CUBLAS_OK(cublasLtMatmul(lt, op, &alpha, w[i % copies], la, x, lb, &beta, y, lc, y, lc,
                                             &heuristic.algo, blas_ws, blas_ws_bytes, stream));
                });
                // One time for every M <= 16: the padded product is what runs.
                for (int m : token_counts)
                    results.push_back({shape.name, shape.model, shape.role, "cublaslt_fp8", n, k, m, us, bytes, 0});
                std::printf("%-30s M<=16 cuBLASLt FP8 %8.2f us %6.0f GB/s\n", shape.name.c_str(), us, bytes / us / 1e3);
            } else {
                std::printf("%-30s cuBLASLt FP8: no algorithm\n", shape.name.c_str());
            }
            cublasLtMatmulPreferenceDestroy(pref);
            cublasLtMatrixLayoutDestroy(la);
            cublasLtMatrixLayoutDestroy(lb);
            cublasLtMatrixLayoutDestroy(lc);
            cublasLtMatmulDescDestroy(op);
            for (int c = 0; c < copies; ++c) CUDA_OK(cudaFree(w[c]));
            CUDA_OK(cudaFree(x));
            CUDA_OK(cudaFree(y));
            CUDA_OK(cudaFree(scale));
        }
    }

    if (!warm_l2) bench_mlp_pairs(stream, l2, stream_gbps, token_counts, only, results);

    if (!json_path.empty()) {
        FILE *f = std::fopen(json_path.c_str(), "w");
        if (!f) {
            std::fprintf(stderr, "cannot write %s\n", json_path.c_str());
            return 1;
        }
        std::fprintf(f, "{\n  \"device\": \"%s\",\n  \"sms\": %d,\n  \"l2_bytes\": %.0f,\n  \"commit\": \"%s\",\n",
                     prop.name, prop.multiProcessorCount, l2, commit.c_str());
        std::fprintf(f, "  \"stream_read_gbps\": %.1f,\n  \"launches_per_graph\": %d,\n  \"samples\": %d,\n",
                     stream_gbps, kLaunches, kSamples);
        std::fprintf(f, "  \"results\": [\n");
        for (size_t i = 0; i < results.size(); ++i) {
            const Result &r = results[i];
            std::fprintf(f,
                         "    {\"shape\": \"%s\", \"model\": \"%s\", \"role\": \"%s\", \"impl\": \"%s\", \"n\": %lld, "
                         "\"k\": %lld, \"m\": %d, \"us\": %.3f, \"bytes\": %.0f, \"splits\": %d}%s\n",
                         r.shape.c_str(), r.model.c_str(), r.role.c_str(), r.impl.c_str(), static_cast<long long>(r.n),
                         static_cast<long long>(r.k), r.m, r.us, r.bytes, r.splits, i + 1 < results.size() ? "," : "");
        }
        std::fprintf(f, "  ]\n}\n");
        std::fclose(f);
    }
    cublasDestroy(blas);
    cublasLtDestroy(lt);
    CUDA_OK(cudaFree(blas_ws));
    return 0;
}
