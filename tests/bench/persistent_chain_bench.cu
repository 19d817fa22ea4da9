// persistent_chain_bench.cu — a measured prototype, not a library kernel:
// can one persistent launch run a decode step's chain of dependent NVFP4
// GEMVs closer to the memory bandwidth than one launch per GEMV does?
//
// Why it is worth a prototype (docs/history/cuda-engine-sessions.md, sessions 12-21): at
// batch 1 the step's GEMVs sit 10-45% above their bytes' time, and every
// change inside a launch since session 16 has been worth <= 1% or lost.  What
// a launch cannot avoid is the boundary: its weight stream starts only when
// its CTAs are placed and stops at every dependency, so the DRAM idles
// through each wait, ramp and drain (a plain read of a GEMV's bytes, chained,
// streams at 96-100%; the chained GEMV keeps 1.1-1.9x its time, docs/history/gemv-sessions.md
// session 11).
//
// The prototype decouples the two: one CTA per SM; producer warps (lane 0
// each; four, one per scheduler, stream fastest) copy the CTA's weight
// records (nvfp4_gemv_layout.h: 2 KB of codes and 256 B of scales per quad
// and tile) into a ring of shared-memory slots with bulk asynchronous copies
// (sm_90), one quad of a group of consecutive tiles per copy, in the order of
// the whole chain, waiting only for free slots, never for data; consumer
// warps multiply each slot with the activations exactly as nvfp4_gemv does
// (kernels/nvfp4_mma_decode.cuh), sum a group's K slices in shared memory and
// store its tiles.  A phase's consumers wait only for the data they read:
// for a count of the tiles of the phase that wrote it (kChain), or, with the
// data as flags (kDataFlags), for their own quad's 256 activations to be
// written, every output being set to a NaN no product stores before the
// launch.  While they wait, the ring fills with the next weights.
//
// The chain is a Qwen3-8B layer's four GEMVs, 36 layers: qkv (K 4096) -> o
// (the first 4096 of qkv's outputs stand in for attention) -> gate_up
// (SiLU(gate)*up) -> down (K 12288) -> the next layer's qkv, which waits for
// down but reads the chain's input (SiLU(gate)*up is about quadratic: layers
// fed into each other drift to infinity).  Every phase stores FP16 outputs,
// its scale calibrated on the device to unit RMS.  Left out, as the question
// is the GEMV chain: norms, attention, residuals, the lm_head.
//
// It checks its own results (every phase against nvfp4_gemv on the same
// input, every variant and M = 1, 3, 8) and times, in the same run, with CUDA
// events over graph replays (median):
//  - the persistent chain, for consumer-warp counts, tile groups, producer
//    counts and both kinds of wait; each with the ring's statistics (how long
//    each side waited);
//  - the same kernel with every dependency wait left out (results wrong), and
//    with the ring alone (no products): its ceilings;
//  - the library's 144 GEMVs as chained launches (programmatic dependent
//    launch, as the decode step chains them);
//  - a plain streaming read (the bandwidth every figure is a fraction of).
// The weights (3.9 GB) exceed the L2 80-fold, so every replay reads them cold.
// docs/history/cuda-engine-sessions.md ("Update, session 22") has the runs and what they show.
//
// Usage: persistent_chain_bench [--layers N] [--reps N] [--json FILE] [--profile W,G,MODE,M,C,P[,S]]
#include <cuda_fp16.h>
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "api/errors.h"
#include "gpu_test_util.h"  // CUDA_OK, sorted_us
#include "kernels/claimed_work.cuh"
#include "kernels/dependent_launch.cuh"
#include "kernels/nvfp4_gemv.h"
#include "kernels/nvfp4_mma_decode.cuh"

namespace {

constexpr int kCodeBytes = 2048;  // one quad x tile record of codes
constexpr int kScaleBytes = 256;  // and of scales
constexpr int kRecordBytes = kCodeBytes + kScaleBytes;
constexpr int kPartialBuffers = 2;  // a tile's slice partials, double-buffered (one barrier per tile)
// A wait longer than this (cycles, ~2 s) means the protocol is broken: the
// kernel records it and runs on, so a bug shows as an error, not a hang.
[[maybe_unused]] constexpr long long kWaitLimitCycles = 4'000'000'000LL;
// The suspend-time hint of the sleeping waits (barrier_wait): long, since a
// suspended thread wakes when the phase completes; the hint only bounds a
// sleep whose wake-up was missed.
constexpr unsigned kSuspendNs = 1'000'000;

// One GEMV of the chain.  Records (quad q, tile r) sit at q * row_tiles + r.
struct ChainPhase {
    const uint8_t *codes;
    const uint8_t *scales;
    int row_tiles;
    int k_quads;
    const __half *x;  // [tokens][ldx], K = 256 * k_quads used
    int64_t ldx;
    __half *y;  // [tokens][ldy]
    int64_t ldy;
    int gate_up;  // tile rows 0-7 gate, 8-15 up of outputs 8r..8r+7: SiLU(gate) * up
    float out_scale;
    unsigned *done;              // this phase's finished tiles
    const unsigned *input_done;  // the phase that wrote x, or null (x is the chain's input)
    unsigned input_tiles;        // its tile count: x is complete when input_done reaches it
    // --delays: a stand-in for the step's row phases (norms, q/k norm and RoPE,
    // attention), whose time is latency, not bytes: each CTA copies its slice
    // of `cols` columns of x to y, delay_ns after its inputs are complete.
    int delay_ns;
    int cols;
    const __half *written;  // kDataFlags: what the input phase wrote (x, or for a qkv the layer before's
    int64_t ld_written;     // output), polled until complete
};

// The tiles a CTA owns in a phase: a contiguous run, so that one quad of
// several of them is one contiguous run of records (quad-major), which one
// bulk copy moves: a copy per 2 KB record held the ring at 60% of the
// streaming bandwidth (run 2).  CTAs are numbered from a start that moves on
// by each phase's tile count, so the CTAs with one tile more change from
// phase to phase.
struct OwnedTiles {
    int begin, end;
};
[[maybe_unused]] __device__ __forceinline__ OwnedTiles owned_tiles(int cta, int ctas, int start, int tiles) {
    const int64_t v = (cta + start) % ctas;
    return {static_cast<int>(v * tiles / ctas), static_cast<int>((v + 1) * tiles / ctas)};
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
__device__ __forceinline__ uint32_t shared_address(const void *p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void barrier_init(uint64_t *bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(shared_address(bar)), "r"(count) : "memory");
}
__device__ __forceinline__ void barrier_expect_bytes(uint64_t *bar, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(shared_address(bar)), "r"(bytes)
                 : "memory");
}
__device__ __forceinline__ void barrier_arrive(uint64_t *bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(shared_address(bar)) : "memory");
}
// Waits for the barrier's phase of this parity to complete.  Returns 0 when
// it had at the first look (test_wait, which never blocks), the cycles waited
// when it completed later (try_wait may suspend the thread until it does: run
// 10 counted those as ready), and -1 after kWaitLimitCycles.
// suspend_ns > 0 passes try_wait a suspend-time hint: the thread sleeps until
// the phase completes or that time passes, instead of returning after the
// hardware's own short limit.  Each return of the plain form costs a loop
// iteration (the try_wait, the clock, the limit test, two branches), and in
// compute-only runs the producers' waits issued about a third of the SM's
// instructions that way (session 22 run 20: 377 instructions per record
// against ~250 of products), on the schedulers the consumers need.
__device__ __forceinline__ long long barrier_wait(uint64_t *bar, unsigned parity, unsigned suspend_ns) {
    uint32_t done;
    asm volatile(
        "{\n.reg .pred p;\n"
        "mbarrier.test_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n}"
        : "=r"(done)
        : "r"(shared_address(bar)), "r"(parity)
        : "memory");
    if (done) return 0;
    const long long start = clock64();
    for (;;) {
        if (suspend_ns > 0)
            asm volatile(
                "{\n.reg .pred p;\n"
                "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2, %3;\n"
                "selp.u32 %0, 1, 0, p;\n}"
                : "=r"(done)
                : "r"(shared_address(bar)), "r"(parity), "r"(suspend_ns)
                : "memory");
        else
            asm volatile(
                "{\n.reg .pred p;\n"
                "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                "selp.u32 %0, 1, 0, p;\n}"
                : "=r"(done)
                : "r"(shared_address(bar)), "r"(parity)
                : "memory");
        const long long waited = clock64() - start;
        if (done) return waited > 0 ? waited : 1;
        if (waited > kWaitLimitCycles) return -1;
    }
}
// bytes from global to shared memory, counted on bar when they land; the
// weights are read once per step, so they are asked to leave the L2 first.
__device__ __forceinline__ void bulk_copy(void *dst, const void *src, unsigned bytes, uint64_t *bar, uint64_t policy) {
    asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::"
        "cache_hint [%0], [%1], %2, [%3], %4;" ::"r"(shared_address(dst)),
        "l"(src), "r"(bytes), "r"(shared_address(bar)), "l"(policy)
        : "memory");
}
#endif

// A slot of the ring holds one quad of a group of up to group_tiles
// consecutive tiles: their codes (group_tiles * 2 KB), then their scales.
__host__ __device__ __forceinline__ int slot_bytes(int group_tiles) { return group_tiles * kRecordBytes; }

