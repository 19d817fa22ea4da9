// python_json.cpp — see python_json.h.
#include "text/python_json.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <unordered_map>

namespace reset::python_json {

namespace {

// json.encoder.py_encode_basestring: the seven short escapes, other control
// characters as \u00xx (lower-case hex), everything else as it is.
void dump_string(std::string &out, std::string_view s) {
    static const char kHex[] = "0123456789abcdef";
    out += '"';
    for (const char c : s) {
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        default:
            if (static_cast<unsigned char>(c) < 0x20) {
                out += "\\u00";
                out += kHex[(c >> 4) & 0xF];
                out += kHex[c & 0xF];
            } else {
                out += c;
            }
        }
    }
    out += '"';
}

// json.loads makes an int of a literal without '.', 'e' or 'E' (written back
// digit for digit, any size; "-0" is the int 0), a float of any other (the
// double json_lite read with strtod).
void dump_number(std::string &out, const json_lite::Value &v) {
    const std::string_view text = v.text;
    if (text.find_first_of(".eE") == std::string_view::npos) {
        out += text == "-0" ? std::string_view("0") : text;
        return;
    }
    out += float_repr(v.number);
}

}  // namespace

std::string float_repr(double x) {
    if (std::isnan(x)) return "NaN";
    if (std::isinf(x)) return x > 0 ? "Infinity" : "-Infinity";
    if (x == 0) return std::signbit(x) ? "-0.0" : "0.0";
    // The shortest digits that read back as x (what Python's repr uses too).
    char buf[64];
    const std::to_chars_result r = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::scientific);
    const std::string_view sci(buf, size_t(r.ptr - buf));  // "-d.ddde+XX"
    std::string out = x < 0 ? "-" : "";
    const size_t mantissa_start = x < 0 ? 1 : 0;
    const size_t e = sci.find('e');
    std::string digits;
    for (size_t i = mantissa_start; i < e; ++i)
        if (sci[i] != '.') digits += sci[i];
    int exponent = 0;
    const char *exponent_text = sci.data() + e + 1 + (sci[e + 1] == '+');  // from_chars takes '-', not '+'
    std::from_chars(exponent_text, sci.data() + sci.size(), exponent);
    // Python's float_repr_style "short": the point sits decpt digits in;
    // exponent form when decpt <= -4 or decpt > 16.
    const int decpt = exponent + 1;
    const int n = int(digits.size());
    if (decpt > -4 && decpt <= 16) {
        if (decpt <= 0) {
            out += "0.";
            out.append(size_t(-decpt), '0');
            out += digits;
        } else if (decpt >= n) {
            out += digits;
            out.append(size_t(decpt - n), '0');
            out += ".0";
        } else {
            out += digits.substr(0, size_t(decpt));
            out += '.';
            out += digits.substr(size_t(decpt));
        }
        return out;
    }
    out += digits[0];
    if (n > 1) {
        out += '.';
        out += digits.substr(1);
    }
    out += exponent < 0 ? "e-" : "e+";
    const int magnitude = std::abs(exponent);
    if (magnitude < 10) out += '0';
    out += std::to_string(magnitude);
    return out;
}

void dump_to(std::string &out, const json_lite::Value &v) {
    using Type = json_lite::Value::Type;
    switch (v.type) {
    case Type::null: out += "null"; return;
    case Type::boolean: out += v.boolean ? "true" : "false"; return;
    case Type::number: dump_number(out, v); return;
    case Type::string: dump_string(out, v.text); return;
    case Type::array:
        out += '[';
        for (size_t i = 0; i < v.items.size(); ++i) {
            if (i > 0) out += ", ";
            dump_to(out, v.items[i]);
        }
        out += ']';
        return;
    case Type::object: {
        // A Python dict: a repeated key keeps its first place and its last value.  Each key's last
        // member, found in one pass (a request may hold objects of many members).
        std::unordered_map<std::string_view, size_t> last;
        last.reserve(v.members.size());
        for (size_t i = 0; i < v.members.size(); ++i) last[v.members[i].first] = i;
        out += '{';
        bool first = true;
        for (size_t i = 0; i < v.members.size(); ++i) {
            const std::string_view key = v.members[i].first;
            const auto found = last.find(key);
            if (found == last.end()) continue;  // written at its first place already
            if (!first) out += ", ";
            first = false;
            dump_string(out, key);
            out += ": ";
            dump_to(out, v.members[found->second].second);
            last.erase(found);
        }
        out += '}';
        return;
    }
    }
}

std::string dumps(const json_lite::Value &value) {
    std::string out;
    dump_to(out, value);
    return out;
}

}  // namespace reset::python_json
