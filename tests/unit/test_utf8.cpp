// UTF-8 rules of the text module: strict validation, lossy conversion as
// Rust's from_utf8_lossy (which HF decoders use), unfinished-tail detection.
#include <doctest/doctest.h>

#include "api/errors.h"
#include "text/utf8.h"

using namespace reset;

TEST_CASE("utf8 validation is strict RFC 3629") {
    CHECK(utf8::is_valid(""));
    CHECK(utf8::is_valid("plain ASCII"));
    CHECK(utf8::is_valid("caf\xC3\xA9 \xE4\xB8\xAD \xF0\x9F\x98\x80"));
    CHECK_FALSE(utf8::is_valid("\xC0\xAF"));          // overlong '/'
    CHECK_FALSE(utf8::is_valid("\xE0\x80\xAF"));      // overlong
    CHECK_FALSE(utf8::is_valid("\xED\xA0\x80"));      // a surrogate
    CHECK_FALSE(utf8::is_valid("\xF4\x90\x80\x80"));  // above U+10FFFF
    CHECK_FALSE(utf8::is_valid("\xFF"));
    CHECK_FALSE(utf8::is_valid("abc\xC3"));  // truncated
    CHECK(utf8::valid_prefix("ab\xE4\xB8") == 2);
}

TEST_CASE("require_valid rejects with RESET_ERR_BAD_UTF8 and the offset") {
    try {
        utf8::require_valid("ok\xFFno", "text");
        FAIL("no exception");
    } catch (const Error &e) {
        CHECK(e.status() == RESET_ERR_BAD_UTF8);
        CHECK(std::string(e.what()).find("byte 2") != std::string::npos);
    }
}

TEST_CASE("lossy replaces each maximal invalid subpart with one U+FFFD") {
    const std::string r = "\xEF\xBF\xBD";
    CHECK(utf8::lossy("abc") == "abc");
    CHECK(utf8::lossy("\xE2\x82" "A") == r + "A");               // a truncated 3-byte sequence: one U+FFFD
    CHECK(utf8::lossy("\xF0\x80\x80") == r + r + r);             // F0 80 is never valid: each byte
    CHECK(utf8::lossy("\xED\xA0\x80") == r + r + r);             // surrogates: each byte
    CHECK(utf8::lossy("\xF0\x9F\x98") == r);                     // a truncated emoji at the end
    CHECK(utf8::lossy("\xC3\xA9\xFF\xC3\xA9") == "\xC3\xA9" + r + "\xC3\xA9");
}

TEST_CASE("incomplete_tail finds only characters that can still complete") {
    CHECK(utf8::incomplete_tail("abc") == 0);
    CHECK(utf8::incomplete_tail("a\xF0") == 1);
    CHECK(utf8::incomplete_tail("a\xF0\x9F") == 2);
    CHECK(utf8::incomplete_tail("a\xF0\x9F\x98") == 3);
    CHECK(utf8::incomplete_tail("a\xF0\x9F\x98\x80") == 0);  // complete
    CHECK(utf8::incomplete_tail("a\xF0\x80") == 0);           // can never complete
    CHECK(utf8::incomplete_tail("\xE4\xB8") == 2);
    CHECK(utf8::incomplete_tail("\x80") == 0);
}

TEST_CASE("Python whitespace matches str.isspace") {
    for (char32_t c : {0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x1C, 0x1F, 0x20, 0x85, 0xA0, 0x1680, 0x2000, 0x200A, 0x2028,
                       0x2029, 0x202F, 0x205F, 0x3000})
        CHECK(utf8::is_python_space(c));
    for (char32_t c : {0x41, 0x200B, 0x180E, 0xFEFF, 0x00}) CHECK_FALSE(utf8::is_python_space(c));
}
