// sampling.cu — the on-device sampler: one launch, one thread-block cluster
// (a "team" of up to 8 CTAs) per sequence.
//
// Why a cluster.  A 152k-entry row is 608 KB; one CTA streaming it several
// times would take tens of microseconds, and the sampler must cost well under
// 1% of a ~2 ms decode step.  A team of 8 CTAs splits the row (76 KB each,
// kept with its weights in shared memory) and exchanges partial results
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
//      a token survives when it is inside every cut;
//   6. the draw: Philox keyed (seed, sequence, accepted) as on the CPU, the
//      first survivor in id order whose running weight sum exceeds u·total;
//   7. accept: spec step 7 (observe) and the accepted-token bookkeeping.
#include "kernels/sampling.h"

#include <cooperative_groups.h>

#include <climits>
#include <cmath>
#include <mutex>
#include <vector>

#include "kernels/cuda_common.cuh"
#include "reset.h"
#include "rules/philox.h"
#include "rules/reset_rule.h"

namespace reset {
namespace {

namespace cg = cooperative_groups;

constexpr int kThreads = 512;
constexpr int kWarps = kThreads / 32;
constexpr int kBins = 256;           // radix digit of 8 bits
constexpr int kMaxTeam = 8;          // the portable cluster size
constexpr int kRingStage = 1024;
constexpr int kLoadBatch = 20;     // row entries each thread loads at once (39 per thread at vocab 152k)     // windows up to this are staged in shared memory for the mean
constexpr int32_t kAutoTeamVocab = 16384;  // below this one CTA per sequence is enough
constexpr int32_t kNoCutId = INT_MAX;
constexpr unsigned kFull = 0xFFFFFFFFu;

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define RESET_SAMPLING_CLUSTERS 1
#else
#define RESET_SAMPLING_CLUSTERS 0
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

// Monotone map of a logit to an unsigned key: a > b as floats iff key(a) >
// key(b).  -0 is mapped like +0 because the CPU's comparator sees them equal
// (a tie, broken by id).
__device__ __forceinline__ uint32_t order_key(float z) {
    const uint32_t u = __float_as_uint(z == 0.0f ? 0.0f : z);
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}
__device__ __forceinline__ float key_logit(uint32_t key) {
    return __uint_as_float((key & 0x80000000u) ? (key & 0x7FFFFFFFu) : ~key);
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
    float f0;
    int32_t i0, i1, i2;
    uint32_t u0;
    uint32_t count[kBins];
    double mass[kBins];
};

struct SelectOut {
    int32_t found;
    uint32_t key;          // the cut's logit key
    uint32_t ties;         // members with exactly that key
    int64_t count_above;   // members with a larger key
    double mass_above;     // their weight
};

// Values every thread of the CTA needs, set by one thread before a barrier.
struct Broadcast {
    int32_t status;
    float max_logit;
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
    SelectOut select;
};

struct StaticShared {
    Mail mail[2];  // double-buffered: exchange k+2 reuses k's buffer after exchange k+1's barrier
    uint32_t bin_count[kBins];
    double bin_mass[kBins];
    float ring[kRingStage];
    double scratch_d[kWarps];
    int32_t scratch_i[kWarps];
    float scratch_f[kWarps];
    uint32_t scratch_u[kWarps];
    float lane_weight[kWarps][32];  // a warp's weights, for its leaders' group sums
    Broadcast bc;
};

struct KernelParams {
    SamplingArgs args;
    int32_t per_thread;  // E: each thread owns E consecutive ids (odd, so smem reads are conflict-free)
    int32_t shared_row;
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

__device__ int32_t block_max_i(int32_t v, StaticShared &sh) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = max(v, __shfl_xor_sync(kFull, v, o));
    if (lane == 0) sh.scratch_i[warp] = v;
    __syncthreads();
    int32_t r = sh.scratch_i[0];
    for (int w = 1; w < kWarps; ++w) r = max(r, sh.scratch_i[w]);
    __syncthreads();
    return r;
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

// Exclusive prefix of v over the threads in order, and the block's total.
__device__ double block_exclusive_scan(double v, double *total, StaticShared &sh) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    double x = v;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        const double y = __shfl_up_sync(kFull, x, o);
        if (lane >= o) x += y;
    }
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

// Sum of one double per CTA over the team, in rank order (identical in every
// CTA), and the exclusive prefix of this CTA.
__device__ void team_sum(double cta_value, int &phase, StaticShared &sh, double *total, double *prefix) {
    Mail &out = sh.mail[phase & 1];
    if (threadIdx.x == 0) out.d0 = cta_value;
    team_sync();
    if (threadIdx.x == 0) {
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
    ++phase;
    __syncthreads();
    *total = sh.bc.value;
    *prefix = sh.bc.prefix;
}

// Radix select over the members' logit keys in [lo, hi], 8 bits per level.
// by_mass = false: the key of the rank-th member in the order (rank >= 1);
// by_mass = true: the key at which the running weight (heaviest first)
// reaches target.  Returns that key, the members above it (count, weight) and
// the members at it.  need_mass accumulates weights in count mode too.
template <typename Member>
__device__ SelectOut team_select(const Row &row, int per_thread, Member member, uint32_t lo, uint32_t hi, bool by_mass,
                                 int64_t rank, double target, bool need_mass, double *warp_mass,
                                 uint32_t *warp_count, int &phase, StaticShared &sh) {
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const unsigned span_bits = hi > lo ? 32u - static_cast<unsigned>(__clz(static_cast<int>(hi - lo))) : 0u;
    int shift = span_bits > 8 ? static_cast<int>(span_bits) - 8 : 0;
    int64_t count_above = 0;
    double mass_above = 0.0;
    double *my_mass = warp_mass + warp * kBins;
    uint32_t *my_count = warp_count + warp * kBins;
    float *lane_weight = sh.lane_weight[warp];
    for (;;) {
        // One private histogram per warp: whole-CTA histograms serialise
        // when a flat distribution sends most entries to a few bins.
        for (int j = lane; j < kBins; j += 32) {
            my_count[j] = 0u;
            if (need_mass) my_mass[j] = 0.0;
        }
        __syncwarp();
        // Lanes that hit the same bin are grouped (match_any) and the lowest
        // lane adds the group, in lane order: no atomics (a flat row sends
        // most lanes to one bin, where atomics would serialise, and double
        // atomics are CAS loops), and the sums are the same on every run.
        for (int j = 0; j < per_thread; ++j) {  // warp-uniform trip count
            const int i = row.begin + j;
            unsigned bin = kBins;  // not a member
            float w = 0.0f;
            if (i < row.end) {
                const float z = row.z[i];
                if (z != -INFINITY) {
                    const uint32_t key = order_key(z);
                    if (key >= lo && key <= hi && member(i, key)) {
                        bin = (key - lo) >> shift;
                        if (need_mass) w = row.w[i];
                    }
                }
            }
            const unsigned group = __match_any_sync(kFull, bin);
            if (group == kFull) {
                // The whole warp in one bin (common on the first level).
                double m = static_cast<double>(w);
                if (need_mass) {
#pragma unroll
                    for (int o = 16; o > 0; o >>= 1) m += __shfl_xor_sync(kFull, m, o);
                }
                if (lane == 0 && bin < kBins) {
                    my_count[bin] += 32u;
                    if (need_mass) my_mass[bin] += m;
                }
            } else {
                if (need_mass) {
                    lane_weight[lane] = w;
                    __syncwarp();
                }
                if (bin < kBins && lane == __ffs(group) - 1) {
                    my_count[bin] += static_cast<uint32_t>(__popc(group));
                    if (need_mass) {
                        double m = 0.0;
                        for (unsigned rest = group; rest != 0u; rest &= rest - 1u)
                            m += static_cast<double>(lane_weight[__ffs(rest) - 1]);
                        my_mass[bin] += m;
                    }
                }
            }
            // Orders this iteration's histogram updates and scratch reads
            // before the next iteration's (lanes of one warp).
            __syncwarp();
        }
        __syncthreads();
        Mail &out = sh.mail[phase & 1];
        for (int j = tid; j < kBins; j += kThreads) {
            uint32_t c = 0;
            double m = 0.0;
            for (int w = 0; w < kWarps; ++w) {
                c += warp_count[w * kBins + j];
                if (need_mass) m += warp_mass[w * kBins + j];
            }
            out.count[j] = c;
            out.mass[j] = m;
        }
        team_sync();
        for (int j = tid; j < kBins; j += kThreads) {
            // All remote loads first (one DSMEM round trip), then the sums in rank order.
            const unsigned n = team_size();
            uint32_t cr[kMaxTeam];
            double mr[kMaxTeam];
#pragma unroll
            for (unsigned r = 0; r < kMaxTeam; ++r) {
                cr[r] = 0u;
                mr[r] = 0.0;
                if (r < n) {
                    const Mail *peer = team_peer(&sh.mail[phase & 1], r);
                    cr[r] = peer->count[j];
                    mr[r] = peer->mass[j];
                }
            }
            uint32_t c = 0;
            double m = 0.0;
#pragma unroll
            for (unsigned r = 0; r < kMaxTeam; ++r) {
                c += cr[r];
                m += mr[r];
            }
            sh.bin_count[j] = c;
            sh.bin_mass[j] = m;
        }
        ++phase;
        __syncthreads();
        if (warp == 0) {
            // Lane l holds bins 255-8l .. 248-8l (heaviest keys first); a
            // scan over lanes finds the lane where the running total gets
            // there, and that lane walks its 8 bins.
            uint32_t c[8];
            double m[8];
            int64_t lane_count = 0;
            double lane_mass = 0.0;
#pragma unroll
            for (int j = 0; j < 8; ++j) {
                const int bin = kBins - 1 - (lane * 8 + j);
                c[j] = sh.bin_count[bin];
                m[j] = sh.bin_mass[bin];
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
            const bool reach = by_mass ? mass_above + inc_mass >= target : count_above + inc_count >= rank;
            const unsigned ballot = __ballot_sync(kFull, reach);
            if (ballot == 0u) {
                if (lane == 0) sh.bc.select.found = 0;
            } else if (lane == __ffs(ballot) - 1) {
                int64_t run_count = count_above + (inc_count - lane_count);
                double run_mass = mass_above + exc_mass;
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
        SelectOut result = sh.bc.select;
        __syncthreads();
        if (!result.found) return result;
        const uint32_t bin = result.key;
        count_above = result.count_above;
        mass_above = result.mass_above;
        if (shift == 0) {
            result.key = lo + bin;
            return result;
        }
        const uint32_t new_lo = lo + (bin << shift);
        const uint64_t new_hi = static_cast<uint64_t>(new_lo) + ((1ull << shift) - 1ull);
        hi = new_hi < hi ? static_cast<uint32_t>(new_hi) : hi;
        lo = new_lo;
        shift = shift > 8 ? shift - 8 : 0;
    }
}

// The first member in id order at which the running sum of its weights
// (double, in id order) exceeds mult * total + offset, where total is the
// members' total weight; the last member if none does (the CPU's draw()).
// unit_weight counts members instead (the tie search).
template <typename Member>
__device__ int32_t team_find_first(const Row &row, Member member, bool unit_weight, double mult, double offset,
                                   int &phase, StaticShared &sh) {
    double local = 0.0;
    int32_t last = -1;
    for (int i = row.begin; i < row.end; ++i) {
        const float z = row.z[i];
        if (z == -INFINITY || !member(i, order_key(z))) continue;
        local += unit_weight ? 1.0 : static_cast<double>(row.w[i]);
        last = row.base + i;
    }
    double block_total = 0.0;
    const double thread_prefix = block_exclusive_scan(local, &block_total, sh);
    const int32_t block_last = block_max_i(last, sh);
    Mail &out = sh.mail[phase & 1];
    if (threadIdx.x == 0) {
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
    const double target = mult * sh.bc.value + offset;
    double run = sh.bc.prefix + thread_prefix;
    int32_t hit = kNoCutId;
    // Every thread walks its own range from its prefix; the earliest hit in
    // the team wins.  A zero weight never crosses (the CPU's running sum does
    // not move on it), so it is never a hit.
    for (int i = row.begin; i < row.end; ++i) {
        const float z = row.z[i];
        if (z == -INFINITY || !member(i, order_key(z))) continue;
        const double wt = unit_weight ? 1.0 : static_cast<double>(row.w[i]);
        run += wt;
        if (wt > 0.0 && run > target) {
            hit = row.base + i;
            break;
        }
    }
    const int32_t block_hit = block_min_i(hit, sh);
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
    return result;
}

__device__ __forceinline__ uint32_t delimiter_flags_of(const SamplingArgs &a, int32_t token) {
    return (a.delimiter_flags != nullptr && token >= 0 && token < a.vocab) ? a.delimiter_flags[token] : 0u;
}

__device__ __forceinline__ bool policy_in_range(const SamplingPolicyDevice &p, const SamplingSequenceState &s,
                                                int32_t ring_capacity) {
    return p.kind >= RESET_POLICY_GREEDY && p.kind <= RESET_POLICY_ENTROPY && p.window >= 1 &&
           p.window <= ring_capacity && p.top_k >= 0 && p.top_p > 0.0f && p.top_p <= 1.0f && p.min_p >= 0.0f &&
           p.min_p < 1.0f && s.step.window_count >= 0 && s.step.window_count <= p.window &&
           s.step.window_next >= 0 && s.step.window_next < p.window && s.accepted >= 0;
}

__global__ void __launch_bounds__(kThreads, 1) sampling_kernel(const KernelParams p) {
    extern __shared__ __align__(16) unsigned char dynamic_shared[];
    __shared__ StaticShared sh;
    const SamplingArgs &a = p.args;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int b = blockIdx.y;
    const unsigned rank = team_rank();

    double *warp_mass = reinterpret_cast<double *>(dynamic_shared);
    uint32_t *warp_count = reinterpret_cast<uint32_t *>(warp_mass + kWarps * kBins);
    float *row_cache = reinterpret_cast<float *>(warp_count + kWarps * kBins);

    const int32_t slice = kThreads * p.per_thread;
    const int64_t base64 = static_cast<int64_t>(rank) * slice;
    const int64_t vocab64 = a.vocab;
    const int32_t local_n = base64 >= vocab64 ? 0 : static_cast<int32_t>(vocab64 - base64 < slice ? vocab64 - base64 : slice);
    const int32_t base = static_cast<int32_t>(base64 < vocab64 ? base64 : vocab64);
    const float *logits = a.logits + static_cast<int64_t>(b) * a.ld_logits;
    Row row;
    row.base = base;
    row.begin = min(tid * p.per_thread, local_n);
    row.end = min(row.begin + p.per_thread, local_n);
    if (p.shared_row) {
        // kLoadBatch independent loads in flight per thread: a load-then-
        // store loop would wait one memory latency per element.
        for (int i0 = tid; i0 < local_n; i0 += kThreads * kLoadBatch) {
            float v[kLoadBatch];
#pragma unroll
            for (int j = 0; j < kLoadBatch; ++j) {
                const int i = i0 + j * kThreads;
                v[j] = i < local_n ? __ldg(logits + base + i) : 0.0f;
            }
#pragma unroll
            for (int j = 0; j < kLoadBatch; ++j) {
                const int i = i0 + j * kThreads;
                if (i < local_n) row_cache[i] = v[j];
            }
        }
        row.z = row_cache;
        row.w = row_cache + slice;
    } else {
        row.z = logits + base;
        row.w = a.workspace + static_cast<int64_t>(b) * a.vocab + base;
    }

    const SamplingPolicyDevice pol = a.policies[b];
    const SamplingSequenceState st = a.states[b];
    float *ring = a.rings + static_cast<int64_t>(b) * a.ring_capacity;
    const bool policy_ok = policy_in_range(pol, st, a.ring_capacity);
    if (policy_ok && pol.window <= kRingStage)
        for (int i = tid; i < pol.window; i += kThreads) sh.ring[i] = ring[i];
    __syncthreads();
    int phase = 0;

    // ---- 1. max / argmax / unmasked count / bad values -------------------
    {
        float best = -INFINITY;
        int32_t best_id = -1, unmasked = 0, bad = 0;
        uint32_t min_key = 0xFFFFFFFFu;
        for (int i = row.begin; i < row.end; ++i) {
            const float z = row.z[i];
            if (isnan(z) || z == INFINITY) {
                bad = 1;
            } else if (z != -INFINITY) {
                ++unmasked;
                min_key = min(min_key, order_key(z));
                if (better(z, base + i, best, best_id)) {
                    best = z;
                    best_id = base + i;
                }
            }
        }
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
        }
        if (lane == 0) {
            sh.scratch_f[warp] = best;
            sh.scratch_i[warp] = best_id;
            sh.scratch_u[warp] = min_key;
            sh.mail[0].count[warp] = static_cast<uint32_t>(unmasked);
            sh.mail[0].count[kWarps + warp] = static_cast<uint32_t>(bad);
        }
        __syncthreads();
        if (tid == 0) {
            for (int w = 1; w < kWarps; ++w) {
                if (better(sh.scratch_f[w], sh.scratch_i[w], best, best_id)) {
                    best = sh.scratch_f[w];
                    best_id = sh.scratch_i[w];
                }
                min_key = min(min_key, sh.scratch_u[w]);
            }
            int32_t total = 0, any_bad = 0;
            for (int w = 0; w < kWarps; ++w) {
                total += static_cast<int32_t>(sh.mail[0].count[w]);
                any_bad |= static_cast<int32_t>(sh.mail[0].count[kWarps + w]);
            }
            Mail &out = sh.mail[0];
            out.f0 = best;
            out.i0 = best_id;
            out.i1 = total;
            out.i2 = any_bad;
            out.u0 = min_key;
        }
        team_sync();
        if (tid == 0) {
            float m = -INFINITY;
            int32_t arg = -1, total = 0, any_bad = 0;
            uint32_t kmin = 0xFFFFFFFFu;
            const unsigned n = team_size();
            Mail got[kMaxTeam];  // only the scalar fields are read
#pragma unroll
            for (unsigned r = 0; r < kMaxTeam; ++r) {
                got[r].f0 = -INFINITY;
                got[r].i0 = -1;
                got[r].i1 = 0;
                got[r].i2 = 0;
                got[r].u0 = 0xFFFFFFFFu;
                if (r < n) {
                    const Mail *peer = team_peer(&sh.mail[0], r);
                    got[r].f0 = peer->f0;
                    got[r].i0 = peer->i0;
                    got[r].i1 = peer->i1;
                    got[r].i2 = peer->i2;
                    got[r].u0 = peer->u0;
                }
            }
#pragma unroll
            for (unsigned r = 0; r < kMaxTeam; ++r) {
                if (better(got[r].f0, got[r].i0, m, arg)) {
                    m = got[r].f0;
                    arg = got[r].i0;
                }
                total += got[r].i1;
                any_bad |= got[r].i2;
                kmin = min(kmin, got[r].u0);
            }
            sh.bc.max_logit = m;
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
    const int32_t status = sh.bc.status;
    const float max_logit = sh.bc.max_logit;
    const int32_t argmax = sh.bc.argmax;
    const int32_t unmasked = sh.bc.unmasked;
    const uint32_t min_key = sh.bc.min_key;
    int32_t token = -1;

    if (status == kSamplingOk) {
        // ---- 2. entropy: FP32 terms, double sums (sampling/entropy.cpp) ----
        double sum = 0.0, weighted = 0.0;
        for (int i = row.begin; i < row.end; ++i) {
            const float y = row.z[i] - max_logit;
            const float e = expf(y);
            if (e == 0.0f) continue;  // masked (y = -inf) or underflow: contributes nothing, as on the CPU
            sum += static_cast<double>(e);
            weighted += static_cast<double>(e) * static_cast<double>(y);
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
            const double h = log(s) - wsum / s;
            const float entropy = h > 0.0 ? static_cast<float>(h) : 0.0f;

            // ---- 3. the ReSET decision (SequenceSampler::decide_with_stats),
            // computed identically in every CTA of the team; only rank 0
            // writes the state back, after the last exchange.
            rule::StepState s_state = st.step;
            const uint32_t last_flags = delimiter_flags_of(a, st.last_token);
            const uint32_t prev_flags = delimiter_flags_of(a, st.prev_token);
            SamplingSignalsDevice sig;
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

        if (temperature == 0.0f) {
            token = argmax;  // greedy ignores the truncation: the argmax survives every filter
        } else {
            // ---- 4. weights of softmax(z / T), unnormalised (max weight 1) ----
            const float inv_t = 1.0f / temperature;
            double weight_sum = 0.0;
            for (int i = row.begin; i < row.end; ++i) {
                const float z = row.z[i];
                float w = 0.0f;
                if (z != -INFINITY) {
                    w = expf((z - max_logit) * inv_t);
                    weight_sum += static_cast<double>(w);
                }
                row.w[i] = w;  // read back only by this thread
            }
            auto weight_of_key = [&](uint32_t key) { return expf((key_logit(key) - max_logit) * inv_t); };
            const uint32_t max_key = order_key(max_logit);

            // ---- 5. truncation: each filter is a cut in the order ----
            const bool k_on = pol.top_k > 0 && pol.top_k < unmasked;
            const bool p_on = pol.top_p < 1.0f;
            const bool min_p_on = pol.min_p > 0.0f;
            Cut cut_k{0u, kNoCutId}, cut_p{0u, kNoCutId};
            const int64_t kept_by_k = k_on ? pol.top_k : unmasked;
            double total_k = 0.0;  // weight of the top-k survivors (top-p's total)
            if (k_on) {
                auto any = [](int, uint32_t) { return true; };
                const SelectOut s = team_select(row, p.per_thread, any, min_key, max_key, false, pol.top_k, 0.0, p_on, warp_mass,
                                                warp_count, phase, sh);
                const int64_t take = pol.top_k - s.count_above;  // ties at the cut, lowest ids first
                cut_k.key = s.key;
                if (take < static_cast<int64_t>(s.ties)) {
                    const uint32_t tie_key = s.key;
                    auto at_cut = [=](int, uint32_t key) { return key == tie_key; };
                    cut_k.id = team_find_first(row, at_cut, true, 0.0, static_cast<double>(take - 1), phase, sh);
                }
                total_k = s.mass_above + static_cast<double>(take) * static_cast<double>(weight_of_key(s.key));
            } else if (p_on) {
                double unused_prefix = 0.0;
                team_sum(block_sum(weight_sum, sh), phase, sh, &total_k, &unused_prefix);
            }
            double weight_floor = 0.0;
            if (p_on) {
                // truncate(): tokens lighter than (1-p)·total/count cannot be
                // in the nucleus; the CPU drops them before its sort, so the
                // nucleus is searched among the others.
                weight_floor = (1.0 - static_cast<double>(pol.top_p)) * total_k / static_cast<double>(kept_by_k);
                const double target = static_cast<double>(pol.top_p) * total_k;
                auto heavy = [&](int i, uint32_t key) {
                    return inside(cut_k, key, row.base + i) && static_cast<double>(row.w[i]) >= weight_floor;
                };
                // Every member is inside the top-k cut, so no key below it.
                const uint32_t lo = k_on ? cut_k.key : min_key;
                const SelectOut s = team_select(row, p.per_thread, heavy, lo, max_key, true, 0, target, true, warp_mass,
                                                warp_count, phase, sh);
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
                        while (take < static_cast<int64_t>(s.ties) && s.mass_above + static_cast<double>(take) * wv < target)
                            ++take;
                    }
                    cut_p.key = s.key;
                    if (take < static_cast<int64_t>(s.ties)) {
                        const uint32_t tie_key = s.key;
                        auto at_cut = [&](int i, uint32_t key) { return key == tie_key && heavy(i, key); };
                        cut_p.id = team_find_first(row, at_cut, true, 0.0, static_cast<double>(take - 1), phase, sh);
                    }
                }
            }

            // ---- 6. the draw over the survivors in id order ----
            auto survives = [&](int i, uint32_t key) {
                const int32_t id = row.base + i;
                const float w = row.w[i];
                if (!inside(cut_k, key, id)) return false;
                if (p_on && !(static_cast<double>(w) >= weight_floor && inside(cut_p, key, id))) return false;
                return !(min_p_on && w < pol.min_p);
            };
            const double u = philox::uniform(pol.seed, st.sequence, static_cast<uint64_t>(st.accepted));
            token = team_find_first(row, survives, false, u, 0.0, phase, sh);
        }
    }

    // Peers may still read this CTA's mailboxes until everyone is here.
    team_sync();
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
            a.tokens[b] = token;
            if (a.signals) a.signals[b] = sh.bc.signals;
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
// and size), and say whether a cluster of `team` CTAs of that size can be
// resident at all (a GPC must hold `team` such CTAs).
bool prepare_launch(int device, int team, size_t bytes) {
    struct Known {
        int device, team;
        size_t bytes;
        bool fits;
    };
    static std::mutex mutex;
    static std::vector<Known> known;
    static int raised[kMaxDevices] = {};
    std::lock_guard<std::mutex> lock(mutex);
    for (const Known &k : known)
        if (k.device == device && k.team == team && k.bytes == bytes) return k.fits;
    const int wanted = static_cast<int>(bytes);
    if (device < 0 || device >= kMaxDevices || raised[device] < wanted) {
        RESET_CUDA_CHECK(cudaFuncSetAttribute(sampling_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, wanted));
        if (device >= 0 && device < kMaxDevices) raised[device] = wanted;
    }
    bool fits = true;
    if (team > 1) {
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
        int clusters = 0;
        fits = cudaOccupancyMaxActiveClusters(&clusters, sampling_kernel, &config) == cudaSuccess && clusters > 0;
        (void)cudaGetLastError();  // a refused query leaves no sticky error behind
    }
    known.push_back({device, team, bytes, fits});
    return fits;
}

}  // namespace

size_t sampling_workspace_bytes(int batch, int32_t vocab) {
    return static_cast<size_t>(batch > 0 ? batch : 0) * static_cast<size_t>(vocab > 0 ? vocab : 0) * sizeof(float);
}

SamplingPlan sampling_plan(const SamplingArgs &a) {
    if (a.vocab < 1) fail(RESET_ERR_INVALID_ARGUMENT, "sample_tokens: vocab ", a.vocab, " (must be >= 1)");
    if (a.team < 0 || a.team > kMaxTeam)
        fail(RESET_ERR_INVALID_ARGUMENT, "sample_tokens: team ", a.team, " (0 = automatic, or 1..", kMaxTeam, ")");
    int device = 0;
    RESET_CUDA_CHECK(cudaGetDevice(&device));
    const DeviceInfo info = device_info(device);
    SamplingPlan plan;
    plan.team = a.team > 0 ? a.team : (info.clusters && a.vocab >= kAutoTeamVocab ? kMaxTeam : 1);
    if (plan.team > 1 && !info.clusters)
        fail(RESET_ERR_INVALID_ARGUMENT, "sample_tokens: team ", plan.team,
             " needs thread-block clusters (sm_90 or later)");
    const size_t histogram_bytes = static_cast<size_t>(kWarps) * kBins * (sizeof(double) + sizeof(uint32_t));
    const size_t budget = static_cast<size_t>(info.shared_optin - info.static_shared);
    if (histogram_bytes > budget)
        fail(RESET_ERR_UNSUPPORTED, "sample_tokens: the device has ", info.shared_optin,
             " bytes of shared memory per block; the sampler needs ", histogram_bytes + info.static_shared);
    for (;;) {
        const int64_t per_cta = (static_cast<int64_t>(a.vocab) + plan.team - 1) / plan.team;
        int64_t per_thread = (per_cta + kThreads - 1) / kThreads;
        per_thread |= 1;  // odd: a warp's strided shared-memory reads hit 32 different banks
        plan.per_thread = static_cast<int>(per_thread);
        const size_t row_bytes = 2u * static_cast<size_t>(kThreads) * static_cast<size_t>(per_thread) * sizeof(float);
        plan.shared_row = !a.force_global_memory && histogram_bytes + row_bytes <= budget;
        plan.shared_bytes = histogram_bytes + (plan.shared_row ? row_bytes : 0u);
        if (prepare_launch(device, plan.team, plan.shared_bytes)) return plan;
        // The cluster cannot be resident: first keep the row in global
        // memory (smaller CTAs), then, for the automatic choice, one CTA.
        if (plan.shared_row) {
            if (!prepare_launch(device, plan.team, histogram_bytes)) {
                if (a.team > 0) break;
                plan.team = 1;
                continue;
            }
            plan.shared_row = false;
            plan.shared_bytes = histogram_bytes;
            return plan;
        }
        if (a.team > 0 || plan.team == 1) break;
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
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(static_cast<unsigned>(plan.team), static_cast<unsigned>(a.batch), 1u);
    config.blockDim = dim3(kThreads, 1u, 1u);
    config.dynamicSmemBytes = plan.shared_bytes;
    config.stream = stream;
    cudaLaunchAttribute attribute[1];
    attribute[0].id = cudaLaunchAttributeClusterDimension;
    attribute[0].val.clusterDim.x = static_cast<unsigned>(plan.team);
    attribute[0].val.clusterDim.y = 1;
    attribute[0].val.clusterDim.z = 1;
    config.attrs = attribute;
    config.numAttrs = plan.team > 1 ? 1 : 0;
    RESET_CUDA_CHECK(cudaLaunchKernelEx(&config, sampling_kernel, params));
}

}  // namespace reset
