// byte_level.h — GPT-2's ByteLevel alphabet: each byte is shown as one
// printable code point so a byte string can be stored as text in a vocabulary.
// Printable Latin-1 bytes ('!'..'~', '¡'..'¬', '®'..'ÿ') stand for
// themselves; the other 68 bytes take U+0100 onwards, in byte order.
#pragma once

#include <array>
#include <cstdint>

namespace reset::byte_level {

inline bool stands_for_itself(int b) { return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF); }

// The code point that shows byte b.
inline char32_t char_of(uint8_t b) {
    static const std::array<char32_t, 256> table = [] {
        std::array<char32_t, 256> t{};
        char32_t next = 0x100;
        for (int v = 0; v < 256; ++v) t[static_cast<size_t>(v)] = stands_for_itself(v) ? char32_t(v) : next++;
        return t;
    }();
    return table[b];
}

// The byte a code point shows, or -1 if it is not in the alphabet.
inline int byte_of(char32_t cp) {
    static const std::array<int16_t, 0x144> table = [] {
        std::array<int16_t, 0x144> t{};
        t.fill(-1);
        for (int v = 0; v < 256; ++v) t[char_of(static_cast<uint8_t>(v))] = static_cast<int16_t>(v);
        return t;
    }();
    return cp < table.size() ? table[cp] : -1;
}

}  // namespace reset::byte_level
