// sampling.cu — the on-device sampler: one launch, one thread-block cluster
// (a "team" of up to 16 CTAs) per sequence.
//
// Why a cluster.  A 152k-entry row is 608 KB; one CTA streaming it several
// times would take tens of microseconds, and the sampler must cost well under
// 1% of a ~2 ms decode step.  A team of 8 CTAs (the portable cluster size) or,
// where the GPU can hold one per sequence, 16 (H100: half the ids per SM, so
// every pass over the row takes half as long) splits the row (76 or 38 KB
// each, kept with its weights in shared memory) and exchanges partial results
// through distributed shared memory with hardware cluster barriers: no second
// launch, no grid-wide barrier, no host synchronisation, so the whole sampler
// is one graph node.  Without clusters (before sm_90) the team is one CTA
// that reads the row from global memory (L2), and the weights go to a
// global workspace; the code is the same, only pointers and the team size
// change.
//
// The algorithm follows SequenceSampler::sample (sampling/sampler.cpp) step
// by step:
//   1. max / argmax (lowest index) / masked count, rejecting NaN and +inf;
//   2. H_t: FP32 terms e = exp(z - max), double sums (sampling/entropy.cpp);
//   3. the ReSET decision through rules/reset_rule.h on the state in device
//      memory (boundary test on the two last accepted ids, steps 1-6);
//   4. if not greedy: weights w = exp((z - max) / T) in FP32;
//   5. truncation (sampling/truncation.cpp).  Every filter keeps a prefix of
//      the order (logit descending, id ascending): top-k the first k; top-p
//      the first tokens whose mass reaches p·total (after the CPU's floor
//      pre-filter, itself a prefix because w is monotone in z); min-p the
//      tokens with w >= min_p.  So no sort is needed: a radix select over
//      the logits' order-preserving bit keys (by count for top-k, by weight
//      for top-p) finds each cut as (logit key, last id among the ties), and
//      a token survives when it is inside every cut.  Top-p alone starts
//      with one level binned by the logit's value, in the weights pass
//      (see ValueBins).  Top-k up to the team's warp count (256 on a
//      16-CTA team) lists the few tokens at or above the k-th largest warp
//      maximum and truncates that list alone (small_top_k_token);
//   6. the draw: Philox keyed (seed, sequence, accepted) as on the CPU, the
//      first survivor in id order whose running weight sum exceeds u·total.
//      Top-p without a top-k cut draws rejection-first (draw_truncated):
//      the untruncated draw, kept if it is inside the nucleus, which spares
//      step 5 for most tokens;
//   7. accept: spec step 7 (observe) and the accepted-token bookkeeping.
#include "kernels/sampling.h"

#include <cooperative_groups.h>

#include <climits>
#include <cmath>
#include <mutex>
#include <vector>

#include "kernels/cuda_common.cuh"
#include "kernels/dependent_launch.cuh"
#include "kernels/step_trace.cuh"
#include "reset.h"
#include "rules/logit_order.h"
#include "rules/logprob.h"
#include "rules/penalty.h"
#include "rules/philox.h"
#include "rules/reset_rule.h"
#include "rules/top_p.h"

namespace reset {
namespace {

namespace cg = cooperative_groups;

constexpr int kThreads = 512;
constexpr int kWarps = kThreads / 32;
constexpr int kBins = 256;           // radix digit of 8 bits
constexpr int kMaxTeam = 16;         // a non-portable cluster size (sm_90: up to 16)
constexpr int kPortableTeam = 8;     // the cluster size every sm_90+ GPU supports
constexpr int kRingStage = 1024;     // windows up to this are staged in shared memory for the mean
constexpr int kLoadBatch = 20;       // row entries each thread loads at once (39 per thread at vocab 152k)
constexpr int32_t kAutoTeamVocab = 16384;  // below this one CTA per sequence is enough
constexpr int32_t kNoCutId = INT_MAX;
constexpr unsigned kFull = 0xFFFFFFFFu;
constexpr int kWarpMaxSlot = 2 * kWarps;  // the first exchange's Mail::count: unmasked, bad, warp maxima
// The per-warp histograms (first radix level over the whole row).  Once that
// level is merged their space holds the candidate list: a local index and a
// weight per candidate.
constexpr int kHistogramBytes = kWarps * kBins * static_cast<int>(sizeof(uint64_t) + sizeof(uint32_t));
constexpr int kListCapacity = kHistogramBytes / 8;  // candidates per CTA (6,144)
// Histogram masses are sums of weights (each in [0, 1]) as 64-bit fixed point
// with 45 fraction bits: integer sums do not depend on the order of the
// additions (atomics are fine), and 152k weights stay below 2^63.  A weight is
// rounded by at most 2^-46 (the total is >= 1: the argmax weighs exactly 1),
// far below the ~3 ulp by which CUDA's expf and the C library's may differ.
constexpr double kMassScale = 35184372088832.0;          // 2^45
constexpr double kMassUnit = 1.0 / 35184372088832.0;     // 2^-45

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define RESET_SAMPLING_CLUSTERS 1
#else
#define RESET_SAMPLING_CLUSTERS 0
#endif

#ifdef RESET_SAMPLING_TRACE
// Debug only (never in a shipped build): thread 0 of rank 0 of sequence 0
// appends (label, %globaltimer) pairs, so a test can see where a launch's
// time goes.  sampling_trace_read() copies them out.  Build: CMake with
// -DCMAKE_CUDA_FLAGS=-DRESET_SAMPLING_TRACE, then gpu_test_sampling prints a
// "trace:" line per timing case.  Labels: 1 entry, 2 row loaded, 3 max
// exchanged, 4 temperature decided, 5 weights done (before truncation),
// 6 row histogram built, 7 list histogram built, 8 a team histogram's
// barrier passed, 10 a bin picked, 11 compacted to the list, 12 team sum,
// 13/14/15/16 team_find_first (local pass, exchange, walk, end), 17/18 the
// final barrier, 20 bin members gathered, 21 a level over them; inside the
// gather: 22 counting pass, 23 scan, 24 compaction, 25 team barrier passed;
// top-p's first draw: 30 drawn, 31 tested; small top-k: 32 candidates
// listed, 33 lists published.
constexpr int kTraceSlots = 128;
__device__ unsigned long long g_sampling_trace[kTraceSlots][2];
__device__ int g_sampling_trace_n;
__device__ __forceinline__ void trace_mark(int label) {
    if (threadIdx.x != 0 || blockIdx.y != 0) return;
#if RESET_SAMPLING_CLUSTERS
    if (cg::this_cluster().block_rank() != 0) return;
#endif
    const unsigned long long t = cuda::global_timer_ns();
    const int n = g_sampling_trace_n;
    if (n < kTraceSlots) {
        g_sampling_trace[n][0] = static_cast<unsigned long long>(label);
        g_sampling_trace[n][1] = t;
        g_sampling_trace_n = n + 1;
    }
}
#define RESET_TRACE(label) trace_mark(label)
#else
#define RESET_TRACE(label) ((void)0)
#endif

// The team: the CTAs of this sequence's cluster (one CTA without clusters).
__device__ __forceinline__ unsigned team_rank() {
#if RESET_SAMPLING_CLUSTERS
    return cg::this_cluster().block_rank();
#else
    return 0;
#endif
}
__device__ __forceinline__ unsigned team_size() {
#if RESET_SAMPLING_CLUSTERS
    return cg::this_cluster().num_blocks();
#else
    return 1;
#endif
}
// Every thread of every CTA of the team; orders shared-memory writes before
// the peers' reads (release/acquire at cluster scope).
__device__ __forceinline__ void team_sync() {
#if RESET_SAMPLING_CLUSTERS
    cg::this_cluster().sync();
#else
    __syncthreads();
#endif
}
template <typename T>
__device__ __forceinline__ const T *team_peer(T *local, unsigned rank) {
#if RESET_SAMPLING_CLUSTERS
    return cg::this_cluster().map_shared_rank(local, static_cast<int>(rank));
#else
    (void)rank;
    return local;
#endif
}

// Logits as unsigned keys that order like them (rules/logit_order.h; -0 as +0).
using rule::logit_order_key;
using rule::logit_of_order_key;
// w · 2^45 is exact in float (a power-of-two scale of w <= 1), so rounding it
// to an integer in float gives the value the double product would: one
// conversion instead of three (two of them through FP64).
__device__ __forceinline__ uint64_t fixed_mass(float w) {
    return __float2ull_rn(w * static_cast<float>(kMassScale));
}

// A prefix of the order (logit descending, id ascending), ending at the token
// with key `key` and id `id`: (k, i) is inside iff k > key, or k == key and
// i <= id.  key 0 (no float maps there) with any id is "everything".
struct Cut {
    uint32_t key;
    int32_t id;
};
__device__ __forceinline__ bool inside(const Cut &c, uint32_t key, int32_t id) {
    return key > c.key || (key == c.key && id <= c.id);
}

// The partial results one CTA publishes to its team in one exchange.
struct Mail {
    double d0, d1;
    float f0, f1;
    int32_t i0, i1, i2;
    uint32_t u0;
    uint32_t count[kBins];
    unsigned long long mass[kBins];  // fixed point (kMassScale)
};

struct SelectOut {
    int32_t found;
    uint32_t key;          // the cut's logit key (the chosen bin until the last level)
    uint32_t ties;         // members with exactly that key (in the chosen bin until the last level)
    int64_t count_above;   // members with a larger key
    double mass_above;     // their weight
};

// The state of one radix select between levels: the key range [lo, hi] still
// searched, the bin width, and what lies above the range.
struct Radix {
    uint32_t lo, hi;
    int shift;
    int64_t count_above;
    double mass_above;
};
__device__ __forceinline__ Radix radix_start(uint32_t lo, uint32_t hi) {
    Radix r;
    const unsigned span_bits = hi > lo ? 32u - static_cast<unsigned>(__clz(static_cast<int>(hi - lo))) : 0u;
    r.lo = lo;
    r.hi = hi;
    r.shift = span_bits > 8 ? static_cast<int>(span_bits) - 8 : 0;
    r.count_above = 0;
    r.mass_above = 0.0;
    return r;
}
// The bin of a key in the current level, kBins if outside the range.
__device__ __forceinline__ unsigned radix_bin(const Radix &r, uint32_t key) {
    return (key >= r.lo && key <= r.hi) ? (key - r.lo) >> r.shift : static_cast<unsigned>(kBins);
}
// Narrow to the chosen bin (res.key holds it); true when that was the last
// level, with res.key then the cut's key.
__device__ __forceinline__ bool radix_advance(Radix &r, SelectOut &res) {
    const uint32_t bin = res.key;
    r.count_above = res.count_above;
    r.mass_above = res.mass_above;
    if (r.shift == 0) {
        res.key = r.lo + bin;
        return true;
    }
    const uint32_t new_lo = r.lo + (bin << r.shift);
    const uint64_t new_hi = static_cast<uint64_t>(new_lo) + ((1ull << r.shift) - 1ull);
    r.hi = new_hi < r.hi ? static_cast<uint32_t>(new_hi) : r.hi;
    r.lo = new_lo;
    r.shift = r.shift > 8 ? r.shift - 8 : 0;
    return false;
}

// Values every thread of the CTA needs, set by one thread before a barrier.
struct Broadcast {
    int32_t status;
    float max_logit;  // of the row drawn from (penalized)
    float raw_max;    // of the raw logits: the entropy's
    int32_t argmax;
    int32_t unmasked;
    uint32_t min_key;
    float entropy;
    float temperature;  // applied: 0 = greedy
    SamplingSignalsDevice signals;
    rule::StepState step;  // after the boundary test, before observe()
    double value;          // result of a team sum
    double prefix;         // this CTA's exclusive prefix in a team scan
    int32_t last_member;
    int32_t first_hit;
    uint32_t small_k_floor;  // 4c: the k-th largest warp maximum
    SelectOut select;
};

struct StaticShared {
    Mail mail[2];  // double-buffered: exchange k+2 reuses k's buffer after exchange k+1's barrier
    uint32_t bin_count[kBins];
    unsigned long long bin_mass[kBins];
    uint32_t value_mass[kBins];  // the value level's approximate masses (see gather_bin_members)
    float ring[kRingStage];
    uint32_t warp_max_key[kMaxTeam * kWarps];  // the team's warp maxima (small top-k, 4c)
    int32_t draw_hit;  // rank 0's: the team's first draw hit (team_find_first's draw form)
    double scratch_d[kWarps];
    int32_t scratch_i[kWarps];
    float scratch_f[kWarps];
    float scratch_r[kWarps];
    uint32_t scratch_u[kWarps];
    Broadcast bc;
};

struct KernelParams {
    SamplingArgs args;
    int32_t per_thread;  // E: each thread owns E consecutive ids (odd, so smem reads are conflict-free)
    int32_t shared_row;
    int32_t gather_capacity;  // members one value bin may hold to be gathered (SamplingPlan::gather_capacity)
};

// This CTA's part of one row.  Thread t owns local entries [begin, end): a
// contiguous range, so a thread walks its ids in order and a block scan over
// threads gives id-order prefix sums.
struct Row {
    const float *z;  // logits (shared copy or global)
    float *w;        // weights (shared or workspace)
    int32_t base;    // vocabulary id of local entry 0
    int32_t begin, end;
};

// What the selects, tie searches and the draw iterate over: either the row
// (position = local index) or the CTA's candidate list (position -> local
// index through idx), in id order either way.  Thread t owns positions
// [begin, end); span is the CTA-uniform trip count.
struct Src {
    const float *z;        // logits by local index
    const float *w;        // weights by position
    const int32_t *idx;    // position -> local index; null for the row
    int32_t base;          // vocabulary id of local index 0
    int begin, end, span;
    __device__ __forceinline__ int local(int pos) const { return idx ? idx[pos] : pos; }
};

// ---- block-level helpers (fixed reduction order: deterministic) ----

__device__ double block_sum(double v, StaticShared &sh) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(kFull, v, o);
    if (lane == 0) sh.scratch_d[warp] = v;
    __syncthreads();
    double total = 0.0;
    for (int w = 0; w < kWarps; ++w) total += sh.scratch_d[w];
    __syncthreads();
    return total;
}

__device__ int32_t block_min_i(int32_t v, StaticShared &sh) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = min(v, __shfl_xor_sync(kFull, v, o));
    if (lane == 0) sh.scratch_i[warp] = v;
    __syncthreads();
    int32_t r = sh.scratch_i[0];
    for (int w = 1; w < kWarps; ++w) r = min(r, sh.scratch_i[w]);
    __syncthreads();
    return r;
}