// What the consumers do: the chain (kChain), the chain with every wait for
// another phase left out (kNoWaits: the results are wrong; how fast the ring
// streams when nothing waits), or only the ring's protocol, with neither
// activations nor products (kRingOnly: the producer's and the copies' ceiling).
// kDataFlags: the data are the flags.  Every phase's outputs are set to
// kUnwritten (an FP16 NaN no product stores) before the launch; a consumer
// reads each quad's activations (or, for a layer's qkv, the 256 outputs of
// the layer before that the quad stands for) until none is kUnwritten, and
// the storing warps need neither a fence nor a count: no release per phase,
// and each quad waits only for its own 256 inputs.
// kComputeOnly: as kNoWaits, but the producers copy nothing (they complete
// each slot's barrier by an arrival): the consumers multiply whatever the
// slots hold, at their own pace: their ceiling, without the DRAM.
enum ConsumerMode : int { kChain = 0, kNoWaits = 1, kRingOnly = 2, kDataFlags = 3, kComputeOnly = 4 };
[[maybe_unused]] constexpr uint16_t kUnwritten = 0xFFFF;

// How often each side of the ring had to wait, summed over the CTAs: the
// producer for a slot to be given back (the ring full there: the consumers
// are behind the copies), a consumer for a slot to be filled (the ring empty
// there: the copies are behind the consumers).
// Also, in cycles: the producer's waits for slots, the consumers' for filled
// slots, for their phase's input, and at the tile groups' CTA barrier.
struct RingStats {
    unsigned long long filled, fill_waits, taken, take_waits;
    unsigned long long fill_wait_cycles, take_wait_cycles, input_wait_cycles, group_barrier_cycles;
};

// The producers: lane 0 of producer warp `index` of `producers` copies every
// quad of every tile group this CTA will consume, at the positions index,
// index + producers, ... of the sequence, into the ring; it waits only for a
// slot to be given back, never for any data.  Several producers, one per
// scheduler, because one thread's copies streamed at 99% of the bandwidth
// with idle consumers and at 85% with working ones (run 11): a producer
// shares its scheduler's issue slots with the consumer warps there.
[[maybe_unused]] __device__ void produce(const ChainPhase *phases, int phase_count, int group_tiles, int slots,
                                         int mode, int index, int producers, uint8_t *ring, uint64_t *full,
                                         uint64_t *empty, unsigned suspend_ns, RingStats *stats, unsigned *error) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    uint64_t policy;
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
    const int cta = static_cast<int>(blockIdx.x), ctas = static_cast<int>(gridDim.x);
    const int stride = slot_bytes(group_tiles);
    int slot = 0;
    unsigned use = 0;             // how many times the ring has wrapped: the parity of the slot's phases
    int start = 0, turn = index;  // turn: positions until this producer's next
    unsigned slots_filled = 0, slots_waited_for = 0;
    unsigned long long cycles_waited = 0;
    for (int p = 0; p < phase_count; ++p) {
        // A reference: the fields are read where they are used, not held in
        // registers through the phase (with the table in shared memory, an LDS each).
        const ChainPhase &ph = phases[p];
        const OwnedTiles own = owned_tiles(cta, ctas, start, ph.row_tiles);
        for (int r = own.begin; r < own.end; r += group_tiles) {
            const int n = min(group_tiles, own.end - r);
            for (int q = 0; q < ph.k_quads; ++q) {
                // (A counter, not position % producers: the producer's issue rate
                // is the ring's limit: a division per slot slowed the chain by a quarter, run 12.)
                if (turn != 0) {
                    --turn;
                    if (++slot == slots) {
                        slot = 0;
                        ++use;
                    }
                    continue;
                }
                turn = producers - 1;
                if (use > 0) {
                    const long long waited = barrier_wait(empty + slot, (use - 1) & 1, suspend_ns);
                    if (waited < 0) atomicExch(error, 1u);
                    slots_waited_for += waited > 0;
                    cycles_waited += waited > 0 ? waited : 0;
                }
                ++slots_filled;
                const int64_t record = static_cast<int64_t>(q) * ph.row_tiles + r;
                uint8_t *dst = ring + static_cast<size_t>(slot) * stride;
                if (mode == kComputeOnly) {
                    barrier_arrive(full + slot);
                    if (++slot == slots) {
                        slot = 0;
                        ++use;
                    }
                    continue;
                }
                barrier_expect_bytes(full + slot, n * kRecordBytes);
                bulk_copy(dst, ph.codes + record * kCodeBytes, n * kCodeBytes, full + slot, policy);
                bulk_copy(dst + group_tiles * kCodeBytes, ph.scales + record * kScaleBytes, n * kScaleBytes,
                          full + slot, policy);
                if (++slot == slots) {
                    slot = 0;
                    ++use;
                }
            }
        }
        start = (start + ph.row_tiles) % ctas;
    }
    atomicAdd(&stats->filled, slots_filled);
    atomicAdd(&stats->fill_waits, slots_waited_for);
    atomicAdd(&stats->fill_wait_cycles, cycles_waited);
#endif
}

// A slot's place in the ring and the parity of its use (how often the ring
// has wrapped before it), followed incrementally: a division per slot would
// cost more than a tenth of a record's products.
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900  // (unused in the older targets' empty kernels)
struct RingPosition {
    int slot = 0;
    unsigned parity = 0;
    __device__ __forceinline__ void advance(int count, int slots) {
        slot += count;
        while (slot >= slots) {
            slot -= slots;
            parity ^= 1u;
        }
    }
};
#endif

constexpr int kMaxGroupTiles = 4;
constexpr int kMaxProducers = 4;

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900  // (unused in the older targets' empty kernels)
// 16 bytes of data written in this launch (after the acquire that orders
// them), as a global load: read through a pointer the kernel loads from
// memory, C++ compiled to generic loads (LD, run 9's SASS), which take the
// longer generic path; ld.global is the coherent form, not __ldg's
// non-coherent one.  (A CTA reads a phase's activations only after they are
// complete, and L1 lines do not outlive the launch.)
__device__ __forceinline__ uint4 load_global_16(const void *p) {
    uint4 v;
    asm volatile("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p)
                 : "memory");
    return v;
}

// The lane's activations of quad q (4 supers of 16), for B-fragment token `token`.
__device__ __forceinline__ void load_x_quad(const ChainPhase &ph, int token, int q, int t, uint4 (&xv)[4][2]) {
    const uint4 *x = reinterpret_cast<const uint4 *>(ph.x + token * ph.ldx + 256 * q + 16 * t);
#pragma unroll
    for (int u = 0; u < 4; ++u) {
        xv[u][0] = load_global_16(x + 8 * u);
        xv[u][1] = load_global_16(x + 8 * u + 1);
    }
}

// An output, as a strong store (the kDataFlags consumers read it with strong
// loads while it may still be unwritten; plain stores would race with them).
__device__ __forceinline__ void store_output(__half *y, float v) {
    const __half h = __float2half_rn(v);
    asm volatile("st.relaxed.gpu.global.b16 [%0], %1;" ::"l"(y), "h"(*reinterpret_cast<const unsigned short *>(&h))
                 : "memory");
}

// kDataFlags: returns once the lane's 128 bytes of quad q of `written` (its
// 16 activations of each super) hold no kUnwritten, and the whole warp's do.
// Strong (.relaxed.gpu) loads, which read the L2, never a stale L1 line; a
// CTA's first ordinary load of those lines comes after, so it misses the L1
// and reads the final data too.  Returns the cycles waited, or -1 past the limit.
// The values read are left in xv: where `written` is the quad's activations
// themselves, they are the activations (one L2 round trip, not two).  Between
// polls the warp sleeps 128 ns, so that spinning warps do not crowd the L2
// the writers' stores go through (at M = 8 each poll reads 4 KB per warp).
__device__ __forceinline__ long long wait_written(const __half *written, int64_t ld, int token, int q, int t,
                                                  uint4 (&xv)[4][2]) {
    const uint4 *w = reinterpret_cast<const uint4 *>(written + token * ld + 256 * q + 16 * t);
    const long long begin = clock64();
    for (;;) {
        bool complete = true;
#pragma unroll
        for (int u = 0; u < 4; ++u)
#pragma unroll
            for (int i = 0; i < 2; ++i) {
                uint4 &v = xv[u][i];
                asm volatile("ld.relaxed.gpu.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                             : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                             : "l"(w + 8 * u + i)
                             : "memory");
                for (uint32_t word : {v.x, v.y, v.z, v.w})
                    complete &= (word & 0xFFFFu) != kUnwritten && (word >> 16) != kUnwritten;
            }
        if (__all_sync(0xffffffffu, complete)) return clock64() - begin;
        if (clock64() - begin > kWaitLimitCycles) return -1;
        __nanosleep(128);
    }
}
#endif

