// added_tokens.h — finding added and special tokens inside text, as Hugging
// Face's AddedVocabulary does: leftmost-longest matches, with the lstrip /
// rstrip / single_word options of each token.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace reset {

struct AddedToken {
    std::string content;
    int32_t id = -1;
    bool special = false;
    bool lstrip = false, rstrip = false, single_word = false;
    bool normalized = false;  // matched after the normalizer (HF), else on the raw text
};

class AddedTokenMatcher {
public:
    void build(std::vector<AddedToken> tokens);
    bool empty() const { return tokens_.empty(); }

    // Split `text` into plain runs and token matches, in order: on_text(run)
    // for text, on_token(id) for a match.  special_tokens_as_control == false
    // leaves special tokens' text in the runs (HF's encode_special_tokens),
    // while non-special added tokens are still matched.
    void split(std::string_view text, bool special_tokens_as_control,
               const std::function<void(std::string_view)> &on_text,
               const std::function<void(int32_t)> &on_token) const;

private:
    std::vector<AddedToken> tokens_;
    std::array<std::vector<int32_t>, 256> by_first_byte_;  // longest first
};

// Rust's char::is_whitespace (the Unicode White_Space property), which HF
// uses for lstrip/rstrip.
bool is_unicode_whitespace(char32_t cp);

}  // namespace reset
