// embedding_lookup.cu — one CTA row of threads per (piece of a row, token);
// every thread widens 8 BF16 (one 16-byte load) into 8 FP32 (two 16-byte
// stores) on the vector path.  BF16 -> FP32 is exact (a 16-bit shift).
#include "kernels/embedding_lookup.h"

#include "kernels/cuda_common.cuh"
#include "kernels/dependent_launch.cuh"
#include "kernels/step_trace.cuh"

namespace reset {
namespace {

constexpr int kThreads = 256;

__device__ __forceinline__ float bf16_bits_to_float(uint32_t bits16) { return __uint_as_float(bits16 << 16); }

template <bool kVector>
__global__ void __launch_bounds__(kThreads) embedding_lookup_kernel(const EmbeddingLookupArgs a) {
    [[maybe_unused]] const trace::EndMark end_mark;
    trace::begin_dependent_kernel(trace::kEmbedding);
    const int token = blockIdx.y;
    const int32_t id = a.ids[token];
    const bool valid = id >= 0 && static_cast<int64_t>(id) < a.vocab;
    float *out = a.x + static_cast<int64_t>(token) * a.ldx;
    if constexpr (kVector) {
        const int64_t i = (static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x) * 8;
        if (i >= a.hidden) return;
        float4 lo = make_float4(0.0f, 0.0f, 0.0f, 0.0f), hi = lo;
        if (valid) {
            const uint16_t *row = static_cast<const uint16_t *>(a.table) + static_cast<int64_t>(id) * a.hidden;
            const uint4 v = __ldg(reinterpret_cast<const uint4 *>(row + i));
            lo = make_float4(__uint_as_float(v.x << 16), __uint_as_float(v.x & 0xffff0000u),
                             __uint_as_float(v.y << 16), __uint_as_float(v.y & 0xffff0000u));
            hi = make_float4(__uint_as_float(v.z << 16), __uint_as_float(v.z & 0xffff0000u),
                             __uint_as_float(v.w << 16), __uint_as_float(v.w & 0xffff0000u));
        }
        reinterpret_cast<float4 *>(out + i)[0] = lo;
        reinterpret_cast<float4 *>(out + i)[1] = hi;
    } else {
        const int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
        if (i >= a.hidden) return;
        float v = 0.0f;
        if (valid) {
            const uint16_t *row = static_cast<const uint16_t *>(a.table) + static_cast<int64_t>(id) * a.hidden;
            v = bf16_bits_to_float(row[i]);
        }
        out[i] = v;
    }
}

}  // namespace

void embedding_lookup(const EmbeddingLookupArgs &a, cudaStream_t stream) {
    if (a.tokens <= 0 || a.hidden <= 0 || a.vocab <= 0 || a.ldx < a.hidden)
        fail(RESET_ERR_INVALID_ARGUMENT, "embedding_lookup: tokens ", a.tokens, ", vocab ", a.vocab, ", hidden ",
             a.hidden, ", ldx ", a.ldx, " (all positive, ldx >= hidden)");
    if (a.tokens > 65535) fail(RESET_ERR_UNSUPPORTED, "embedding_lookup: ", a.tokens, " tokens (at most 65,535)");
    if (a.hidden > (int64_t(1) << 30))
        fail(RESET_ERR_UNSUPPORTED, "embedding_lookup: hidden ", a.hidden, " is too large");
    require(a.ids, "embedding_lookup: ids");
    require(a.table, "embedding_lookup: table");
    require(a.x, "embedding_lookup: x");
    if (reinterpret_cast<uintptr_t>(a.table) % 2 || reinterpret_cast<uintptr_t>(a.x) % 4 ||
        reinterpret_cast<uintptr_t>(a.ids) % 4)
        fail(RESET_ERR_INVALID_ARGUMENT, "embedding_lookup: misaligned table, ids or x");
    const bool vector = a.hidden % 8 == 0 && a.ldx % 4 == 0 && reinterpret_cast<uintptr_t>(a.table) % 16 == 0 &&
                        reinterpret_cast<uintptr_t>(a.x) % 16 == 0;
    const int64_t per_cta = vector ? int64_t(kThreads) * 8 : int64_t(kThreads);
    const dim3 grid(static_cast<unsigned>((a.hidden + per_cta - 1) / per_cta), static_cast<unsigned>(a.tokens));
    cuda::launch_kernel("embedding_lookup", vector ? embedding_lookup_kernel<true> : embedding_lookup_kernel<false>,
                        grid, dim3(kThreads), 0, stream, a);
}

}  // namespace reset