// The products of one slot: one quad of kTiles tiles.  Super by super, tile
// after tile, so that consecutive tensor-core products accumulate into
// different tiles' sums: one tile's 16 products in a row each wait for the one
// before (run 5: 8 warps then kept up with 88% of the streaming bandwidth at
// most, and more warps were slower; run 6: interleaved, no faster).  With
// kChains = 2, odd and even supers accumulate apart as well (summed at the
// group's end).
template <int kTiles, int kChains, int kTilesMax>
__device__ __forceinline__ void slot_products(const uint8_t *slot, int group_tiles, int lane, const uint4 (&xv)[4][2],
                                              float (&acc)[kTilesMax][kChains][4]) {
    uint2 scales[kTiles];
#pragma unroll
    for (int j = 0; j < kTiles; ++j)
        scales[j] = reinterpret_cast<const uint2 *>(slot + group_tiles * kCodeBytes + j * kScaleBytes)[lane];
#pragma unroll
    for (int u = 0; u < 4; ++u)
#pragma unroll
        for (int j = 0; j < kTiles; ++j) {
            const uint4 codes = reinterpret_cast<const uint4 *>(slot + j * kCodeBytes)[32 * u + lane];
            uint32_t sg, sg8;
            reset::decode_scales(scales[j], u, sg, sg8);
            reset::super_step(codes, sg, sg8, xv[u], acc[j][u % kChains]);
        }
}

// A --delays phase, by warp 0 of each CTA: once its slice of x is complete
// (kChain: the input phase's count; kDataFlags: its values), wait delay_ns,
// then copy the slice to y (strong loads and stores: kDataFlags' readers
// poll it).
[[maybe_unused]] __device__ void delay_phase(const ChainPhase &ph, int tokens, int mode, int lane, unsigned *error,
                                             unsigned long long &input_cycles) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    const int cta = static_cast<int>(blockIdx.x), ctas = static_cast<int>(gridDim.x);
    const int c0 = static_cast<int>(static_cast<int64_t>(cta) * ph.cols / ctas);
    const int c1 = static_cast<int>(static_cast<int64_t>(cta + 1) * ph.cols / ctas);
    const long long begin = clock64();
    if (mode == kChain && ph.input_done)
        while (reset::cuda::load_acquire_gpu(ph.input_done) < ph.input_tiles)
            if (clock64() - begin > kWaitLimitCycles) {
                if (lane == 0) atomicExch(error, 2u);
                break;
            }
    // The slice's tokens x columns (at most 8 x 32: 4096 columns over >= 128
    // CTAs), up to 8 per lane, all asked for at once.
    const int width = c1 - c0, count = tokens * width;
    unsigned short v[8];
    for (;;) {
        bool complete = true;
#pragma unroll
        for (int k = 0; k < 8; ++k) {
            const int i = lane + 32 * k;
            if (i < count)
                asm volatile("ld.relaxed.gpu.global.b16 %0, [%1];"
                             : "=h"(v[k])
                             : "l"(ph.x + (i / width) * ph.ldx + c0 + i % width)
                             : "memory");
        }
#pragma unroll
        for (int k = 0; k < 8; ++k) complete &= lane + 32 * k >= count || mode != kDataFlags || v[k] != kUnwritten;
        if (__all_sync(0xffffffffu, complete)) break;
        if (clock64() - begin > kWaitLimitCycles) {
            if (lane == 0) atomicExch(error, 2u);
            break;
        }
    }
    input_cycles += clock64() - begin;
    if (lane == 0) {
        const unsigned long long start = reset::cuda::global_timer_ns();
        while (reset::cuda::global_timer_ns() - start < static_cast<unsigned long long>(ph.delay_ns)) {
        }
    }
    __syncwarp();
#pragma unroll
    for (int k = 0; k < 8; ++k) {
        const int i = lane + 32 * k;
        if (i < count)
            asm volatile("st.relaxed.gpu.global.b16 [%0], %1;" ::"l"(ph.y + (i / width) * ph.ldy + c0 + i % width),
                         "h"(v[k])
                         : "memory");
    }
#endif
}

// The consumers: warp w of kConsumers multiplies the quads at positions w,
// w + kConsumers, ... of the CTA's sequence of tile-group quads, in the order
// the producer copied them (the
// activations of a quad serve every tile of the group); the group's partial
// sums meet in shared memory, where tile j's are added in warp order
// (deterministic) and stored by warp (groups done + j) mod kConsumers, so that
// the epilogues spread over the warps.  Once the CTA's tiles of a phase are
// stored, one thread counts them done with one release: a release per tile (a
// fence, an L2 round trip) kept the storing warp late for its next records
// (run 1).
// kTilesMax: the largest tile group the instance handles (its accumulators
// and unrolled products; registers decide how many consumer warps fit).
template <int kConsumers, int kChains, int kTilesMax>
__device__ void consume(const ChainPhase *phases, int phase_count, int tokens, int group_tiles, int slots, int mode,
                        const uint8_t *ring, uint64_t *full, uint64_t *empty, unsigned suspend_ns, float4 *partials,
                        RingStats *stats, unsigned *error) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    const int warp = static_cast<int>(threadIdx.x >> 5), lane = static_cast<int>(threadIdx.x & 31);
    const int g = lane >> 2, t = lane & 3;
    const int token = min(g, tokens - 1);  // B-fragment column g; columns past M
                                           // repeat the last token, never stored
    const int cta = static_cast<int>(blockIdx.x), ctas = static_cast<int>(gridDim.x);
    const int stride = slot_bytes(group_tiles);
    RingPosition group_start;  // where the current group's first quad sits (every warp follows all slots)
    int group_lap = 0;         // its position in the CTA's sequence, modulo kConsumers
    unsigned slots_taken = 0, slots_waited_for = 0;
    unsigned long long take_cycles = 0, input_cycles = 0, barrier_cycles = 0;
    int start = 0;
    unsigned groups_done = 0;
    for (int p = 0; p < phase_count; ++p) {
        // A reference: the fields are read where they are used, not held in
        // registers through the phase (with the table in shared memory, an LDS each).
        const ChainPhase &ph = phases[p];
        const OwnedTiles own = owned_tiles(cta, ctas, start, ph.row_tiles);
        bool input_ready = mode != kChain || ph.input_done == nullptr;
        uint64_t quads_written = 0;  // kDataFlags: the quads this warp has seen complete in this phase
        const bool poll_data = mode == kDataFlags && ph.written != nullptr;
        if (ph.delay_ns > 0) {
            if (warp == 0 && mode != kRingOnly) delay_phase(ph, tokens, mode, lane, error, input_cycles);
            if (mode != kDataFlags) {
                asm volatile("bar.sync 2, %0;" ::"r"(kConsumers * 32) : "memory");
                if (threadIdx.x == 0) reset::cuda::add_release_gpu(ph.done, 1u);  // one per CTA
            }
            start = (start + ph.row_tiles) % ctas;
            continue;
        }
        for (int r = own.begin; r < own.end; r += group_tiles) {
            const int n = min(group_tiles, own.end - r);
            if (!input_ready) {
                // Every lane polls (one transaction per poll): each then holds the
                // acquire itself.
                const long long begin = clock64();
                while (reset::cuda::load_acquire_gpu(ph.input_done) < ph.input_tiles)
                    if (clock64() - begin > kWaitLimitCycles) {
                        if (lane == 0) atomicExch(error, 2u);
                        break;
                    }
                input_cycles += clock64() - begin;
                input_ready = true;
            }
            float acc[kTilesMax][kChains][4] = {};
            // Warp w takes the CTA's quads at positions w, w + kConsumers, ... of
            // the whole sequence (max_slots says why), whatever the group.
            const int first = (warp - group_lap + kConsumers) % kConsumers;
            RingPosition at = group_start;
            at.advance(first, slots);
            if (mode == kRingOnly) {
                for (int q = first; q < ph.k_quads; q += kConsumers, at.advance(kConsumers, slots)) {
                    const long long waited = barrier_wait(full + at.slot, at.parity, suspend_ns);
                    if (waited < 0 && lane == 0) atomicExch(error, 3u);
                    slots_waited_for += waited > 0;
                    take_cycles += waited > 0 ? waited : 0;
                    ++slots_taken;
                    __syncwarp();
                    if (lane == 0) barrier_arrive(empty + at.slot);
                }
            } else {
                // The warp's quads of the group.  The group's size is a constant
                // of each instance of the loop (not a test per slot), so that its
                // tiles' products interleave and the slot's path has no branch
                // on it (session 23: ~130 instructions per record besides the
                // products' ~250, most of them branches, tests and moves).
                auto quads = [&](auto tiles) {
                    constexpr int kTiles = decltype(tiles)::value;
                    for (int q = first; q < ph.k_quads; q += kConsumers, at.advance(kConsumers, slots)) {
                        uint4 xv[4][2];
                        bool x_loaded = false;
                        if (poll_data && !(quads_written >> q & 1)) {
                            const long long waited = wait_written(ph.written, ph.ld_written, token, q, t, xv);
                            if (waited < 0 && lane == 0) atomicExch(error, 2u);
                            input_cycles += waited > 0 ? waited : 0;
                            quads_written |= uint64_t(1) << q;
                            // (a qkv polls the layer before but reads the chain's input)
                            x_loaded = ph.written == ph.x;
                        }
                        if (!x_loaded) load_x_quad(ph, token, q, t, xv);
                        const long long waited = barrier_wait(full + at.slot, at.parity, suspend_ns);
                        if (waited < 0 && lane == 0) atomicExch(error, 3u);
                        slots_waited_for += waited > 0;
                        take_cycles += waited > 0 ? waited : 0;
                        ++slots_taken;
                        slot_products<kTiles, kChains, kTilesMax>(ring + static_cast<size_t>(at.slot) * stride,
                                                                  group_tiles, lane, xv, acc);
                        __syncwarp();
                        if (lane == 0) barrier_arrive(empty + at.slot);  // the slot's bytes are all read
                    }
                };
                if (n == 1) {
                    quads(std::integral_constant<int, 1>{});
                } else if constexpr (kTilesMax >= 2) {
                    if (n == 2) quads(std::integral_constant<int, 2>{});
                    if constexpr (kTilesMax >= 3)
                        if (n == 3) quads(std::integral_constant<int, 3>{});
                    if constexpr (kTilesMax >= 4)
                        if (n >= 4) quads(std::integral_constant<int, 4>{});
                }
            }
            group_start.advance(ph.k_quads, slots);
            group_lap = (group_lap + ph.k_quads) % kConsumers;
            float4 *buffer = partials + (groups_done % kPartialBuffers) * kConsumers * kMaxGroupTiles * 32;
#pragma unroll
            for (int j = 0; j < kTilesMax; ++j)
                if (j < n) {
                    float sum[4];
#pragma unroll
                    for (int i = 0; i < 4; ++i)
                        sum[i] = kChains == 2 ? acc[j][0][i] + acc[j][kChains - 1][i] : acc[j][0][i];
                    buffer[(warp * kMaxGroupTiles + j) * 32 + lane] = make_float4(sum[0], sum[1], sum[2], sum[3]);
                }
            const long long barrier_begin = clock64();
            asm volatile("bar.sync 1, %0;" ::"r"(kConsumers * 32) : "memory");
            barrier_cycles += clock64() - barrier_begin;
            const unsigned group = groups_done++;
            if (mode == kRingOnly) continue;
            for (int j = 0; j < n; ++j) {
                if (warp != static_cast<int>((group + j) % kConsumers)) continue;
                float sum[4] = {0.0f, 0.0f, 0.0f, 0.0f};
                for (int w = 0; w < kConsumers; ++w) {
                    const float4 v = buffer[(w * kMaxGroupTiles + j) * 32 + lane];
                    sum[0] += v.x;
                    sum[1] += v.y;
                    sum[2] += v.z;
                    sum[3] += v.w;
                }
                const int tile = r + j;
                // sum = {(row g, token 2t), (row g, token 2t+1), (row g+8, token 2t),
                // (row g+8, token 2t+1)}.
#pragma unroll
                for (int c = 0; c < 2; ++c) {
                    const int out_token = 2 * t + c;
                    if (out_token >= tokens) continue;
                    __half *y = ph.y + out_token * ph.ldy;
                    if (ph.gate_up) {
                        const float gate = sum[c] * ph.out_scale, up = sum[2 + c] * ph.out_scale;
                        store_output(y + 8 * tile + g, gate / (1.0f + __expf(-gate)) * up);
                    } else {
                        store_output(y + 16 * tile + g, sum[c] * ph.out_scale);
                        store_output(y + 16 * tile + g + 8, sum[2 + c] * ph.out_scale);
                    }
                }
            }
        }
        // Every store of the CTA's tiles of this phase before the one release that
        // counts them.
        if (mode != kDataFlags) {
            asm volatile("bar.sync 2, %0;" ::"r"(kConsumers * 32) : "memory");
            if (threadIdx.x == 0 && own.end > own.begin)
                reset::cuda::add_release_gpu(ph.done, static_cast<unsigned>(own.end - own.begin));
        }
        start = (start + ph.row_tiles) % ctas;
    }
    if (lane == 0) {
        atomicAdd(&stats->taken, slots_taken);
        atomicAdd(&stats->take_waits, slots_waited_for);
        atomicAdd(&stats->take_wait_cycles, take_cycles);
        atomicAdd(&stats->input_wait_cycles, input_cycles);
        atomicAdd(&stats->group_barrier_cycles, barrier_cycles);
    }
