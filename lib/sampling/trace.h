// trace.h — one JSON line per generated token (observability: the signals of
// reset_step / reset_decision, for analysis and plots).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "reset.h"

namespace reset {

struct TraceRecord {
    int32_t sequence = 0;
    int32_t token = -1;
    bool has_logprob = false;  // write "logprob" (the caller's struct has the field, 0.3 on)
    float logprob = 0.0f;
    const reset_token_logprob *top = nullptr;  // "top_logprobs" when top_count > 0 (reset_step, 0.4 on)
    int32_t top_count = 0;
    float entropy = 0.0f;
    float step_entropy = 0.0f;
    float global_mean = 0.0f;
    float threshold = 0.0f;
    float temperature = 0.0f;
    int32_t step_index = 0;
    bool boundary = false;
    bool uncertain = false;
    bool has_end = false;  // write "end" (reset_step only)
    bool end = false;
    int32_t end_reason = 0;  // with end: "end_reason" for RESET_END_EOS..RESET_END_LENGTH (0.5 on)
    int32_t stop_index = -1; // with RESET_END_STOP: "stop_index"
    const char *text = nullptr;  // write "text" when non-null (reset_step only)
    size_t text_len = 0;
};

// The record as one JSON object followed by '\n'.  Floats use 9 significant
// digits (round-trip); non-finite ones become null.  Text is escaped as JSON;
// a byte that is not part of a well-formed UTF-8 sequence becomes U+FFFD so
// the line is always valid JSON.
std::string trace_line(const TraceRecord &record);

}  // namespace reset
