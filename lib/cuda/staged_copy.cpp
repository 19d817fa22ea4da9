// staged_copy.cpp — the double-buffered page-locked staging of staged_copy.h.
#include "cuda/staged_copy.h"

#include <algorithm>
#include <cstring>


namespace reset {

StagedCopier::StagedCopier(size_t half_bytes, int threads) : half_bytes_(half_bytes), threads_(std::max(threads, 1)) {}

StagedCopier::~StagedCopier() {
    for (cudaEvent_t event : done_)
        if (event) cudaEventDestroy(event);
}

bool StagedCopier::reserve() {
    if (tried_) return staging_.bytes() > 0;
    tried_ = true;
    if (half_bytes_ == 0) return false;  // asked for no staging
    // Reserved on first use, not with the session: a session that never saves or loads a
    // sequence pins nothing.  A refusal (a locked-memory limit) costs speed, not the copy.
    try {
        for (cudaEvent_t &event : done_) cuda_check(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "event");
        staging_ = PinnedBuffer(2 * half_bytes_, "the staging of host copies");
    } catch (const Error &) {
        cudaGetLastError();
        staging_ = PinnedBuffer();
        return false;
    }
    return true;
}

void StagedCopier::copy_directly(const std::vector<CopySegment> &segments, cudaStream_t stream, bool upload,
                                 const char *what) const {
    for (const CopySegment &s : segments)
        cuda_check(upload ? cudaMemcpyAsync(s.device, s.host, s.bytes, cudaMemcpyHostToDevice, stream)
                          : cudaMemcpyAsync(s.host, s.device, s.bytes, cudaMemcpyDeviceToHost, stream),
                   what);
    cuda_check(cudaStreamSynchronize(stream), what);
}

std::vector<std::vector<StagedCopier::Piece>> StagedCopier::plan(const std::vector<CopySegment> &segments) const {
    std::vector<std::vector<Piece>> halves;
    size_t used = half_bytes_;  // a new half before the first piece
    for (const CopySegment &segment : segments) {
        for (size_t done = 0; done < segment.bytes;) {
            if (used == half_bytes_) {
                halves.emplace_back();
                used = 0;
            }
            const size_t n = std::min(segment.bytes - done, half_bytes_ - used);
            halves.back().push_back({static_cast<uint8_t *>(segment.host) + done,
                                     static_cast<uint8_t *>(segment.device) + done, n, used});
            used += n;
            done += n;
        }
    }
    return halves;
}

void StagedCopier::host_copy(const std::vector<Piece> &pieces, uint8_t *half, bool to_half) const {
    // Slices of at most 512 KB, spread over the threads: one core's memcpy is the bound this
    // file exists to lift.
    constexpr size_t kSlice = 512 << 10;
    struct Slice {
        uint8_t *host, *staged;
        size_t bytes;
    };
    std::vector<Slice> slices;
    for (const Piece &p : pieces)
        for (size_t at = 0; at < p.bytes; at += kSlice)
            slices.push_back({p.host + at, half + p.offset + at, std::min(kSlice, p.bytes - at)});
    const long count = long(slices.size());
#pragma omp parallel for schedule(static) num_threads(threads_) if (count > 1)
    for (long i = 0; i < count; ++i) {
        const Slice &s = slices[size_t(i)];
        if (to_half) std::memcpy(s.staged, s.host, s.bytes);
        else std::memcpy(s.host, s.staged, s.bytes);
    }
}

void StagedCopier::upload(const std::vector<CopySegment> &segments, cudaStream_t stream, const char *what) {
    if (!reserve()) return copy_directly(segments, stream, true, what);
    const std::vector<std::vector<Piece>> halves = plan(segments);
    for (size_t c = 0; c < halves.size(); ++c) {
        // The half's last device copies (two halves ago, or an earlier call's) have finished;
        // an event never recorded counts as finished.
        cuda_check(cudaEventSynchronize(done_[c % 2]), what);
        host_copy(halves[c], half(c), true);  // while the device copies the other half
        for (const Piece &p : halves[c])
            cuda_check(cudaMemcpyAsync(p.device, half(c) + p.offset, p.bytes, cudaMemcpyHostToDevice, stream), what);
        cuda_check(cudaEventRecord(done_[c % 2], stream), what);
    }
    cuda_check(cudaStreamSynchronize(stream), what);
}

void StagedCopier::download(const std::vector<CopySegment> &segments, cudaStream_t stream, const char *what) {
    if (!reserve()) return copy_directly(segments, stream, false, what);
    const std::vector<std::vector<Piece>> halves = plan(segments);
    const auto enqueue = [&](size_t c) {
        for (const Piece &p : halves[c])
            cuda_check(cudaMemcpyAsync(half(c) + p.offset, p.device, p.bytes, cudaMemcpyDeviceToHost, stream), what);
        cuda_check(cudaEventRecord(done_[c % 2], stream), what);
    };
    // An earlier call that failed part-way may have left copies into the halves in flight.
    for (cudaEvent_t event : done_) cuda_check(cudaEventSynchronize(event), what);
    if (!halves.empty()) enqueue(0);
    for (size_t c = 0; c < halves.size(); ++c) {
        // The next half's device copies run while this one is copied out (its earlier
        // contents, half c - 1, were copied out in the last iteration).
        if (c + 1 < halves.size()) enqueue(c + 1);
        cuda_check(cudaEventSynchronize(done_[c % 2]), what);
        host_copy(halves[c], half(c), false);
    }
}

}  // namespace reset
