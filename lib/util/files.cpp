// files.cpp — small file helpers shared by the loaders.
#include "util/files.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "api/errors.h"

namespace reset {

bool file_exists(const std::string &path) {
    struct stat info;
    return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

bool directory_exists(const std::string &path) {
    struct stat info;
    return ::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

std::string join_path(const std::string &directory, const std::string &name) {
    if (directory.empty() || directory.back() == '/') return directory + name;
    return directory + "/" + name;
}

std::string read_text_file(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) fail(RESET_ERR_IO, "cannot open '", path, "': ", std::strerror(errno));
    std::ostringstream content;
    content << in.rdbuf();
    if (in.bad()) fail(RESET_ERR_IO, "cannot read '", path, "'");
    return content.str();
}

}  // namespace reset