// Inclusive prefix of x over the lanes of the warp, in lane order.
template <typename T>
__device__ __forceinline__ T warp_inclusive_scan(T x) {
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        const T y = __shfl_up_sync(kFull, x, o);
        if (lane >= o) x += y;
    }
    return x;
}

// Exclusive prefix of v over the threads in order, and the block's total.
__device__ double block_exclusive_scan(double v, double *total, StaticShared &sh) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const double x = warp_inclusive_scan(v);
    double before = __shfl_up_sync(kFull, x, 1);
    if (lane == 0) before = 0.0;
    if (lane == 31) sh.scratch_d[warp] = x;
    __syncthreads();
    double warp_prefix = 0.0, sum = 0.0;
    for (int w = 0; w < kWarps; ++w) {
        if (w == warp) warp_prefix = sum;
        sum += sh.scratch_d[w];
    }
    __syncthreads();
    *total = sum;
    return warp_prefix + before;
}

// (logit, id) ordered by logit descending then id ascending; id < 0 = none.
__device__ __forceinline__ bool better(float v, int32_t i, float bv, int32_t bi) {
    if (i < 0) return false;
    if (bi < 0) return true;
    return v > bv || (v == bv && i < bi);
}

// ---- team-level operations (every thread of every CTA calls them) ----

// Thread 0, after the team barrier of an exchange whose mailboxes carry one
// double each (d0): their sum in rank order into sh.bc.value, and this CTA's
// exclusive prefix into sh.bc.prefix.
__device__ void team_sum_after_sync(int phase, StaticShared &sh) {
    if (threadIdx.x != 0) return;
    const unsigned me = team_rank(), n = team_size();
    double sum = 0.0, mine = 0.0;
    double value[kMaxTeam];
#pragma unroll
    for (unsigned r = 0; r < kMaxTeam; ++r) value[r] = r < n ? team_peer(&sh.mail[phase & 1], r)->d0 : 0.0;
#pragma unroll
    for (unsigned r = 0; r < kMaxTeam; ++r) {
        if (r == me) mine = sum;
        if (r < n) sum += value[r];
    }
    sh.bc.value = sum;
    sh.bc.prefix = mine;
}

// Sum of one double per CTA over the team, in rank order (identical in every
// CTA), and the exclusive prefix of this CTA.
__device__ void team_sum(double cta_value, int &phase, StaticShared &sh, double *total, double *prefix) {
    Mail &out = sh.mail[phase & 1];
    if (threadIdx.x == 0) out.d0 = cta_value;
    team_sync();
    team_sum_after_sync(phase, sh);
    ++phase;
    __syncthreads();
    RESET_TRACE(12);
    *total = sh.bc.value;
    *prefix = sh.bc.prefix;
}

// One lane's item into its warp's private histogram (bin kBins: none).  Lanes
// that hit the same bin are grouped (match_any): the lowest adds the group's
// count; masses are integers, added with atomics (their sum does not depend
// on the order).  A whole warp in one bin (common on the first level of a
// flat row) is reduced with shuffles.  Warp-collective.
__device__ __forceinline__ void warp_histogram_add(uint32_t *my_count, unsigned long long *my_mass, unsigned bin,
                                                   unsigned long long m, bool need_mass) {
    const int lane = threadIdx.x & 31;
    const unsigned group = __match_any_sync(kFull, bin);
    if (group == kFull) {
        if (need_mass) {
#pragma unroll
            for (int o = 16; o > 0; o >>= 1) m += __shfl_xor_sync(kFull, m, o);
        }
        if (lane == 0 && bin < kBins) {
            my_count[bin] += 32u;
            if (need_mass) my_mass[bin] += m;
        }
    } else if (bin < kBins) {
        if (lane == __ffs(static_cast<int>(group)) - 1) my_count[bin] += static_cast<uint32_t>(__popc(group));
        if (need_mass) atomicAdd(&my_mass[bin], m);
    }
    // Orders this item's histogram updates before the next one's.
    __syncwarp();
}

// A row level: each thread feeds item(i) -> (bin, weight) for its local
// entries i into its warp's histogram; the warps' histograms are then summed
// (in warp order) into this exchange's mailbox.
template <typename Item>
__device__ void row_histogram(const Row &row, int per_thread, Item item, bool need_mass, uint32_t *warp_count,
                              unsigned long long *warp_mass, int phase, StaticShared &sh) {
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    uint32_t *my_count = warp_count + warp * kBins;
    unsigned long long *my_mass = warp_mass + warp * kBins;
    for (int j = lane; j < kBins; j += 32) {
        my_count[j] = 0u;
        if (need_mass) my_mass[j] = 0ull;
    }
    __syncwarp();
    for (int j = 0; j < per_thread; ++j) {  // warp-uniform trip count
        const int i = row.begin + j;
        unsigned bin = kBins;
        float w = 0.0f;
        if (i < row.end) item(i, &bin, &w);
        warp_histogram_add(my_count, my_mass, bin, need_mass && bin < kBins ? fixed_mass(w) : 0ull, need_mass);
    }
    __syncthreads();
    Mail &out = sh.mail[phase & 1];
    for (int j = tid; j < kBins; j += kThreads) {
        uint32_t c = 0;
        unsigned long long m = 0;
        for (int w = 0; w < kWarps; ++w) {
            c += warp_count[w * kBins + j];
            if (need_mass) m += warp_mass[w * kBins + j];
        }
        out.count[j] = c;
        out.mass[j] = m;
    }
    RESET_TRACE(6);
}

// A list level: few entries, so one CTA-wide histogram built in the mailbox
// with integer atomics (deterministic).
template <typename Item>
__device__ void list_histogram(const Src &src, Item item, bool need_mass, int phase, StaticShared &sh) {
    Mail &out = sh.mail[phase & 1];
    for (int j = threadIdx.x; j < kBins; j += kThreads) {
        out.count[j] = 0u;
        out.mass[j] = 0ull;
    }
    __syncthreads();
    for (int pos = src.begin; pos < src.end; ++pos) {
        unsigned bin = kBins;
        float w = 0.0f;
        item(pos, &bin, &w);
        if (bin < kBins) {
            atomicAdd(&out.count[bin], 1u);
            if (need_mass) atomicAdd(&out.mass[bin], fixed_mass(w));
        }
    }
    RESET_TRACE(7);
}

// The team's histogram into sh.bin_count / sh.bin_mass (every CTA's mailbox
// of this exchange, summed in rank order).  Starts with the team barrier;
// the caller's __syncthreads makes the sums visible.
__device__ void team_histogram_gather(int phase, StaticShared &sh) {
    const int tid = threadIdx.x;
    team_sync();
    RESET_TRACE(8);
    for (int j = tid; j < kBins; j += kThreads) {
        // All remote loads first (one DSMEM round trip), then the sums in rank order.
        const unsigned n = team_size();
        uint32_t cr[kMaxTeam];
        unsigned long long mr[kMaxTeam];
#pragma unroll
        for (unsigned q = 0; q < kMaxTeam; ++q) {
            cr[q] = 0u;
            mr[q] = 0ull;
            if (q < n) {
                const Mail *peer = team_peer(&sh.mail[phase & 1], q);
                cr[q] = peer->count[j];
                mr[q] = peer->mass[j];
            }
        }
        uint32_t c = 0;
        unsigned long long m = 0;
#pragma unroll
        for (unsigned q = 0; q < kMaxTeam; ++q) {
            c += cr[q];
            m += mr[q];
        }
        sh.bin_count[j] = c;
        sh.bin_mass[j] = m;
    }
}

// The bin of sh.bin_count / sh.bin_mass where the running count (by_mass
// false: reaches rank) or weight (true: reaches target) gets there, heaviest
// keys first, continuing from r's count/mass above; res.key is the bin.
// must_find (levels after the first): the chosen bin of the level before
// holds the answer, so if rounding of the double sums leaves the target just
// out of reach, the lowest non-empty bin is taken.  Every thread of the CTA
// calls it, after a barrier that made the bins visible.
__device__ SelectOut pick_bin(const Radix &r, bool by_mass, int64_t rank, double target, bool must_find,
                              StaticShared &sh) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (warp == 0) {
        // Lane l holds bins 255-8l .. 248-8l (heaviest keys first); a scan
        // over lanes finds the lane where the running total gets there, and
        // that lane walks its 8 bins.
        uint32_t c[8];
        double m[8];
        int64_t lane_count = 0;
        double lane_mass = 0.0;
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            const int bin = kBins - 1 - (lane * 8 + j);
            c[j] = sh.bin_count[bin];
            m[j] = static_cast<double>(sh.bin_mass[bin]) * kMassUnit;
            lane_count += c[j];
            lane_mass += m[j];
        }
        int64_t inc_count = lane_count;
        double inc_mass = lane_mass;
#pragma unroll
        for (int o = 1; o < 32; o <<= 1) {
            const int64_t yc = __shfl_up_sync(kFull, inc_count, o);
            const double ym = __shfl_up_sync(kFull, inc_mass, o);
            if (lane >= o) {
                inc_count += yc;
                inc_mass += ym;
            }
        }
        double exc_mass = __shfl_up_sync(kFull, inc_mass, 1);
        if (lane == 0) exc_mass = 0.0;
        const bool reach = by_mass ? r.mass_above + inc_mass >= target : r.count_above + inc_count >= rank;
        const unsigned ballot = __ballot_sync(kFull, reach);
        const unsigned nonempty = __ballot_sync(kFull, lane_count > 0);
        int picker = -1;
        if (ballot != 0u) picker = __ffs(static_cast<int>(ballot)) - 1;
        else if (must_find && nonempty != 0u) picker = 31 - __clz(static_cast<int>(nonempty));
        if (picker < 0) {
            if (lane == 0) sh.bc.select.found = 0;
        } else if (lane == picker) {
            int64_t run_count = r.count_above + (inc_count - lane_count);
            double run_mass = r.mass_above + exc_mass;
            int chosen = -1, last_nonempty = -1;
            int64_t last_count = 0;
            double last_mass = 0.0;
            for (int j = 0; j < 8; ++j) {
                if (c[j] == 0u) continue;
                last_nonempty = j;
                last_count = run_count;
                last_mass = run_mass;
                if (by_mass ? run_mass + m[j] >= target : run_count + c[j] >= rank) {
                    chosen = j;
                    break;
                }
                run_count += c[j];
                run_mass += m[j];
            }
            // The lane sums and the walk round differently; if the walk
            // falls short, its last non-empty bin is where it got closest.
            if (chosen < 0) {
                chosen = last_nonempty;
                run_count = last_count;
                run_mass = last_mass;
            }
            sh.bc.select.found = chosen >= 0 ? 1 : 0;
            if (chosen >= 0) {
                sh.bc.select.key = static_cast<uint32_t>(kBins - 1 - (lane * 8 + chosen));  // the bin, for now
                sh.bc.select.ties = c[chosen];
                sh.bc.select.count_above = run_count;
                sh.bc.select.mass_above = run_mass;
            }
        }
    }
    __syncthreads();
    const SelectOut result = sh.bc.select;
    __syncthreads();
    RESET_TRACE(10);
    return result;
}

