// stop_conditions.h — when a sequence stops before an end-of-generation id
// (reset_set_stop): stop strings found in the generated text, stop ids, and a
// token budget.  The matching is on text, character by character, so where a
// generation stops does not depend on how its text was split into tokens.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "reset.h"

namespace reset {

struct StopConditions {
    std::vector<std::string> strings;
    // failure[k][i]: the length of the longest proper prefix of strings[k]
    // that is also a suffix of its first i + 1 bytes (Knuth-Morris-Pratt).
    std::vector<std::vector<uint32_t>> failure;
    std::vector<int32_t> ids;  // sorted, unique
    int32_t max_tokens = 0;    // 0: no limit
    bool include_stop_string = false;
    bool ignore_eos = false;

    bool is_stop_id(int32_t token) const;
};

// The conditions a caller's options describe, checked as reset_set_stop
// documents (throws; nothing is kept on error).  options NULL: none.
StopConditions make_stop_conditions(const reset_stop_options *options, int32_t vocab_size, bool has_tokenizer);

struct StopMatch {
    int32_t index = -1;         // the stop string found, or -1
    size_t start = 0, end = 0;  // its bytes in the text searched
    // With no match: how many bytes at the end of the text begin a stop
    // string (the most over all of them), which must be held back.
    size_t hold = 0;
};

// Search `text` from its start for the first byte at which a stop string is
// complete; of several complete there, the longest, then the first listed.
StopMatch find_stop(const StopConditions &conditions, std::string_view text);

}  // namespace reset
