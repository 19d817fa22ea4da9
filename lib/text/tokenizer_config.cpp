// tokenizer_config.cpp — see tokenizer_config.h.  These files are small, so
// nlohmann::json is fine here (tokenizer.json itself uses json_lite).
#include "text/tokenizer_config.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "api/errors.h"

namespace reset {

namespace {

bool read_json(const std::filesystem::path &path, nlohmann::json &out) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) return false;
    std::ifstream file(path, std::ios::binary);
    if (!file) fail(RESET_ERR_IO, "cannot open '", path.string(), "'");
    std::stringstream text;
    text << file.rdbuf();
    try {
        out = nlohmann::json::parse(text.str());
    } catch (const nlohmann::json::exception &e) {
        fail(RESET_ERR_FORMAT, "'", path.string(), "' is not valid JSON: ", e.what());
    }
    return true;
}

// bos_token / eos_token are a string or an AddedToken object {"content": ...}.
std::string token_text(const nlohmann::json &value) {
    if (value.is_string()) return value.get<std::string>();
    if (value.is_object() && value.contains("content") && value["content"].is_string())
        return value["content"].get<std::string>();
    return {};
}

bool get_flag(const nlohmann::json &object, const char *key, bool fallback) {
    const auto it = object.find(key);
    return it != object.end() && it->is_boolean() ? it->get<bool>() : fallback;
}

}  // namespace

TokenizerConfig read_tokenizer_config(const std::string &directory) {
    TokenizerConfig config;
    namespace fs = std::filesystem;
    const fs::path dir(directory.empty() ? "." : directory);
    nlohmann::json tc;
    if (read_json(dir / "tokenizer_config.json", tc) && tc.is_object()) {
        if (tc.contains("bos_token")) {
            config.has_bos_entry = true;
            config.bos_text = token_text(tc["bos_token"]);
        }
        if (tc.contains("eos_token")) config.eos_text = token_text(tc["eos_token"]);
        if (tc.contains("chat_template")) {
            const auto &t = tc["chat_template"];
            if (t.is_string()) {
                config.chat_template = t.get<std::string>();
            } else if (t.is_array()) {  // named templates: [{"name": "default", "template": ...}, ...]
                for (const auto &item : t)
                    // (json::value("name", "") would throw on a non-string name: that is not "default")
                    if (item.is_object() && item.contains("name") && item["name"] == "default" &&
                        item.contains("template") && item["template"].is_string())
                        config.chat_template = item["template"].get<std::string>();
            }
        }
        if (tc.contains("added_tokens_decoder") && tc["added_tokens_decoder"].is_object()) {
            for (const auto &entry : tc["added_tokens_decoder"].items()) {
                AddedToken token;
                const std::string &key = entry.key();
                const bool digits = !key.empty() && key.size() <= 8 &&
                                    key.find_first_not_of("0123456789") == std::string::npos;
                const long id = digits ? std::stol(key) : -1;  // at most 8 digits: no overflow
                if (id < 0 || id > kMaxTokenId)
                    fail(RESET_ERR_FORMAT, "tokenizer_config.json: added_tokens_decoder key '", key,
                         "' is not an id (0..", kMaxTokenId, ")");
                token.id = static_cast<int32_t>(id);
                const auto &v = entry.value();
                if (!v.is_object() || !v.contains("content") || !v["content"].is_string())
                    fail(RESET_ERR_FORMAT, "tokenizer_config.json: added token ", entry.key(), " has no content");
                token.content = v["content"].get<std::string>();
                token.special = get_flag(v, "special", false);
                token.lstrip = get_flag(v, "lstrip", false);
                token.rstrip = get_flag(v, "rstrip", false);
                token.single_word = get_flag(v, "single_word", false);
                token.normalized = get_flag(v, "normalized", !token.special);
                config.added_tokens.push_back(std::move(token));
            }
        }
    }
    // Newer checkpoints keep the template in its own file.
    std::error_code ec;
    if (config.chat_template.empty() && fs::is_regular_file(dir / "chat_template.jinja", ec)) {
        std::ifstream file(dir / "chat_template.jinja", std::ios::binary);
        std::stringstream text;
        text << file.rdbuf();
        config.chat_template = text.str();
    }
    nlohmann::json gc;
    if (read_json(dir / "generation_config.json", gc) && gc.is_object() && gc.contains("eos_token_id")) {
        // Ids outside [0, kMaxTokenId] are left out (as ids past the vocabulary are, later): read as 64
        // bits, since get<int32_t> would wrap 2^32 + 5 to 5.
        auto add = [&](const nlohmann::json &id) {
            if (!id.is_number_integer()) return;
            const int64_t value = id.get<int64_t>();
            if (value >= 0 && value <= kMaxTokenId) config.generation_eos_ids.push_back(static_cast<int32_t>(value));
        };
        const auto &e = gc["eos_token_id"];
        if (e.is_array())
            for (const auto &id : e) add(id);
        else
            add(e);
    }
    return config;
}

}  // namespace reset
