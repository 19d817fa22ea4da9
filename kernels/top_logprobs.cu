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
#include "util/environment.h"

namespace reset {
namespace {

constexpr int kThreads = 256;
constexpr int kTargetPerThread = 16;
constexpr int32_t kMaxVocab = 1 << 24;
constexpr int kMaxCtasPerRow = 256;
static_assert(kMaxCtasPerRow <= kThreads, "the merge gives each CTA list's maximum one thread");
static_assert(rule::kMaxTopLogprobs <= 32, "a warp's sorted lanes hold its count largest");

struct Layout {
    int ctas_per_row = 1;
    int per_thread = 1;  // logits per thread
};

// Logits per thread the layout aims at: kTargetPerThread, or for experiments
// RESET_TOP_LOGPROBS_PER_THREAD (4..64, read once): more per thread is fewer,
// longer CTAs, which share fewer SMs with the layers the kernel runs beside.
int target_per_thread() {
    static const int target = int(environment_integer("RESET_TOP_LOGPROBS_PER_THREAD", kTargetPerThread, 4, 64));
    return target;
}

Layout layout_of(int32_t vocab) {
    Layout l;
    const int64_t per_cta = int64_t(kThreads) * target_per_thread();
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

// The warp's 32 values sorted, largest in lane 0 (a bitonic network over
// shuffles: registers only, no barrier).
__device__ __forceinline__ uint64_t warp_sort_descending(uint64_t v) {
    const unsigned lane = threadIdx.x % 32;
#pragma unroll
    for (unsigned k = 2; k <= 32; k <<= 1) {
#pragma unroll
        for (unsigned j = k >> 1; j > 0; j >>= 1) {
            const uint64_t other = __shfl_xor_sync(0xFFFFFFFFu, v, j);
            const uint64_t larger = v > other ? v : other, smaller = v > other ? other : v;
            // Within each block of k lanes the order alternates, so that blocks merge as bitonic
            // sequences; the last block (k = 32) is descending.
            const bool lower = (lane & j) == 0, descending = (lane & k) == 0;
            v = lower == descending ? larger : smaller;
        }
    }
    return v;
}

// How many of the `count` entries of a descending list are larger than v.
__device__ __forceinline__ int larger_in(const uint64_t *list, int count, uint64_t v) {
    int lo = 0, hi = count;
    while (lo < hi) {
        const int mid = (lo + hi) / 2;
        if (list[mid] > v) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

// The count-th largest of the CTA's thread values (each thread passes its
// own; non-zero values are distinct), or 0 when fewer than count are
// non-zero.  Each warp sorts its 32 (the count-th largest of the CTA is
// among the warp's count largest), then each of those learns its rank in
// the CTA by binary searches of the other warps' lists.  Ends with a barrier.
__device__ uint64_t cta_count_th_largest(uint64_t v, int count, uint64_t (*warp_top)[rule::kMaxTopLogprobs],
                                         Shared &sh) {
    constexpr int kWarps = kThreads / 32;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const uint64_t sorted = warp_sort_descending(v);
    if (lane < count) warp_top[warp][lane] = sorted;
    if (threadIdx.x == 0) sh.threshold = 0;
    __syncthreads();
    if (lane < count && sorted != 0) {
        int above = lane;
#pragma unroll
        for (int w = 0; w < kWarps; ++w)
            if (w != warp) above += larger_in(warp_top[w], count, sorted);
        if (above == count - 1) sh.threshold = sorted;  // one thread at most: the values are distinct
    }
    __syncthreads();
    return sh.threshold;
}

// Rank the n distinct candidates and write the `count` largest, largest
// first, to `out` (0 where there are fewer).  n is a few times count unless
// the row is adversarial (count x per_thread at most).  Ends with a barrier.
__device__ void rank_top(const uint64_t *candidates, int n, int count, uint64_t *out) {
    for (int i = threadIdx.x; i < count; i += kThreads) out[i] = 0;
    __syncthreads();
    for (int i = threadIdx.x; i < n; i += kThreads) {
        const uint64_t v = candidates[i];
        int above = 0;
#pragma unroll 8
        for (int j = 0; j < n; ++j) above += candidates[j] > v ? 1 : 0;
        if (above < count) out[above] = v;
    }
    __syncthreads();
}

__global__ void __launch_bounds__(kThreads) top_logprobs_kernel(const TopLogprobsArgs a, const Layout l) {
    [[maybe_unused]] const trace::EndMark end_mark;
    trace::begin_dependent_kernel(trace::kTopLogprobs);
    extern __shared__ uint64_t candidates[];
    __shared__ uint64_t warp_top[kThreads / 32][rule::kMaxTopLogprobs];
    __shared__ uint64_t cta_top[rule::kMaxTopLogprobs];
    __shared__ Shared sh;
    const int b = blockIdx.y;
    // Whole rows are skipped, so every CTA of a row takes the same branch (the arrival count stays whole).
    if (a.active && a.active[b] == 0) return;
    const SamplingSignalsDevice signals = a.signals[b];
    if (signals.status != kSamplingOk) return;
    const int count = a.count;
    const float *row = a.logits + static_cast<int64_t>(b) * a.ld_logits;
    const int32_t first = static_cast<int32_t>(blockIdx.x) * l.per_thread * kThreads + threadIdx.x;
    const int32_t end = a.vocab;
    const int32_t slice_end = static_cast<int32_t>(blockIdx.x + 1) * l.per_thread * kThreads;

    // 1. Each thread's largest key (coalesced: thread t takes first, + 256, ...; unrolled so that the
    // loads are in flight together: the row is an L2 hit, but 16 round trips in a row would be 2 us).
    uint64_t mine = 0;
#pragma unroll 8
    for (int k = 0; k < l.per_thread; ++k) {
        const int32_t i = first + k * kThreads;
        if (i < end && i < slice_end) {
            const uint64_t key = rule::top_logprob_key(row[i], i);
            mine = key > mine ? key : mine;
        }
    }
    if (a.stop_after_phase == 1) {
        if (mine == 1) a.out[0].token = -2;  // never (a real key is far above 1): keeps the loads
        return;
    }
    if (threadIdx.x == 0) sh.candidates = 0;
    // 2. The count-th largest thread maximum bounds the CTA's top from below; only the threads that
    // reach it (count at most) hold candidates, so the list holds count x per_thread at most.
    const uint64_t threshold = cta_count_th_largest(mine, count, warp_top, sh);
    if (mine != 0 && mine >= threshold) {
#pragma unroll 8
        for (int k = 0; k < l.per_thread; ++k) {
            const int32_t i = first + k * kThreads;
            if (i < end && i < slice_end) {
                const uint64_t key = rule::top_logprob_key(row[i], i);
                if (key >= threshold) candidates[atomicAdd(&sh.candidates, 1)] = key;
            }
        }
    }
    __syncthreads();
    if (a.stop_after_phase == 2) {
        if (threshold == 1) a.out[0].token = -2;
        return;
    }
    rank_top(candidates, sh.candidates, count, cta_top);
    if (a.stop_after_phase == 3) {
        if (cta_top[0] == 1) a.out[0].token = -2;
        return;
    }

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
    if (!sh.last || a.stop_after_phase == 4) return;
    __threadfence();  // pairs with the other CTAs' fences: their lists are read after their arrivals

    // 4. The same selection over the CTAs' lists, which are sorted: the count-th largest of their
    // maxima bounds the row's top from below, and only the lists that reach it (count at most) hold
    // candidates (count x count at most).
    const int ctas = static_cast<int>(gridDim.x);
    const uint64_t list_max =
        threadIdx.x < ctas ? __ldcg(&row_lists[static_cast<size_t>(threadIdx.x) * rule::kMaxTopLogprobs]) : 0;
    if (threadIdx.x == 0) sh.candidates = 0;
    const uint64_t row_threshold = cta_count_th_largest(list_max, count, warp_top, sh);
    // Every entry at once (one round trip): thread t takes entries t, t + 256, ... of the row's lists.
    for (int e = threadIdx.x; e < ctas * count; e += kThreads) {
        const int c = e / count, i = e % count;
        const uint64_t key = __ldcg(&row_lists[static_cast<size_t>(c) * rule::kMaxTopLogprobs + i]);
        if (key != 0 && key >= row_threshold) candidates[atomicAdd(&sh.candidates, 1)] = key;
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
