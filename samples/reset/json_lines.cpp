// json_lines.cpp — just enough JSON for the datasets `reset eval` and
// `reset calibrate` read (one object per line) and the records they write.
#include <cstdio>

#include "cli.h"

namespace cli {

namespace {

struct Reader {
    const std::string &s;
    const std::string &where;
    size_t i = 0;

    [[noreturn]] void bad(const std::string &why) const {
        fail(where + ": bad JSON at byte " + std::to_string(i) + ": " + why);
    }
    void space() {
        while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n')) ++i;
    }
    void expect(char c) {
        space();
        if (i >= s.size() || s[i] != c) bad(std::string("expected '") + c + "'");
        ++i;
    }
    static void put_utf8(std::string &out, uint32_t cp) {
        if (cp < 0x80) {
            out += char(cp);
        } else if (cp < 0x800) {
            out += char(0xC0 | (cp >> 6));
            out += char(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            out += char(0xE0 | (cp >> 12));
            out += char(0x80 | ((cp >> 6) & 0x3F));
            out += char(0x80 | (cp & 0x3F));
        } else {
            out += char(0xF0 | (cp >> 18));
            out += char(0x80 | ((cp >> 12) & 0x3F));
            out += char(0x80 | ((cp >> 6) & 0x3F));
            out += char(0x80 | (cp & 0x3F));
        }
    }
    uint32_t hex4() {
        if (i + 4 > s.size()) bad("short \\u escape");
        uint32_t v = 0;
        for (int k = 0; k < 4; ++k) {
            const char c = s[i++];
            v <<= 4;
            if (c >= '0' && c <= '9') v |= uint32_t(c - '0');
            else if (c >= 'a' && c <= 'f') v |= uint32_t(c - 'a' + 10);
            else if (c >= 'A' && c <= 'F') v |= uint32_t(c - 'A' + 10);
            else bad("bad \\u escape");
        }
        return v;
    }
    std::string string_value() {
        expect('"');
        std::string out;
        while (true) {
            if (i >= s.size()) bad("unterminated string");
            const char c = s[i++];
            if (c == '"') return out;
            if (c != '\\') {
                out += c;
                continue;
            }
            if (i >= s.size()) bad("unterminated escape");
            const char e = s[i++];
            switch (e) {
            case '"': out += '"'; break;
            case '\\': out += '\\'; break;
            case '/': out += '/'; break;
            case 'b': out += '\b'; break;
            case 'f': out += '\f'; break;
            case 'n': out += '\n'; break;
            case 'r': out += '\r'; break;
            case 't': out += '\t'; break;
            case 'u': {
                uint32_t cp = hex4();
                // A surrogate pair spells one code point above U+FFFF.
                if (cp >= 0xD800 && cp < 0xDC00 && i + 1 < s.size() && s[i] == '\\' && s[i + 1] == 'u') {
                    i += 2;
                    const uint32_t low = hex4();
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                }
                put_utf8(out, cp);
                break;
            }
            default: bad(std::string("bad escape \\") + e);
            }
        }
    }
    // Any value; returns its text (decoded for a string, raw otherwise).
    std::string value() {
        space();
        if (i >= s.size()) bad("missing value");
        const char c = s[i];
        if (c == '"') return string_value();
        const size_t begin = i;
        if (c == '{' || c == '[') {
            const char close = c == '{' ? '}' : ']';
            ++i;
            space();
            if (i < s.size() && s[i] == close) {
                ++i;
                return s.substr(begin, i - begin);
            }
            while (true) {
                if (close == '}') {
                    string_value();
                    expect(':');
                }
                value();
                space();
                if (i < s.size() && s[i] == ',') {
                    ++i;
                    continue;
                }
                expect(close);
                return s.substr(begin, i - begin);
            }
        }
        while (i < s.size() && (isalnum(static_cast<unsigned char>(s[i])) || s[i] == '-' || s[i] == '+' || s[i] == '.'))
            ++i;
        const std::string literal = s.substr(begin, i - begin);
        if (literal.empty()) bad("unexpected character");
        if (literal != "true" && literal != "false" && literal != "null") {
            char *end = nullptr;
            std::strtod(literal.c_str(), &end);
            if (*end != '\0') bad("bad literal '" + literal + "'");
        }
        return literal;
    }
};

}  // namespace

std::map<std::string, std::string> parse_json_object(const std::string &line, const std::string &where) {
    Reader r{line, where};
    std::map<std::string, std::string> members;
    r.expect('{');
    r.space();
    if (r.i < line.size() && line[r.i] == '}') {
        ++r.i;
    } else {
        while (true) {
            std::string key = r.string_value();
            r.expect(':');
            members[key] = r.value();
            r.space();
            if (r.i < line.size() && line[r.i] == ',') {
                ++r.i;
                continue;
            }
            r.expect('}');
            break;
        }
    }
    r.space();
    if (r.i != line.size()) r.bad("text after the object");
    return members;
}

std::string json_string(const std::string &text) {
    std::string out = "\"";
    for (unsigned char c : text) {
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default:
            if (c < 0x20) {
                char buffer[8];
                std::snprintf(buffer, sizeof buffer, "\\u%04x", c);
                out += buffer;
            } else {
                out += char(c);
            }
        }
    }
    return out + "\"";
}

}  // namespace cli
