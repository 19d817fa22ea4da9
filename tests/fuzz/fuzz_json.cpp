// fuzz_json.cpp — the project's own JSON reader (lib/text/json_lite, used for
// tokenizer.json) against nlohmann::json as the independent reference, and
// the config.json parser on the same text.
//
// Checked: json_lite accepts exactly what nlohmann::json accepts (both claim
// RFC 8259; the comparison leaves out nesting past 512, which json_lite
// refuses, NUL bytes, which nlohmann reads as the end of the input, and
// numbers past double's range), refuses with reset::Error(RESET_ERR_FORMAT)
// and nothing else, and where both accept, they read the same strings, numbers and structure;
// parse_model_config throws only reset::Error, never another exception (which
// the C ABI would report as an internal error).
#include <cmath>

#include <nlohmann/json.hpp>

#include "api/errors.h"
#include "fuzz_support.h"
#include "model/config.h"
#include "text/json_lite.h"

using reset_fuzz::expect;
using reset_fuzz::finding;

namespace {

bool same(const reset::json_lite::Value &ours, const nlohmann::json &theirs) {
    using Type = reset::json_lite::Value::Type;
    switch (ours.type) {
    case Type::null: return theirs.is_null();
    case Type::boolean: return theirs.is_boolean() && theirs.get<bool>() == ours.boolean;
    case Type::number: {
        if (!theirs.is_number()) return false;
        const double value = theirs.get<double>();
        return value == ours.number || (std::isnan(value) && std::isnan(ours.number));
    }
    case Type::string: return theirs.is_string() && theirs.get_ref<const std::string &>() == ours.text;
    case Type::array:
        if (!theirs.is_array() || theirs.size() != ours.items.size()) return false;
        for (size_t i = 0; i < ours.items.size(); ++i)
            if (!same(ours.items[i], theirs[i])) return false;
        return true;
    case Type::object: {
        if (!theirs.is_object()) return false;
        // nlohmann keeps the last of repeated keys; compare each of ours that is the last of its name.
        for (size_t i = 0; i < ours.members.size(); ++i) {
            bool last = true;
            for (size_t j = i + 1; j < ours.members.size(); ++j) last &= ours.members[j].first != ours.members[i].first;
            if (!last) continue;
            auto it = theirs.find(std::string(ours.members[i].first));
            if (it == theirs.end() || !same(ours.members[i].second, *it)) return false;
        }
        return true;
    }
    }
    return false;
}

int depth_of(std::string_view text) {
    int depth = 0, deepest = 0;
    for (char c : text) {
        if (c == '[' || c == '{') deepest = std::max(deepest, ++depth);
        if (c == ']' || c == '}') --depth;
    }
    return deepest;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const std::string text(reinterpret_cast<const char *>(data), size);
    nlohmann::json theirs;
    bool theirs_ok = true;
    // nlohmann::json reads a NUL byte as the end of the input; json_lite refuses it (RFC 8259 has no such rule).
    const bool comparable = text.find('\0') == std::string::npos;
    try {
        theirs = nlohmann::json::parse(text);
    } catch (const nlohmann::json::out_of_range &) {
        return 0;  // a number past double's range: RFC 8259 lets readers refuse it (nlohmann) or not (json_lite)
    } catch (const nlohmann::json::exception &) {
        theirs_ok = false;
    }
    try {
        reset::json_lite::Document ours(text, "fuzz");
        expect(theirs_ok || !comparable, "json_lite accepted what nlohmann::json refuses: " + text.substr(0, 200));
        expect(!comparable || same(ours.root(), theirs),
               "json_lite and nlohmann::json read different values: " + text.substr(0, 200));
    } catch (const reset::Error &e) {
        expect(e.status() == RESET_ERR_FORMAT, std::string("json_lite refused with another status: ") + e.what());
        if (theirs_ok && comparable && depth_of(text) <= 512)
            finding("json_lite refused what nlohmann::json accepts: " + std::string(e.what()) + ": " +
                    text.substr(0, 200));
    }
    try {
        reset::parse_model_config(text, "", "fuzz/config.json");
    } catch (const reset::Error &) {
    } catch (const std::bad_alloc &) {
    } catch (const std::exception &e) {
        finding(std::string("parse_model_config threw a non-library exception: ") + e.what());
    }
    return 0;
}
