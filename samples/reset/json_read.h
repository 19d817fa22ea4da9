// json_read.h — reading JSON text in the `reset` command (json_lines.cpp): the
// datasets' lines and the conversations `reset chat` saves
// (conversation_file.cpp) go through the same bounded parser.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace cli {

// `text` parsed strictly (RFC 8259, UTF-8 validated), arrays and objects nested at most
// `max_depth` deep; fails (CliError) with "<where>: bad JSON: <the parser's reason>", the
// reason made printable (it quotes what it last read, which may be the bytes that are not UTF-8).
nlohmann::json parse_json_text(const std::string &text, const std::string &where, int max_depth);

}  // namespace cli
