// nvfp4_gemv.h — y[M, N] = x[M, K] · Wᵀ for M = 1..8 tokens, W in NVFP4, on
// the GPU (kernels/nvfp4_gemv.cu).  docs/gemv.md has the design and numbers.
//
// Arithmetic: each weight is decoded exactly to FP16 as e2m1(q) * s_block *
// 2^-14 (exact: at most 6 significant bits, no underflow), multiplied with
// FP16 activations on the tensor cores with FP32 accumulation over all of K,
// then scaled by tensor_scale * 2^14 (and the per-token x_row_scale) in FP32.
// Every product is exact; only the FP32 summation order differs from the
// CPU reference (engine/nvfp4_linear.h).
//   W4A16: x is FP16 (nvfp4_prepare_activations converts BF16/FP32 rows with
//          a power-of-two row scale so no value overflows FP16), or FP32 rows
//          with their row maxima (x_amax), which the GEMV scales and rounds
//          to FP16 itself, the same way.
//   W4A4:  x is the output of nvfp4_prepare_activations in W4A4 mode: the
//          dequantized activations e2m1(qx) * s_x (exact in FP16) plus the
//          per-token tensor scale in x_row_scale, which is nvfp4.md's formula.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "kernels/nvfp4_gemv_layout.h"
#include "kernels/weight_prefetch.h"