#endif
}

// (16 consumer warps get 96 registers, with spills: ptxas seems to budget
// 640 threads for 544; 12 get 128.)
template <int kConsumers, int kChains, int kTilesMax>
__global__ void __launch_bounds__(32 * (kConsumers + kMaxProducers), 1)
    persistent_chain(const ChainPhase *phases, int phase_count, int tokens, int group_tiles, int slots, int mode,
                     int producers, int phases_shared, unsigned suspend_ns, RingStats *stats, unsigned *error) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    extern __shared__ __align__(128) uint8_t shared[];
    uint8_t *ring = shared;
    uint64_t *full = reinterpret_cast<uint64_t *>(shared + static_cast<size_t>(slots) * slot_bytes(group_tiles));
    uint64_t *empty = full + slots;
    float4 *partials = reinterpret_cast<float4 *>(empty + slots);  // 16-byte aligned: 16 bytes of barriers per slot
    // phases_shared: the phase table copied into shared memory behind the
    // partials, read from there (the consumers' registers held ~30 of its
    // words through each phase; registers decide how many consumer warps fit).
    if (phases_shared) {
        ChainPhase *table =
            reinterpret_cast<ChainPhase *>(partials + kPartialBuffers * kConsumers * kMaxGroupTiles * 32);
        const int words = phase_count * static_cast<int>(sizeof(ChainPhase) / sizeof(uint32_t));
        for (int i = threadIdx.x; i < words; i += blockDim.x)
            reinterpret_cast<uint32_t *>(table)[i] = reinterpret_cast<const uint32_t *>(phases)[i];
        phases = table;
    }
    if (threadIdx.x == 0) {
        for (int s = 0; s < slots; ++s) {
            barrier_init(full + s, 1);   // the producer's expect_tx arrival, then the bytes
            barrier_init(empty + s, 1);  // the consuming warp's arrival
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    const int warp = static_cast<int>(threadIdx.x >> 5);
    if (warp >= kConsumers) {
        if ((threadIdx.x & 31) == 0)
            produce(phases, phase_count, group_tiles, slots, mode, warp - kConsumers, producers, ring, full, empty,
                    suspend_ns, stats, error);
        return;
    }
    consume<kConsumers, kChains, kTilesMax>(phases, phase_count, tokens, group_tiles, slots, mode, ring, full, empty,
                                            suspend_ns, partials, stats, error);
#else
    if (threadIdx.x == 0 && blockIdx.x == 0) atomicExch(error, 9u);  // built for an older GPU: refused on the host
#endif
}

size_t shared_bytes(int slots, int consumers, int group_tiles, int phase_count) {
    return static_cast<size_t>(slots) * slot_bytes(group_tiles) + static_cast<size_t>(slots) * 2 * sizeof(uint64_t) +
           static_cast<size_t>(kPartialBuffers) * consumers * kMaxGroupTiles * 32 * sizeof(float4) +
           static_cast<size_t>(phase_count) * sizeof(ChainPhase);  // the phase table (phases_shared)
}
// The deepest ring that fits the GPU's shared memory.
// A multiple of the consumer warps: as warp w consumes the positions w mod
// consumers of the CTA's sequence, slot s is then always consumed by warp s mod
// consumers, so a warp waits on a slot only after it consumed the slot's
// previous use itself.  Otherwise a warp running a lap ahead could wait on a
// slot whose previous fill is still in flight, and the wait on the parity of
// its use would return at once, on the use before (run 4: a fault, where the
// ring ran without products).
// 0 where not even one slot per consumer warp fits.
int max_slots(const cudaDeviceProp &prop, int consumers, int group_tiles, int phase_count) {
    int slots = 0;
    while (shared_bytes(slots + consumers, consumers, group_tiles, phase_count) <=
           static_cast<size_t>(prop.sharedMemPerBlockOptin))
        slots += consumers;
    return slots;
}

using ChainKernel = void (*)(const ChainPhase *, int, int, int, int, int, int, int, unsigned, RingStats *, unsigned *);
// The instances: 8, 12 and 16 consumer warps, one accumulator chain per tile
// and groups of up to 4 tiles; 8 and 12 with two chains as well; 12 and 16
// for groups of up to 2 tiles.
ChainKernel chain_kernel(int consumers, int chains, int tiles_max = kMaxGroupTiles) {
    switch (consumers * 100 + chains * 10 + tiles_max) {
        case 814:
            return persistent_chain<8, 1, 4>;
        case 824:
            return persistent_chain<8, 2, 4>;
        case 1214:
            return persistent_chain<12, 1, 4>;
        case 1224:
            return persistent_chain<12, 2, 4>;
        case 1614:
            return persistent_chain<16, 1, 4>;
        // Groups of at most 2 tiles, and their registers, for 12 and 16 consumer warps.
        case 1212:
            return persistent_chain<12, 1, 2>;
        case 1612:
            return persistent_chain<16, 1, 2>;
        default:
            return nullptr;
    }
}

// The library side of a --delays phase: a launch of one warp per SM that
// waits delay_ns once the kernel before it has completed (the programmatic
// dependent launch rule of kernels/dependent_launch.cuh, as the step's row
// kernels follow it).
// It also copies its slice of `cols` columns of x to y, as the persistent
// delay phase does: after its wait, the loads, the delay, the stores.
__global__ void delay_kernel(long long delay_ns, const __half *x, int64_t ldx, __half *y, int64_t ldy, int cols,
                             int tokens) {
    reset::cuda::begin_dependent_kernel();
    const int cta = static_cast<int>(blockIdx.x), ctas = static_cast<int>(gridDim.x), lane = threadIdx.x;
    const int c0 = static_cast<int>(static_cast<int64_t>(cta) * cols / ctas);
    const int width = static_cast<int>(static_cast<int64_t>(cta + 1) * cols / ctas) - c0, count = tokens * width;
    __half v[8];
#pragma unroll
    for (int k = 0; k < 8; ++k)
        if (lane + 32 * k < count) v[k] = x[((lane + 32 * k) / width) * ldx + c0 + (lane + 32 * k) % width];
    if (lane == 0) {
        const unsigned long long start = reset::cuda::global_timer_ns();
        while (reset::cuda::global_timer_ns() - start < static_cast<unsigned long long>(delay_ns)) {
        }
    }
    __syncwarp();
#pragma unroll
    for (int k = 0; k < 8; ++k)
        if (lane + 32 * k < count) y[((lane + 32 * k) / width) * ldy + c0 + (lane + 32 * k) % width] = v[k];
}

// Random bytes from splitmix64 of the word index: reproducible, never zeros.
__global__ void fill_words(uint64_t *p, size_t words, uint64_t seed) {
    for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < words;
         i += static_cast<size_t>(gridDim.x) * blockDim.x) {
        uint64_t z = seed + (i + 1) * 0x9E3779B97F4A7C15ull;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        p[i] = z ^ (z >> 31);
    }
}
// Scale bytes: E4M3 2^-2 .. 2^2 (positive, finite), as the GEMV benchmark's.
__global__ void to_scale_bytes(uint8_t *p, size_t n) {
    for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<size_t>(gridDim.x) * blockDim.x)
        p[i] = static_cast<uint8_t>((p[i] & 0x1f) + 0x28);
}

