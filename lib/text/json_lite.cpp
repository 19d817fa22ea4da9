// json_lite.cpp — see json_lite.h.
#include "text/json_lite.h"

#include <cstdlib>

#include "api/errors.h"
#include "text/utf8.h"

namespace reset::json_lite {

const Value *Value::find(std::string_view key) const {
    if (type != Type::object) return nullptr;
    for (const auto &member : members)
        if (member.first == key) return &member.second;
    return nullptr;
}

class Parser {
public:
    Parser(Document &doc, const std::string &name) : doc_(doc), s_(doc.text_), name_(name) {}

    void parse_document() {
        skip_space();
        parse_value(doc_.root_, 0);
        skip_space();
        if (pos_ != s_.size()) error("unexpected text after the JSON value");
    }

private:
    Document &doc_;
    std::string_view s_;
    const std::string &name_;
    size_t pos_ = 0;

    [[noreturn]] void error(const char *what) {
        fail(RESET_ERR_FORMAT, name_, ": malformed JSON at byte ", pos_, ": ", what);
    }

    void skip_space() {
        while (pos_ < s_.size()) {
            const char c = s_[pos_];
            if (c != ' ' && c != '\n' && c != '\r' && c != '\t') break;
            ++pos_;
        }
    }

    void expect_word(const char *word) {
        const std::string_view w(word);
        if (s_.substr(pos_, w.size()) != w) error("unknown literal");
        pos_ += w.size();
    }

    void parse_value(Value &v, int depth) {
        if (depth > 512) error("nested too deeply");
        if (pos_ >= s_.size()) error("unexpected end of input");
        const char c = s_[pos_];
        switch (c) {
        case '{': parse_object(v, depth); break;
        case '[': parse_array(v, depth); break;
        case '"':
            v.type = Value::Type::string;
            v.text = parse_string();
            break;
        case 't': expect_word("true"); v.type = Value::Type::boolean; v.boolean = true; break;
        case 'f': expect_word("false"); v.type = Value::Type::boolean; v.boolean = false; break;
        case 'n': expect_word("null"); v.type = Value::Type::null; break;
        default: parse_number(v); break;
        }
    }

    void parse_object(Value &v, int depth) {
        v.type = Value::Type::object;
        ++pos_;
        skip_space();
        if (pos_ < s_.size() && s_[pos_] == '}') {
            ++pos_;
            return;
        }
        for (;;) {
            skip_space();
            if (pos_ >= s_.size() || s_[pos_] != '"') error("expected a string key");
            std::string_view key = parse_string();
            skip_space();
            if (pos_ >= s_.size() || s_[pos_] != ':') error("expected ':'");
            ++pos_;
            skip_space();
            v.members.emplace_back(key, Value{});
            parse_value(v.members.back().second, depth + 1);
            skip_space();
            if (pos_ >= s_.size()) error("unexpected end of input in an object");
            if (s_[pos_] == ',') {
                ++pos_;
                continue;
            }
            if (s_[pos_] == '}') {
                ++pos_;
                return;
            }
            error("expected ',' or '}'");
        }
    }

    void parse_array(Value &v, int depth) {
        v.type = Value::Type::array;
        ++pos_;
        skip_space();
        if (pos_ < s_.size() && s_[pos_] == ']') {
            ++pos_;
            return;
        }
        for (;;) {
            skip_space();
            v.items.emplace_back();
            parse_value(v.items.back(), depth + 1);
            skip_space();
            if (pos_ >= s_.size()) error("unexpected end of input in an array");
            if (s_[pos_] == ',') {
                ++pos_;
                continue;
            }
            if (s_[pos_] == ']') {
                ++pos_;
                return;
            }
            error("expected ',' or ']'");
        }
    }

