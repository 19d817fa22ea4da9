// added_tokens.cpp — see added_tokens.h.
#include "text/added_tokens.h"

#include <algorithm>

#include "text/utf8.h"

namespace reset {

bool is_unicode_whitespace(char32_t cp) {
    return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
           (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F ||
           cp == 0x3000;
}

namespace {

// The code point that ends at `end` (text valid UTF-8, end > 0).
char32_t previous_char(std::string_view text, size_t end, size_t &start) {
    start = end - 1;
    while (start > 0 && (static_cast<uint8_t>(text[start]) & 0xC0) == 0x80) --start;
    size_t pos = start;
    return utf8::next(text, pos);
}

// HF's single_word test uses "word characters": alphanumerics and '_'.  ASCII
// is what the shipped tokenizers need; other letters count as word characters
// through their UTF-8 lead byte, a conservative approximation.
bool is_word_char(char32_t cp) {
    return cp == '_' || (cp >= '0' && cp <= '9') || (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') ||
           (cp >= 0xC0 && !is_unicode_whitespace(cp));
}

}  // namespace

void AddedTokenMatcher::build(std::vector<AddedToken> tokens) {
    tokens_ = std::move(tokens);
    for (auto &bucket : by_first_byte_) bucket.clear();
    for (size_t k = 0; k < tokens_.size(); ++k)
        if (!tokens_[k].content.empty())
            by_first_byte_[static_cast<uint8_t>(tokens_[k].content[0])].push_back(static_cast<int32_t>(k));
    for (auto &bucket : by_first_byte_)
        std::stable_sort(bucket.begin(), bucket.end(), [&](int32_t a, int32_t b) {
            return tokens_[a].content.size() > tokens_[b].content.size();
        });
}

void AddedTokenMatcher::split(std::string_view text, bool special_tokens_as_control,
                              const std::function<void(std::string_view)> &on_text,
                              const std::function<void(int32_t)> &on_token) const {
    size_t run_start = 0;  // start of the pending plain run
    size_t pos = 0;
    while (pos < text.size()) {
        const auto &bucket = by_first_byte_[static_cast<uint8_t>(text[pos])];
        const AddedToken *match = nullptr;
        for (int32_t k : bucket) {
            const AddedToken &t = tokens_[k];
            if (text.compare(pos, t.content.size(), t.content) == 0) {
                match = &t;  // the longest at the leftmost position
                break;
            }
        }
        if (!match) {
            ++pos;
            continue;
        }
        size_t start = pos, stop = pos + match->content.size();
        // The automaton consumed this span even when the token is not used
        // here, so nothing inside it is searched again (as in HF).
        pos = stop;
        if (match->special && !special_tokens_as_control) continue;
        if (match->single_word) {
            size_t before_start = 0;
            const bool space_before = start == 0 || !is_word_char(previous_char(text, start, before_start));
            size_t after = stop;
            const bool space_after = stop == text.size() || !is_word_char(utf8::next(text, after));
            if (!space_before || !space_after) continue;
        }
        if (match->lstrip) {
            while (start > run_start) {
                size_t char_start = 0;
                if (!is_unicode_whitespace(previous_char(text, start, char_start))) break;
                start = char_start;
            }
        }
        if (match->rstrip) {
            while (stop < text.size()) {
                size_t next_pos = stop;
                if (!is_unicode_whitespace(utf8::next(text, next_pos))) break;
                stop = next_pos;
            }
            pos = stop;
        }
        if (start > run_start) on_text(text.substr(run_start, start - run_start));
        on_token(match->id);
        run_start = stop;
    }
    if (run_start < text.size()) on_text(text.substr(run_start));
}

}  // namespace reset
