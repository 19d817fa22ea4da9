// utf8.h — the UTF-8 rules every text path shares: strict validation of
// input, lossy conversion of decoded bytes, and the "is this tail an
// unfinished character" test that lets streamed text never split a code point.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace reset::utf8 {

// Length of the longest valid UTF-8 prefix of `text` (== text.size() when all
// of it is valid).  Strict RFC 3629: no overlong forms, no surrogates, nothing
// above U+10FFFF.
size_t valid_prefix(std::string_view text);
inline bool is_valid(std::string_view text) { return valid_prefix(text) == text.size(); }

// Throw RESET_ERR_BAD_UTF8 naming the byte offset of the first invalid byte.
void require_valid(std::string_view text, const char *what);

// Replace every maximal invalid subpart by U+FFFD (the Unicode "best
// practice" that Rust's String::from_utf8_lossy follows, so decoding agrees
// with Hugging Face tokenizers byte for byte).
std::string lossy(std::string_view bytes);

// How many bytes at the end of `bytes` are the start of a character that is
// not complete yet but could still become valid (0..3).
size_t incomplete_tail(std::string_view bytes);

// Decode the code point at text[pos] (text must be valid there); advance pos.
char32_t next(std::string_view text, size_t &pos);
void append(std::string &out, char32_t cp);

// Python's str.isspace() set, which str.strip() and Jinja's `trim` use.
bool is_python_space(char32_t cp);

}  // namespace reset::utf8