namespace reset {

constexpr int kNvfp4GemvMaxTokens = 8;

// A weight in device memory, repacked by nvfp4_gemv_repack.
struct Nvfp4GemvWeight {
    Nvfp4GemvLayout layout;
    const void *codes = nullptr;   // layout.code_bytes(), 16-byte aligned
    const void *scales = nullptr;  // layout.scale_bytes(), 8-byte aligned
    float tensor_scale = 0.0f;     // weight_scale_2
};

enum class Nvfp4GemvOutput : int { kFloat32 = 0, kBFloat16 = 1 };

struct Nvfp4GemvArgs {
    int tokens = 0;                     // M, 1..8
    const void *x = nullptr;            // FP16 [tokens][ldx], K used; 4-byte aligned, ldx even
                                        // (16-byte aligned with ldx % 8 == 0: 16-byte loads, the fast path)
    int64_t ldx = 0;
    const float *x_row_scale = nullptr;  // [tokens] multipliers, or nullptr for 1
    // W4A16 from FP32 activations not yet prepared: where set, x is FP32
    // [tokens][ldx] (16-byte aligned, ldx a multiple of 4) and x_amax[token]
    // its row's max |x| (NaN ignored) where that exceeds 32768, else any value
    // <= 32768 such as 0: the row scale is 1 either way (w4a16::fp16_row_scale,
    // all the kernel uses it for), as an earlier GEMV's y_amax or
    // attention_decode's out_amax leave it; the kernel converts x as it loads
    // it, by nvfp4_prepare_activations' W4A16 rule (rules/w4a16.h), so the
    // result is bit for bit that of the prepare launch plus this GEMV, without
    // the launch.  x_row_scale must then be null.
    const float *x_amax = nullptr;
    // The producer's FP16 copy (attention_decode's out16, an earlier GEMV's
    // y16): where set, x is that copy (FP16, 16-byte aligned, ldx % 8 == 0),
    // x_amax the rows' maxima as above and x_fallback the same rows in FP32
    // ([tokens][ld_x_fallback], 16-byte aligned, a multiple of 4).  Where
    // every row's max |x| <= 32768 the copy is what the preparation writes and
    // the kernel reads it; else it multiplies again from x_fallback as with
    // x_amax alone.  Bit for bit the prepare launch plus this GEMV either way.
    const float *x_fallback = nullptr;
    int64_t ld_x_fallback = 0;
    const float *bias = nullptr;        // [layout.rows] in checkpoint row order, or nullptr
    const void *residual = nullptr;     // output dtype [tokens][ld_residual], added last; may equal y
    int64_t ld_residual = 0;
    void *y = nullptr;                  // [tokens][ldy], layout.outputs() written per token
    int64_t ldy = 0;
    Nvfp4GemvOutput output = Nvfp4GemvOutput::kFloat32;
    // Where set (FP32 output only): y_amax[token] = max(y_amax[token], max |y|
    // over the values stored for token) wherever that max exceeds 32768
    // (w4a16::kFp16RowLimit), by atomicMax on the bits (exact and
    // order-independent); a token whose values all fit leaves it as it was.
    // The caller zeroes it before the launch.  It is the x_amax of a GEMV that
    // reads y (whose row scale depends on nothing below the limit).
    float *y_amax = nullptr;
    // Where set (FP32 output only): y rounded to FP16 as well (round to
    // nearest even), token m's outputs at y16 + m * ld_y16 (ld_y16 >=
    // layout.outputs()): the W4A16 preparation's values wherever the token's
    // max |y| <= 32768, for the next GEMV to read with no preparation launch
    // (x_fallback below).
    void *y16 = nullptr;
    int64_t ld_y16 = 0;
    // 0 picks how K is divided among warps from the shape and the GPU; a
    // positive value cuts every tile's K into at least that many runs
    // (tests, benchmarks); a negative value -c gives every warp a run of c
    // quads across tile boundaries (tests).  A plan that cuts tiles between
    // warps of different CTAs uses the workspace.
    int splits = 0;
    // 0 lets the launch pick whether each warp keeps two quads of weights in
    // flight (the local plan at two CTAs per SM or fewer, where the registers
    // allow it); 1 forces that loop wherever the local plan runs, -1 never
    // (tests).  The result does not depend on it.
    int pipeline = 0;
    void *workspace = nullptr;          // nvfp4_gemv_workspace_bytes(), zeroed once by the caller
    size_t workspace_bytes = 0;
    // Ranges (the next GEMV's weight, nvfp4_gemv_weight_prefetch) that each
    // warp asks the L2 for once it has loaded its last quad: the next
    // launch's first reads then overlap this one's drain
    // (kernels/weight_prefetch.h).  A hint; the result does not depend on it.
    WeightPrefetch prefetch;
};

// The first `max_bytes` (or all) of the weight in the order a launch reads
// it: the same leading fraction of its codes and of its scales (the records
// are quad-major, so that is every tile's first quads), 16-byte aligned.
WeightPrefetch nvfp4_gemv_weight_prefetch(const Nvfp4GemvWeight &weight, size_t max_bytes);

// Which decode the GPU of the current device runs (the layout to repack into).
Nvfp4GemvDecode nvfp4_gemv_device_decode();

// Workspace the launch needs for this weight at any M <= 8 with the automatic
// division of K, or forced splits up to max_splits (0 in a production
// session: none).  The caller zeroes it once (cudaMemset); every launch leaves
// its counters at zero again, so CUDA graph replays and later launches reuse
// it.  One workspace must not serve two launches that run at the same time.
size_t nvfp4_gemv_workspace_bytes(const Nvfp4GemvLayout &layout, int max_splits = 0);

// Into how many runs of warps a launch with these arguments cuts a tile's K
// at most (1: one warp per tile; for benchmarks).
int nvfp4_gemv_splits(const Nvfp4GemvLayout &layout, int tokens, int requested);

// Enqueue the product on `stream`.  Throws reset::Error with
// RESET_ERR_UNSUPPORTED / RESET_ERR_INVALID_ARGUMENT for shapes or arguments
// the kernel does not support (nothing is launched then), and
// RESET_ERR_BACKEND when the launch fails.
void nvfp4_gemv(const Nvfp4GemvWeight &weight, const Nvfp4GemvArgs &args, cudaStream_t stream);

// Bytes of the state nvfp4_gemv_pair keeps in device memory: three counters,
// each in its own 128-byte line (128-byte aligned, as cudaMalloc's are).
// The caller zeroes it once; every launch leaves it at zero again when it
// completes, so later launches and CUDA graph replays reuse it.  A launch
// claims work from it before it waits for the previous kernel, so one state
// must not serve two launches that may run at once: not two streams, and not
// two pair launches that follow each other directly in one stream (under
// programmatic dependent launch they overlap; any kernel between them
// separates them, kernels/dependent_launch.cuh).
constexpr size_t kNvfp4GemvPairStateBytes = 384;

// Two products in one launch, where `second` reads what `first` writes: a
// decode step's gate_up -> down where down reads FP32 (since session 47 only
// behind the engine's A/B knobs, docs/cuda-engine.md section 2).  Each is the
// nvfp4_gemv of its arguments, bit for bit.  The CTAs of the first product's
// own launch become units of work that the running CTAs claim from a counter;
// a CTA waits for them to finish only while every one of them is claimed,
// holding the first quad of its second-product unit (its CTA of the second's
// own launch), which it loaded before waiting.  So the DRAM keeps streaming
// where two launches would drain, place the second grid and ramp up again,
// and the wait cannot deadlock however few of the CTAs the GPU holds at once
// (another stream's kernels may hold the rest): kernels/claimed_work.cuh,
// docs/history/gemv-sessions.md sessions 13-14.
//
// Supported (nvfp4_gemv_pair_runs says whether): the first product reads
// prepared FP16 activations, 16-byte aligned with ldx a multiple of 8; the
// second reads FP32 activations with their row maxima (x_amax, typically the
// first's y and y_amax); both have the same tokens.  The two may share one
// workspace.  Throws RESET_ERR_UNSUPPORTED where the pair does not run
// (nothing is launched), and the errors of nvfp4_gemv for either product.
bool nvfp4_gemv_pair_runs(const Nvfp4GemvWeight &first, const Nvfp4GemvArgs &first_args,
                          const Nvfp4GemvWeight &second, const Nvfp4GemvArgs &second_args);
void nvfp4_gemv_pair(const Nvfp4GemvWeight &first, const Nvfp4GemvArgs &first_args, const Nvfp4GemvWeight &second,
                     const Nvfp4GemvArgs &second_args, void *state, cudaStream_t stream);

}  // namespace reset
