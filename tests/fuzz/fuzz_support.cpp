// fuzz_support.cpp — archive inputs and the per-process scratch directory.
#include "fuzz_support.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace reset_fuzz {

namespace {

constexpr std::string_view kMarker = "%%FILE ";

bool safe_name(std::string_view name) {
    if (name.empty() || name.size() > 64 || name == "." || name == "..") return false;
    for (char c : name) {
        const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                           c == '_' || c == '-';
        if (!plain) return false;
    }
    return true;
}

}  // namespace

std::vector<ArchiveFile> split_archive(std::string_view input) {
    // Marker positions: at the start, or right after a newline.
    std::vector<size_t> starts;
    for (size_t at = input.find(kMarker); at != std::string_view::npos; at = input.find(kMarker, at + 1))
        if (at == 0 || input[at - 1] == '\n') starts.push_back(at);
    std::vector<ArchiveFile> files;
    std::set<std::string> seen;
    for (size_t i = 0; i < starts.size(); ++i) {
        const size_t name_at = starts[i] + kMarker.size();
        const size_t line_end = input.find('\n', name_at);
        if (line_end == std::string_view::npos) break;
        const size_t end = i + 1 < starts.size() ? starts[i + 1] - 1 : input.size();  // the newline before a marker
        const std::string name(input.substr(name_at, line_end - name_at));
        if (!safe_name(name) || !seen.insert(name).second) continue;
        files.push_back({name, input.substr(line_end + 1, end > line_end ? end - line_end - 1 : 0)});
    }
    return files;
}

std::string write_directory(const std::vector<ArchiveFile> &files) {
    namespace fs = std::filesystem;
    static const fs::path directory = [] {
        fs::path p = fs::temp_directory_path() / ("reset-fuzz-" + std::to_string(getpid()));
        fs::create_directories(p);
        return p;
    }();
    for (const auto &entry : fs::directory_iterator(directory)) fs::remove_all(entry.path());
    for (const auto &file : files) {
        std::ofstream out(directory / file.name, std::ios::binary);
        out.write(file.data.data(), static_cast<std::streamsize>(file.data.size()));
        if (!out) finding("cannot write the scratch file " + (directory / file.name).string());
    }
    return directory.string();
}

std::string read_file(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream bytes;
    bytes << in.rdbuf();
    return bytes.str();
}

bool valid_utf8(std::string_view bytes) {
    size_t i = 0;
    while (i < bytes.size()) {
        const auto b = [&](size_t k) { return static_cast<uint8_t>(bytes[k]); };
        const uint8_t lead = b(i);
        size_t length;
        uint32_t code;
        if (lead < 0x80) length = 1, code = lead;
        else if (lead >= 0xC2 && lead <= 0xDF) length = 2, code = lead & 0x1F;
        else if (lead >= 0xE0 && lead <= 0xEF) length = 3, code = lead & 0x0F;
        else if (lead >= 0xF0 && lead <= 0xF4) length = 4, code = lead & 0x07;
        else return false;
        if (i + length > bytes.size()) return false;
        for (size_t k = 1; k < length; ++k) {
            if ((b(i + k) & 0xC0) != 0x80) return false;
            code = code << 6 | (b(i + k) & 0x3F);
        }
        if ((length == 3 && code < 0x800) || (length == 4 && code < 0x10000)) return false;  // overlong
        if ((code >= 0xD800 && code <= 0xDFFF) || code > 0x10FFFF) return false;
        i += length;
    }
    return true;
}

}  // namespace reset_fuzz
