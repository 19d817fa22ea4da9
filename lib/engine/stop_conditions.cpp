// stop_conditions.cpp — reset_set_stop's checks and the stop-string search.
#include "engine/stop_conditions.h"

#include <algorithm>
#include <cstring>

#include "api/errors.h"
#include "text/utf8.h"

namespace reset {

bool StopConditions::is_stop_id(int32_t token) const { return std::binary_search(ids.begin(), ids.end(), token); }

namespace {

std::vector<uint32_t> failure_function(const std::string &pattern) {
    std::vector<uint32_t> failure(pattern.size(), 0);
    uint32_t k = 0;
    for (size_t i = 1; i < pattern.size(); ++i) {
        while (k > 0 && pattern[i] != pattern[k]) k = failure[k - 1];
        if (pattern[i] == pattern[k]) ++k;
        failure[i] = k;
    }
    return failure;
}

}  // namespace

StopConditions make_stop_conditions(const reset_stop_options *options, int32_t vocab_size, bool has_tokenizer) {
    StopConditions c;
    if (!options) return c;
    const reset_stop_options &o = *options;
    if (o.string_count > RESET_MAX_STOP_STRINGS)
        fail(RESET_ERR_INVALID_ARGUMENT, "options->string_count = ", o.string_count, " is above ",
             RESET_MAX_STOP_STRINGS);
    if (o.id_count > RESET_MAX_STOP_IDS)
        fail(RESET_ERR_INVALID_ARGUMENT, "options->id_count = ", o.id_count, " is above ", RESET_MAX_STOP_IDS);
    if (o.string_count > 0 && !o.strings)
        fail(RESET_ERR_INVALID_ARGUMENT, "options->strings is NULL with string_count ", o.string_count);
    if (o.id_count > 0 && !o.ids) fail(RESET_ERR_INVALID_ARGUMENT, "options->ids is NULL with id_count ", o.id_count);
    if (o.max_tokens < 0) fail(RESET_ERR_INVALID_ARGUMENT, "options->max_tokens = ", o.max_tokens, " is negative");
    if (o.include_stop_string != 0 && o.include_stop_string != 1)
        fail(RESET_ERR_INVALID_ARGUMENT, "options->include_stop_string = ", o.include_stop_string,
             " (must be 0 or 1)");
    if (o.ignore_eos != 0 && o.ignore_eos != 1)
        fail(RESET_ERR_INVALID_ARGUMENT, "options->ignore_eos = ", o.ignore_eos, " (must be 0 or 1)");
    if (o.string_count > 0 && !has_tokenizer)
        fail(RESET_ERR_UNSUPPORTED, "stop strings need the model's tokenizer, and this model has none "
             "(stop ids and max_tokens work without one)");
    for (size_t k = 0; k < o.string_count; ++k) {
        const char *s = o.strings[k];
        if (!s) fail(RESET_ERR_INVALID_ARGUMENT, "options->strings[", k, "] is NULL");
        // Bounded: a string without its NUL must not be read past the limit.
        const size_t length = strnlen(s, RESET_MAX_STOP_STRING_BYTES + 1);
        if (length == 0) fail(RESET_ERR_INVALID_ARGUMENT, "options->strings[", k, "] is empty");
        if (length > RESET_MAX_STOP_STRING_BYTES)
            fail(RESET_ERR_INVALID_ARGUMENT, "options->strings[", k, "] is longer than ",
                 RESET_MAX_STOP_STRING_BYTES, " bytes");
        const std::string what = "options->strings[" + std::to_string(k) + "]";
        utf8::require_valid(std::string_view(s, length), what.c_str());
        c.strings.emplace_back(s, length);
        c.failure.push_back(failure_function(c.strings.back()));
    }
    for (size_t i = 0; i < o.id_count; ++i) {
        if (o.ids[i] < 0 || o.ids[i] >= vocab_size)
            fail(RESET_ERR_OUT_OF_RANGE, "options->ids[", i, "] = ", o.ids[i], " is outside the vocabulary [0, ",
                 vocab_size, ")");
        c.ids.push_back(o.ids[i]);
    }
    std::sort(c.ids.begin(), c.ids.end());
    c.ids.erase(std::unique(c.ids.begin(), c.ids.end()), c.ids.end());
    c.max_tokens = o.max_tokens;
    c.include_stop_string = o.include_stop_string == 1;
    c.ignore_eos = o.ignore_eos == 1;
    return c;
}

StopMatch find_stop(const StopConditions &c, std::string_view text) {
    StopMatch m;
    const size_t n = c.strings.size();
    // matched[k]: how many leading bytes of strings[k] end the text read so far.
    uint32_t matched[RESET_MAX_STOP_STRINGS] = {};
    for (size_t i = 0; i < text.size(); ++i) {
        for (size_t k = 0; k < n; ++k) {
            const std::string &pattern = c.strings[k];
            uint32_t state = matched[k];
            while (state > 0 && text[i] != pattern[state]) state = c.failure[k][state - 1];
            if (text[i] == pattern[state]) ++state;
            matched[k] = state;
            // Complete here: the longest wins, then the first listed (k rises).
            if (state == pattern.size() && (m.index < 0 || pattern.size() > c.strings[size_t(m.index)].size()))
                m.index = int32_t(k);
        }
        if (m.index >= 0) {
            m.end = i + 1;
            m.start = m.end - c.strings[size_t(m.index)].size();
            return m;
        }
    }
    for (size_t k = 0; k < n; ++k) m.hold = std::max<size_t>(m.hold, matched[k]);
    return m;
}

}  // namespace reset
