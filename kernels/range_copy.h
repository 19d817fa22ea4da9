// range_copy.h — a few small byte ranges copied by one kernel launch
// (kernels/range_copy.cu): how a decode step's inputs and outputs move
// between page-locked host memory and the device inside the step's graph.
//
// Why a kernel and not cudaMemcpyAsync: in a captured graph every copy is a
// memcpy node, and each one costs the step a few microseconds (a node the
// copy engine runs, which also breaks the chain of programmatic dependent
// launches).  Session 17's run 2 measured the step's five copies (input and
// ring uploads, a state copy, output and ring downloads) at 12 µs of a
// 2.81 ms Qwen3-8B step, 19 µs with ReSET's ring.  One launch reading
// mapped page-locked memory over PCIe before the sampler (which also zeroes
// the forward pass's row maxima, a memset node before), and one writing it
// after the lm_head, replace them (docs/history/cuda-engine-sessions.md, session 17).
//
// Every range is copied word by word, one word per thread and all in one
// round trip: 16-byte words where the range's source, destination and size
// are multiples of 16, 4-byte words otherwise.  A range without a source
// zero-fills its destination (the step's row maxima, reset each step without
// a buffer of zeros to read).  Either end may be device
// memory or page-locked host memory mapped into the device's address space
// (PinnedBuffer::device()).  The launch waits for the previous kernel in the
// stream (kernels/dependent_launch.cuh) before it reads or writes anything.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace reset {

struct ByteRange {
    const void *from = nullptr;  // 4-byte aligned; nullptr: `to` is zero-filled instead
    void *to = nullptr;          // 4-byte aligned; must not overlap `from` or another range's `to`
    size_t bytes = 0;            // a multiple of 4 (0: nothing)
};

struct RangeCopyArgs {
    static constexpr int kMaxRanges = 4;
    int count = 0;  // 1..kMaxRanges
    ByteRange ranges[kMaxRanges];
};

// Enqueue on `stream` (capturable: no allocation, no synchronisation).
// Throws reset::Error: RESET_ERR_INVALID_ARGUMENT for a count outside
// 1..kMaxRanges, a null destination, a misaligned pointer, a size that is not a multiple
// of 4, a destination overlapping a source or another destination, or more
// than 1 GiB in all (this is for small transfers); nothing is launched then.  RESET_ERR_BACKEND if the launch fails.
void copy_ranges(const RangeCopyArgs &args, cudaStream_t stream);

}  // namespace reset
