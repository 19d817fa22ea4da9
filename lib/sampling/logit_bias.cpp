// logit_bias.cpp — checking a caller's logit bias (reset_set_logit_bias).
#include "sampling/logit_bias.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "api/errors.h"

namespace reset {

std::vector<float> LogitBias::dense(int32_t vocab) const {
    std::vector<float> out(static_cast<size_t>(vocab), 0.0f);
    for (size_t i = 0; i < tokens.size(); ++i) out[static_cast<size_t>(tokens[i])] = biases[i];
    return out;
}

LogitBias make_logit_bias(const reset_logit_bias *entries, size_t count, int32_t vocab) {
    if (count > 0 && !entries) fail(RESET_ERR_INVALID_ARGUMENT, "entries is NULL with count ", count);
    if (count > RESET_MAX_LOGIT_BIAS)
        fail(RESET_ERR_INVALID_ARGUMENT, "count ", count, " is above RESET_MAX_LOGIT_BIAS (", RESET_MAX_LOGIT_BIAS, ")");
    size_t banned = 0;
    for (size_t i = 0; i < count; ++i) {
        const reset_logit_bias &e = entries[i];
        if (e.token < 0 || e.token >= vocab)
            fail(RESET_ERR_OUT_OF_RANGE, "entries[", i, "].token = ", e.token, " is outside the vocabulary ",
                 vocab == kUnknownVocabulary ? std::string("(a negative id)") : "[0, " + std::to_string(vocab) + ")");
        const bool ban = e.bias == -INFINITY;
        if (!ban && !(std::fabs(e.bias) <= RESET_MAX_LOGIT_BIAS_VALUE))  // NaN and +inf fail this too
            fail(RESET_ERR_INVALID_ARGUMENT, "entries[", i, "].bias = ", e.bias, " is outside [-100, 100] and not "
                 "-INFINITY (a ban)");
        banned += ban ? 1 : 0;
    }
    std::vector<size_t> order(count);
    std::iota(order.begin(), order.end(), size_t(0));
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return entries[a].token < entries[b].token; });
    LogitBias bias;
    for (size_t k = 0; k < count; ++k) {
        const reset_logit_bias &e = entries[order[k]];
        if (!bias.tokens.empty() && bias.tokens.back() == e.token)
            fail(RESET_ERR_INVALID_ARGUMENT, "token ", e.token, " is listed twice");
        bias.tokens.push_back(e.token);
        bias.biases.push_back(e.bias);
    }
    if (banned == size_t(vocab))
        fail(RESET_ERR_INVALID_ARGUMENT, "every token of the vocabulary is banned: nothing could be drawn");
    return bias;
}

}  // namespace reset
