// conversation_file.cpp — the conversation `reset chat` saves with /session
// save and --session (cli.h, SavedConversation): one JSON object, so that
// every message comes back byte for byte whatever it contains (the Markdown
// transcript /save writes cannot tell a message's own "### user" line from
// the next message).  Its "messages" are the chat APIs' (OpenAI's, vLLM's,
// llama.cpp server's), so other tools can read them:
//
//   {"format": "libreset-chat", "version": 1, "thinking": true, "kept_from": 1,
//    "messages": [{"role": "system", "content": "..."},
//                 {"role": "user", "content": "..."}, {"role": "assistant", "content": "..."}, ...]}
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli.h"
#include "json_read.h"

namespace cli {

namespace {

constexpr const char *kFormat = "libreset-chat";
constexpr int kVersion = 1;
// A conversation is text: far below this.  The bound keeps a wrong path (a model's weights) from
// being read whole into memory before the parser refuses it.
constexpr uint64_t kMaxBytes = uint64_t(256) << 20;

// The shape turn() keeps the history in: a system prompt first when there is one, then
// user/assistant pairs (a cancelled answer is kept as far as it got, so every user message has
// its answer).  Returns what is wrong, or "" when nothing is.
std::string check_shape(const SavedConversation &c) {
    const bool has_system = !c.messages.empty() && c.messages[0].role == "system";
    const size_t first = has_system ? 1 : 0;
    if ((c.messages.size() - first) % 2 != 0) return "a user message without its answer";
    for (size_t i = first; i < c.messages.size(); ++i) {
        const char *expected = (i - first) % 2 == 0 ? "user" : "assistant";
        if (c.messages[i].role != expected)
            return "message " + std::to_string(i) + " is '" + c.messages[i].role + "' where '" + expected +
                   "' belongs (a system prompt first, then user and assistant in turn)";
    }
    // kept_from is where what the model sees begins: the first message after the system prompt,
    // a user message further on (older exchanges left out), or the end.
    if (c.kept_from < first || c.kept_from > c.messages.size() ||
        (c.kept_from < c.messages.size() && c.messages[c.kept_from].role != "user"))
        return "kept_from " + std::to_string(c.kept_from) + " is not the start of an exchange";
    return "";
}

}  // namespace

void write_conversation(const std::string &path, const SavedConversation &conversation) {
    const std::string wrong = check_shape(conversation);
    if (!wrong.empty()) fail("cannot save the conversation: " + wrong);
    nlohmann::ordered_json messages = nlohmann::ordered_json::array();
    for (const Message &m : conversation.messages) messages.push_back({{"role", m.role}, {"content", m.content}});
    const nlohmann::ordered_json object = {{"format", kFormat},
                                           {"version", kVersion},
                                           {"thinking", conversation.thinking},
                                           {"kept_from", conversation.kept_from},
                                           {"messages", messages}};
    std::string text;
    try {
        // Every message entered the model through the tokenizer, which refuses text that is not
        // UTF-8, so strict never throws here; if it did, the file would not be written.
        text = object.dump(1, ' ', false, nlohmann::ordered_json::error_handler_t::strict) + "\n";
    } catch (const nlohmann::json::exception &e) {
        fail("cannot save the conversation: " + std::string(e.what()));
    }
    // Written beside, then renamed over: a failure part way leaves the previous file whole.
    const std::string temporary = path + ".tmp";
    {
        std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
        if (!out) fail("cannot write " + temporary + ": " + std::strerror(errno));
        out.write(text.data(), std::streamsize(text.size()));
        out.close();
        if (!out) {
            std::remove(temporary.c_str());
            fail("cannot write " + temporary);
        }
    }
    if (std::rename(temporary.c_str(), path.c_str()) != 0) {
        const std::string reason = std::strerror(errno);
        std::remove(temporary.c_str());
        fail("cannot write " + path + ": " + reason);
    }
}

SavedConversation read_conversation(const std::string &path) {
    struct stat info;
    if (stat(path.c_str(), &info) != 0) fail("cannot read " + path + ": " + std::strerror(errno));
    if (!S_ISREG(info.st_mode)) fail(path + " is not a file");
    if (uint64_t(info.st_size) > kMaxBytes) fail(path + " is not a saved conversation: larger than 256 MB");
    std::ifstream in(path, std::ios::binary);
    if (!in) fail("cannot read " + path + ": " + std::strerror(errno));
    std::ostringstream bytes;
    bytes << in.rdbuf();
    if (in.bad()) fail("cannot read " + path);

    const std::string where = path + " is not a saved conversation: ";
    // Nested at most 8 deep: an object, its messages, a message (a deep array would otherwise recurse
    // until the stack ends).
    const nlohmann::json object = parse_json_text(bytes.str(), path + " is not a saved conversation", 8);
    if (!object.is_object()) fail(where + "not a JSON object");
    // A member, or null when it is missing (operator[] would add it).
    const nlohmann::json missing;
    const auto member = [&](const char *name) -> const nlohmann::json & {
        const auto it = object.find(name);
        return it == object.end() ? missing : *it;
    };
    if (member("format") != kFormat) fail(where + "no \"format\": \"" + kFormat + "\"");
    const nlohmann::json &version = member("version");
    if (!version.is_number_integer()) fail(where + "no integer \"version\"");
    if (version.get<int64_t>() > kVersion)
        fail(path + " was saved by a newer reset (conversation version " + version.dump() + "; this one reads " +
             std::to_string(kVersion) + ")");
    if (version.get<int64_t>() < 1) fail(where + "version " + version.dump());

    SavedConversation c;
    const nlohmann::json &thinking = member("thinking");
    if (!thinking.is_boolean()) fail(where + "\"thinking\" is not true or false");
    c.thinking = thinking.get<bool>();
    const nlohmann::json &kept_from = member("kept_from");
    if (!kept_from.is_number_unsigned()) fail(where + "\"kept_from\" is not a count");
    c.kept_from = kept_from.get<size_t>();
    const nlohmann::json &messages = member("messages");
    if (!messages.is_array()) fail(where + "\"messages\" is not an array");
    for (size_t i = 0; i < messages.size(); ++i) {
        const nlohmann::json &m = messages[i];
        if (!m.is_object() || !m.contains("role") || !m["role"].is_string() || !m.contains("content") ||
            !m["content"].is_string())
            fail(where + "message " + std::to_string(i) + " has no string \"role\" and \"content\"");
        const std::string role = m["role"].get<std::string>();
        if (role != "system" && role != "user" && role != "assistant")
            fail(where + "message " + std::to_string(i) + " has the role '" + role + "'");
        if (role == "system" && i != 0) fail(where + "a system prompt after the first message");
        c.messages.push_back({role, m["content"].get<std::string>()});
    }
    const std::string wrong = check_shape(c);
    if (!wrong.empty()) fail(where + wrong);
    return c;
}

}  // namespace cli
