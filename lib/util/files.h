// files.h — small file helpers shared by the loaders.
#pragma once

#include <string>

namespace reset {

bool file_exists(const std::string &path);
bool directory_exists(const std::string &path);
std::string join_path(const std::string &directory, const std::string &name);
// The whole file as bytes; throws RESET_ERR_IO naming the path and the reason.
std::string read_text_file(const std::string &path);

}  // namespace reset
