// bf16_gemv.h — y[M][N] = x[M][K] · Wᵀ (+ bias) (+ residual) for M = 1..8
// tokens with W in BF16, row-major [N][K] (the checkpoint layout), on the GPU
// (kernels/bf16_gemv.cu).  Used by the BF16 mode of the engine and for the
// BF16 lm_head (Qwen3-8B: N = 151,936, K = 4096).
//
// Arithmetic: x FP32, every weight exact, exact products, FP32 accumulation,
// then y = (acc + bias[n]) + residual[m][n].  How the products are formed
// depends on the token count:
//  - 1 token (or tensor_cores false): each weight widened to FP32, FP32 FMAs (per-lane partial sums
//    over K, then a tree across the warp and, with split K inside a CTA, a
//    fixed-order sum of the slices);
//  - 2..8 tokens (unless Bf16GemvArgs::tensor_cores is false): on the tensor
//    cores, x split into three BF16 parts whose sum
//    is x exactly (finite x), each part × weight exact in FP32, summed in FP32
//    by mma.m16n8k16 (the FP32 FMAs were the bound there, not the bytes).
// Only the summation order differs from the CPU reference (bf16_row_dot in
// engine/cpu_engine.cpp): results are reproducible run to run on one GPU and
// launch configuration, and a token's row is the same for any 2..8 tokens
// (each MMA column is one token's), not bit-identical to the CPU or to the
// 1-token path.  On the tensor-core path an x that is infinite, or that rounds
// to infinity in BF16 (within 2^-9 of FP32's largest), gives NaN.
//
// Design: memory-bound streaming of W.
//  - 1 token: each warp owns 4 rows and reads them with 16-byte loads (8 BF16
//    per lane, two loads per row in flight), x is staged in shared memory as
//    FP32 — the whole of x when M·K·4 fits (up to 160 KiB), otherwise in K
//    tiles re-staged for each group of rows.  CTAs are persistent (a
//    grid-stride loop over row groups); the 16 warps of a CTA split K among
//    them where the SMs' rounds gain more than the slices' ramps cost (small
//    N; bf16_gemv.cu's choose_k_split).
//  - 2..8 tokens: each warp owns a 16-row tile (lane 4g + t reads 16 bytes of
//    rows g and g + 8 per 32 columns: two MMAs' A fragments; a warp's two
//    steps in flight are neighbours, whole 128-byte lines; four where the
//    grid fits one wave at two CTAs per SM) and reads its
//    token's 8 columns of x through the L1, split in registers; one CTA of 8
//    warps per group of tiles, placed by the hardware, and the warps of a
//    tile split K where the tiles alone would leave SMs idle.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace reset {

constexpr int kBf16GemvMaxTokens = 8;

struct Bf16GemvArgs {
    int tokens = 0;                  // M, 1..8
    const float *x = nullptr;        // FP32 [tokens][ldx], K used; 4-byte aligned (16-byte aligned with ldx % 4 == 0: vector staging)
    int64_t ldx = 0;
    const void *weight = nullptr;    // BF16 [rows][ldw] row-major, 16-byte aligned
    int64_t rows = 0;                // N, >= 1
    int64_t cols = 0;                // K, a positive multiple of 8
    const float *bias = nullptr;     // [rows], or nullptr
    const float *residual = nullptr; // FP32 [tokens][ld_residual], added last, or nullptr; may equal y (then ld_residual == ldy)
    int64_t ld_residual = 0;
    float *y = nullptr;              // FP32 [tokens][ldy], rows elements written per token; must not overlap x or weight
    int64_t ldy = 0;
    int64_t ldw = 0;                 // weight row stride in elements; 0 means cols.  A multiple of 8.
    // 2..8 tokens on the tensor cores (false: the FP32 path at every token count; the engine's
    // lm_head below 4 rows, lib/cuda/device_session.cpp's lm_head_tensor_cores_from).
    bool tensor_cores = true;
};

// Enqueue on `stream` (no host synchronisation, no allocation: capturable;
// the first launch per device and token count sets the kernel's shared-memory
// attribute).  Throws reset::Error: RESET_ERR_UNSUPPORTED for a token count
// outside 1..8 or K not a multiple of 8, RESET_ERR_INVALID_ARGUMENT for a
// bad shape, pointer or alignment (nothing launched), RESET_ERR_BACKEND if the
// launch fails.
void bf16_gemv(const Bf16GemvArgs &args, cudaStream_t stream);

// The split of K inside a CTA (1, 2, 4, 8 or 16) and the grid a launch with
// these arguments uses, for benchmarks and tests.  kt is the K tile staged in
// shared memory (== cols when x is staged whole).
struct Bf16GemvPlan {
    int k_slices = 0;
    int grid = 0;        // CTAs: the FP32 path at most one resident wave, the tensor cores one per group
    int64_t groups = 0;  // row groups, walked grid-stride
    int64_t k_tile = 0;
    bool tensor_cores = false;  // the 2..8-token path (k_slices then splits K among a tile's warps)
    int steps_in_flight = 2;  // tensor cores: 32-column steps a warp keeps in flight, 2 or 4 (small grids)
};
Bf16GemvPlan bf16_gemv_plan(int tokens, int64_t rows, int64_t cols, bool tensor_cores = true);

}  // namespace reset
