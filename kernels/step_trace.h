// step_trace.h — a debug-only per-warp timeline of the decode step's kernels,
// compiled in only with -DRESET_STEP_TRACE (tests/bench/build_step_trace.sh);
// a normal build has none of it.  Each instrumented kernel's warps write one
// record: %globaltimer at entry, after the wait for the previous kernel
// (kernels/dependent_launch.cuh) and at the warp's end, with the kernel's
// kind, two tags that tell its launches apart (a GEMV's rows and K), its
// block, its warp and its SM.  CudaSession::step records one chosen step
// (RESET_STEP_TRACE_FILE, RESET_STEP_TRACE_STEPS) and writes the records as
// text; tests/bench/step_trace_report.py turns them into the boundaries
// between kernels (docs/history/cuda-engine-sessions.md, session 16).
#pragma once

namespace reset::trace {

// What an instrumented kernel is (always defined: the kernels name it in every build).
enum Kind : unsigned {
    kEmbedding = 1,
    kRmsNormPrepare = 2,
    kNvfp4Gemv = 3,
    kQkNormRope = 4,
    kAttention = 5,
    kBf16Gemv = 6,
    kSampling = 7,
    kNvfp4GemvPair = 8,
    kRangeCopy = 9,
    kTopLogprobs = 10,
    kRmsNorm = 11,
    kPrepareActivations = 12,
};

}  // namespace reset::trace

#ifdef RESET_STEP_TRACE

#include <cuda_runtime_api.h>

#include <vector>

namespace reset::trace {


struct Record {
    unsigned long long start, waited, end;  // %globaltimer ns; end 0 where the kernel has no end mark
    unsigned kind, tag, tag2, block, warp, sm;
};

// Records are kept per SM, so that the slots a step's ~600k warps take are
// counted on 132 counters, not one: one counter would serialize them at its
// L2 slice and stretch the traced step by hundreds of microseconds.
constexpr unsigned kMaxSms = 256;
constexpr unsigned kCounterStride = 32;  // one 128-byte line per SM's counter

struct Buffer {
    Record *records = nullptr;     // [kMaxSms][per_sm]
    unsigned *counts = nullptr;    // [kMaxSms][kCounterStride], zeroed before the step
    unsigned per_sm = 0;
};

// Every CUDA file that includes step_trace.cuh has its own device copy of the
// buffer; each registers the function that sets it.
using Setter = void (*)(const Buffer &);
inline std::vector<Setter> &setters() {
    static std::vector<Setter> all;
    return all;
}

// Host: point every kernel file's copy at `buffer` (a null buffer turns the records off).
inline void set_buffer(const Buffer &buffer) {
    for (Setter s : setters()) s(buffer);
}

}  // namespace reset::trace

#endif  // RESET_STEP_TRACE
