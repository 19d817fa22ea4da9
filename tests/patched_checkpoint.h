// patched_checkpoint.h — a copy of a checkpoint directory in which one byte of
// one tensor's data differs: a file that is well formed but holds one bad
// value (a NaN or a negative block scale), for the tests of the loader's and
// the repack's refusals.  Shared by the unit tests and the GPU engine test.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "util/files.h"

namespace test_support {

// Copies every file of `source` into the existing directory `dest`, with the
// last byte of tensor `tensor`'s data in model.safetensors set to `byte`.
// Returns the tensor's size in bytes (the patched byte is the last of them).
inline uint64_t copy_checkpoint_with_last_byte(const std::string &source, const std::string &dest,
                                               const std::string &tensor, char byte) {
    std::string checkpoint = reset::read_text_file(source + "/model.safetensors");
    uint64_t header_size = 0;
    for (int i = 0; i < 8 && checkpoint.size() >= 8; ++i)
        header_size |= uint64_t(uint8_t(checkpoint[size_t(i)])) << (8 * i);
    const auto header = nlohmann::json::parse(checkpoint.substr(8, size_t(header_size)));
    if (!header.contains(tensor)) throw std::runtime_error(source + " has no tensor " + tensor);
    const auto begin = header[tensor]["data_offsets"][0].get<uint64_t>(),
               end = header[tensor]["data_offsets"][1].get<uint64_t>();
    checkpoint[size_t(8 + header_size + end - 1)] = byte;
    for (const auto &entry : std::filesystem::directory_iterator(source))
        if (entry.path().filename() != "model.safetensors")
            std::filesystem::copy(entry.path(), dest + "/" + entry.path().filename().string());
    std::ofstream(dest + "/model.safetensors", std::ios::binary) << checkpoint;
    return end - begin;
}

}  // namespace test_support