// The team's histogram of this exchange and the bin pick_bin chooses in it.
__device__ SelectOut team_histogram_pick(const Radix &r, bool by_mass, int64_t rank, double target, bool must_find,
                                         int &phase, StaticShared &sh) {
    team_histogram_gather(phase, sh);
    ++phase;
    __syncthreads();
    return pick_bin(r, by_mass, rank, target, must_find, sh);
}

// The first member in id order at which the running sum of its weights
// (double, in id order) exceeds mult * total + offset, where total is the
// members' total weight; the last member if none does (the CPU's draw()).
// unit_weight counts members instead (the tie search).  member(i, key, w):
// local index, logit key, weight.  given_local (may be null): this thread's
// sum over its members and its last member's id, already computed in the
// pass that wrote the weights (the same values in the same order).
//
// The draw form (to_rank0): only rank 0 needs the result, after the kernel's
// final team barrier.  Each CTA then sends its first hit to rank 0's draw_hit
// with a distributed-shared-memory atomicMin instead of a second exchange
// (2.7 µs of a flat row's top-p draw, H100 trace, session 11), the return
// value means nothing, and rank 0 reads draw_hit after that barrier (the
// barrier also absorbs the CTAs' skew the exchange used to: the pair costs
// ~0.5 µs less).
template <typename Member>
__device__ int32_t team_find_first(const Src &src, Member member, bool unit_weight, double mult, double offset,
                                   const double *given_local, int32_t given_last, int &phase, StaticShared &sh,
                                   bool to_rank0 = false) {
    double local = 0.0;
    int32_t last = -1;
    if (given_local != nullptr) {
        local = *given_local;
        last = given_last;
    } else {
        for (int pos = src.begin; pos < src.end; ++pos) {
            const int i = src.local(pos);
            const float z = src.z[i];
            if (z == -INFINITY) continue;
            const float w = src.w[pos];
            if (!member(i, logit_order_key(z), w)) continue;
            local += unit_weight ? 1.0 : static_cast<double>(w);
            last = src.base + i;
        }
    }
    RESET_TRACE(13);
    // The warps' last members ride on the scan's barriers (thread 0 alone
    // needs their maximum; nothing writes scratch_i before it reads them).
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) last = max(last, __shfl_xor_sync(kFull, last, o));
    if ((threadIdx.x & 31) == 0) sh.scratch_i[threadIdx.x >> 5] = last;
    double block_total = 0.0;
    const double thread_prefix = block_exclusive_scan(local, &block_total, sh);
    Mail &out = sh.mail[phase & 1];
    if (threadIdx.x == 0) {
        int32_t block_last = sh.scratch_i[0];
        for (int w = 1; w < kWarps; ++w) block_last = max(block_last, sh.scratch_i[w]);
        out.d0 = block_total;
        out.i0 = block_last;
    }
    team_sync();
    if (threadIdx.x == 0) {
        const unsigned me = team_rank(), n = team_size();
        double sum = 0.0, mine = 0.0;
        int32_t team_last = -1;
        double value[kMaxTeam];
        int32_t last_of[kMaxTeam];
#pragma unroll
        for (unsigned r = 0; r < kMaxTeam; ++r) {
            value[r] = 0.0;
            last_of[r] = -1;
            if (r < n) {
                const Mail *peer = team_peer(&sh.mail[phase & 1], r);
                value[r] = peer->d0;
                last_of[r] = peer->i0;
            }
        }
#pragma unroll
        for (unsigned r = 0; r < kMaxTeam; ++r) {
            if (r == me) mine = sum;
            if (r < n) sum += value[r];
            team_last = max(team_last, last_of[r]);
        }
        sh.bc.value = sum;
        sh.bc.prefix = mine;
        sh.bc.last_member = team_last;
    }
    ++phase;
    __syncthreads();
    RESET_TRACE(14);
    const double target = mult * sh.bc.value + offset;
    double run = sh.bc.prefix + thread_prefix;
    int32_t hit = kNoCutId;
    // Every thread walks its own range from its prefix; the earliest hit in
    // the team wins.  A zero weight never crosses (the CPU's running sum does
    // not move on it), so it is never a hit.  A thread whose whole range lies
    // at or below the target cannot hit and skips the walk: its running sum
    // ends within rounding (n additions, n < 10^4, each 2^-53 relative) of
    // run + local, and never decreases, so 1e-12 of it is a safe margin.
    const double range_end = run + local;
    if (local > 0.0 && range_end + range_end * 1e-12 > target) {
        for (int pos = src.begin; pos < src.end; ++pos) {
            const int i = src.local(pos);
            const float z = src.z[i];
            if (z == -INFINITY) continue;
            const float w = src.w[pos];
            if (!member(i, logit_order_key(z), w)) continue;
            const double wt = unit_weight ? 1.0 : static_cast<double>(w);
            run += wt;
            if (wt > 0.0 && run > target) {
                hit = src.base + i;
                break;
            }
        }
    }
    RESET_TRACE(15);
    const int32_t block_hit = block_min_i(hit, sh);
    if (to_rank0) {
        if (threadIdx.x == 0 && block_hit != kNoCutId)
            atomicMin(const_cast<int32_t *>(team_peer(&sh.draw_hit, 0)), block_hit);
        RESET_TRACE(16);
        return kNoCutId;
    }
    Mail &out2 = sh.mail[phase & 1];
    if (threadIdx.x == 0) out2.i0 = block_hit;
    team_sync();
    if (threadIdx.x == 0) {
        int32_t first = kNoCutId;
        const unsigned n = team_size();
        int32_t hit_of[kMaxTeam];
#pragma unroll
        for (unsigned r = 0; r < kMaxTeam; ++r) hit_of[r] = r < n ? team_peer(&sh.mail[phase & 1], r)->i0 : kNoCutId;
#pragma unroll
        for (unsigned r = 0; r < kMaxTeam; ++r) first = min(first, hit_of[r]);
        sh.bc.first_hit = first;
    }
    ++phase;
    __syncthreads();
    const int32_t result = sh.bc.first_hit != kNoCutId ? sh.bc.first_hit : sh.bc.last_member;
    __syncthreads();
    RESET_TRACE(16);
    return result;
}

// ---- top-p in one row pass: a first level binned by value ----
//
// Why.  The radix levels bin the logits' bit keys.  On a flat row the top-p
// nucleus is most of the vocabulary, so every level keeps more candidates
// than a list holds and walks the whole row again: four passes and four team
// exchanges (session 6: ~65 µs of an 87 µs sampler on a flat 152k row).
// Here the first level bins the logit's value, linearly over [min, max]
// (monotone in z, so every bin is still a contiguous stretch of the order),
// and is folded into the pass that computes the weights, its exchange also
// carrying the team's weight total.  The bin where the nucleus ends then
// holds a few hundred members on a flat row: they are compacted, every CTA
// copies the whole team's list (in rank order, so in id order), and the
// remaining levels run on that copy inside each CTA, on identical data, so
// every CTA reaches the same cut with no further team exchange.
//
// The level counts every unmasked token, the light ones top-p's floor drops
// too.  That chooses the same bin: light tokens are the lowest of the order
// and weigh at most (1 - p)·total together, so the heavy ones alone reach
// p·total, in or above the first bin that holds a heavy token — and the
// bins above it hold heavy tokens only.  The levels after it count heavy
// members only, as the CPU's search does.
struct ValueBins {
    float lo, scale;  // bin = (z - lo) · scale, truncated, at most kBins - 1
    __device__ __forceinline__ unsigned of(float z) const {
        const int b = __float2int_rz((z - lo) * scale);  // saturating; z >= lo for every unmasked z
        return static_cast<unsigned>(min(max(b, 0), kBins - 1));
    }
};
__device__ __forceinline__ ValueBins value_bins(float min_logit, float max_logit) {
    ValueBins v;
    v.lo = min_logit;
    const float span = max_logit - min_logit;
    // A zero or overflowing span puts every token in bin 0: too many to gather, so the radix levels run.
    v.scale = span > 0.0f && span <= 3.0e38f ? static_cast<float>(kBins) / span : 0.0f;
    return v;
}

// The members of one value bin, gathered from the whole team: parallel arrays
// in the histograms' space (free once the level is picked), first this CTA's
// own members, then the team's copy: 24 bytes per member.
//
// How many.  On a flat row (a random-weight model's, or any Gaussian-like
// bulk) the densest of 256 bins over [min, max] holds about 1.4% of the
// vocabulary whatever the spread (the range is ~9 sigma either way): ~2,100
// of 151,936, and that is where top-p's cut falls at temperatures below 1
// (the random Qwen3-8B's logits at T = 0.6: 1,923-2,218 members at the cut,
// at T = 1: 1,426-1,607).  The histograms' own space holds 2,048; a bin
// past that took the radix levels over the row, ~90 instead of ~41 µs
// (H100, session 11), on the tokens to which ReSET gives T_low.  So where
// the device's shared memory allows, the space grows to twice that
// (sampling_plan: it never changes how many CTAs fit an SM, which the
// 512-thread CTA's registers already hold to one).
constexpr int kGatheredEntryBytes = 12;  // key, weight, id
constexpr int kGatherBytesPerMember = 2 * kGatheredEntryBytes;
constexpr int kMinGatherCapacity = kHistogramBytes / kGatherBytesPerMember;  // 2,048 members
constexpr int kMaxGatherCapacity = 2 * kMinGatherCapacity;                   // 4,096
// Bytes of dynamic shared memory before the row: the histograms, the candidate
// list and the gathered lists share them.
__host__ __device__ constexpr int gather_region_bytes(int gather_capacity) {
    return gather_capacity * kGatherBytesPerMember > kHistogramBytes ? gather_capacity * kGatherBytesPerMember
                                                                     : kHistogramBytes;
}
struct Gathered {
    uint32_t *key;
    float *w;
    int32_t *id;
    int n;
    double mass_above;  // the exact weight of every token in a higher bin (all heavy)
};
// This thread's part of the draw's sums, from the same pass (see draw_sum_in_gathered).
struct DrawPart {
    double above = 0.0;       // weight of its drawable tokens in higher bins, in id order
    int32_t above_last = -1;  // the last of them
    int first = 0, count = 0; // its own members in this CTA's list
};
__device__ __forceinline__ Gathered gathered_list(unsigned char *space, int capacity, int which) {
    Gathered g;
    unsigned char *base = space + which * capacity * kGatheredEntryBytes;
    g.key = reinterpret_cast<uint32_t *>(base);
    g.w = reinterpret_cast<float *>(base + capacity * 4);
    g.id = reinterpret_cast<int32_t *>(base + capacity * 8);
    g.n = 0;
    g.mass_above = 0.0;
    return g;
}

// The team's lists laid end to end in rank order, after a team_sync that
// published each CTA's count in its mail's i0 (and, where `mass_above` is
// given, a mass in mass[0]): offset[r] is where rank r's list starts, and the
// total is returned (and the masses' sum in *mass_above).  Thread r fetches
// peer r's words once and the CTA reads them from its own shared memory (not
// 32 remote loads in every thread); scratch_i and bin_mass must be free.
__device__ __forceinline__ int team_list_offsets(StaticShared &sh, const Mail &mail, int (&offset)[kMaxTeam + 1],
                                                 unsigned long long *mass_above = nullptr) {
    static_assert(kMaxTeam <= kWarps, "the per-peer scratch holds one slot per team rank");
    if (threadIdx.x < kMaxTeam) {
        const unsigned r = threadIdx.x;
        int32_t c = 0;
        unsigned long long m = 0;
        if (r < team_size()) {
            const Mail *peer = team_peer(&mail, r);
            c = peer->i0;
            if (mass_above) m = peer->mass[0];
        }
        sh.scratch_i[r] = c;
        if (mass_above) sh.bin_mass[r] = m;
    }
    __syncthreads();
    offset[0] = 0;
    unsigned long long mass = 0;
#pragma unroll
    for (unsigned r = 0; r < kMaxTeam; ++r) {
        offset[r + 1] = offset[r] + sh.scratch_i[r];
        if (mass_above) mass += sh.bin_mass[r];
    }
    if (mass_above) *mass_above = mass;
    return offset[kMaxTeam];
}

