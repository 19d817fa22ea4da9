// json_lines.cpp — the JSON of the datasets `reset eval` and `reset calibrate`
// read (one object per line) and of the records they write, through
// nlohmann::json (Debian's nlohmann-json3-dev, as the library uses): strict
// RFC 8259, UTF-8 validated.  Until session 25 this was a hand-written reader,
// which turned a broken surrogate escape into invalid UTF-8 and took a
// literal like "nan" or "0x10" for a number.
#include <nlohmann/json.hpp>

#include "cli.h"
#include "json_read.h"

namespace cli {

nlohmann::json parse_json_text(const std::string &text, const std::string &where, int max_depth) {
    // Nesting is limited: dump() of a member nested 200,000 deep overflows the stack (a segmentation
    // fault, measured; the hand-written reader's recursion crashed on the same line).
    const auto limit_depth = [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json &) {
        if (depth > max_depth && (event == nlohmann::json::parse_event_t::object_start ||
                                  event == nlohmann::json::parse_event_t::array_start))
            fail(where + ": bad JSON: nested deeper than " + std::to_string(max_depth));
        return true;
    };
    try {
        return nlohmann::json::parse(text, limit_depth);
    } catch (const nlohmann::json::exception &e) {  // parse_error, or out_of_range for a number like 1e999
        // The reason quotes what the parser last read: bytes that are not UTF-8 become U+FFFD.
        fail(where + ": bad JSON: " + nlohmann::json::parse(json_string(e.what())).get<std::string>());
    }
}

std::map<std::string, std::string> parse_json_object(const std::string &line, const std::string &where) {
    const nlohmann::json object = parse_json_text(line, where, 64);
    if (!object.is_object()) fail(where + ": not a JSON object");
    std::map<std::string, std::string> members;
    for (const auto &[key, value] : object.items())
        members[key] = value.is_string() ? value.get<std::string>() : value.dump();
    return members;
}

std::string json_string(const std::string &text) {
    // Bytes that are not UTF-8 (a token that is half a character) become U+FFFD: the record stays JSON.
    return nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace cli
