// top_logprobs.cpp — one pass over the row keeping the n largest keys in a
// min-heap (n <= 20: a few compares per token; no copy of the row).
#include "sampling/top_logprobs.h"

#include <algorithm>
#include <functional>
#include <vector>

#include "rules/logprob.h"
#include "rules/top_logprobs.h"

namespace reset {

int32_t top_logprobs(const float *logits, int32_t vocab, int32_t n, float raw_max, double log_sum_exp,
                     reset_token_logprob *out) {
    const int32_t count = std::min(n, vocab);
    if (count <= 0) return 0;
    std::vector<uint64_t> heap;  // the `count` largest keys so far; heap.front() the smallest of them
    heap.reserve(size_t(count));
    const std::greater<uint64_t> smaller_on_top;
    for (int32_t i = 0; i < vocab; ++i) {
        const uint64_t key = rule::top_logprob_key(logits[i], i);
        if (int32_t(heap.size()) < count) {
            heap.push_back(key);
            std::push_heap(heap.begin(), heap.end(), smaller_on_top);
        } else if (key > heap.front()) {
            std::pop_heap(heap.begin(), heap.end(), smaller_on_top);
            heap.back() = key;
            std::push_heap(heap.begin(), heap.end(), smaller_on_top);
        }
    }
    std::sort(heap.begin(), heap.end(), std::greater<uint64_t>());
    for (int32_t i = 0; i < count; ++i) {
        const float z = rule::top_logprob_logit(heap[size_t(i)]);
        out[i].token = rule::top_logprob_id(heap[size_t(i)]);
        out[i].logprob = rule::raw_logprob(z, raw_max, log_sum_exp);
    }
    return count;
}

}  // namespace reset

static_assert(reset::rule::kMaxTopLogprobs == RESET_MAX_TOP_LOGPROBS, "one limit for the header and the rule");
