// utf8.cpp — see utf8.h.
#include "text/utf8.h"

#include "api/errors.h"

namespace reset::utf8 {

namespace {

// The number of bytes a lead byte announces (0: not a lead byte), and the
// range its first continuation byte must lie in (Unicode Table 3-7, which
// excludes overlong forms, surrogates and values above U+10FFFF).
struct Lead {
    int length;
    uint8_t second_low, second_high;
};

Lead lead_of(uint8_t b) {
    if (b < 0x80) return {1, 0, 0};
    if (b >= 0xC2 && b <= 0xDF) return {2, 0x80, 0xBF};
    if (b == 0xE0) return {3, 0xA0, 0xBF};
    if ((b >= 0xE1 && b <= 0xEC) || b == 0xEE || b == 0xEF) return {3, 0x80, 0xBF};
    if (b == 0xED) return {3, 0x80, 0x9F};
    if (b == 0xF0) return {4, 0x90, 0xBF};
    if (b >= 0xF1 && b <= 0xF3) return {4, 0x80, 0xBF};
    if (b == 0xF4) return {4, 0x80, 0x8F};
    return {0, 0, 0};
}

// Bytes of a valid character at text[pos] (0 when invalid); `subpart` gets
// the length of the maximal valid-so-far prefix (>= 1) when invalid.
int check_at(std::string_view text, size_t pos, int &subpart) {
    const auto *s = reinterpret_cast<const uint8_t *>(text.data());
    const size_t n = text.size();
    const Lead lead = lead_of(s[pos]);
    subpart = 1;
    if (lead.length == 1) return 1;
    if (lead.length == 0) return 0;
    if (pos + 1 >= n || s[pos + 1] < lead.second_low || s[pos + 1] > lead.second_high) return 0;
    subpart = 2;
    for (int k = 2; k < lead.length; ++k) {
        if (pos + k >= n || (s[pos + k] & 0xC0) != 0x80) return 0;
        subpart = k + 1;
    }
    return lead.length;
}

}  // namespace

size_t valid_prefix(std::string_view text) {
    size_t pos = 0;
    const auto *s = reinterpret_cast<const uint8_t *>(text.data());
    while (pos < text.size()) {
        if (s[pos] < 0x80) {  // ASCII runs are the common case
            ++pos;
            continue;
        }
        int subpart = 0;
        const int length = check_at(text, pos, subpart);
        if (length == 0) return pos;
        pos += static_cast<size_t>(length);
    }
    return pos;
}

void require_valid(std::string_view text, const char *what) {
    const size_t good = valid_prefix(text);
    if (good != text.size())
        fail(RESET_ERR_BAD_UTF8, what, " is not valid UTF-8 (byte ", good, " of ", text.size(),
             " is 0x", [&] {
                 static const char hex[] = "0123456789abcdef";
                 const auto b = static_cast<uint8_t>(text[good]);
                 return std::string{hex[b >> 4], hex[b & 15]};
             }(),
             "); it was rejected, not altered");
}

std::string lossy(std::string_view bytes) {
    std::string out;
    out.reserve(bytes.size());
    size_t pos = 0;
    while (pos < bytes.size()) {
        int subpart = 0;
        const int length = check_at(bytes, pos, subpart);
        if (length > 0) {
            out.append(bytes.data() + pos, static_cast<size_t>(length));
            pos += static_cast<size_t>(length);
        } else {
            out.append("\xEF\xBF\xBD");
            pos += static_cast<size_t>(subpart);
        }
    }
    return out;
}

size_t incomplete_tail(std::string_view bytes) {
    // A character is at most 4 bytes, so only the last 3 can be unfinished.
    const size_t n = bytes.size();
    for (size_t back = 1; back <= 3 && back <= n; ++back) {
        const size_t pos = n - back;
        const Lead lead = lead_of(static_cast<uint8_t>(bytes[pos]));
        if (lead.length == 0) continue;  // a continuation byte (or invalid): look further back
        if (lead.length == 1) return 0;
        if (static_cast<size_t>(lead.length) <= back) return 0;  // complete (or invalid) already
        int subpart = 0;
        check_at(bytes, pos, subpart);
        // Unfinished only if every byte after the lead so far is acceptable.
        return static_cast<size_t>(subpart) == back ? back : 0;
    }
    return 0;
}

char32_t next(std::string_view text, size_t &pos) {
    const auto *s = reinterpret_cast<const uint8_t *>(text.data());
    const uint8_t b = s[pos];
    if (b < 0x80) {
        ++pos;
        return b;
    }
    if (b < 0xE0) {
        const char32_t cp = (char32_t(b & 0x1F) << 6) | (s[pos + 1] & 0x3F);
        pos += 2;
        return cp;
    }
    if (b < 0xF0) {
        const char32_t cp = (char32_t(b & 0x0F) << 12) | (char32_t(s[pos + 1] & 0x3F) << 6) | (s[pos + 2] & 0x3F);
        pos += 3;
        return cp;
    }
    const char32_t cp = (char32_t(b & 0x07) << 18) | (char32_t(s[pos + 1] & 0x3F) << 12) |
                        (char32_t(s[pos + 2] & 0x3F) << 6) | (s[pos + 3] & 0x3F);
    pos += 4;
    return cp;
}

void append(std::string &out, char32_t cp) {
    if (cp < 0x80) {
        out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
        out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
        out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
        out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
}

bool is_python_space(char32_t cp) {
    // CPython's _PyUnicode_IsWhitespace: bidirectional types WS, B, S plus
    // category Zs (Unicode 15).
    switch (cp) {
    case 0x09: case 0x0A: case 0x0B: case 0x0C: case 0x0D: case 0x1C: case 0x1D: case 0x1E: case 0x1F:
    case 0x20: case 0x85: case 0xA0: case 0x1680: case 0x2028: case 0x2029: case 0x202F: case 0x205F:
    case 0x3000:
        return true;
    default:
        return cp >= 0x2000 && cp <= 0x200A;
    }
}

}  // namespace reset::utf8
