// top_logprobs.h — reset_step.top_logprobs on the device (kernels/top_logprobs.cu):
// for each of up to 8 sequences, the `count` most likely tokens of the raw
// logits a decode step drew from, in rules/top_logprobs.h's order, with
// rules/logprob.h's log-probabilities computed from the sampler's own maximum
// and log Σe (SamplingSignalsDevice), so that an entry for the drawn token
// equals the step's logprob bit for bit.  One launch, no host
// synchronisation: it sits in the decode step's graph right after the sampler,
// and only in sessions that ask for top logprobs.
//
// How: each CTA takes a slice of a row.  Its `count` largest keys are among
// the elements of the threads whose own maximum is at least the count-th
// largest thread maximum (at most `count` threads, so at most count × the
// elements per thread: a bound, not a guess); those are ranked exactly.  The
// last CTA of a row to finish (an arrival counter) does the same over the
// CTAs' lists and writes the row's entries.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "kernels/sampling.h"
#include "reset.h"

namespace reset {

struct TopLogprobsArgs {
    int batch = 0;                                   // 1..8
    int32_t vocab = 0;                               // >= 1
    const float *logits = nullptr;                   // [batch][ld_logits], the rows the sampler drew from
    int64_t ld_logits = 0;                           // >= vocab
    int32_t count = 0;                               // entries per row, 1..rule::kMaxTopLogprobs (<= vocab)
    const SamplingSignalsDevice *signals = nullptr;  // [batch]: status, raw_max, log_sum_exp of the sampler
    // Optional, read on the device: 0 = skip this sequence (its entries are
    // left as they were); null = every sequence active.
    const int32_t *active = nullptr;
    // top_logprobs_workspace_bytes(batch, vocab), zero-filled once when
    // allocated: it holds each row's arrival counter, which the kernel
    // leaves at zero again.
    void *workspace = nullptr;
    reset_token_logprob *out = nullptr;              // [batch][count]; written for an active row whose status is OK
    // Tests (a timing breakdown): 1-4 return after that phase of the kernel (the row's entries are
    // then not written); 0 = the whole kernel.
    int stop_after_phase = 0;
};

size_t top_logprobs_workspace_bytes(int batch, int32_t vocab);

// Enqueue on `stream` (capturable: no allocation, no synchronisation).
// Throws reset::Error: RESET_ERR_INVALID_ARGUMENT for a bad shape or pointer,
// RESET_ERR_UNSUPPORTED for a vocabulary above 2^24, RESET_ERR_BACKEND if the
// launch fails.
void top_logprobs(const TopLogprobsArgs &args, cudaStream_t stream);

}  // namespace reset