double e4m3_value(uint8_t b) {
    const int e = (b >> 3) & 15, m = b & 7;
    return e == 0 ? std::ldexp(m / 8.0, -6) : std::ldexp(1.0 + m / 8.0, e - 7);
}

// RMS of a decoded weight (e2m1 code uniform over its 16 values, scale byte
// uniform over to_scale_bytes' 32): the host's out_scale keeps outputs at unit
// RMS.
double weight_rms() {
    const double e2m1[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
    double code_ms = 0, scale_ms = 0;
    for (double v : e2m1) code_ms += v * v / 8;
    for (int b = 0x28; b < 0x48; ++b)
        scale_ms += e4m3_value(static_cast<uint8_t>(b)) * e4m3_value(static_cast<uint8_t>(b)) / 32;
    return std::sqrt(code_ms * scale_ms);
}
// RMS of SiLU(g) * u for independent unit normals g and u (quadrature).
double silu_up_rms() {
    double ms = 0;
    const double h = 1e-3;
    for (double g = -12; g < 12; g += h) {
        const double silu = g / (1 + std::exp(-g));
        ms += silu * silu * std::exp(-g * g / 2) / std::sqrt(2 * M_PI) * h;
    }
    return std::sqrt(ms);
}

struct Weight {
    reset::Nvfp4GemvLayout layout;  // rows, cols (K), gate_up
    uint8_t *codes = nullptr, *scales = nullptr;
};

struct Timing {
    std::string name;
    int tokens;
    double us;
};

double time_captured(cudaStream_t stream, int reps, const std::function<void()> &enqueue) {
    enqueue();  // outside the graph first: module loads, attribute checks
    CUDA_OK(cudaStreamSynchronize(stream));
    cudaGraph_t graph;
    CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    enqueue();
    CUDA_OK(cudaStreamEndCapture(stream, &graph));
    cudaGraphExec_t exec;
    CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
    // One warm-up replay, then the median of `reps` timed by CUDA events.
    const std::vector<float> us =
        gpu_test::sorted_us([&](int) { CUDA_OK(cudaGraphLaunch(exec, stream)); }, reps, stream);
    CUDA_OK(cudaGraphExecDestroy(exec));
    CUDA_OK(cudaGraphDestroy(graph));
    return us[us.size() / 2];
}

__global__ void stream_read(const uint4 *p, size_t n, unsigned *sink) {
    unsigned acc = 0;
    for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<size_t>(gridDim.x) * blockDim.x) {
        const uint4 v = __ldcs(p + i);
        acc ^= v.x + v.y + v.z + v.w;
    }
    if (acc == 0x9E3779B9u) sink[blockIdx.x] = acc;  // keeps the loads; practically never stores
}

}  // namespace

