// step_trace.cuh — the device side of kernels/step_trace.h: the marks an
// instrumented kernel calls.  Without RESET_STEP_TRACE they are the plain
// begin_dependent_kernel() and nothing.
#pragma once

#include "kernels/dependent_launch.cuh"
#include "kernels/step_trace.h"

namespace reset::trace {

#ifdef RESET_STEP_TRACE

namespace {
__device__ Buffer g_buffer;
void set_this_file(const Buffer &b) { cudaMemcpyToSymbol(g_buffer, &b, sizeof b); }
const bool g_registered = (setters().push_back(&set_this_file), true);
}  // namespace

__device__ __forceinline__ unsigned linear_thread() {
    return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}
// Each warp's record, kept for end(): one slot per warp of the CTA.
__device__ __forceinline__ unsigned *warp_slots() {
    __shared__ unsigned slots[32];
    return slots;
}

// begin_dependent_kernel() with the warp's record: its slot is taken before
// the wait (the atomic's round trip overlaps it).  The whole warp calls.
// placing_next: cuda::begin_dependent_kernel_placing_next() instead.
__device__ __forceinline__ void begin_dependent_kernel(unsigned kind, unsigned tag = 0, unsigned tag2 = 0,
                                                       bool placing_next = false) {
    const unsigned thread = linear_thread(), warp = thread / 32;
    const Buffer b = g_buffer;
    unsigned long long start = 0;
    unsigned slot = ~0u, sm = 0;
    if (thread % 32 == 0 && b.records) {
        start = cuda::global_timer_ns();
        asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
        if (sm < kMaxSms) {
            const unsigned taken = atomicAdd(b.counts + sm * kCounterStride, 1u);
            if (taken < b.per_sm) slot = sm * b.per_sm + taken;
        }
    }
    cuda::begin_dependent_kernel(placing_next);
    if (thread % 32 == 0) {
        if (slot != ~0u) {
            Record r;
            r.start = start;
            r.waited = cuda::global_timer_ns();
            r.end = 0;
            r.kind = kind;
            r.tag = tag;
            r.tag2 = tag2;
            r.block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
            r.warp = warp;
            r.sm = sm;
            b.records[slot] = r;
        }
        warp_slots()[warp] = slot;
    }
}

// The warp's end mark, wherever the warp leaves the kernel: declared first
// in a kernel, before begin_dependent_kernel above (a warp that leaves before
// it has no record).
struct EndMark {
    __device__ __forceinline__ EndMark() {
        const unsigned thread = linear_thread();
        if (thread % 32 == 0) warp_slots()[thread / 32] = ~0u;
    }
    __device__ __forceinline__ ~EndMark() {
        const unsigned thread = linear_thread();
        if (thread % 32 != 0) return;
        const unsigned slot = warp_slots()[thread / 32];
        if (slot != ~0u) g_buffer.records[slot].end = cuda::global_timer_ns();
    }
};

#else

__device__ __forceinline__ void begin_dependent_kernel(unsigned, unsigned = 0, unsigned = 0, bool placing_next = false) {
    cuda::begin_dependent_kernel(placing_next);
}
struct EndMark {};

#endif

}  // namespace reset::trace
