// truncation.h — temperature, top-k, top-p, min-p and the draw (spec step 8).
//
// Order (the spec says only "after the usual truncation"): temperature
// scaling first, then top-k, then top-p on the renormalised survivors of
// top-k, then min-p relative to the most probable survivor — the order of
// Hugging Face's logits warpers, which the paper's evaluation used.
#pragma once

#include <cstdint>
#include <vector>

namespace reset {

// The tokens that survive truncation, ascending by id, with their
// unnormalised weights w_i = exp((z_i - z_max) / T) (FP32) and their sum
// (double).
struct Candidates {
    std::vector<int32_t> ids;
    std::vector<float> weights;
    double total = 0.0;
};

// Fill `out` with the survivors of truncating softmax(logits / temperature).
//   top_k  > 0: keep the k largest logits (ties: the lower ids).
//   top_p  < 1: keep the smallest prefix, by decreasing probability (ties:
//               lower id first), whose mass reaches top_p; the token that
//               crosses top_p is kept.
//   min_p  > 0: keep tokens with p_i >= min_p * p_max.
// At least one token (the argmax) always survives.  temperature must be
// > 1e-6 (greedy is an argmax, not a truncation); logits must be finite or
// -inf with at least one finite (checked by logit_stats).
void truncate(const float *logits, int32_t vocab, float max_logit, float temperature, int32_t top_k, float top_p,
              float min_p, Candidates &out);

// Inverse-CDF draw with u in [0, 1): the first candidate, in id order, whose
// running weight sum (double) exceeds u * total.
int32_t draw(const Candidates &candidates, double u);

// The token of a truncated softmax, from two uniforms u1, u2 in [0, 1)
// (philox::uniform and philox::second_uniform of the same step).
//
// Top-p when top-k cuts nothing draws rejection-first: s = the inverse-CDF
// draw with u1 over every unmasked token, untruncated; if s survives the
// truncation it is the token, else the token is draw(survivors, u2).  That
// is exact: a survivor i comes out with probability
//   w_i / W  +  (1 - W_N / W) · w_i / W_N  =  w_i / W_N,
// W the total weight, W_N the survivors'.  The first draw survives with
// probability W_N / W >= top_p, and testing one token (the mass ranked
// before it, against top_p·W) costs the CUDA sampler one pass over the row,
// where finding the nucleus' cut costs several (kernels/sampling.cu).
// Every other policy draws once: draw(survivors, u1).
//
// `out` receives the survivors (truncate()); `second_draw`, where given, whether
// the token came from the second draw (a rejected first one: the tests count
// that path).  Same preconditions as truncate.
int32_t draw_truncated(const float *logits, int32_t vocab, float max_logit, float temperature, int32_t top_k,
                       float top_p, float min_p, double u1, double u2, Candidates &out, bool *second_draw = nullptr);

}  // namespace reset
