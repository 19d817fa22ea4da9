// cuda_common.cuh — helpers shared by the CUDA kernels: error checks on the
// host side, and on the device side the few PTX instructions the kernels use
// (streaming loads, the FP16 tensor-core product, FP16x2 arithmetic on raw
// 32-bit registers).
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>

#include "api/errors.h"

namespace reset::cuda {

// Host: turn a CUDA error into reset::Error (RESET_ERR_BACKEND) naming the call.
inline void check(cudaError_t status, const char *what) {
    if (status != cudaSuccess)
        fail(RESET_ERR_BACKEND, what, ": ", cudaGetErrorName(status), " (", cudaGetErrorString(status), ")");
}

// Host: the multiprocessor count of the current device, read once per device
// (launch heuristics ask on every call; the attribute never changes).
inline int multiprocessor_count() {
    constexpr int kMaxDevices = 64;
    static std::atomic<int> cached[kMaxDevices] = {};
    int device = 0;
    check(cudaGetDevice(&device), "cudaGetDevice");
    if (device >= 0 && device < kMaxDevices) {
        const int known = cached[device].load(std::memory_order_relaxed);
        if (known > 0) return known;
    }
    int count = 0;
    check(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
    if (device >= 0 && device < kMaxDevices) cached[device].store(count, std::memory_order_relaxed);
    return count;
}

}  // namespace reset::cuda

#define RESET_CUDA_CHECK(call) ::reset::cuda::check((call), #call)

namespace reset::cuda {

#if defined(__CUDACC__)

// An L2 policy that marks the lines it loads first to go.
__device__ __forceinline__ uint64_t evict_first_policy() {
    uint64_t policy;
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
    return policy;
}

// How a weight stream's lines stand in the L2 (load_stream_16).
enum class L2Priority {
    kNormal,      // the default policy
    kEvictFirst,  // first to go (evict_first_policy)
};

// A 16-byte load of data read exactly once per decode step (weights): no L1
// allocation, so it does not push out the reused activations; the 256-byte
// L2 prefetch hint matches a warp reading 512 contiguous bytes.
// kEvictFirst: evict-first in the L2 as well, so that a step's gigabytes of
// weights do not push out what the next kernels reuse there (their code,
// activations, the logits).  The policy is made next to each load (one
// instruction; sm_90 has no policy-free L2 priority for loads under 32
// bytes) rather than held in a register across the GEMV loops, which run at
// their register cap.  Measured on the H100 (docs/history/cuda-engine-sessions.md, session
// 12), the NVFP4 GEMV's step is 0.3% faster with it and the BF16 GEMV's 6%
// slower, so the BF16 GEMV asks for kNormal.
template <L2Priority kPriority = L2Priority::kEvictFirst>
__device__ __forceinline__ uint4 load_stream_16(const void *address) {
    uint4 v;
    if constexpr (kPriority == L2Priority::kEvictFirst) {
        asm volatile("ld.global.nc.L1::no_allocate.L2::cache_hint.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
                     : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                     : "l"(address), "l"(evict_first_policy()));
    } else {
        asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
                     : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                     : "l"(address));
    }
    return v;
}

// An 8-byte load_stream_16<kEvictFirst> (the NVFP4 GEMV's scale words).
__device__ __forceinline__ uint2 load_stream_8(const void *address) {
    uint2 v;
    asm volatile("ld.global.nc.L1::no_allocate.L2::cache_hint.v2.u32 {%0, %1}, [%2], %3;"
                 : "=r"(v.x), "=r"(v.y)
                 : "l"(address), "l"(evict_first_policy()));
    return v;
}

// The global nanosecond timer (%globaltimer), for the kernels' debug traces.
__device__ __forceinline__ unsigned long long global_timer_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)::"memory");
    return t;
}

// This CTA's index in a launch of up to three grid dimensions, x fastest.
__device__ __forceinline__ unsigned linear_cta() {
    return blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
}

// Ask the L2 to fetch [p, p + bytes) (16-byte aligned, a multiple of 16; a
// hint, with nothing to wait for); sm_90+, a no-op before.
__device__ __forceinline__ void prefetch_l2(const void *p, uint32_t bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;\n" ::"l"(p), "r"(bytes) : "memory");
#else
    (void)p;
    (void)bytes;
#endif
}

// Two FP16 products in one instruction, on raw registers (round to nearest).
__device__ __forceinline__ uint32_t hmul2(uint32_t a, uint32_t b) {
    uint32_t d;
    asm("mul.rn.f16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
    return d;
}

// D = A * B + D on the tensor cores: A 16x16 row-major FP16, B 16x8 column-
// major FP16, D 16x8 FP32.  Register layouts are the PTX ISA's for
// mma.m16n8k16 (groupID = lane / 4, threadID_in_group = lane % 4).
__device__ __forceinline__ void mma_f16_16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// The same with A and B in BF16 (bf16_gemv's tensor-core path).
__device__ __forceinline__ void mma_bf16_16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

#endif  // __CUDACC__

}  // namespace reset::cuda