int main(int argc, char **argv) {
    int layers = 36, reps = 15;
    const char *json_path = nullptr;
    // --profile W,G,MODE,M,C,P[,S]: after the calibration, one launch of that
    // variant (consumer warps, group tiles, 0 chain / 1 no waits / 2 ring only
    // / 3 data as flags / 4 compute only, tokens, accumulator chains per tile,
    // producer warps, the waits' suspend hint in ns, 0 or left out: spinning;
    // the phase table in shared memory) between
    // cudaProfilerStart and Stop, for Nsight Compute's --profile-from-start
    // off; no checks, no timings.
    int profile[7] = {0, 0, 0, 0, 0, 0, 0};  // the 7th, optional: the waits' suspend hint in ns (0: spinning)
    // --delays A,B,C: after each layer's qkv, o and down, a phase of A, B, C ns
    // that copies 4096 columns (a stand-in for the row phases; 0: none).
    int delays[3] = {0, 0, 0};
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--layers") && i + 1 < argc)
            layers = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--delays") && i + 1 < argc &&
                 std::sscanf(argv[++i], "%d,%d,%d", &delays[0], &delays[1], &delays[2]) == 3 && delays[0] >= 0 &&
                 delays[1] >= 0 && delays[2] >= 0)
            continue;
        else if (!std::strcmp(argv[i], "--json") && i + 1 < argc)
            json_path = argv[++i];
        else if (!std::strcmp(argv[i], "--profile") && i + 1 < argc &&
                 std::sscanf(argv[++i], "%d,%d,%d,%d,%d,%d,%d", &profile[0], &profile[1], &profile[2], &profile[3],
                             &profile[4], &profile[5], &profile[6]) >= 6 &&
                 profile[6] >= 0 && profile[5] >= 1 && profile[5] <= kMaxProducers &&
                 chain_kernel(profile[0], profile[4]) != nullptr &&
                 (profile[0] == 8 || profile[0] == 12 || profile[0] == 16) && profile[1] >= 1 && profile[1] <= 4 &&
                 profile[2] >= 0 && profile[2] <= 4 && profile[3] >= 1 && profile[3] <= 8)
            continue;
        else {
            std::fprintf(
                stderr,
                "usage: %s [--layers N] [--reps N] [--json FILE] [--profile W,G,MODE,M,C,P[,S]] [--delays A,B,C]\n",
                argv[0]);
            return 2;
        }
    }
    if (layers < 1 || layers > 64 || reps < 1) {
        std::fprintf(stderr, "--layers takes 1..64 and --reps a positive count\n");
        return 2;
    }
    int device_count = 0;
    if (cudaGetDeviceCount(&device_count) != cudaSuccess || device_count == 0) {
        std::printf("SKIP: no CUDA device\n");
        return 0;
    }
    cudaDeviceProp prop;
    CUDA_OK(cudaGetDeviceProperties(&prop, 0));
    if (prop.major < 9) {
        std::printf(
            "SKIP: the prototype's bulk copies need sm_90 or later (this "
            "GPU is sm_%d%d)\n",
            prop.major, prop.minor);
        return 0;
    }
    int driver = 0;
    CUDA_OK(cudaDriverGetVersion(&driver));
    const int ctas = prop.multiProcessorCount;
    cudaStream_t stream;
    CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

    // The chain's weights, Qwen3-8B shapes (models.md).
    const int64_t hidden = 4096, qkv_rows = 6144, inter = 12288;
    std::vector<Weight> weights;
    double weight_bytes = 0;
    for (int l = 0; l < layers; ++l)
        for (const auto &[rows, cols, gate_up] : {std::tuple<int64_t, int64_t, bool>{qkv_rows, hidden, false},
                                                  {hidden, hidden, false},
                                                  {2 * inter, hidden, true},
                                                  {hidden, inter, false}}) {
            Weight w;
            w.layout = reset::nvfp4_gemv_layout(rows, cols, gate_up, reset::Nvfp4GemvDecode::kInteger);
            weights.push_back(w);
        }
    for (size_t i = 0; i < weights.size(); ++i) {
        Weight &w = weights[i];
        CUDA_OK(cudaMalloc(&w.codes, w.layout.code_bytes()));
        CUDA_OK(cudaMalloc(&w.scales, w.layout.scale_bytes()));
        fill_words<<<1024, 256>>>(reinterpret_cast<uint64_t *>(w.codes), w.layout.code_bytes() / 8, 1000 + i);
        fill_words<<<1024, 256>>>(reinterpret_cast<uint64_t *>(w.scales), w.layout.scale_bytes() / 8, 5000 + i);
        to_scale_bytes<<<1024, 256>>>(w.scales, w.layout.scale_bytes());
        CUDA_OK(cudaGetLastError());
        weight_bytes += static_cast<double>(w.layout.code_bytes() + w.layout.scale_bytes());
    }

    // The phases: each layer's four GEMVs, with --delays a delay phase after
    // qkv, o and down (phase_weight -1; the delay in phase_delay).
    std::vector<int> phase_weight, phase_delay;
    std::vector<bool> layer_start;
    for (int l = 0; l < layers; ++l)
        for (int i = 0; i < 4; ++i) {
            layer_start.push_back(i == 0);
            phase_weight.push_back(4 * l + i);
            phase_delay.push_back(0);
            const int delay = i == 0 ? delays[0] : i == 1 ? delays[1] : i == 3 ? delays[2] : 0;
            if (delay > 0) {
                layer_start.push_back(false);
                phase_weight.push_back(-1);
                phase_delay.push_back(delay);
            }
        }

    // Activations: the chain's input and one FP16 output per phase, for 8 tokens.
    constexpr int kMaxTokens = 8;
    const int phase_count = static_cast<int>(phase_weight.size());
    __half *x0;
    CUDA_OK(cudaMalloc(&x0, kMaxTokens * hidden * sizeof(__half)));
    {
        std::vector<__half> h(kMaxTokens * hidden);
        uint64_t s = 42;
        for (auto &v : h) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            v = __float2half(static_cast<float>(static_cast<int64_t>(s >> 40) - (1 << 23)) / (1 << 23) * 1.7320508f);
        }
        CUDA_OK(cudaMemcpy(x0, h.data(), h.size() * sizeof(__half), cudaMemcpyHostToDevice));
    }
    // One arena, so that one memset marks every output unwritten (kDataFlags; the checks).
    std::vector<__half *> y(phase_count);
    std::vector<int64_t> y_cols(phase_count);
    size_t arena_bytes = 0;
    for (int p = 0; p < phase_count; ++p) {
        y_cols[p] = phase_weight[p] >= 0 ? weights[phase_weight[p]].layout.outputs() : hidden;
        arena_bytes += kMaxTokens * y_cols[p] * sizeof(__half);
    }
    __half *arena;
    CUDA_OK(cudaMalloc(&arena, arena_bytes));
    CUDA_OK(cudaMemset(arena, 0xff, arena_bytes));  // kUnwritten (an FP16 NaN): unwritten shows
    for (size_t p = 0, offset = 0; p < y.size(); offset += kMaxTokens * y_cols[p], ++p) y[p] = arena + offset;
    unsigned *counters, *error;
    CUDA_OK(cudaMalloc(&counters, phase_count * sizeof(unsigned)));
    CUDA_OK(cudaMalloc(&error, sizeof(unsigned)));
    RingStats *ring_stats;
    CUDA_OK(cudaMalloc(&ring_stats, sizeof(RingStats)));
    CUDA_OK(cudaMemset(ring_stats, 0, sizeof(RingStats)));
    CUDA_OK(cudaMemset(error, 0, sizeof(unsigned)));

    const double w_rms = weight_rms(), gu_rms = silu_up_rms();
    std::vector<ChainPhase> host_phases(phase_count);
    for (int p = 0; p < phase_count; ++p) {
        ChainPhase &ph = host_phases[p];
        ph.done = counters + p;
        ph.input_done = p == 0 ? nullptr : counters + p - 1;
        // A delay phase counts its CTAs, a GEMV its tiles.
        ph.input_tiles = p == 0 ? 0u : phase_weight[p - 1] >= 0 ? host_phases[p - 1].row_tiles : ctas;
        ph.written = p == 0 ? nullptr : y[p - 1];
        ph.ld_written = p == 0 ? 0 : y_cols[p - 1];
        if (phase_weight[p] < 0) {
            ph.delay_ns = phase_delay[p];
            ph.cols = static_cast<int>(hidden);
            ph.x = y[p - 1];
            ph.ldx = y_cols[p - 1];
            ph.y = y[p];
            ph.ldy = y_cols[p];
            continue;
        }
        const Weight &w = weights[phase_weight[p]];
        ph.codes = w.codes;
        ph.scales = w.scales;
        ph.row_tiles = static_cast<int>(w.layout.row_tiles);
        ph.k_quads = static_cast<int>(w.layout.k_quads());
        // A layer's qkv waits for the layer before (input_done) but reads the
        // chain's input, as a layer reads the residual stream the prototype
        // does not model: SiLU(gate) * up is about quadratic in its input, so
        // feeding each layer's output to the next let the smallest rounding
        // difference grow to infinity over 36 layers (run 4).
        ph.x = layer_start[p] ? x0 : y[p - 1];
        ph.ldx = layer_start[p] ? hidden : y_cols[p - 1];
        ph.y = y[p];
        ph.ldy = y_cols[p];
        ph.gate_up = w.layout.gate_up;
        // Unit-RMS outputs for unit-RMS inputs: the decode carries 2^-14.
        ph.out_scale = static_cast<float>(16384.0 / (w_rms * std::sqrt(static_cast<double>(w.layout.cols))) /
                                          (w.layout.gate_up ? gu_rms : 1.0));
        if (w.layout.k_quads() > 64) {
            std::fprintf(stderr, "the prototype takes at most 64 quads (a 64-bit mask per warp)\n");
            return 1;
        }
        if (w.layout.k_quads() * 256 != w.layout.cols) {
            std::fprintf(stderr, "the prototype takes K a multiple of 256\n");
            return 1;
        }
    }
    ChainPhase *device_phases;
    CUDA_OK(cudaMalloc(&device_phases, phase_count * sizeof(ChainPhase)));
    CUDA_OK(cudaMemcpy(device_phases, host_phases.data(), phase_count * sizeof(ChainPhase), cudaMemcpyHostToDevice));
    CUDA_OK(cudaDeviceSynchronize());

    // The timed input: every token equal to token 0, the one the scales are
    // calibrated on.
    __half *x0_same;
    CUDA_OK(cudaMalloc(&x0_same, kMaxTokens * hidden * sizeof(__half)));
    for (int m = 0; m < kMaxTokens; ++m)
        CUDA_OK(cudaMemcpy(x0_same + m * hidden, x0, hidden * sizeof(__half), cudaMemcpyDeviceToDevice));
    auto use_input = [&](__half *input) {
        for (int p = 0; p < phase_count; ++p) {
            if (!layer_start[p]) continue;
            host_phases[p].x = input;
            CUDA_OK(cudaMemcpy(device_phases + p, &host_phases[p], sizeof(ChainPhase), cudaMemcpyHostToDevice));
        }
    };

    // The persistent launch: cooperative, so that every CTA is resident (the
    // consumers wait for each other).
    auto enqueue_chain = [&](int consumers, int group_tiles, int tokens, int mode, int phases_run, int chains,
                             int producers = 1, bool phases_shared = false, int tiles_max = kMaxGroupTiles,
                             unsigned suspend_ns = 0) {
        const int slots = max_slots(prop, consumers, group_tiles, phase_count);
        const size_t bytes = shared_bytes(slots, consumers, group_tiles, phase_count);
        CUDA_OK(cudaMemsetAsync(counters, 0, phase_count * sizeof(unsigned), stream));
        if (mode == kDataFlags) CUDA_OK(cudaMemsetAsync(arena, 0xff, arena_bytes, stream));
        cudaLaunchConfig_t config = {};
        config.gridDim = dim3(ctas);
        config.blockDim = dim3(32 * (consumers + producers));
        if (producers < 1 || producers > kMaxProducers || slots % producers != 0) {
            // A slot filled by one producer in each use, so that it waits for the
            // slot's previous use itself (the parity of a use two ahead is the same).
            std::fprintf(stderr, "%d producers for %d slots: not supported\n", producers, slots);
            std::exit(1);
        }
        config.dynamicSmemBytes = bytes;
        config.stream = stream;
        cudaLaunchAttribute cooperative[1];
        cooperative[0].id = cudaLaunchAttributeCooperative;
        cooperative[0].val.cooperative = 1;
        config.attrs = cooperative;
        config.numAttrs = 1;
        ChainKernel kernel = group_tiles <= tiles_max ? chain_kernel(consumers, chains, tiles_max) : nullptr;
        if (!kernel) {
            std::fprintf(stderr,
                         "no instance for %d consumer warps with %d accumulator chains and groups of %d tiles\n",
                         consumers, chains, group_tiles);
            std::exit(1);
        }
        CUDA_OK(cudaLaunchKernelEx(&config, kernel, static_cast<const ChainPhase *>(device_phases), phases_run, tokens,
                                   group_tiles, slots, mode, producers, phases_shared ? 1 : 0, suspend_ns, ring_stats,
                                   error));
    };
    const int max_shared = static_cast<int>(prop.sharedMemPerBlockOptin);
    for (int consumers : {8, 12, 16})
        for (int chains : {1, 2})
            for (int tiles_max : {2, kMaxGroupTiles})
                if (ChainKernel kernel = chain_kernel(consumers, chains, tiles_max))
                    CUDA_OK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, max_shared));

    bool all_ok = true;
    auto check_error_flag = [&](const char *what) {
        unsigned e = 0;
        CUDA_OK(cudaMemcpy(&e, error, sizeof e, cudaMemcpyDeviceToHost));
        if (e != 0) {
            std::printf("FAIL %s: wait timed out (code %u)\n", what, e);
            all_ok = false;
            CUDA_OK(cudaMemset(error, 0, sizeof(unsigned)));
        }
    };

    // Output scales: each phase's out_scale is set so that its outputs have
    // unit RMS on the chain's actual inputs (the analytic estimate above let
    // the chain grow ~1.24x per phase on the H100, run 1), phase by phase,
    // running the chain up to that phase.  gate_up's output is about quadratic
    // in its scale (SiLU(a g) * a u), so it takes the square root, three times.
    auto phase_rms = [&](int p, int tokens) {
        const size_t n = static_cast<size_t>(tokens) * y_cols[p];
        std::vector<__half> got(n);
        CUDA_OK(cudaMemcpy(got.data(), y[p], n * sizeof(__half), cudaMemcpyDeviceToHost));
        double ss = 0;
        for (const __half &v : got) ss += static_cast<double>(__half2float(v)) * __half2float(v);
        return std::sqrt(ss / n);
    };
    for (int p = 0; p < phase_count; ++p)
        for (int pass = 0; pass < (phase_weight[p] < 0 ? 0 : host_phases[p].gate_up ? 3 : 1); ++pass) {
            enqueue_chain(8, kMaxGroupTiles, 1, kChain, p + 1, 1);
            CUDA_OK(cudaStreamSynchronize(stream));
            const double rms = phase_rms(p, 1);
            if (!(rms > 0) || !std::isfinite(rms)) {
                std::fprintf(stderr, "phase %d: output RMS %g before calibration\n", p, rms);
                return 1;
            }
            host_phases[p].out_scale /= static_cast<float>(host_phases[p].gate_up ? std::sqrt(rms) : rms);
            CUDA_OK(cudaMemcpy(device_phases + p, &host_phases[p], sizeof(ChainPhase), cudaMemcpyHostToDevice));
        }

    if (profile[0] != 0) {
        if (max_slots(prop, profile[0], profile[1], phase_count) == 0) {
            std::fprintf(stderr, "--profile: the ring does not fit shared memory\n");
            return 2;
        }
        use_input(x0_same);
        CUDA_OK(cudaProfilerStart());
        enqueue_chain(profile[0], profile[1], profile[3], profile[2], phase_count, profile[4], profile[5], true,
                      kMaxGroupTiles, static_cast<unsigned>(profile[6]));
        CUDA_OK(cudaStreamSynchronize(stream));
        CUDA_OK(cudaProfilerStop());
        check_error_flag("profiled launch");
        std::printf("profiled: %d consumer warps, groups of %d, mode %d, M=%d, %d accumulator chains\n", profile[0],
                    profile[1], profile[2], profile[3], profile[4]);
        return all_ok ? 0 : 1;
    }

    // nvfp4_gemv on phase p's weight and input, into y_out (FP32), with the
    // tensor scale that makes its output the prototype's value before
    // rounding: the checks' reference and the timed baseline.
    size_t ws_bytes = 0;
    for (const Weight &w : weights) ws_bytes = std::max(ws_bytes, reset::nvfp4_gemv_workspace_bytes(w.layout));
    void *workspace = nullptr;
    CUDA_OK(cudaMalloc(&workspace, ws_bytes));
    CUDA_OK(cudaMemset(workspace, 0, ws_bytes));
    auto library_gemv = [&](int p, int tokens, float *y_out) {
        const Weight &w = weights[phase_weight[p]];
        reset::Nvfp4GemvWeight lw;
        lw.layout = w.layout;
        lw.codes = w.codes;
        lw.scales = w.scales;
        lw.tensor_scale = host_phases[p].out_scale / 16384.0f;
        reset::Nvfp4GemvArgs a;
        a.tokens = tokens;
        a.x = host_phases[p].x;
        a.ldx = host_phases[p].ldx;
        a.y = y_out;
        a.ldy = y_cols[p];
        a.workspace = workspace;
        a.workspace_bytes = ws_bytes;
        reset::nvfp4_gemv(lw, a, stream);
    };

    // Correctness: every phase of one chain against nvfp4_gemv on the same
    // input (the prototype's own FP16 input of that phase), with the library's
    // tensor scale set so that its FP32 output is the prototype's value before
    // rounding: the same exact products, summed in another order.
    {
        float *y32;
        CUDA_OK(cudaMalloc(&y32, kMaxTokens * 2 * inter * sizeof(float)));
        // Every division of the work at M = 1, then M = 3 and 8 with distinct
        // tokens, and M = 8 with every token equal to token 0 (the timed input),
        // all over the whole chain.
        struct CheckCase {
            int consumers, group_tiles, tokens;
            bool same_tokens;
            int chains, producers = 4, mode = kChain;
            bool phases_shared = true;
            int tiles_max = kMaxGroupTiles;
            unsigned suspend_ns = 0;
        };
        std::vector<CheckCase> cases;
        for (int consumers : {8, 12, 16})
            for (int chains : {1, 2})
                if (chain_kernel(consumers, chains))
                    for (int group_tiles : {1, 2, kMaxGroupTiles})
                        cases.push_back({consumers, group_tiles, 1, false, chains});
        for (int chains : {1, 2})
            for (int tokens : {3, 8}) cases.push_back({8, kMaxGroupTiles, tokens, false, chains});
        cases.push_back({12, 3, 8, false, 2});
        cases.push_back({8, kMaxGroupTiles, 8, true, 2});
        for (int producers : {1, 2}) cases.push_back({8, 3, 3, false, 1, producers});
        // The data as flags.
        for (int tokens : {1, 3, 8})
            for (int group_tiles : {2, 3}) cases.push_back({8, group_tiles, tokens, false, 1, 4, kDataFlags});
        cases.push_back({12, 3, 1, false, 1, 4, kDataFlags});
        cases.push_back({16, 1, 8, false, 1, 1, kDataFlags});
        cases.push_back({8, kMaxGroupTiles, 8, true, 2, 4, kDataFlags});
        for (int mode : {kChain, kDataFlags}) cases.push_back({8, 3, 8, false, 1, 4, mode, false});
        for (int consumers : {12, 16})
            for (int tokens : {1, 8}) cases.push_back({consumers, 2, tokens, false, 1, 4, kDataFlags, true, 2});
        // Waits that sleep until their barrier completes (kSuspendNs).
        for (int mode : {kChain, kDataFlags})
            for (int tokens : {1, 8}) {
                cases.push_back({8, 3, tokens, false, 1, 4, mode, true, kMaxGroupTiles, kSuspendNs});
                cases.push_back({16, 2, tokens, false, 1, 4, mode, true, 2, kSuspendNs});
            }
        for (const CheckCase &cc : cases) {
            const int consumers = cc.consumers, tokens = cc.tokens;
            if (max_slots(prop, consumers, cc.group_tiles, phase_count) == 0) {
                std::printf("SKIP check: %d consumer warps, groups of %d tiles: the ring does not fit shared memory\n",
                            consumers, cc.group_tiles);
                continue;
            }
            use_input(cc.same_tokens ? x0_same : x0);
            for (int p = 0; p < phase_count; ++p)  // NaN again: an unwritten output shows
                CUDA_OK(cudaMemset(y[p], 0xff, kMaxTokens * y_cols[p] * sizeof(__half)));
            enqueue_chain(consumers, cc.group_tiles, tokens, cc.mode, phase_count, cc.chains, cc.producers,
                          cc.phases_shared, cc.tiles_max, cc.suspend_ns);
            CUDA_OK(cudaStreamSynchronize(stream));
            check_error_flag("chain");
            double worst = 0, min_rms = 1e30, max_rms = 0;
            size_t bad = 0;
            for (int p = 0; p < phase_count; ++p) {
                if (phase_weight[p] < 0) {
                    // A delay phase copies the first 4096 columns of its input exactly.
                    const size_t n = static_cast<size_t>(tokens) * y_cols[p];
                    std::vector<uint16_t> got(n), want(n);
                    CUDA_OK(cudaMemcpy2D(want.data(), y_cols[p] * 2, host_phases[p].x, host_phases[p].ldx * 2,
                                         y_cols[p] * 2, tokens, cudaMemcpyDeviceToHost));
                    CUDA_OK(cudaMemcpy(got.data(), y[p], n * 2, cudaMemcpyDeviceToHost));
                    bad += got != want;
                    continue;
                }
                library_gemv(p, tokens, y32);
                const size_t n = static_cast<size_t>(tokens) * y_cols[p];
                std::vector<float> ref(n);
                std::vector<__half> got(n);
                CUDA_OK(cudaMemcpyAsync(ref.data(), y32, n * sizeof(float), cudaMemcpyDeviceToHost, stream));
                CUDA_OK(cudaMemcpyAsync(got.data(), y[p], n * sizeof(__half), cudaMemcpyDeviceToHost, stream));
                CUDA_OK(cudaStreamSynchronize(stream));
                double ss = 0;
                for (float v : ref) ss += static_cast<double>(v) * v;
                const double rms = std::sqrt(ss / n);
                min_rms = std::min(min_rms, rms);
                max_rms = std::max(max_rms, rms);
                for (size_t i = 0; i < n; ++i) {
                    const double g = __half2float(got[i]), r = ref[i];
                    if (!std::isfinite(g)) {
                        ++bad;
                        continue;
                    }
                    // The prototype rounds its FP32 value to FP16: half an FP16
                    // ulp of the value.  Its FP32 sum differs from the library's
                    // by summation order only; the GEMV is within 2.4e-6 of
                    // sum |w x| of the exact value (docs/gemv.md), and sum |w x|
                    // is ~0.6 sqrt(K) <= 67 RMS here, so each side is within
                    // 1.6e-4 RMS: 4e-4 RMS covers both.
                    const double mag = std::fabs(r);
                    const double ulp = mag < 0x1p-14 ? 0x1p-24 : std::ldexp(1.0, std::ilogb(mag) - 10);
                    worst = std::max(worst, std::fabs(g - r) / (0.5 * ulp + 4e-4 * rms));
                }
            }
            // Outputs near unit RMS (calibrated on token 0; other tokens stay close).
            const bool ok = bad == 0 && worst <= 1.0 && min_rms > 0.3 && max_rms < 3;
            all_ok = all_ok && ok;
            std::printf(
                "%s check%s: %2d consumer warps%s, %d producers%s, groups of %d tiles%s%s, M=%d%s, "
                "%3d phases: worst error %.3f of "
                "its bound, output RMS %.3f..%.3f, %zu non-finite (or delay phases not copied)\n",
                ok ? "PASS" : "FAIL", cc.mode == kDataFlags ? " (data as flags)" : "", consumers,
                cc.chains == 2 ? " (2 chains)" : "", cc.producers, cc.phases_shared ? " (phases in smem)" : "",
                cc.group_tiles, cc.tiles_max < kMaxGroupTiles ? " (an instance for <= 2)" : "",
                cc.suspend_ns ? ", sleeping waits" : "", tokens, cc.same_tokens ? " (equal tokens)" : "", phase_count,
                worst, min_rms, max_rms, bad);
        }
        CUDA_OK(cudaFree(y32));
    }

    // Streaming bandwidth in the same run.
    double stream_gbps = 0;
    {
        const size_t bytes = size_t(2) << 30;
        uint4 *buf;
        unsigned *sink;
        CUDA_OK(cudaMalloc(&buf, bytes));
        CUDA_OK(cudaMalloc(&sink, 4096 * sizeof(unsigned)));
        fill_words<<<1024, 256>>>(reinterpret_cast<uint64_t *>(buf), bytes / 8, 7);
        const double us =
            time_captured(stream, reps, [&] { stream_read<<<ctas * 8, 256, 0, stream>>>(buf, bytes / 16, sink); });
        stream_gbps = bytes / us / 1e3;
        CUDA_OK(cudaFree(buf));
        CUDA_OK(cudaFree(sink));
    }
    std::printf(
        "device %s, %d SMs, driver %d; streaming read %.0f GB/s; chain "
        "of %d layers x 4 GEMVs, %.1f MB of "
        "weights (bytes' time at streaming: %.1f us)\n",
        prop.name, ctas, driver, stream_gbps, layers, weight_bytes / 1e6, weight_bytes / stream_gbps / 1e3);

    std::vector<Timing> timings;
    auto report = [&](const std::string &name, int tokens, double us) {
        timings.push_back({name, tokens, us});
        std::printf("%-62s M=%d %9.1f us  %6.2f us/layer  %5.1f%% of streaming\n", name.c_str(), tokens, us,
                    us / layers, 100.0 * weight_bytes / us / 1e3 / stream_gbps);
    };

    // The library's GEMVs, chained as the decode step chains them (PDL).
    __half *delay_scratch;  // the library's delay kernels' copies
    CUDA_OK(cudaMalloc(&delay_scratch, kMaxTokens * hidden * sizeof(__half)));
    std::vector<float *> y32(phase_count);
    for (int p = 0; p < phase_count; ++p) CUDA_OK(cudaMalloc(&y32[p], kMaxTokens * y_cols[p] * sizeof(float)));
    auto library_chain = [&](int tokens) {
        const reset::cuda::ScopedDependentLaunch chained(true);
        for (int p = 0; p < phase_count; ++p) {
            if (phase_weight[p] < 0) {
                reset::cuda::launch_kernel("delay", delay_kernel, dim3(ctas), dim3(32), 0, stream,
                                           static_cast<long long>(phase_delay[p]),
                                           static_cast<const __half *>(host_phases[p].x), host_phases[p].ldx,
                                           delay_scratch, y_cols[p], host_phases[p].cols, tokens);
                continue;
            }
            library_gemv(p, tokens, y32[p]);
        }
    };
    use_input(x0_same);
    for (int tokens : {1, 8}) {
        report(delays[0] + delays[1] + delays[2] > 0 ? "library: 144 chained launches + delay kernels (PDL)"
                                                     : "library: 144 chained launches (PDL)",
               tokens, time_captured(stream, reps, [&] { library_chain(tokens); }));
        report("marking every output unwritten (kDataFlags' memset)", tokens,
               time_captured(stream, reps, [&] { CUDA_OK(cudaMemsetAsync(arena, 0xff, arena_bytes, stream)); }));
        struct Variant {
            int consumers, chains, group_tiles, mode, producers;
            bool phases_shared;
            int tiles_max = kMaxGroupTiles;
            unsigned suspend_ns = 0;
        };
        // Session 23: each of the best two forms with spinning waits, then
        // with sleeping ones (kSuspendNs; run 1 also timed a 2 us hint: the same).
        std::vector<Variant> variants;
        for (unsigned suspend : {0u, kSuspendNs})
            for (int mode : {kComputeOnly, kNoWaits, kDataFlags}) {
                variants.push_back({8, 1, 3, mode, 4, true, kMaxGroupTiles, suspend});
                variants.push_back({16, 1, 2, mode, 4, true, 2, suspend});
            }
        for (unsigned suspend : {0u, kSuspendNs}) variants.push_back({16, 1, 1, kComputeOnly, 4, true, 2, suspend});
        for (const Variant &v : variants) {
            if (max_slots(prop, v.consumers, v.group_tiles, phase_count) == 0) {
                std::printf("SKIP %d consumer warps, groups of %d: the ring does not fit shared memory\n", v.consumers,
                            v.group_tiles);
                continue;
            }
            const char *modes[] = {"", ", no waits", ", ring only", ", data as flags", ", compute only"};
            char name[128];
            char sleeping[40] = "";
            if (v.suspend_ns) std::snprintf(sleeping, sizeof sleeping, ", waits sleep (hint %u ns)", v.suspend_ns);
            std::snprintf(name, sizeof name, "persistent%s: %d+%d warps%s, groups of %d%s, %d slots%s", modes[v.mode],
                          v.consumers, v.producers, v.chains == 2 ? " (2 chains)" : "", v.group_tiles,
                          v.tiles_max < kMaxGroupTiles ? " (<= 2)" : "",
                          max_slots(prop, v.consumers, v.group_tiles, phase_count), sleeping);
            CUDA_OK(cudaMemset(ring_stats, 0, sizeof(RingStats)));
            report(name, tokens, time_captured(stream, reps, [&] {
                       enqueue_chain(v.consumers, v.group_tiles, tokens, v.mode, phase_count, v.chains, v.producers,
                                     v.phases_shared, v.tiles_max, v.suspend_ns);
                   }));
            check_error_flag(name);
            RingStats rs;
            CUDA_OK(cudaMemcpy(&rs, ring_stats, sizeof rs, cudaMemcpyDeviceToHost));
            // Per launch (the warm-up, the graph's first replay and the timed
            // ones), in microseconds at the SM clock Nsight Compute saw (1.89 GHz, run 8).
            const double launches = reps + 2, per_cta_us = 1.0 / (1890.0 * ctas * launches);
            const double per_warp_us = per_cta_us / v.consumers;
            std::printf(
                "    ring: the producer waited for %.1f%% of its slots (%.0f us per CTA), the consumers for %.1f%% "
                "(%.0f us per warp); per consumer warp %.0f us waiting for inputs, %.0f us at the group "
                "barriers\n",
                100.0 * rs.fill_waits / std::max(1ull, rs.filled), rs.fill_wait_cycles * per_cta_us,
                100.0 * rs.take_waits / std::max(1ull, rs.taken), rs.take_wait_cycles * per_warp_us,
                rs.input_wait_cycles * per_warp_us, rs.group_barrier_cycles * per_warp_us);
        }
    }

    if (json_path) {
        FILE *f = std::fopen(json_path, "w");
        if (!f) {
            std::fprintf(stderr, "cannot write %s\n", json_path);
            return 1;
        }
        std::fprintf(f,
                     "{\"device\": \"%s\", \"driver\": %d, \"sms\": %d, "
                     "\"stream_gbps\": %.1f, \"layers\": %d, "
                     "\"weight_bytes\": %.0f, \"results\": [\n",
                     prop.name, driver, ctas, stream_gbps, layers, weight_bytes);
        for (size_t i = 0; i < timings.size(); ++i)
            std::fprintf(f, "  {\"case\": \"%s\", \"m\": %d, \"us\": %.2f}%s\n", timings[i].name.c_str(),
                         timings[i].tokens, timings[i].us, i + 1 < timings.size() ? "," : "");
        std::fprintf(f, "]}\n");
        std::fclose(f);
    }
    std::printf("%s\n", all_ok ? "ALL OK" : "FAILED");
    return all_ok ? 0 : 1;
}
