// grid_barrier.cuh — a barrier across every CTA of one launch, for kernels
// whose CTAs are all resident at once (a cooperative launch guarantees it).
//
// Why: a decode step is a chain of products where each reads what the one
// before wrote.  As separate launches each pays a drain, the placement of the
// next grid and a ramp (docs/gemv.md); inside one launch the CTAs wait here
// instead, and whatever they load before arriving (constant data: weights)
// keeps the DRAM busy while they wait.
//
// The state is two words in device memory, zeroed once.  The last CTA to
// arrive sets the count back to zero before it opens the barrier by raising
// the generation, so the state is ready for the next barrier, the next launch
// or a CUDA graph replay, whatever the grid size of the launch that uses it.
// One state must not serve two launches that run at the same time.
#pragma once

#include <cstdint>

namespace reset::cuda {

// The two words sit 128 bytes apart, in different L2 lines: the CTAs that
// wait poll the generation while the others' arrivals update the count.
struct GridBarrier {
    alignas(128) unsigned arrived;     // CTAs at the barrier now
    alignas(128) unsigned generation;  // barriers opened so far (wraps)
};

#if defined(__CUDACC__)

__device__ __forceinline__ unsigned load_acquire_gpu(const unsigned *p) {
    unsigned v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ unsigned load_relaxed_gpu(const unsigned *p) {
    unsigned v;
    asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ void store_release_gpu(unsigned *p, unsigned v) {
    asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

__device__ __forceinline__ unsigned add_acq_rel_gpu(unsigned *p, unsigned v) {
    unsigned old;
    asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], %2;" : "=r"(old) : "l"(p), "r"(v) : "memory");
    return old;
}

// Thread 0 of a CTA: the generation its next grid_barrier waits to see pass,
// read early so that the barrier itself costs one round trip to arrive and one
// to see it open.  Read it once every write of an earlier launch that used
// the state is visible (after the kernel's wait for the previous kernel under
// programmatic dependent launch) and before the CTA arrives; it cannot move
// until every CTA of this launch has arrived.
__device__ __forceinline__ unsigned grid_barrier_ticket(const GridBarrier *state) {
    return load_relaxed_gpu(&state->generation);
}

// Every thread of every CTA of the launch calls it (thread 0 with its
// ticket); it returns once all have, with every write made before it by any
// of them visible to all.
__device__ __forceinline__ void grid_barrier(GridBarrier *state, unsigned ticket) {
    __syncthreads();  // this CTA's writes happen before its arrival (the release below is cumulative)
    if (threadIdx.x == 0) {
        const unsigned total = gridDim.x * gridDim.y * gridDim.z;
        if (add_acq_rel_gpu(&state->arrived, 1u) == total - 1) {
            // The last to arrive: every other arrival (and the writes before it) is visible here.
            // The reset is ordered before the opening by the release, so a CTA that sees the
            // barrier open and arrives at a next one finds the count at zero.
            *reinterpret_cast<volatile unsigned *>(&state->arrived) = 0;
            store_release_gpu(&state->generation, ticket + 1);
        } else {
            while (load_acquire_gpu(&state->generation) == ticket) {
#ifdef RESET_GRID_BARRIER_BACKOFF_NS
                __nanosleep(RESET_GRID_BARRIER_BACKOFF_NS);
#endif
            }
        }
    }
    __syncthreads();  // the other threads of the CTA are ordered after thread 0's acquire
}

#endif  // __CUDACC__

}  // namespace reset::cuda
