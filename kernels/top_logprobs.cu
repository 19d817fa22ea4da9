// top_logprobs.cu — see top_logprobs.h.  Grid (CTAs per row, batch), 256
// threads; about 16 logits per thread, so a 152k vocabulary takes 38 CTAs a
// row, each reading its slice twice (the second pass an L1 hit).
#include "kernels/top_logprobs.h"

#include <algorithm>

#include "api/errors.h"
#include "kernels/cuda_common.cuh"
#include "kernels/dependent_launch.cuh"
#include "kernels/step_trace.cuh"
#include "rules/logprob.h"
#include "rules/top_logprobs.h"

namespace reset {
namespace {

constexpr int kThreads = 256;
constexpr int kTargetPerThread = 16;
constexpr int32_t kMaxVocab = 1 << 24;
constexpr int kMaxCtasPerRow = 256;
static_assert(kMaxCtasPerRow <= kThreads, "the merge gives each CTA list's maximum one thread");

struct Layout {
    int ctas_per_row = 1;
    int per_thread = 1;  // logits per thread
};

Layout layout_of(int32_t vocab) {
    Layout l;
    const int64_t per_cta = int64_t(kThreads) * kTargetPerThread;
    l.ctas_per_row = static_cast<int>(std::min<int64_t>((vocab + per_cta - 1) / per_cta, kMaxCtasPerRow));
    const int64_t threads = int64_t(l.ctas_per_row) * kThreads;
    l.per_thread = static_cast<int>((vocab + threads - 1) / threads);
    return l;
}

// Candidates a CTA ranks: its own (count × per_thread at most) or, in the
// last CTA of a row, those of the row's CTA lists (count × count at most).
size_t shared_bytes_of(const Layout &l) {
    const size_t own = size_t(rule::kMaxTopLogprobs) * size_t(l.per_thread);
    const size_t merge = size_t(rule::kMaxTopLogprobs) * size_t(rule::kMaxTopLogprobs);
    return std::max(own, merge) * sizeof(uint64_t);
}

// The workspace: each row's CTA lists, then each row's arrival counter.
size_t lists_bytes(int batch, const Layout &l) {
    return size_t(batch) * size_t(l.ctas_per_row) * size_t(rule::kMaxTopLogprobs) * sizeof(uint64_t);
}

struct Shared {
    uint64_t threshold;
    int candidates;
    bool last;
};

// The count-th largest of `values` (n of them, distinct where non-zero), or
// 0 when fewer than count are non-zero: every value at or above it is a
// candidate.  Ends with a barrier.
__device__ uint64_t count_th_largest(const uint64_t *values, int n, int count, Shared &sh) {
    if (threadIdx.x == 0) sh.threshold = 0;
    __syncthreads();
    for (int i = threadIdx.x; i < n; i += kThreads) {
        const uint64_t v = values[i];
        if (v == 0) continue;
        int above = 0;
        for (int j = 0; j < n; ++j) above += values[j] > v ? 1 : 0;
        if (above == count - 1) sh.threshold = v;  // one thread at most: the non-zero values are distinct
    }
    __syncthreads();
    return sh.threshold;
}

// Rank the n distinct candidates and write the `count` largest, largest
// first, to `out` (0 where there are fewer).  Ends with a barrier.
__device__ void rank_top(const uint64_t *candidates, int n, int count, uint64_t *out) {
    for (int i = threadIdx.x; i < count; i += kThreads) out[i] = 0;
    __syncthreads();
    for (int i = threadIdx.x; i < n; i += kThreads) {
        const uint64_t v = candidates[i];
        int above = 0;
        for (int j = 0; j < n; ++j) above += candidates[j] > v ? 1 : 0;
        if (above < count) out[above] = v;
    }
    __syncthreads();
}

__global__ void __launch_bounds__(kThreads) top_logprobs_kernel(const TopLogprobsArgs a, const Layout l) {
    [[maybe_unused]] const trace::EndMark end_mark;
    trace::begin_dependent_kernel(trace::kTopLogprobs);
    extern __shared__ uint64_t candidates[];
    __shared__ uint64_t thread_max[kThreads];
    __shared__ uint64_t cta_top[rule::kMaxTopLogprobs];
    __shared__ Shared sh;
    const int b = blockIdx.y;
    // Whole rows are skipped, so every CTA of a row takes the same branch (the arrival count stays whole).
    if (a.active && a.active[b] == 0) return;
    const SamplingSignalsDevice signals = a.signals[b];
    if (signals.status != kSamplingOk) return;
    const int count = a.count;
    const float *row = a.logits + static_cast<int64_t>(b) * a.ld_logits;
    const int32_t begin = static_cast<int32_t>(blockIdx.x) * l.per_thread * kThreads;
    const int32_t end = min(a.vocab, begin + l.per_thread * kThreads);

    // 1. Each thread's largest key (coalesced: thread t takes begin + t, + 256, ...).
    uint64_t mine = 0;
    for (int32_t i = begin + threadIdx.x; i < end; i += kThreads) {
        const uint64_t key = rule::top_logprob_key(row[i], i);
        mine = key > mine ? key : mine;
    }
    thread_max[threadIdx.x] = mine;
    if (threadIdx.x == 0) sh.candidates = 0;
    // 2. The count-th largest thread maximum bounds the CTA's top from below; only the threads that
    // reach it (count at most) hold candidates, so the list holds count × per_thread at most.
    const uint64_t threshold = count_th_largest(thread_max, kThreads, count, sh);
    if (mine != 0 && mine >= threshold) {
        for (int32_t i = begin + threadIdx.x; i < end; i += kThreads) {
            const uint64_t key = rule::top_logprob_key(row[i], i);
            if (key >= threshold) candidates[atomicAdd(&sh.candidates, 1)] = key;
        }
    }
    __syncthreads();
    rank_top(candidates, sh.candidates, count, cta_top);

    // 3. Publish this CTA's list; the row's last CTA to arrive merges them.
    uint64_t *lists = static_cast<uint64_t *>(a.workspace);
    uint64_t *row_lists = lists + static_cast<size_t>(b) * gridDim.x * rule::kMaxTopLogprobs;
    unsigned *arrivals = reinterpret_cast<unsigned *>(lists + static_cast<size_t>(gridDim.y) * gridDim.x *
                                                                  rule::kMaxTopLogprobs);
    for (int i = threadIdx.x; i < count; i += kThreads)
        row_lists[static_cast<size_t>(blockIdx.x) * rule::kMaxTopLogprobs + i] = cta_top[i];
    __threadfence();  // the list is visible device-wide before the arrival that announces it
    __syncthreads();
    if (threadIdx.x == 0) {
        const unsigned before = atomicAdd(&arrivals[b], 1u);
        sh.last = before == gridDim.x - 1;
        if (sh.last) arrivals[b] = 0;  // every CTA of the row has arrived: ready for the next launch
    }
    __syncthreads();
    if (!sh.last) return;
    __threadfence();  // pairs with the other CTAs' fences: their lists are read after their arrivals

    // 4. The same selection over the CTAs' lists (sorted, so each list's first entry is its maximum).
    const int ctas = static_cast<int>(gridDim.x);
    for (int c = threadIdx.x; c < kThreads; c += kThreads)
        thread_max[c] = c < ctas ? __ldcg(&row_lists[static_cast<size_t>(c) * rule::kMaxTopLogprobs]) : 0;
    if (threadIdx.x == 0) sh.candidates = 0;
    const uint64_t row_threshold = count_th_largest(thread_max, ctas, count, sh);
    for (int c = threadIdx.x; c < ctas; c += kThreads) {
        if (thread_max[c] == 0 || thread_max[c] < row_threshold) continue;
        for (int i = 0; i < count; ++i) {
            const uint64_t key = __ldcg(&row_lists[static_cast<size_t>(c) * rule::kMaxTopLogprobs + i]);
            if (key == 0 || key < row_threshold) break;  // sorted: the rest are smaller
            candidates[atomicAdd(&sh.candidates, 1)] = key;
        }
    }
    __syncthreads();
    rank_top(candidates, sh.candidates, count, cta_top);
    for (int i = threadIdx.x; i < count; i += kThreads) {
        const uint64_t key = cta_top[i];
        reset_token_logprob e;
        e.token = rule::top_logprob_id(key);
        e.logprob = rule::raw_logprob(rule::top_logprob_logit(key), signals.raw_max, signals.log_sum_exp);
        a.out[static_cast<size_t>(b) * count + i] = e;
    }
}

}  // namespace

size_t top_logprobs_workspace_bytes(int batch, int32_t vocab) {
    const Layout l = layout_of(std::max<int32_t>(vocab, 1));
    return lists_bytes(batch, l) + size_t(batch) * sizeof(unsigned);
}

void top_logprobs(const TopLogprobsArgs &a, cudaStream_t stream) {
    if (a.batch < 1 || a.batch > 8 || a.vocab < 1 || a.ld_logits < a.vocab)
        fail(RESET_ERR_INVALID_ARGUMENT, "top_logprobs: batch ", a.batch, ", vocab ", a.vocab, ", ld_logits ",
             a.ld_logits, " (batch 1..8, vocab >= 1, ld_logits >= vocab)");
    if (a.count < 1 || a.count > rule::kMaxTopLogprobs || a.count > a.vocab)
        fail(RESET_ERR_INVALID_ARGUMENT, "top_logprobs: count ", a.count, " is outside 1..min(",
             rule::kMaxTopLogprobs, ", vocab ", a.vocab, ")");
    if (a.vocab > kMaxVocab)
        fail(RESET_ERR_UNSUPPORTED, "top_logprobs: vocab ", a.vocab, " is above ", kMaxVocab);
    require(a.logits, "top_logprobs: logits");
    require(a.signals, "top_logprobs: signals");
    require(a.workspace, "top_logprobs: workspace");
    require(a.out, "top_logprobs: out");
    if (reinterpret_cast<uintptr_t>(a.workspace) % 8)
        fail(RESET_ERR_INVALID_ARGUMENT, "top_logprobs: misaligned workspace");
    const Layout l = layout_of(a.vocab);
    cuda::launch_kernel("top_logprobs", top_logprobs_kernel, dim3(unsigned(l.ctas_per_row), unsigned(a.batch)),
                        dim3(kThreads), shared_bytes_of(l), stream, a, l);
}

}  // namespace reset
