// pretokenizer.h — the Split (regex) and ByteLevel pre-tokenizers of HF
// tokenizers, through PCRE2 with its JIT.
//
// HF compiles the Split regexes with Oniguruma.  PCRE2 reads the same syntax
// for every pattern the shipped tokenizers use; the one difference that
// matters is `\s`: Oniguruma's Unicode \s includes U+0085 (NEL) and PCRE2's
// does not, so \s and \S are rewritten to an explicit White_Space class
// before compiling.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace reset {

class Regex {
public:
    explicit Regex(const std::string &onig_pattern);
    ~Regex();
    Regex(const Regex &) = delete;
    Regex &operator=(const Regex &) = delete;

    // Split `text` (valid UTF-8) HF's "Isolated" way: every match is a piece
    // and so is every gap between matches.  Appends to `pieces`.
    void split_isolated(std::string_view text, std::vector<std::string_view> &pieces) const;

private:
    void *code_ = nullptr;  // pcre2_code_8
};

// The pattern ByteLevel uses when use_regex is true (GPT-2's).
extern const char *const kGpt2Pattern;

// The onig pattern with \s / \S spelled as explicit classes (see above).
std::string translate_onig_pattern(const std::string &pattern);

}  // namespace reset
