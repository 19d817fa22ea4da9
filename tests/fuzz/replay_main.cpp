// replay_main.cpp — runs a fuzz target over files, without libFuzzer: every
// file named on the command line, or every file of a directory named there,
// once, in name order (path order across directories).  This is how the committed corpora (seeds and the
// inputs fuzzing found) run as tests with any compiler.
#include <algorithm>
#include <filesystem>

#include "fuzz_support.h"

int main(int argc, char **argv) {
    namespace fs = std::filesystem;
    std::vector<std::string> paths;
    for (int i = 1; i < argc; ++i) {
        if (fs::is_directory(argv[i])) {
            for (const auto &entry : fs::directory_iterator(argv[i]))
                if (entry.is_regular_file()) paths.push_back(entry.path().string());
        } else {
            paths.push_back(argv[i]);
        }
    }
    std::sort(paths.begin(), paths.end());
    if (paths.empty()) {
        std::fprintf(stderr, "usage: %s FILE|DIRECTORY...: no input files\n", argv[0]);
        return 2;
    }
    // RESET_FUZZ_SKIP=N starts at the N-th input (0-based): a script that saw input N abort goes on after it.
    const char *skip = std::getenv("RESET_FUZZ_SKIP");
    const size_t first = skip ? std::strtoul(skip, nullptr, 10) : 0;
    for (size_t i = first; i < paths.size(); ++i) {
        const std::string &path = paths[i];
        const std::string bytes = reset_fuzz::read_file(path);
        std::fprintf(stderr, "input %zu: %s (%zu bytes)\n", i, path.c_str(), bytes.size());
        LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size());
    }
    std::printf("%zu inputs ran without a finding\n", paths.size() - std::min(first, paths.size()));
    return 0;
}
