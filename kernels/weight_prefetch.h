// weight_prefetch.h — asking the L2 for the start of the next GEMV's weight
// while the current kernel no longer needs all of the DRAM's bandwidth.
//
// Why: in a decode step the DRAM is busy only while a GEMV streams its
// weight.  Each GEMV then pays a fixed ~3 µs (docs/gemv.md: its first DRAM
// round trip, its ramp and its drain), and between GEMVs the row kernels and
// attention (at short context) leave the DRAM idle for microseconds.  A
// kernel that carries a WeightPrefetch asks the L2 for those ranges where it
// has stopped streaming (a GEMV's warp after its last quad, an attention CTA
// after its last K/V block), so the next GEMV's first quads are on chip or in
// flight when it starts.  It is a hint: no result depends on it, and the
// ranges are constant data (weights), so asking before griddepcontrol.wait is
// within dependent_launch.cuh's contract.
//
// The ranges are cut into pieces shared among a launch's workers (warps or
// CTAs); each piece is one cp.async.bulk.prefetch.L2 (cuda::prefetch_l2: sm_90+,
// nothing is asked before sm_90).  The launchers check the alignment (an unaligned bulk
// prefetch would be an illegal instruction, fatal to the context).
#pragma once

#include <cstddef>
#include <cstdint>

#include "api/errors.h"
#if defined(__CUDACC__)
#include "kernels/cuda_common.cuh"
#endif

namespace reset {

struct WeightPrefetch {
    static constexpr int kRanges = 2;  // an NVFP4 weight: its codes and its scales
    const void *first[kRanges] = {};   // 16-byte aligned, or null
    uint64_t bytes[kRanges] = {};      // a multiple of 16 (0: nothing)
};

// Host: throws RESET_ERR_INVALID_ARGUMENT naming `what` for a range that is
// not 16-byte aligned, not a multiple of 16 bytes, or has bytes but no start.
inline void check_weight_prefetch(const WeightPrefetch &w, const char *what) {
    for (int r = 0; r < WeightPrefetch::kRanges; ++r) {
        if (w.bytes[r] == 0) continue;
        if (!w.first[r] || reinterpret_cast<uintptr_t>(w.first[r]) % 16 || w.bytes[r] % 16)
            fail(RESET_ERR_INVALID_ARGUMENT, what, ": prefetch range ", r,
                 " must start 16-byte aligned and be a multiple of 16 bytes (", w.bytes[r], " bytes)");
    }
}

#if defined(__CUDACC__)

// Device: worker `worker` of `workers` asks the L2 for its share of every
// range: pieces of at least kPiece bytes, piece i going to worker i.  One
// thread per worker calls it.
__device__ __forceinline__ void issue_weight_prefetch(const WeightPrefetch &w, unsigned worker, unsigned workers) {
    constexpr uint64_t kPiece = 4096;                  // fewer, larger requests where a range is small
    constexpr uint64_t kMaxPiece = uint64_t(1) << 30;  // the size operand is 32-bit (a hint: the rest is skipped)
#pragma unroll
    for (int r = 0; r < WeightPrefetch::kRanges; ++r) {
        const uint64_t bytes = w.bytes[r];
        if (bytes == 0) continue;
        uint64_t piece = (bytes + workers - 1) / workers;
        piece = piece < kPiece ? kPiece : piece > kMaxPiece ? kMaxPiece : (piece + 15) / 16 * 16;
        const uint64_t begin = uint64_t(worker) * piece;
        if (begin >= bytes) continue;
        const uint64_t size = bytes - begin < piece ? bytes - begin : piece;
        cuda::prefetch_l2(static_cast<const char *>(w.first[r]) + begin, static_cast<uint32_t>(size));
    }
}

#endif  // __CUDACC__

}  // namespace reset