// Compacts this CTA's members of bin `bin` that `member` accepts (in id
// order), then, after one team exchange, copies every CTA's list in rank
// order.  team_count (the bin's team-wide count, every member included) must
// be <= capacity (KernelParams::gather_capacity).  The same exchange carries the exact weight of the
// tokens in higher bins (fixed point, so the sum is order-free): the value
// level's masses were rounded, so its choice is checked against it.  Returns
// the team's list, identical in every CTA.
// drawable(w): whether a token above the cut survives the draw's other
// filters (min-p); the same pass sums them for the draw (DrawPart).
template <typename Member, typename Drawable>
__device__ Gathered gather_bin_members(const Row &row, ValueBins vb, unsigned bin, Member member, Drawable drawable,
                                       unsigned char *space, int capacity, DrawPart &part, int &phase,
                                       StaticShared &sh) {
    Gathered mine = gathered_list(space, capacity, 0), all = gathered_list(space, capacity, 1);
    int count = 0;
    unsigned long long above = 0;
    // A thread's range is ~19 entries in a 16-CTA team (38 in 8) and a bin
    // holds well under one member per thread: where the range fits 64 bits,
    // this pass marks the members so that the compaction below visits them
    // alone instead of walking the range again (1.9 -> 0.3 µs on the random
    // Qwen3-8B's logits, H100 trace, session 11).
    const bool marked = row.end - row.begin <= 64;
    unsigned long long members = 0;
#pragma unroll 4
    for (int i = row.begin; i < row.end; ++i) {
        const float z = row.z[i];
        if (z == -INFINITY) continue;
        const unsigned b = vb.of(z);
        const float w = row.w[i];
        if (b > bin) {
            above += fixed_mass(w);
            if (drawable(w)) {
                part.above += static_cast<double>(w);
                part.above_last = row.base + i;
            }
        } else if (b == bin && member(i, logit_order_key(z), w)) {
            ++count;
            if (marked) members |= 1ull << (i - row.begin);
        }
    }
    RESET_TRACE(22);
    // This thread's place in the CTA's list (an exclusive scan of the counts),
    // the list's length and the weight above: one barrier pair for the three.
    int pos, local_total;
    {
        const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
        const int x = warp_inclusive_scan(count);
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) above += __shfl_xor_sync(kFull, above, o);
        if (lane == 31) sh.scratch_i[warp] = x;
        if (lane == 0) sh.bin_mass[warp] = above;  // free between levels
        __syncthreads();
        int warp_prefix = 0, sum = 0;
        unsigned long long block_above = 0;
        for (int w = 0; w < kWarps; ++w) {
            if (w == warp) warp_prefix = sum;
            sum += sh.scratch_i[w];
            block_above += sh.bin_mass[w];  // integers: the same sum in any order
        }
        __syncthreads();
        pos = warp_prefix + x - count;
        local_total = sum;
        above = block_above;
    }
    RESET_TRACE(23);
    part.first = pos;
    part.count = count;
    auto list = [&](int i, uint32_t key, float w) {
        mine.key[pos] = key;
        mine.w[pos] = w;
        mine.id[pos] = row.base + i;
        ++pos;
    };
    if (marked) {
        for (; members != 0; members &= members - 1) {  // ascending local index: id order
            const int i = row.begin + __ffsll(static_cast<long long>(members)) - 1;
            list(i, logit_order_key(row.z[i]), row.w[i]);
        }
    } else {
        for (int i = row.begin; i < row.end && count > 0; ++i) {
            const float z = row.z[i];
            if (z == -INFINITY || vb.of(z) != bin) continue;
            const uint32_t key = logit_order_key(z);
            const float w = row.w[i];
            if (!member(i, key, w)) continue;
            list(i, key, w);
            --count;
        }
    }
    if (threadIdx.x == 0) {
        sh.mail[phase & 1].i0 = local_total;
        sh.mail[phase & 1].mass[0] = above;
    }
    RESET_TRACE(24);
    team_sync();  // the lists and their counts are published
    RESET_TRACE(25);
    int offset[kMaxTeam + 1];
    unsigned long long team_above = 0;
    all.n = team_list_offsets(sh, sh.mail[phase & 1], offset, &team_above);
    all.mass_above = static_cast<double>(team_above) * kMassUnit;
    // Every remote load of this thread first (at most kCopyRounds entries of
    // three words), then the stores: one distributed-shared-memory round trip
    // instead of one per entry (the stores to this CTA's list may alias the
    // peers' generic addresses as far as the compiler knows, so a loop that
    // stores each entry before loading the next waits for every load in
    // turn).  With the per-peer fetch above: 4.2 -> 2.8 µs for ~1,450
    // members on the random Qwen3-8B's logits (H100 trace, session 11).
    constexpr int kCopyRounds = (kMaxGatherCapacity + kThreads - 1) / kThreads;
    uint32_t key[kCopyRounds];
    float w[kCopyRounds];
    int32_t id[kCopyRounds];
#pragma unroll
    for (int j = 0; j < kCopyRounds; ++j) {
        const int e = static_cast<int>(threadIdx.x) + j * kThreads;
        if (e >= all.n) break;
        unsigned r = 0;
        while (e >= offset[r + 1]) ++r;
        const int k = e - offset[r];
        key[j] = team_peer(mine.key, r)[k];
        w[j] = team_peer(mine.w, r)[k];
        id[j] = team_peer(mine.id, r)[k];
    }
#pragma unroll
    for (int j = 0; j < kCopyRounds; ++j) {
        const int e = static_cast<int>(threadIdx.x) + j * kThreads;
        if (e >= all.n) break;
        all.key[e] = key[j];
        all.w[e] = w[j];
        all.id[e] = id[j];
    }
    ++phase;
    __syncthreads();
    RESET_TRACE(20);
    return all;
}

// The radix levels of a by-mass select over a gathered list, inside the CTA
// (every CTA holds the same list, so all reach the same cut).  found = 0 when
// the cut is not in the list's bin (the value level's rounded masses chose a
// neighbour: the weight above reaches the target, or the list's own weight
// does not): the caller then runs the radix levels over the row.
__device__ SelectOut select_in_gathered(const Gathered &g, double target, StaticShared &sh) {
    int32_t lo_i = INT32_MAX, hi_i = INT32_MIN;  // keys ^ 2^31: unsigned order as signed
    unsigned long long mass = 0;
    for (int e = threadIdx.x; e < g.n; e += kThreads) {
        const int32_t k = static_cast<int32_t>(g.key[e] ^ 0x80000000u);
        lo_i = min(lo_i, k);
        hi_i = max(hi_i, k);
        mass += fixed_mass(g.w[e]);
    }
    // The three block reductions in one (one barrier pair instead of three).
    {
        const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) {
            lo_i = min(lo_i, __shfl_xor_sync(kFull, lo_i, o));
            hi_i = max(hi_i, __shfl_xor_sync(kFull, hi_i, o));
            mass += __shfl_xor_sync(kFull, mass, o);
        }
        if (lane == 0) {
            sh.scratch_i[warp] = lo_i;
            sh.scratch_u[warp] = static_cast<uint32_t>(hi_i);
            sh.bin_mass[warp] = mass;  // free between levels
        }
        __syncthreads();
        lo_i = sh.scratch_i[0];
        hi_i = static_cast<int32_t>(sh.scratch_u[0]);
        mass = sh.bin_mass[0];
        for (int w = 1; w < kWarps; ++w) {
            lo_i = min(lo_i, sh.scratch_i[w]);
            hi_i = max(hi_i, static_cast<int32_t>(sh.scratch_u[w]));
            mass += sh.bin_mass[w];  // integers: the same sum in any order
        }
        __syncthreads();
    }
    SelectOut none = {};
    if (g.mass_above >= target || g.mass_above + static_cast<double>(mass) * kMassUnit < target) return none;
    Radix r = radix_start(static_cast<uint32_t>(lo_i) ^ 0x80000000u, static_cast<uint32_t>(hi_i) ^ 0x80000000u);
    r.count_above = 0;  // unused by a select by mass
    r.mass_above = g.mass_above;
    for (;;) {
        for (int j = threadIdx.x; j < kBins; j += kThreads) {
            sh.bin_count[j] = 0u;
            sh.bin_mass[j] = 0ull;
        }
        __syncthreads();
        for (int e = threadIdx.x; e < g.n; e += kThreads) {
            const unsigned bn = radix_bin(r, g.key[e]);
            if (bn >= static_cast<unsigned>(kBins)) continue;
            atomicAdd(&sh.bin_count[bn], 1u);
            atomicAdd(&sh.bin_mass[bn], fixed_mass(g.w[e]));
        }
        __syncthreads();
        SelectOut res = pick_bin(r, true, 0, target, true, sh);
        RESET_TRACE(21);
        if (!res.found || radix_advance(r, res)) return res;
    }
}

// This thread's sum of the draw's survivors and its last one, without a pass
// over the row: its tokens above the cut's bin (summed when the list was
// built) and its own members of the bin inside the cut.  The walk of
// team_find_first adds the same weights in id order, which can round
// differently in the last bit; the draw's token can then differ only where
// u·total falls within that bit of a thread's range end (as the team's
// prefix sums already differ from the CPU's one running sum).
template <typename Survives>
__device__ double draw_sum_in_gathered(const DrawPart &part, unsigned char *space, int capacity, Survives survives,
                                       int32_t *last) {
    const Gathered mine = gathered_list(space, capacity, 0);
    double sum = part.above;
    int32_t final_id = part.above_last;
    for (int e = part.first; e < part.first + part.count; ++e) {
        if (!survives(mine.key[e], mine.id[e], mine.w[e])) continue;
        sum += static_cast<double>(mine.w[e]);
        final_id = max(final_id, mine.id[e]);
    }
    *last = final_id;
    return sum;
}

// The id of the take-th member (1-based, id order) of a gathered list with
// this key; the list holds at least take of them.
__device__ int32_t find_in_gathered(const Gathered &g, uint32_t key, int64_t take, StaticShared &sh) {
    const int each = (g.n + kThreads - 1) / kThreads;
    const int begin = min(static_cast<int>(threadIdx.x) * each, g.n), end = min(begin + each, g.n);
    int count = 0;
    for (int e = begin; e < end; ++e) count += g.key[e] == key ? 1 : 0;
    double total = 0.0;
    const int64_t before = static_cast<int64_t>(block_exclusive_scan(static_cast<double>(count), &total, sh));
    if (before < take && take <= before + count) {
        int64_t seen = before;
        for (int e = begin; e < end; ++e)
            if (g.key[e] == key && ++seen == take) sh.bc.first_hit = g.id[e];
    }
    __syncthreads();
    const int32_t id = sh.bc.first_hit;
    __syncthreads();
    return id;
}

// Small top-k's token (4c in the kernel), in rank 0 only: the team's
// candidates (`lists`: every CTA's, in rank order, so in id order; n <=
// kThreads, one per thread), each ranked exactly in the order (logit
// descending, id ascending) among them, which holds every token above it;
// then truncate()'s top-p on the top k (its total, floor and nucleus), min-p,
// and the draw over the survivors in id order with u.
__device__ int32_t small_top_k_token(const Gathered &lists, const int *offset, int n, const SamplingPolicyDevice &pol,
                                     double u, float max_logit, float inv_t, unsigned char *space, int capacity,
                                     StaticShared &sh) {
    const Gathered all = gathered_list(space, capacity, 1);
    const int e = static_cast<int>(threadIdx.x);
    const bool live = e < n;
    uint32_t key = 0;
    int32_t id = kNoCutId;
    if (live) {
        unsigned r = 0;
        while (e >= offset[r + 1]) ++r;
        key = team_peer(lists.key, r)[e - offset[r]];
        id = team_peer(lists.id, r)[e - offset[r]];
        all.key[e] = key;
        all.id[e] = id;
    }
    __syncthreads();
    int rank = 0;
    if (live)
        for (int f = 0; f < n; ++f) {
            const uint32_t other = all.key[f];
            rank += other > key || (other == key && all.id[f] < id) ? 1 : 0;
        }
    const float w = live ? expf((logit_of_order_key(key) - max_logit) * inv_t) : 0.0f;
    const bool in_k = live && rank < pol.top_k;
    bool survives = in_k;
    if (pol.top_p < 1.0f) {
        // truncate(): top-p's total is the top k's; tokens under the floor are
        // out; the nucleus keeps the others in order while the mass before
        // them is below top_p·total.  The weights by rank give that mass (a
        // scan); rank 0's own list is free for them (read above).
        const double total_k = block_sum(in_k ? static_cast<double>(w) : 0.0, sh);
        const float floor_f = __double2float_ru(rule::top_p_weight_floor(pol.top_p, total_k, pol.top_k));
        const bool heavy = in_k && w >= floor_f;
        float *w_by_rank = reinterpret_cast<float *>(lists.key);
        double *before_by_rank = reinterpret_cast<double *>(lists.key + kMaxTeam * kWarps);
        if (in_k) w_by_rank[rank] = heavy ? w : 0.0f;
        __syncthreads();
        double unused_total = 0.0;
        const double before =
            block_exclusive_scan(e < pol.top_k ? static_cast<double>(w_by_rank[e]) : 0.0, &unused_total, sh);
        if (e < pol.top_k) before_by_rank[e] = before;
        __syncthreads();
        survives = heavy && before_by_rank[rank] < static_cast<double>(pol.top_p) * total_k;
    }
    if (pol.min_p > 0.0f && w < pol.min_p) survives = false;
    double total = 0.0;
    const double prefix = block_exclusive_scan(survives ? static_cast<double>(w) : 0.0, &total, sh);
    const bool hit = survives && w > 0.0f && prefix + static_cast<double>(w) > u * total;
    const int32_t first_hit = block_min_i(hit ? id : kNoCutId, sh);
    if (first_hit != kNoCutId) return first_hit;
    return -block_min_i(survives ? -id : kNoCutId, sh);  // u·total rounded up to the total: the last survivor
}

