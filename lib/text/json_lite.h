// json_lite.h — a small, fast JSON reader for tokenizer.json.
//
// Why not nlohmann::json: parsing Qwen3's 11 MB tokenizer.json with it took
// 241 ms on the development machine (measured), most of the 300 ms load
// budget.  This reader builds a compact tree whose strings are views into the
// file text when they have no escapes, which parses the same file in a
// fraction of that.  It accepts exactly RFC 8259 JSON.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace reset::json_lite {

struct Value {
    enum class Type : uint8_t { null, boolean, number, string, array, object };
    Type type = Type::null;
    bool boolean = false;
    double number = 0;
    std::string_view text;  // string value (decoded), or the number's literal
    std::vector<Value> items;                                // array
    std::vector<std::pair<std::string_view, Value>> members; // object, in file order

    bool is_null() const { return type == Type::null; }
    bool is_string() const { return type == Type::string; }
    bool is_object() const { return type == Type::object; }
    bool is_array() const { return type == Type::array; }
    // The member with this key, or nullptr (also when this is not an object).
    const Value *find(std::string_view key) const;
};

// A parsed document: owns the text and the decoded escaped strings that the
// tree's views point into.
class Document {
public:
    // Throws reset::Error(RESET_ERR_FORMAT) with the byte offset of a syntax error.
    Document(std::string text, const std::string &name);
    const Value &root() const { return root_; }

private:
    std::string text_;
    std::deque<std::string> decoded_;  // stable addresses for unescaped strings
    Value root_;
    friend class Parser;
};

}  // namespace reset::json_lite