    void parse_number(Value &v) {
        const size_t start = pos_;
        if (pos_ < s_.size() && s_[pos_] == '-') ++pos_;
        const size_t digits = pos_;
        while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
        if (pos_ == digits) error("expected a value");
        if (s_[digits] == '0' && pos_ - digits > 1) error("a number with a leading zero");  // RFC 8259's int rule
        const bool is_integer = pos_ >= s_.size() || (s_[pos_] != '.' && s_[pos_] != 'e' && s_[pos_] != 'E');
        if (pos_ < s_.size() && s_[pos_] == '.') {
            ++pos_;
            const size_t frac = pos_;
            while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
            if (pos_ == frac) error("expected digits after '.'");
        }
        if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
            ++pos_;
            if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) ++pos_;
            const size_t exp = pos_;
            while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
            if (pos_ == exp) error("expected digits in the exponent");
        }
        v.type = Value::Type::number;
        v.text = s_.substr(start, pos_ - start);
        // Vocabulary ids are short integers: read those without strtod's copy.
        if (is_integer && pos_ - digits <= 15) {
            double value = 0;
            for (size_t k = digits; k < pos_; ++k) value = value * 10 + (s_[k] - '0');
            v.number = digits > start ? -value : value;
        } else {
            v.number = std::strtod(std::string(v.text).c_str(), nullptr);
        }
    }

    unsigned hex4() {
        if (pos_ + 4 > s_.size()) error("short \\u escape");
        unsigned value = 0;
        for (int k = 0; k < 4; ++k) {
            const char c = s_[pos_++];
            value <<= 4;
            if (c >= '0' && c <= '9') value |= unsigned(c - '0');
            else if (c >= 'a' && c <= 'f') value |= unsigned(c - 'a' + 10);
            else if (c >= 'A' && c <= 'F') value |= unsigned(c - 'A' + 10);
            else error("bad hex digit in a \\u escape");
        }
        return value;
    }

    // Returns a view into the file when the string has no escapes, else into
    // a decoded copy the document keeps.
    std::string_view parse_string() {
        ++pos_;  // the opening quote
        const size_t start = pos_;
        while (pos_ < s_.size()) {
            const char c = s_[pos_];
            if (c == '"') {
                std::string_view raw = s_.substr(start, pos_ - start);
                ++pos_;
                if (!utf8::is_valid(raw)) error("a string is not valid UTF-8");
                return raw;
            }
            if (c == '\\') break;
            if (static_cast<unsigned char>(c) < 0x20) error("a control character inside a string");
            ++pos_;
        }
        std::string out(s_.substr(start, pos_ - start));
        while (pos_ < s_.size()) {
            const char c = s_[pos_];
            if (c == '"') {
                ++pos_;
                if (!utf8::is_valid(out)) error("a string is not valid UTF-8");
                doc_.decoded_.push_back(std::move(out));
                return doc_.decoded_.back();
            }
            if (static_cast<unsigned char>(c) < 0x20) error("a control character inside a string");
            if (c != '\\') {
                out.push_back(c);
                ++pos_;
                continue;
            }
            ++pos_;
            if (pos_ >= s_.size()) break;
            const char e = s_[pos_++];
            switch (e) {
            case '"': out.push_back('"'); break;
            case '\\': out.push_back('\\'); break;
            case '/': out.push_back('/'); break;
            case 'b': out.push_back('\b'); break;
            case 'f': out.push_back('\f'); break;
            case 'n': out.push_back('\n'); break;
            case 'r': out.push_back('\r'); break;
            case 't': out.push_back('\t'); break;
            case 'u': {
                char32_t cp = hex4();
                if (cp >= 0xD800 && cp <= 0xDBFF) {
                    // A surrogate pair encodes one code point above U+FFFF.
                    if (pos_ + 2 > s_.size() || s_[pos_] != '\\' || s_[pos_ + 1] != 'u')
                        error("a lone high surrogate");
                    pos_ += 2;
                    const char32_t low = hex4();
                    if (low < 0xDC00 || low > 0xDFFF) error("a high surrogate without its low half");
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                    error("a lone low surrogate");
                }
                utf8::append(out, cp);
                break;
            }
            default: error("an unknown escape");
            }
        }
        error("an unterminated string");
    }
};

Document::Document(std::string text, const std::string &name) : text_(std::move(text)) {
    Parser parser(*this, name);
    parser.parse_document();
}

}  // namespace reset::json_lite
