// staged_copy.h — large copies between pageable host memory and the device
// through page-locked staging: what moves a sequence's KV cache to and from
// a file or a caller's buffer (reset_save_sequence, reset_load_sequence and
// their memory forms), and a model's weights to the device at load
// (cuda/device_model.cpp, whose copier lives only as long as the load).
//
// Why: cudaMemcpyAsync from pageable memory is staged by the driver through
// its own small page-locked buffers, one CPU thread copying: session 36 run 1
// measured 7.5 GB/s for a KV upload on an H100 host, a fifth of what the
// link carries from page-locked memory.  Here the host side is copied into
// two page-locked halves by several threads at once (the memory system, not
// one core, is then the bound) while the device copies the other half.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "cuda/device_buffer.h"

namespace reset {

// A contiguous run of bytes on each side.
struct CopySegment {
    void *host;
    void *device;
    size_t bytes;
};

class StagedCopier {
public:
    // half_bytes: each half of the staging buffer (0: none, every copy the driver's pageable
    // one, as when the system refuses page-locked memory); threads: host copy threads (>= 1).
    StagedCopier(size_t half_bytes, int threads);
    ~StagedCopier();
    StagedCopier(const StagedCopier &) = delete;
    StagedCopier &operator=(const StagedCopier &) = delete;

    // Copy every segment host -> device (upload) or device -> host, on `stream`, and
    // return when it has finished.  The page-locked halves are reserved on first use;
    // if the system refuses them, the segments are copied directly (as pageable copies,
    // the driver staging them).  Throws RESET_ERR_BACKEND (via cuda_check) naming `what`.
    void upload(const std::vector<CopySegment> &segments, cudaStream_t stream, const char *what);
    void download(const std::vector<CopySegment> &segments, cudaStream_t stream, const char *what);

private:
    // One piece of a segment that fits a half, at `offset` in it.
    struct Piece {
        uint8_t *host;
        uint8_t *device;
        size_t bytes;
        size_t offset;
    };
    // The segments cut into halves' worth of pieces, in order.
    std::vector<std::vector<Piece>> plan(const std::vector<CopySegment> &segments) const;
    bool reserve();
    uint8_t *half(size_t c) const { return staging_.as<uint8_t>() + (c % 2) * half_bytes_; }
    // The pieces' host bytes to or from `half`, on `threads_` threads.
    void host_copy(const std::vector<Piece> &pieces, uint8_t *half, bool to_half) const;
    // Without staging: each segment the driver's pageable copy, then wait.
    void copy_directly(const std::vector<CopySegment> &segments, cudaStream_t stream, bool upload,
                       const char *what) const;

    size_t half_bytes_;
    int threads_;
    bool tried_ = false;
    PinnedBuffer staging_;  // 2 × half_bytes_, or empty
    cudaEvent_t done_[2] = {nullptr, nullptr};  // a half's device copies have finished
};

}  // namespace reset