__device__ __forceinline__ uint32_t delimiter_flags_of(const SamplingArgs &a, int32_t token) {
    return (a.delimiter_flags != nullptr && token >= 0 && token < a.vocab) ? a.delimiter_flags[token] : 0u;
}

// Phase 1's statistics of one thread's entries.
struct LoadStats {
    float best = -INFINITY;  // max / argmax of the row drawn from (penalized when the policy has penalties)
    int32_t best_id = -1;
    int32_t unmasked = 0, bad = 0;
    uint32_t min_key = 0xFFFFFFFFu;
    float raw_max = -INFINITY;  // max of the raw row: the entropy's (kPenalized only; else best is it)
};

// Phase 1's load: kLoadBatch coalesced loads in flight per thread, the row
// (penalized: rules/penalty.h with this sequence's counts where `counts` is
// not null, then plus the logit bias where `bias` is not null) copied to
// `copy` when not null, and the statistics from the registers
// (order-independent results).  A template, so the unpenalized load is the
// code it always was.
template <bool kPenalized>
__device__ __forceinline__ void load_row(const float *logits, const int32_t *counts, const float *bias, int32_t base,
                                         int32_t local_n, float *copy, float repetition, float presence,
                                         float frequency, LoadStats &ls) {
    for (int i0 = threadIdx.x; i0 < local_n; i0 += kThreads * kLoadBatch) {
        float v[kLoadBatch];
        int32_t c[kPenalized ? kLoadBatch : 1];
        float add[kPenalized ? kLoadBatch : 1];
#pragma unroll
        for (int j = 0; j < kLoadBatch; ++j) {
            const int i = i0 + j * kThreads;
            v[j] = i < local_n ? __ldg(logits + base + i) : 0.0f;
            // A plain load: rank 0 of this launch adds the accepted token to the counts after its last barrier.
            if constexpr (kPenalized) {
                c[j] = i < local_n && counts ? counts[base + i] : 0;
                add[j] = i < local_n && bias ? __ldg(bias + base + i) : 0.0f;
            }
        }
#pragma unroll
        for (int j = 0; j < kLoadBatch; ++j) {
            const int i = i0 + j * kThreads;
            if (i >= local_n) continue;
            float z = v[j];
            if (isnan(z) || z == INFINITY) {
                ls.bad = 1;
            } else if (z != -INFINITY) {
                if constexpr (kPenalized) {
                    ls.raw_max = fmaxf(ls.raw_max, z);
                    if (counts) z = rule::penalized_logit(z, c[j], repetition, presence, frequency);
                    // The logit bias after the penalties (sampling/logit_bias.h); -inf bans the token.
                    if (bias) z = __fadd_rn(z, add[j]);
                }
            }
            if (!isnan(z) && z != INFINITY && z != -INFINITY) {
                ++ls.unmasked;
                ls.min_key = min(ls.min_key, logit_order_key(z));
                if (better(z, base + i, ls.best, ls.best_id)) {
                    ls.best = z;
                    ls.best_id = base + i;
                }
            }
            if (copy) copy[i] = z;
        }
    }
}

__device__ __forceinline__ bool penalized(const SamplingPolicyDevice &p) {
    return rule::penalties_on(p.presence_penalty, p.frequency_penalty, p.repetition_penalty);
}

__device__ __forceinline__ bool policy_in_range(const SamplingPolicyDevice &p, const SamplingSequenceState &s,
                                                int32_t ring_capacity, const int32_t *counts) {
    return p.kind >= RESET_POLICY_GREEDY && p.kind <= RESET_POLICY_ENTROPY && p.window >= 1 &&
           p.window <= ring_capacity && p.top_k >= 0 && p.top_p > 0.0f && p.top_p <= 1.0f && p.min_p >= 0.0f &&
           p.min_p < 1.0f && s.step.window_count >= 0 && s.step.window_count <= p.window &&
           s.step.window_next >= 0 && s.step.window_next < p.window && s.accepted >= 0 &&
           fabsf(p.presence_penalty) <= rule::kMaxPenalty && fabsf(p.frequency_penalty) <= rule::kMaxPenalty &&
           p.repetition_penalty >= rule::kMinRepetitionPenalty && p.repetition_penalty <= rule::kMaxRepetitionPenalty &&
           (counts != nullptr || !penalized(p));
}

