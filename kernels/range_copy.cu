// range_copy.cu — one thread per word of every range (kernels/range_copy.h).
// The host lays the ranges end to end in words; a thread finds its range by
// the running totals (at most four) and copies one word, so every load of a
// launch is in flight at once: a transfer over PCIe costs one round trip.
#include "kernels/range_copy.h"

#include <cstdint>

#include "api/errors.h"
#include "kernels/cuda_common.cuh"
#include "kernels/dependent_launch.cuh"
#include "kernels/step_trace.cuh"

namespace reset {
namespace {

constexpr int kThreads = 256;
constexpr uint64_t kMaxBytes = uint64_t(1) << 30;

struct WordRanges {
    const void *from[RangeCopyArgs::kMaxRanges];  // nullptr: zeros
    void *to[RangeCopyArgs::kMaxRanges];
    uint32_t end[RangeCopyArgs::kMaxRanges];  // running total of words after range r
    bool wide[RangeCopyArgs::kMaxRanges];     // 16-byte words (else 4-byte)
    int count;
};

__global__ void __launch_bounds__(kThreads) range_copy_kernel(const WordRanges w) {
    [[maybe_unused]] const trace::EndMark end_mark;
    trace::begin_dependent_kernel(trace::kRangeCopy);
    const uint32_t i = blockIdx.x * kThreads + threadIdx.x;
    uint32_t begin = 0;
    for (int r = 0; r < w.count; ++r) {
        if (i < w.end[r]) {
            const uint32_t word = i - begin;
            const bool zeros = w.from[r] == nullptr;
            if (w.wide[r])
                static_cast<uint4 *>(w.to[r])[word] =
                    zeros ? make_uint4(0, 0, 0, 0) : static_cast<const uint4 *>(w.from[r])[word];
            else
                static_cast<uint32_t *>(w.to[r])[word] = zeros ? 0u : static_cast<const uint32_t *>(w.from[r])[word];
            return;
        }
        begin = w.end[r];
    }
}

}  // namespace

void copy_ranges(const RangeCopyArgs &args, cudaStream_t stream) {
    if (args.count < 1 || args.count > RangeCopyArgs::kMaxRanges)
        fail(RESET_ERR_INVALID_ARGUMENT, "copy_ranges: ", args.count, " ranges (1 to ", RangeCopyArgs::kMaxRanges,
             ")");
    WordRanges w = {};
    w.count = args.count;
    uint64_t words = 0, bytes = 0;
    for (int r = 0; r < args.count; ++r) {
        const ByteRange &range = args.ranges[r];
        const auto from = reinterpret_cast<uintptr_t>(range.from), to = reinterpret_cast<uintptr_t>(range.to);
        if (range.bytes % 4 || (range.bytes && (!range.to || from % 4 || to % 4)))
            fail(RESET_ERR_INVALID_ARGUMENT, "copy_ranges: range ", r, " (", range.bytes,
                 " bytes) needs a non-null destination, 4-byte aligned ends and a multiple of 4 bytes");
        bytes += range.bytes;
        if (bytes > kMaxBytes) fail(RESET_ERR_INVALID_ARGUMENT, "copy_ranges: more than 1 GiB in all (small copies only)");
        w.wide[r] = from % 16 == 0 && to % 16 == 0 && range.bytes % 16 == 0;
        words += range.bytes / (w.wide[r] ? 16 : 4);
        w.from[r] = range.from;
        w.to[r] = range.to;
        w.end[r] = static_cast<uint32_t>(words);
    }
    // Every range writes its destination once and reads its source once, in any order between
    // threads: a destination that overlaps a source or another destination would race.
    // (A zero-filling range has no source: nullptr overlaps nothing.)
    auto overlaps = [](const void *a, size_t a_bytes, const void *b, size_t b_bytes) {
        const auto a0 = reinterpret_cast<uintptr_t>(a), b0 = reinterpret_cast<uintptr_t>(b);
        return a && b && a_bytes && b_bytes && a0 < b0 + b_bytes && b0 < a0 + a_bytes;
    };
    for (int r = 0; r < args.count; ++r)
        for (int s = 0; s < args.count; ++s) {
            const ByteRange &a = args.ranges[r], &b = args.ranges[s];
            if (overlaps(a.to, a.bytes, b.from, b.bytes) || (s > r && overlaps(a.to, a.bytes, b.to, b.bytes)))
                fail(RESET_ERR_INVALID_ARGUMENT, "copy_ranges: range ", r, "'s destination overlaps range ", s,
                     " (its source or destination)");
        }
    if (words == 0) return;
    const unsigned blocks = static_cast<unsigned>((words + kThreads - 1) / kThreads);
    cuda::launch_kernel("copy_ranges", range_copy_kernel, dim3(blocks), dim3(kThreads), 0, stream, w);
}

}  // namespace reset
