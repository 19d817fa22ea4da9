// embedding_lookup.h — the first step of a decode/prefill step on the GPU
// (kernels/embedding_lookup.cu): x[m][0..hidden) = FP32(table[ids[m]][...]),
// the BF16 embedding row of each token id, widened exactly to FP32.
//
// The ids are read on the device (so a captured CUDA graph sees new tokens).
// The host validates ids before; an id outside [0, vocab) writes a row of
// zeros here, only so that a bad id can never read outside the table.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace reset {

struct EmbeddingLookupArgs {
    int tokens = 0;                 // rows of x, 1..65,535
    const int32_t *ids = nullptr;   // device [tokens]
    const void *table = nullptr;    // device BF16 [vocab][hidden], row-major (the checkpoint layout)
    int64_t vocab = 0;
    int64_t hidden = 0;
    float *x = nullptr;             // device FP32 [tokens][ldx], hidden elements written per row
    int64_t ldx = 0;
};

// Enqueue on `stream` (no host synchronisation, no allocation: capturable).
// Throws reset::Error: RESET_ERR_INVALID_ARGUMENT for a bad shape or pointer,
// RESET_ERR_UNSUPPORTED for more than 65,535 tokens (nothing launched), and
// RESET_ERR_BACKEND if the launch fails.  16-byte loads and stores when
// hidden % 8 == 0, ldx % 4 == 0 and table and x are 16-byte aligned; an
// element-wise path otherwise.
void embedding_lookup(const EmbeddingLookupArgs &args, cudaStream_t stream);

}  // namespace reset