__global__ void __launch_bounds__(kThreads, 1) sampling_kernel(const KernelParams p) {
    extern __shared__ __align__(16) unsigned char dynamic_shared[];
    __shared__ StaticShared sh;
    const SamplingArgs &a = p.args;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int b = blockIdx.y;
    const unsigned rank = team_rank();
    [[maybe_unused]] const trace::EndMark end_mark;
    trace::begin_dependent_kernel(trace::kSampling);
    if (tid == 0) sh.draw_hit = kNoCutId;  // before this CTA's first team barrier: no peer writes it earlier
    RESET_TRACE(1);

    // A skipped sequence: every CTA of the team reads the same flag and
    // leaves before any exchange (no peer ever reads its shared memory).
    if (a.active != nullptr && a.active[b] == 0) {
        if (rank == 0 && tid == 0) {
            a.tokens[b] = -1;
            if (a.signals) {
                SamplingSignalsDevice sig = {};
                sig.status = kSamplingOk;
                a.signals[b] = sig;
            }
        }
        return;
    }

    unsigned long long *warp_mass = reinterpret_cast<unsigned long long *>(dynamic_shared);
    uint32_t *warp_count = reinterpret_cast<uint32_t *>(warp_mass + kWarps * kBins);
    float *row_cache = reinterpret_cast<float *>(dynamic_shared + gather_region_bytes(p.gather_capacity));
    // The candidate list reuses the histograms' space (see compact below).
    int32_t *list_idx = reinterpret_cast<int32_t *>(dynamic_shared);
    float *list_w = reinterpret_cast<float *>(list_idx + kListCapacity);

    const int32_t slice = kThreads * p.per_thread;
    const int64_t base64 = static_cast<int64_t>(rank) * slice;
    const int64_t vocab64 = a.vocab;
    const int32_t local_n = base64 >= vocab64 ? 0 : static_cast<int32_t>(vocab64 - base64 < slice ? vocab64 - base64 : slice);
    const int32_t base = static_cast<int32_t>(base64 < vocab64 ? base64 : vocab64);
    const float *logits = a.logits + static_cast<int64_t>(b) * a.ld_logits;
    // The policy first: with penalties or a logit bias the row drawn from is not the logits.
    const SamplingPolicyDevice pol = a.policies[b];
    const bool with_penalties = penalized(pol) && a.counts != nullptr;
    const bool with_bias = pol.logit_bias != 0 && a.bias != nullptr;
    const bool penalize = with_penalties || with_bias;
    Row row;
    row.base = base;
    row.begin = min(tid * p.per_thread, local_n);
    row.end = min(row.begin + p.per_thread, local_n);
    float *copy = nullptr;  // where phase 1 writes the row drawn from
    if (p.shared_row) {
        row.z = row_cache;
        row.w = row_cache + slice;
        copy = row_cache;
    } else {
        row.z = logits + base;
        row.w = a.workspace + static_cast<int64_t>(b) * a.vocab + base;
        if (penalize) {
            // The second half of the workspace; read back only by the thread's own CTA, after a barrier.
            copy = a.workspace + (static_cast<int64_t>(a.batch) + b) * a.vocab + base;
            row.z = copy;
        }
    }

    // ---- 1. load (shared-memory layout) fused with max / argmax / unmasked
    // count / bad values.
    LoadStats ls;
    if (penalize) {
        load_row<true>(logits, with_penalties ? a.counts + static_cast<int64_t>(b) * a.vocab : nullptr,
                       with_bias ? a.bias : nullptr, base, local_n, copy, pol.repetition_penalty,
                       pol.presence_penalty, pol.frequency_penalty, ls);
    } else {
        load_row<false>(logits, nullptr, nullptr, base, local_n, copy, 1.0f, 0.0f, 0.0f, ls);
        ls.raw_max = ls.best;
    }
    float best = ls.best, raw_max = ls.raw_max;
    int32_t best_id = ls.best_id, unmasked = ls.unmasked, bad = ls.bad;
    uint32_t min_key = ls.min_key;

    RESET_TRACE(2);
    const SamplingSequenceState st = a.states[b];
    float *ring = a.rings + static_cast<int64_t>(b) * a.ring_capacity;
    const bool policy_ok = policy_in_range(pol, st, a.ring_capacity, a.counts);
    if (policy_ok && pol.window <= kRingStage)
        for (int i = tid; i < pol.window; i += kThreads) sh.ring[i] = ring[i];
    int phase = 0;

    {
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) {
            const float ov = __shfl_xor_sync(kFull, best, o);
            const int32_t oi = __shfl_xor_sync(kFull, best_id, o);
            if (better(ov, oi, best, best_id)) {
                best = ov;
                best_id = oi;
            }
            unmasked += __shfl_xor_sync(kFull, unmasked, o);
            bad |= __shfl_xor_sync(kFull, bad, o);
            min_key = min(min_key, __shfl_xor_sync(kFull, min_key, o));
            raw_max = fmaxf(raw_max, __shfl_xor_sync(kFull, raw_max, o));
        }
        if (lane == 0) {
            sh.scratch_r[warp] = raw_max;
            sh.scratch_f[warp] = best;
            sh.scratch_i[warp] = best_id;
            sh.scratch_u[warp] = min_key;
            sh.mail[0].count[warp] = static_cast<uint32_t>(unmasked);
            sh.mail[0].count[kWarps + warp] = static_cast<uint32_t>(bad);
            sh.mail[0].count[kWarpMaxSlot + warp] = logit_order_key(best);  // small top-k's floor (4c)
        }
        // Also orders the row copy and the ring before every later read.
        __syncthreads();
        if (tid == 0) {
            for (int w = 1; w < kWarps; ++w) {
                if (better(sh.scratch_f[w], sh.scratch_i[w], best, best_id)) {
                    best = sh.scratch_f[w];
                    best_id = sh.scratch_i[w];
                }
                min_key = min(min_key, sh.scratch_u[w]);
                raw_max = fmaxf(raw_max, sh.scratch_r[w]);
            }
            int32_t total = 0, any_bad = 0;
            for (int w = 0; w < kWarps; ++w) {
                total += static_cast<int32_t>(sh.mail[0].count[w]);
                any_bad |= static_cast<int32_t>(sh.mail[0].count[kWarps + w]);
            }
            Mail &out = sh.mail[0];
            out.f0 = best;
            out.f1 = raw_max;
            out.i0 = best_id;
            out.i1 = total;
            out.i2 = any_bad;
            out.u0 = min_key;
        }
        team_sync();
        if (tid == 0) {
            float m = -INFINITY, m_raw = -INFINITY;
            int32_t arg = -1, total = 0, any_bad = 0;
            uint32_t kmin = 0xFFFFFFFFu;
            const unsigned n = team_size();
            float fr[kMaxTeam], rr[kMaxTeam];
            int32_t ir[kMaxTeam], tr[kMaxTeam], br[kMaxTeam];
            uint32_t ur[kMaxTeam];
#pragma unroll
            for (unsigned r = 0; r < kMaxTeam; ++r) {
                fr[r] = -INFINITY;
                rr[r] = -INFINITY;
                ir[r] = -1;
                tr[r] = 0;
                br[r] = 0;
                ur[r] = 0xFFFFFFFFu;
                if (r < n) {
                    const Mail *peer = team_peer(&sh.mail[0], r);
                    fr[r] = peer->f0;
                    rr[r] = peer->f1;
                    ir[r] = peer->i0;
                    tr[r] = peer->i1;
                    br[r] = peer->i2;
                    ur[r] = peer->u0;
                }
            }
#pragma unroll
            for (unsigned r = 0; r < kMaxTeam; ++r) {
                if (better(fr[r], ir[r], m, arg)) {
                    m = fr[r];
                    arg = ir[r];
                }
                total += tr[r];
                any_bad |= br[r];
                kmin = min(kmin, ur[r]);
                m_raw = fmaxf(m_raw, rr[r]);
            }
            sh.bc.max_logit = m;
            sh.bc.raw_max = m_raw;
            sh.bc.argmax = arg;
            sh.bc.unmasked = total;
            sh.bc.min_key = kmin;
            sh.bc.status = any_bad ? kSamplingBadLogit
                           : total == 0 ? kSamplingAllMasked
                           : !policy_ok ? kSamplingBadPolicy
                                        : kSamplingOk;
        }
        ++phase;
        __syncthreads();
    }
    // Small top-k (4c) starts from the team's warp maxima: read them now, as
    // the next exchange's barrier frees their mailbox for reuse.
    const int team_warps = static_cast<int>(team_size()) * kWarps;
    const bool small_top_k = policy_ok && pol.top_k > 0 && pol.top_k <= team_warps;
    if (small_top_k && tid < team_warps)
        sh.warp_max_key[tid] =
            team_peer(&sh.mail[0], static_cast<unsigned>(tid / kWarps))->count[kWarpMaxSlot + tid % kWarps];
    RESET_TRACE(3);
    const int32_t status = sh.bc.status;
    const float max_logit = sh.bc.max_logit;
    const int32_t argmax = sh.bc.argmax;
    const int32_t n_unmasked = sh.bc.unmasked;
    const uint32_t team_min_key = sh.bc.min_key;
    int32_t token = -1;
    bool drawn = false;  // token comes from the draw's hits (rank 0's draw_hit), after the final barrier
    double log_sum_exp = 0.0;  // thread 0: log Σ e^(z - raw max) of the raw row, for the token's logprob

    if (status == kSamplingOk) {
        // ---- 2. entropy: FP32 terms, double sums (sampling/entropy.cpp),
        // of the raw logits (reset-algorithm.md): with penalties, read again
        // from global memory (an L2 hit) instead of the penalized row.
        double sum = 0.0, weighted = 0.0;
        auto add_term = [&](float z, float max) {
            const float y = z - max;
            const float e = expf(y);
            if (e == 0.0f) return;  // masked (y = -inf) or underflow: contributes nothing, as on the CPU
            sum += static_cast<double>(e);
            weighted += static_cast<double>(e) * static_cast<double>(y);
        };
        if (penalize) {
            // Strided over the threads: coalesced reads of global memory (a thread's own range would
            // touch a cache line per lane).  Another summation order, as a tree sum already is.
            const float team_raw_max = sh.bc.raw_max;
#pragma unroll 4
            for (int i = tid; i < local_n; i += kThreads) add_term(__ldg(logits + base + i), team_raw_max);
        } else {
#pragma unroll 4
            for (int i = row.begin; i < row.end; ++i) add_term(row.z[i], max_logit);
        }
        sum = block_sum(sum, sh);
        weighted = block_sum(weighted, sh);
        if (tid == 0) {
            sh.mail[phase & 1].d0 = sum;
            sh.mail[phase & 1].d1 = weighted;
        }
        team_sync();
        if (tid == 0) {
            double s = 0.0, wsum = 0.0;
            const unsigned n = team_size();
            double sr[kMaxTeam], wr[kMaxTeam];
#pragma unroll
            for (unsigned r = 0; r < kMaxTeam; ++r) {
                sr[r] = 0.0;
                wr[r] = 0.0;
                if (r < n) {
                    const Mail *peer = team_peer(&sh.mail[phase & 1], r);
                    sr[r] = peer->d0;
                    wr[r] = peer->d1;
                }
            }
#pragma unroll
            for (unsigned r = 0; r < kMaxTeam; ++r) {
                s += sr[r];
                wsum += wr[r];
            }
            log_sum_exp = log(s);
            const double h = log_sum_exp - wsum / s;
            const float entropy = h > 0.0 ? static_cast<float>(h) : 0.0f;

            // ---- 3. the ReSET decision (SequenceSampler::decide_with_stats),
            // computed identically in every CTA of the team; only rank 0
            // writes the state back, after the last exchange.
            rule::StepState s_state = st.step;
            const uint32_t last_flags = delimiter_flags_of(a, st.last_token);
            const uint32_t prev_flags = delimiter_flags_of(a, st.prev_token);
            SamplingSignalsDevice sig = {};
            sig.entropy = entropy;
            sig.boundary = rule::crosses_boundary(st.accepted, (last_flags & kDelimiterDoubleNewline) != 0,
                                                  (last_flags & kDelimiterNewline) != 0,
                                                  (prev_flags & kDelimiterNewline) != 0)
                               ? 1
                               : 0;
            if (sig.boundary) rule::begin_step(s_state);
            sig.step_index = s_state.step_index;
            const float *window = pol.window <= kRingStage ? sh.ring : ring;
            const rule::Decision d = rule::decide(s_state, window, pol.window, entropy,
                                                  pol.kind == RESET_POLICY_RESET, pol.t_high, pol.t_low, pol.tau0);
            sig.global_mean = static_cast<float>(d.global_mean);
            sig.step_entropy = 0.0f;
            sig.threshold = 0.0f;
            sig.uncertain = 0;
            float temperature = 0.0f;
            if (pol.kind == RESET_POLICY_FIXED) {
                temperature = pol.temperature;
            } else if (pol.kind == RESET_POLICY_RESET || pol.kind == RESET_POLICY_ENTROPY) {
                temperature = d.temperature;
                sig.step_entropy = static_cast<float>(d.step_entropy);
                sig.threshold = static_cast<float>(d.threshold);
                sig.uncertain = d.uncertain ? 1 : 0;
            }
            sig.temperature = rule::is_greedy(temperature) ? 0.0f : temperature;
            sig.status = kSamplingOk;
            sh.bc.signals = sig;
            sh.bc.step = s_state;
            sh.bc.entropy = entropy;
            sh.bc.temperature = sig.temperature;
        }
        ++phase;
        __syncthreads();
        const float temperature = sh.bc.temperature;
        RESET_TRACE(4);

        if (temperature == 0.0f) {
            token = argmax;  // greedy ignores the truncation: the argmax survives every filter
        } else {
            const float inv_t = 1.0f / temperature;
            auto weight_of_key = [&](uint32_t key) { return expf((logit_of_order_key(key) - max_logit) * inv_t); };
            const uint32_t max_key = logit_order_key(max_logit);
            const bool k_on = pol.top_k > 0 && pol.top_k < n_unmasked;
            const bool p_on = pol.top_p < 1.0f;
            const bool min_p_on = pol.min_p > 0.0f;
            const float min_p = pol.min_p;
            Cut cut_k{0u, kNoCutId}, cut_p{0u, kNoCutId};
            const int64_t kept_by_k = k_on ? pol.top_k : n_unmasked;
            double total_k = 0.0;       // weight of the top-k survivors (top-p's total)
            bool selected = false;      // top-p's cut came from the value level (gather_bin_members)
            DrawPart draw_part;
            // min-p, the draw's filter besides the cuts (survives below)
            auto drawable = [&](float w) { return !(min_p_on && w < min_p); };
            // Top-p's pre-filter on the float weights: double(w) >= floor iff w >= the least float >= floor.
            float weight_floor_f = 0.0f;
            // Where the selects, tie searches and the draw look: the row,
            // until the candidates of a select fit the list.
            Src src;
            src.z = row.z;
            src.w = row.w;
            src.idx = nullptr;
            src.base = base;
            src.begin = row.begin;
            src.end = row.end;
            src.span = p.per_thread;
            bool listed = false;

            // Every later step only looks at members of the current select
            // with a key >= lo (inside its cut): copy them, in id order, to
            // the list (local index and weight).  Only when the whole team's
            // count fits one CTA's list, so every CTA takes the same branch.
            auto compact = [&](auto member, uint32_t lo) {
                int count = 0;
                for (int i = row.begin; i < row.end; ++i) {
                    const float z = row.z[i];
                    if (z == -INFINITY) continue;
                    const uint32_t key = logit_order_key(z);
                    if (key >= lo && member(i, key, row.w[i])) ++count;
                }
                double list_total = 0.0;
                // Ends with a barrier; the histograms were last read before
                // the previous team barrier, so their space is free.
                int pos = static_cast<int>(block_exclusive_scan(static_cast<double>(count), &list_total, sh));
                for (int i = row.begin; i < row.end && count > 0; ++i) {
                    const float z = row.z[i];
                    if (z == -INFINITY) continue;
                    const uint32_t key = logit_order_key(z);
                    if (key >= lo && member(i, key, row.w[i])) {
                        list_idx[pos] = i;
                        list_w[pos] = row.w[i];
                        ++pos;
                        --count;
                    }
                }
                __syncthreads();
                const int n = static_cast<int>(list_total);
                const int each = (n + kThreads - 1) / kThreads;
                src.w = list_w;
                src.idx = list_idx;
                src.begin = min(tid * each, n);
                src.end = min(src.begin + each, n);
                src.span = each;
                listed = true;
                RESET_TRACE(11);
            };

            // Radix select continuing from r (after `levels_done` levels) over
            // the current source; after a level over the row, the candidates
            // (members from the chosen bin up) move to the list if they fit.
            auto select = [&](auto member, bool load_w, Radix r, bool by_mass, int64_t rank_of, double target,
                              bool need_mass, bool continuing) -> SelectOut {
                for (;;) {
                    if (listed) {
                        list_histogram(
                            src,
                            [&](int pos, unsigned *bin, float *w) {
                                const int i = src.idx[pos];
                                const uint32_t key = logit_order_key(row.z[i]);
                                const float wv = src.w[pos];
                                if (member(i, key, wv)) {
                                    *bin = radix_bin(r, key);
                                    *w = wv;
                                }
                            },
                            need_mass, phase, sh);
                    } else {
                        row_histogram(
                            row, p.per_thread,
                            [&](int i, unsigned *bin, float *w) {
                                const float z = row.z[i];
                                if (z == -INFINITY) return;
                                const uint32_t key = logit_order_key(z);
                                const unsigned bn = radix_bin(r, key);
                                if (bn >= static_cast<unsigned>(kBins)) return;
                                const float wv = load_w || need_mass ? row.w[i] : 0.0f;
                                if (!member(i, key, wv)) return;
                                *bin = bn;
                                *w = wv;
                            },
                            need_mass, warp_count, warp_mass, phase, sh);
                    }
                    SelectOut res = team_histogram_pick(r, by_mass, rank_of, target, continuing, phase, sh);
                    continuing = true;
                    if (!res.found) return res;
                    const int64_t candidates = res.count_above + static_cast<int64_t>(res.ties);
                    if (radix_advance(r, res)) return res;
                    if (!listed && candidates <= kListCapacity) compact(member, r.lo);
                }
            };

            // The weights pass when no histogram rides on it: w for every
            // entry, and this thread's sum and last id over what the draw
            // walks (every unmasked token, or those min-p keeps), in id
            // order as team_find_first's walk adds them.
            auto weights_pass = [&](bool min_p_filters, double *sum, int32_t *last) {
#pragma unroll 4
                for (int i = row.begin; i < row.end; ++i) {
                    const float z = row.z[i];
                    float w = 0.0f;
                    if (z != -INFINITY) {
                        w = expf((z - max_logit) * inv_t);
                        if (!(min_p_filters && w < min_p)) {
                            *sum += static_cast<double>(w);
                            *last = base + i;
                        }
                    }
                    row.w[i] = w;  // read back only by this thread (or after a barrier)
                }
            };
            // ---- 4a. top-p, rejection-first (sampling/truncation.h,
            // draw_truncated): when top-k cuts nothing, draw first with u1
            // from the untruncated softmax, then test that one token: it is
            // in the nucleus iff its weight passes top-p's floor (and min-p)
            // and the mass ranked before it is below top_p·total.  That is
            // one weights pass, one draw and one mass pass, three team
            // exchanges; finding the nucleus' cut (4b-5) takes several
            // passes and exchanges and several times the code.  Only when
            // the token is out (probability <= 1 - top_p) does the kernel
            // go on to find the cut and draw again, with u2.
            const uint64_t draw_step = static_cast<uint64_t>(st.accepted);
            double u = philox::uniform(pol.seed, st.sequence, draw_step);
            bool first_draw_kept = false, first_draw_rejected = false;
            double first_total = 0.0;  // the untruncated total, top-p's total too when rejected
            if (rule::draws_rejection_first(pol.top_k, pol.top_p, n_unmasked)) {
                double sum_all = 0.0;
                int32_t last_all = -1;
                weights_pass(false, &sum_all, &last_all);
                auto unmasked_member = [](int, uint32_t, float) { return true; };
                const int32_t first =
                    team_find_first(src, unmasked_member, false, u, 0.0, &sum_all, last_all, phase, sh);
                first_total = sh.bc.value;
                RESET_TRACE(30);
                // Its logit, from the CTA that holds it (the row is split at
                // multiples of `slice`).
                float z_first;
                if (p.shared_row) {
                    const unsigned owner = static_cast<unsigned>(first / slice);
                    z_first = team_peer(const_cast<float *>(row.z), owner)[first - static_cast<int32_t>(owner) * slice];
                } else {
                    z_first = logits[first];
                }
                const float w_first = expf((z_first - max_logit) * inv_t);
                // double(w) >= the floor iff w >= floor_f
                const float floor_f = __double2float_ru(rule::top_p_weight_floor(pol.top_p, first_total, n_unmasked));
                if (w_first >= floor_f && drawable(w_first)) {
                    // The mass ranked before it: larger logits, and equal
                    // ones with lower ids (every one of them is heavier than
                    // the floor too, so the CPU's nucleus loop adds them all).
                    const uint32_t key_first = logit_order_key(z_first);
                    double before = 0.0;
#pragma unroll 4
                    for (int i = row.begin; i < row.end; ++i) {
                        const float z = row.z[i];
                        if (z == -INFINITY) continue;
                        const uint32_t key = logit_order_key(z);
                        if (key > key_first || (key == key_first && base + i < first))
                            before += static_cast<double>(row.w[i]);
                    }
                    double mass_before = 0.0, unused_prefix = 0.0;
                    team_sum(block_sum(before, sh), phase, sh, &mass_before, &unused_prefix);
                    first_draw_kept = mass_before < static_cast<double>(pol.top_p) * first_total;
                }
                RESET_TRACE(31);
                if (first_draw_kept) {
                    token = first;
                } else {
                    first_draw_rejected = true;
                    u = philox::second_uniform(pol.seed, st.sequence, draw_step);
                }
            }

            // ---- 4c. small top-k (k <= the team's warp count): the k-th
            // largest of the warp maxima is at most the k-th largest logit
            // (k warps each hold a token at least that large), so every
            // top-k token is among the tokens at or above it: on anything
            // but a heavily tied row a few dozen, not the 19 µs first radix
            // level over the row that a flat row's keys (all in a few bins)
            // cost.  Rank 0 gathers them, ranks them exactly, and runs top-p,
            // min-p and the draw on that list alone.  More candidates than
            // threads: the radix path (4b-6), as before.
            bool small_top_k_done = false;
            if (k_on && small_top_k) {
                if (tid < team_warps) {
                    const uint32_t key = sh.warp_max_key[tid];
                    int greater = 0, equal_before = 0;
                    for (int j = 0; j < team_warps; ++j) {
                        const uint32_t other = sh.warp_max_key[j];
                        greater += other > key ? 1 : 0;
                        equal_before += other == key && j < tid ? 1 : 0;
                    }
                    if (greater + equal_before == pol.top_k - 1) sh.bc.small_k_floor = key;  // one thread
                }
                __syncthreads();
                const uint32_t floor_key = sh.bc.small_k_floor;
                Gathered mine = gathered_list(dynamic_shared, p.gather_capacity, 0);
                auto candidate = [&](float z) { return z != -INFINITY && logit_order_key(z) >= floor_key; };
                int count = 0;
                for (int i = row.begin; i < row.end; ++i) count += candidate(row.z[i]) ? 1 : 0;
                double local_total = 0.0;
                int pos = static_cast<int>(block_exclusive_scan(static_cast<double>(count), &local_total, sh));
                const int listed = static_cast<int>(local_total);
                if (listed <= kThreads) {  // else the team total is too and no one reads the list
                    for (int i = row.begin; i < row.end && count > 0; ++i) {
                        const float z = row.z[i];
                        if (!candidate(z)) continue;
                        mine.key[pos] = logit_order_key(z);
                        mine.id[pos] = base + i;
                        ++pos;
                        --count;
                    }
                }
                if (tid == 0) sh.mail[phase & 1].i0 = listed;
                RESET_TRACE(32);
                team_sync();  // the lists and their counts are published
                int offset[kMaxTeam + 1];
                const int candidates = team_list_offsets(sh, sh.mail[phase & 1], offset);
                ++phase;
                RESET_TRACE(33);
                if (candidates <= kThreads) {  // the same in every CTA
                    small_top_k_done = true;
                    if (rank == 0) token = small_top_k_token(mine, offset, candidates, pol, u, max_logit, inv_t,
                                                             dynamic_shared, p.gather_capacity, sh);
                }
            }

            if (!first_draw_kept && !small_top_k_done) {
                // ---- 4b. weights of softmax(z / T), unnormalised (max weight 1),
                // in one pass with what needs them first: top-k's first radix
                // level, else the sums for top-p's total or for the draw.
                double local_sum = 0.0;
                int32_t local_last = -1;
                auto any = [](int, uint32_t, float) { return true; };
                SelectOut sel_k = {};
                Radix radix_k = radix_start(team_min_key, max_key);
                const ValueBins value_level = value_bins(logit_of_order_key(team_min_key), max_logit);
                bool value_level_built = false;
                if (k_on) {
                    row_histogram(
                        row, p.per_thread,
                        [&](int i, unsigned *bin, float *w) {
                            const float z = row.z[i];
                            float wv = 0.0f;
                            if (z != -INFINITY) {
                                wv = expf((z - max_logit) * inv_t);
                                *bin = radix_bin(radix_k, logit_order_key(z));
                                *w = wv;
                            }
                            row.w[i] = wv;  // read back only by this thread (or after a barrier)
                        },
                        p_on, warp_count, warp_mass, phase, sh);
                    sel_k = team_histogram_pick(radix_k, false, pol.top_k, 0.0, false, phase, sh);
                    const int64_t candidates = sel_k.count_above + static_cast<int64_t>(sel_k.ties);
                    if (sel_k.found && !radix_advance(radix_k, sel_k)) {
                        if (candidates <= kListCapacity) compact(any, radix_k.lo);
                        sel_k = select(any, false, radix_k, false, pol.top_k, 0.0, p_on, true);
                    }
                } else {
                    // Top-p alone: the weights pass also builds its first level,
                    // binned by value (see ValueBins), and that level's exchange
                    // carries the weight total.  One CTA-wide histogram with
                    // native 32-bit shared atomics (64-bit adds are
                    // compare-and-swap loops): exact counts, and masses rounded
                    // to value_mass_bits fraction bits, which only choose the bin;
                    // gather_bin_members recomputes what the cut needs exactly.
                    // (A separate loop from the one without top-p: one loop for
                    // both measured 2-3 µs slower without truncation.)
                    const int value_mass_bits = min(20, max(0, 31 - (32 - __clz(max(local_n, 1)))));
                    if (p_on) {
                        const float value_mass_scale = static_cast<float>(1u << value_mass_bits);
                        for (int j = tid; j < kBins; j += kThreads) {
                            sh.bin_count[j] = 0u;
                            sh.value_mass[j] = 0u;
                        }
                        __syncthreads();
#pragma unroll 4
                        for (int i = row.begin; i < row.end; ++i) {
                            const float z = row.z[i];
                            if (z == -INFINITY) {
                                row.w[i] = 0.0f;
                                continue;
                            }
                            const float w = expf((z - max_logit) * inv_t);
                            row.w[i] = w;  // read back only by this thread (or after a barrier)
                            local_sum += static_cast<double>(w);  // in id order, as team_sum's operand
                            const unsigned bin = value_level.of(z);
                            atomicAdd(&sh.bin_count[bin], 1u);
                            atomicAdd(&sh.value_mass[bin], __float2uint_rn(w * value_mass_scale));
                        }
                    } else {
                        // The draw's members when nothing else cuts.
                        weights_pass(min_p_on, &local_sum, &local_last);
                    }
                    if (p_on) {
                        const double cta_sum = block_sum(local_sum, sh);  // its barriers also publish the bins
                        RESET_TRACE(6);
                        Mail &out = sh.mail[phase & 1];
                        for (int j = tid; j < kBins; j += kThreads) {
                            out.count[j] = sh.bin_count[j];
                            // In the unit of every other level (2^-45), which pick_bin reads.
                            out.mass[j] = static_cast<unsigned long long>(sh.value_mass[j]) << (45 - value_mass_bits);
                        }
                        if (tid == 0) out.d0 = cta_sum;
                        team_histogram_gather(phase, sh);  // starts with the team barrier: the local bins are copied
                        team_sum_after_sync(phase, sh);    // the weight total, as team_sum adds it
                        ++phase;
                        __syncthreads();
                        // After a rejected first draw, the total it was tested
                        // against (the same sum as the CPU's, in another order).
                        total_k = first_draw_rejected ? first_total : sh.bc.value;
                        value_level_built = true;
                    }
                }

                RESET_TRACE(5);
                // ---- 5. truncation: each filter is a cut in the order ----
                if (k_on && sel_k.found) {
                    const int64_t take = pol.top_k - sel_k.count_above;  // ties at the cut, lowest ids first
                    cut_k.key = sel_k.key;
                    if (take < static_cast<int64_t>(sel_k.ties)) {
                        const uint32_t tie_key = sel_k.key;
                        auto at_cut = [=](int, uint32_t key, float) { return key == tie_key; };
                        cut_k.id = team_find_first(src, at_cut, true, 0.0, static_cast<double>(take - 1), nullptr, -1,
                                                   phase, sh);
                    }
                    total_k = sel_k.mass_above +
                              static_cast<double>(take) * static_cast<double>(weight_of_key(sel_k.key));
                } else if (p_on && !value_level_built) {
                    double unused_prefix = 0.0;
                    team_sum(block_sum(local_sum, sh), phase, sh, &total_k, &unused_prefix);
                }
                if (p_on) {
                    // truncate(): tokens lighter than (1-p)·total/count cannot be
                    // in the nucleus; the CPU drops them before its sort, so the
                    // nucleus is searched among the others.
                    const double weight_floor = rule::top_p_weight_floor(pol.top_p, total_k, kept_by_k);
                    weight_floor_f = __double2float_ru(weight_floor);
                    const double target = static_cast<double>(pol.top_p) * total_k;
                    auto heavy = [&](int i, uint32_t key, float w) {
                        return inside(cut_k, key, base + i) && w >= weight_floor_f;
                    };
                    SelectOut s = {};
                    Gathered nucleus_bin = {};
                    if (value_level_built) {
                        const SelectOut v = pick_bin(radix_start(0u, 0u), true, 0, target, false, sh);
                        if (v.found && v.ties <= static_cast<uint32_t>(p.gather_capacity)) {
                            nucleus_bin = gather_bin_members(row, value_level, v.key, heavy, drawable, dynamic_shared,
                                                             p.gather_capacity, draw_part, phase, sh);
                            if (nucleus_bin.n > 0) s = select_in_gathered(nucleus_bin, target, sh);
                            selected = s.found != 0;
                            if (!selected) team_sync();  // no peer reads this CTA's list any more: the levels reuse it
                        }
                    }
                    // Every member is inside the top-k cut, so no key below it.
                    const uint32_t lo = k_on ? cut_k.key : team_min_key;
                    if (!selected) s = select(heavy, true, radix_start(lo, max_key), true, 0, target, true, false);
                    if (s.found) {
                        // The CPU adds the tied tokens one at a time, lowest id
                        // first, until the mass reaches the target.
                        const double wv = static_cast<double>(weight_of_key(s.key));
                        int64_t take = 1;
                        if (s.ties > 1u && wv > 0.0) {
                            const double need = (target - s.mass_above) / wv;
                            take = need <= 1.0 ? 1 : static_cast<int64_t>(ceil(need));
                            if (take > static_cast<int64_t>(s.ties)) take = s.ties;
                            while (take > 1 && s.mass_above + static_cast<double>(take - 1) * wv >= target) --take;
                            while (take < static_cast<int64_t>(s.ties) &&
                                   s.mass_above + static_cast<double>(take) * wv < target)
                                ++take;
                        }
                        cut_p.key = s.key;
                        if (take < static_cast<int64_t>(s.ties) && selected) {
                            cut_p.id = find_in_gathered(nucleus_bin, s.key, take, sh);
                        } else if (take < static_cast<int64_t>(s.ties)) {
                            const uint32_t tie_key = s.key;
                            auto at_cut = [&](int i, uint32_t key, float w) {
                                return key == tie_key && heavy(i, key, w);
                            };
                            cut_p.id = team_find_first(src, at_cut, true, 0.0, static_cast<double>(take - 1), nullptr,
                                                       -1, phase, sh);
                        }
                    }
                }

                // ---- 6. the draw over the survivors in id order ----
                auto survives = [&](int i, uint32_t key, float w) {
                    const int32_t id = base + i;
                    if (!inside(cut_k, key, id)) return false;
                    if (p_on && !(w >= weight_floor_f && inside(cut_p, key, id))) return false;
                    return !(min_p_on && w < min_p);
                };
                const bool sums_known = !k_on && !p_on;  // the weights pass summed the survivors over the row
                if (selected) {  // the list pass summed them (k_on is false: top-p alone)
                    local_sum = draw_sum_in_gathered(
                        draw_part, dynamic_shared, p.gather_capacity,
                        [&](uint32_t key, int32_t id, float w) { return inside(cut_p, key, id) && drawable(w); },
                        &local_last);
                }
                team_find_first(src, survives, false, u, 0.0, sums_known || selected ? &local_sum : nullptr, local_last,
                                phase, sh, true);
                drawn = true;
            }  // !first_draw_kept
        }
    }

    RESET_TRACE(17);
    // Peers may still read this CTA's mailboxes until everyone is here, and
    // the draw's hits have reached rank 0.
    team_sync();
    RESET_TRACE(18);
    // The first hit in id order, else the last survivor (the CPU's draw()).
    if (drawn && rank == 0) token = sh.draw_hit != kNoCutId ? sh.draw_hit : sh.bc.last_member;
    if (rank == 0 && tid == 0) {
        if (status == kSamplingOk) {
            // ---- 7. accept: spec step 7 and the bookkeeping of accept() ----
            SamplingSequenceState next = st;
            next.step = sh.bc.step;
            rule::observe(next.step, ring, pol.window, sh.bc.entropy);
            next.accepted = st.accepted + 1;
            next.prev_token = st.last_token;
            next.last_token = token;
            a.states[b] = next;
            // Counted whatever the policy, as SequenceSampler::accept does, so penalties switched on later
            // see the whole generation.  After the team's last barrier: every CTA has read the counts.
            if (a.counts && token < a.vocab) a.counts[static_cast<int64_t>(b) * a.vocab + token] += 1;
            a.tokens[b] = token;
            if (a.signals) {
                SamplingSignalsDevice sig = sh.bc.signals;
                // Of the raw row, as H_t (rules/logprob.h): one more load, from L2.
                sig.logprob = rule::raw_logprob(__ldg(logits + token), sh.bc.raw_max, log_sum_exp);
                sig.raw_max = sh.bc.raw_max;
                sig.log_sum_exp = log_sum_exp;
                a.signals[b] = sig;
            }
        } else {
            a.tokens[b] = -1;
            if (a.signals) {
                SamplingSignalsDevice sig = {};
                sig.status = status;
                a.signals[b] = sig;
            }
        }
    }
}

