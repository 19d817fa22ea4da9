// claimed_work.cuh — two phases of work in one launch, the second reading what
// the first wrote, with no assumption about how many of the launch's CTAs the
// GPU holds at once.
//
// Why: a decode step is a chain of products where each reads what the one
// before wrote.  As separate launches each pays a drain, the placement of the
// next grid and a ramp (docs/gemv.md); inside one launch the CTAs wait for the
// first phase instead, and whatever they load before waiting (constant data:
// weights) keeps the DRAM busy.
//
// Why claimed work and not a grid barrier.  A barrier that waits for every
// CTA of the launch needs them all resident at once.  An occupancy check
// cannot promise that: another stream's kernel (a second session on the GPU,
// another process under MPS) may hold SMs, and two such launches can each
// wait forever for CTAs the other keeps out.  A cooperative launch promises
// it, but waits for the previous kernel to leave the whole GPU first, which
// cost 3-6% of a decode step (docs/history/gemv-sessions.md, session 13).  Here the first
// phase is divided into units (a CTA's share of one product), which running
// CTAs take from a counter, and a CTA waits only for a count of finished
// units, and only while every unit is taken.  Every unit it waits for is then
// held by a CTA that is running and never waits before finishing it, so the
// wait ends whatever the GPU holds: the launch is an ordinary one (it keeps
// programmatic dependent launch's overlap with the kernel before).  Nothing
// waits for the second phase, so its units stay those of blockIdx.x, which
// the hardware spreads evenly over the SMs (claimed in the order CTAs
// arrive, they bunched on some SMs: 2-3% slower, docs/history/gemv-sessions.md, session 14).
//
// The protocol, thread 0 of each CTA for the CTA (G CTAs, n1 first-phase
// units; CTA b has second-phase work where b < n2):
//  - at the start, before the wait for the previous kernel, one claim;
//  - after each claimed unit, arrive (count it as finished, release);
//  - then poll both counters (one round trip): a CTA with second-phase work
//    goes on once n1 units have arrived (acquire); one without, once all
//    units are claimed; while some unit is unclaimed, either claims it and
//    works on it.
//  - every CTA then counts itself as passed.  The last of the G to pass sets
//    the three words back to zero: no CTA of the launch touches them again.
// The claim comes before the wait for the previous kernel, so a launch must
// not share its state with the launch right before it in the stream (under
// programmatic dependent launch their CTAs overlap); any kernel between them
// is enough, as every kernel of the library waits before it lets the next one
// start (dependent_launch.cuh).
#pragma once

#include <cstdint>

namespace reset::cuda {

// Each word alone in a 128-byte L2 line: claims, arrivals and polls of
// different words do not queue behind each other.
struct ClaimedWork {
    alignas(128) unsigned claims;  // first-phase claims so far (at least n1 in a launch)
    alignas(128) unsigned done;    // first-phase units finished (n1 in a launch)
    alignas(128) unsigned passed;  // CTAs that no longer touch the two words above (G in a launch)
};

#if defined(__CUDACC__)

__device__ __forceinline__ unsigned claim_relaxed_gpu(unsigned *p) {
    unsigned old;
    asm volatile("atom.relaxed.gpu.global.add.u32 %0, [%1], 1;" : "=r"(old) : "l"(p) : "memory");
    return old;
}

__device__ __forceinline__ unsigned add_acq_rel_gpu(unsigned *p, unsigned v) {
    unsigned old;
    asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], %2;" : "=r"(old) : "l"(p), "r"(v) : "memory");
    return old;
}

__device__ __forceinline__ void add_release_gpu(unsigned *p, unsigned v) {
    asm volatile("red.release.gpu.global.add.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

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

__device__ __forceinline__ void store_relaxed_gpu(unsigned *p, unsigned v) {
    asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

// Thread 0: a first-phase unit (the CTA works on it when it is below n1).
__device__ __forceinline__ unsigned claim_unit(ClaimedWork *state) { return claim_relaxed_gpu(&state->claims); }

// Thread 0, after the CTA's writes of a unit and a __syncthreads: count the
// unit as finished (the release is cumulative, so it covers the writes of the
// CTA's other threads ordered before it by the __syncthreads).
__device__ __forceinline__ void arrive(ClaimedWork *state) { add_release_gpu(&state->done, 1); }

// Thread 0, once the CTA has no unit: returns a unit it claimed (below n1),
// or -1 once the CTA may go on (with `wait`: all n1 units finished, their
// writes then visible to the CTA after a __syncthreads; without: all claimed).
__device__ __forceinline__ int claim_or_wait(ClaimedWork *state, unsigned n1, bool wait) {
    for (;;) {
        // The relaxed load first: the acquire after it does not hold it back, so one round trip reads both.
        const unsigned claims = load_relaxed_gpu(&state->claims);
        const unsigned done = load_acquire_gpu(&state->done);
        if (wait && done >= n1) return -1;
        if (claims < n1) {
            const unsigned unit = claim_unit(state);
            if (unit < n1) return static_cast<int>(unit);
        } else if (!wait) {
            return -1;
        }
    }
}

// Thread 0 of a CTA with second-phase work, right after claim_or_wait let it
// go on: count the CTA as passed.  Release only (the acquire of the poll
// before it keeps it after the poll), so the CTA's loads of the second phase
// do not wait for it; its ticket goes to finish_pass once the CTA's work is done.
__device__ __forceinline__ unsigned pass_after_wait(ClaimedWork *state) {
    unsigned old;
    asm volatile("atom.release.gpu.global.add.u32 %0, [%1], 1;" : "=r"(old) : "l"(&state->passed) : "memory");
    return old;
}

// The last CTA to pass resets the three words.  The fence makes the reset
// acquire what its relaxed view of `passed` saw: every other CTA's pass, and
// with it their claims, arrivals and polls.  Only that one CTA pays for it.
__device__ __forceinline__ void finish_pass(ClaimedWork *state, unsigned ticket, unsigned ctas) {
    if (ticket == ctas - 1) {
        asm volatile("fence.acq_rel.gpu;" ::: "memory");
        store_relaxed_gpu(&state->claims, 0);
        store_relaxed_gpu(&state->done, 0);
        store_relaxed_gpu(&state->passed, 0);
    }
}

// Thread 0 of a CTA without second-phase work, once claim_or_wait let it go
// on: count it as passed (acquire and release: its arrivals come before, and
// if it is the last, every other CTA's pass before its reset).
__device__ __forceinline__ void pass_without_wait(ClaimedWork *state, unsigned ctas) {
    finish_pass(state, add_acq_rel_gpu(&state->passed, 1), ctas);
}

#endif  // __CUDACC__

}  // namespace reset::cuda