struct DeviceInfo {
    bool clusters = false;
    int shared_optin = 0;
    int static_shared = 0;
};

constexpr int kMaxDevices = 64;

// Read once per device: a launch under stream capture then asks the runtime
// nothing but the current device.
DeviceInfo device_info(int device) {
    static std::mutex mutex;
    static DeviceInfo known[kMaxDevices];
    static bool filled[kMaxDevices] = {};
    std::lock_guard<std::mutex> lock(mutex);
    if (device >= 0 && device < kMaxDevices && filled[device]) return known[device];
    DeviceInfo info;
    int major = 0;
    RESET_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    RESET_CUDA_CHECK(cudaDeviceGetAttribute(&info.shared_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    cudaFuncAttributes attributes;
    RESET_CUDA_CHECK(cudaFuncGetAttributes(&attributes, sampling_kernel));
    // The binary that runs must be the cluster build: PTX of an older target
    // JIT-compiled on a new GPU has the one-CTA code path.
    info.clusters = major >= 9 && attributes.binaryVersion >= 90;
    info.static_shared = static_cast<int>(attributes.sharedSizeBytes);
    if (device >= 0 && device < kMaxDevices) {
        known[device] = info;
        filled[device] = true;
    }
    return info;
}

// Raise the kernel's dynamic shared-memory limit to `bytes` (once per device
// and size), and say how many clusters of `team` CTAs of that size can be
// resident at once (0: none; a GPC must hold `team` such CTAs).  A team of one
// CTA always counts as fitting (returns 1).
int prepare_launch(int device, int team, size_t bytes) {
    struct Known {
        int device, team;
        size_t bytes;
        int clusters;
    };
    static std::mutex mutex;
    static std::vector<Known> known;
    static int raised[kMaxDevices] = {};
    std::lock_guard<std::mutex> lock(mutex);
    for (const Known &k : known)
        if (k.device == device && k.team == team && k.bytes == bytes) return k.clusters;
    const int wanted = static_cast<int>(bytes);
    if (device < 0 || device >= kMaxDevices || raised[device] < wanted) {
        RESET_CUDA_CHECK(cudaFuncSetAttribute(sampling_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, wanted));
        if (device >= 0 && device < kMaxDevices) raised[device] = wanted;
    }
    int clusters = 1;
    if (team > 1) {
        if (team > kPortableTeam &&
            cudaFuncSetAttribute(sampling_kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) != cudaSuccess) {
            (void)cudaGetLastError();
            known.push_back({device, team, bytes, 0});
            return 0;
        }
        cudaLaunchConfig_t config = {};
        config.gridDim = dim3(static_cast<unsigned>(team), 1u, 1u);
        config.blockDim = dim3(kThreads, 1u, 1u);
        config.dynamicSmemBytes = bytes;
        cudaLaunchAttribute attribute[1];
        attribute[0].id = cudaLaunchAttributeClusterDimension;
        attribute[0].val.clusterDim.x = static_cast<unsigned>(team);
        attribute[0].val.clusterDim.y = 1;
        attribute[0].val.clusterDim.z = 1;
        config.attrs = attribute;
        config.numAttrs = 1;
        if (cudaOccupancyMaxActiveClusters(&clusters, sampling_kernel, &config) != cudaSuccess) clusters = 0;
        (void)cudaGetLastError();  // a refused query leaves no sticky error behind
    }
    known.push_back({device, team, bytes, clusters});
    return clusters;
}

}  // namespace

size_t sampling_workspace_bytes(int batch, int32_t vocab) {
    // Weights, then the penalized rows (Row::z when the row is not in shared memory).
    return 2 * static_cast<size_t>(batch > 0 ? batch : 0) * static_cast<size_t>(vocab > 0 ? vocab : 0) *
           sizeof(float);
}

SamplingPlan sampling_plan(const SamplingArgs &a) {
    if (a.vocab < 1) fail(RESET_ERR_INVALID_ARGUMENT, "sample_tokens: vocab ", a.vocab, " (must be >= 1)");
    if (a.team < 0 || a.team > kMaxTeam)
        fail(RESET_ERR_INVALID_ARGUMENT, "sample_tokens: team ", a.team, " (0 = automatic, or 1..", kMaxTeam, ")");
    int device = 0;
    RESET_CUDA_CHECK(cudaGetDevice(&device));
    const DeviceInfo info = device_info(device);
    SamplingPlan plan;
    const bool automatic = a.team == 0;
    plan.team = !automatic ? a.team : (info.clusters && a.vocab >= kAutoTeamVocab ? kMaxTeam : 1);
    if (plan.team > 1 && !info.clusters)
        fail(RESET_ERR_INVALID_ARGUMENT, "sample_tokens: team ", plan.team,
             " needs thread-block clusters (sm_90 or later)");
    const size_t histogram_bytes = static_cast<size_t>(kHistogramBytes);  // also the candidate list
    const size_t budget = static_cast<size_t>(info.shared_optin - info.static_shared);
    if (histogram_bytes > budget)
        fail(RESET_ERR_UNSUPPORTED, "sample_tokens: the device has ", info.shared_optin,
             " bytes of shared memory per block; the sampler needs ", histogram_bytes + info.static_shared);
    // The gathered lists' capacity: the largest that fits beside `row` bytes of row
    // (see kMaxGatherCapacity), in the space before the row.
    auto fit_gather = [&](size_t row) {
        plan.gather_capacity = kMinGatherCapacity;
        for (int c = kMaxGatherCapacity; c > kMinGatherCapacity; c -= kThreads) {
            if (static_cast<size_t>(gather_region_bytes(c)) + row <= budget) {
                plan.gather_capacity = c;
                break;
            }
        }
        plan.shared_bytes = static_cast<size_t>(gather_region_bytes(plan.gather_capacity)) + row;
    };
    auto lay_out = [&] {  // per_thread and the shared memory of plan.team CTAs
        const int64_t per_cta = (static_cast<int64_t>(a.vocab) + plan.team - 1) / plan.team;
        int64_t per_thread = (per_cta + kThreads - 1) / kThreads;
        per_thread |= 1;  // odd: a warp's strided shared-memory reads hit 32 different banks
        plan.per_thread = static_cast<int>(per_thread);
        const size_t row_bytes = 2u * static_cast<size_t>(kThreads) * static_cast<size_t>(per_thread) * sizeof(float);
        plan.shared_row = !a.force_global_memory && histogram_bytes + row_bytes <= budget;
        fit_gather(plan.shared_row ? row_bytes : 0u);
    };
    if (automatic && plan.team > kPortableTeam) {
        // The large team only where every sequence of the batch gets its own
        // cluster at once (a GPC must have kMaxTeam free SMs), with the row in
        // shared memory; else the portable size.
        lay_out();
        if (plan.shared_row && prepare_launch(device, plan.team, plan.shared_bytes) >= a.batch) return plan;
        plan.team = kPortableTeam;
    }
    for (;;) {
        lay_out();
        if (prepare_launch(device, plan.team, plan.shared_bytes) > 0) return plan;
        // The cluster cannot be resident: first keep the row in global
        // memory (smaller CTAs), then, for the automatic choice, one CTA.
        if (plan.shared_row) {
            plan.shared_row = false;
            fit_gather(0u);
            if (prepare_launch(device, plan.team, plan.shared_bytes) > 0) return plan;
            if (!automatic) break;
            plan.team = 1;
            continue;
        }
        if (!automatic || plan.team == 1) break;
        plan.team = 1;
    }
    fail(RESET_ERR_UNSUPPORTED, "sample_tokens: a cluster of ", plan.team,
         " CTAs of the sampler cannot be resident on this device");
}

void sample_tokens(const SamplingArgs &a, cudaStream_t stream) {
    if (a.batch < 1 || a.batch > 8)
        fail(RESET_ERR_INVALID_ARGUMENT, "sample_tokens: batch ", a.batch, " (must be 1..8)");
    if (a.ld_logits < a.vocab)
        fail(RESET_ERR_INVALID_ARGUMENT, "sample_tokens: ld_logits ", a.ld_logits, " < vocab ", a.vocab);
    if (a.ring_capacity < 1)
        fail(RESET_ERR_INVALID_ARGUMENT, "sample_tokens: ring_capacity ", a.ring_capacity, " (must be >= 1)");
    require(a.logits, "sample_tokens: logits");
    require(a.policies, "sample_tokens: policies");
    require(a.states, "sample_tokens: states");
    require(a.rings, "sample_tokens: rings");
    require(a.workspace, "sample_tokens: workspace");
    require(a.tokens, "sample_tokens: tokens");
    const SamplingPlan plan = sampling_plan(a);
    KernelParams params;
    params.args = a;
    params.per_thread = plan.per_thread;
    params.shared_row = plan.shared_row ? 1 : 0;
    params.gather_capacity = plan.gather_capacity;
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(static_cast<unsigned>(plan.team), static_cast<unsigned>(a.batch), 1u);
    config.blockDim = dim3(kThreads, 1u, 1u);
    config.dynamicSmemBytes = plan.shared_bytes;
    config.stream = stream;
    cudaLaunchAttribute attribute[2];
    unsigned attributes = 0;
    if (plan.team > 1) {
        attribute[attributes].id = cudaLaunchAttributeClusterDimension;
        attribute[attributes].val.clusterDim.x = static_cast<unsigned>(plan.team);
        attribute[attributes].val.clusterDim.y = 1;
        attribute[attributes].val.clusterDim.z = 1;
        ++attributes;
    }
    attributes = cuda::append_dependent_launch(attribute, attributes);
    config.attrs = attribute;
    config.numAttrs = attributes;
    RESET_CUDA_CHECK(cudaLaunchKernelEx(&config, sampling_kernel, params));
}

#ifdef RESET_SAMPLING_TRACE
// Debug only: the (label, ns) pairs of the launches since the last clear.
int sampling_trace_read(unsigned long long *host, int max_pairs) {
    int n = 0;
    if (cudaMemcpyFromSymbol(&n, g_sampling_trace_n, sizeof n) != cudaSuccess) return -1;
    n = n < max_pairs ? n : max_pairs;
    if (n > 0 && cudaMemcpyFromSymbol(host, g_sampling_trace, sizeof(unsigned long long) * 2 * n) != cudaSuccess)
        return -1;
    return n;
}
void sampling_trace_clear() {
    const int zero = 0;
    cudaMemcpyToSymbol(g_sampling_trace_n, &zero, sizeof zero);
}
#endif

}  // namespace reset
