// safetensors.cpp — mapping and validating safetensors files.
//
// Format: 8 bytes little-endian header length N, N bytes of JSON mapping each
// tensor name to {dtype, shape, data_offsets: [begin, end]} relative to the
// byte after the header, optionally "__metadata__": {string: string}.
#include "model/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>

#include "api/errors.h"
#include "util/files.h"

namespace reset {

using json = nlohmann::json;

const char *dtype_name(Dtype dtype) {
    switch (dtype) {
        case Dtype::BF16: return "BF16";
        case Dtype::F16: return "F16";
        case Dtype::F32: return "F32";
        case Dtype::F64: return "F64";
        case Dtype::I8: return "I8";
        case Dtype::U8: return "U8";
        case Dtype::I16: return "I16";
        case Dtype::I32: return "I32";
        case Dtype::I64: return "I64";
        case Dtype::BOOL: return "BOOL";
        case Dtype::F8_E4M3: return "F8_E4M3";
        case Dtype::F8_E5M2: return "F8_E5M2";
    }
    return "?";
}

size_t dtype_size(Dtype dtype) {
    switch (dtype) {
        case Dtype::F64:
        case Dtype::I64: return 8;
        case Dtype::F32:
        case Dtype::I32: return 4;
        case Dtype::BF16:
        case Dtype::F16:
        case Dtype::I16: return 2;
        default: return 1;
    }
}

namespace {

bool parse_dtype(const std::string &name, Dtype *out) {
    static const std::pair<const char *, Dtype> names[] = {
        {"BF16", Dtype::BF16}, {"F16", Dtype::F16},   {"F32", Dtype::F32},       {"F64", Dtype::F64},
        {"I8", Dtype::I8},     {"U8", Dtype::U8},     {"I16", Dtype::I16},       {"I32", Dtype::I32},
        {"I64", Dtype::I64},   {"BOOL", Dtype::BOOL}, {"F8_E4M3", Dtype::F8_E4M3}, {"F8_E5M2", Dtype::F8_E5M2}};
    for (const auto &entry : names)
        if (name == entry.first) {
            *out = entry.second;
            return true;
        }
    return false;
}

// Header JSON larger than this is refused before it is parsed (the format's
// own reference implementation uses the same 100 MB bound).
constexpr uint64_t kMaxHeaderBytes = 100ull << 20;

}  // namespace

MappedFile::MappedFile(const std::string &path) : path_(path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) fail(RESET_ERR_IO, "cannot open '", path, "': ", std::strerror(errno));
    struct stat info;
    if (::fstat(fd, &info) != 0) {
        const int err = errno;
        ::close(fd);
        fail(RESET_ERR_IO, "cannot stat '", path, "': ", std::strerror(err));
    }
    if (!S_ISREG(info.st_mode)) {
        ::close(fd);
        fail(RESET_ERR_IO, "cannot map '", path, "': ",
             S_ISDIR(info.st_mode) ? "it is a directory" : "not a regular file");
    }
    size_ = static_cast<size_t>(info.st_size);
    if (size_ > 0) {
        void *mapping = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
        if (mapping == MAP_FAILED) {
            const int err = errno;
            ::close(fd);
            fail(RESET_ERR_IO, "cannot map '", path, "': ", std::strerror(err));
        }
        data_ = static_cast<const uint8_t *>(mapping);
    }
    ::close(fd);  // the mapping keeps the file alive
}

MappedFile::~MappedFile() {
    if (data_) ::munmap(const_cast<uint8_t *>(data_), size_);
}

int64_t TensorView::numel() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
}

std::string TensorView::describe() const {
    std::string s = std::string(dtype_name(dtype)) + " [";
    for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
}

void TensorStore::add_file(const std::string &path) {
    auto file = std::make_shared<MappedFile>(path);
    add_image(file->data(), file->size(), path);
    files_.push_back(std::move(file));
}

void TensorStore::add_image(const uint8_t *bytes, size_t size, const std::string &path) {
    if (size < 8) fail(RESET_ERR_FORMAT, "'", path, "' is truncated: ", size, " bytes, too short for a safetensors header");
    uint64_t header_len = 0;
    for (int i = 7; i >= 0; --i) header_len = (header_len << 8) | bytes[i];
    if (header_len > kMaxHeaderBytes)
        fail(RESET_ERR_FORMAT, "'", path, "': header length ", header_len, " is larger than the 100 MB limit");
    if (header_len > size - 8)
        fail(RESET_ERR_FORMAT, "'", path, "' is truncated: header claims ", header_len, " bytes but the file has ", size - 8,
             " after the length");
    json header;
    try {
        header = json::parse(bytes + 8, bytes + 8 + header_len);
    } catch (const json::exception &e) {  // parse_error, or out_of_range for a number past double's range ("1e506")
        fail(RESET_ERR_FORMAT, "'", path, "': header is not valid JSON: ", e.what());
    }
    if (!header.is_object()) fail(RESET_ERR_FORMAT, "'", path, "': header is not a JSON object");

    const uint8_t *payload = bytes + 8 + header_len;
    const uint64_t payload_size = size - 8 - header_len;
    struct Range {
        uint64_t begin, end;
        std::string name;
    };
    std::vector<Range> ranges;
    for (auto it = header.begin(); it != header.end(); ++it) {
        const std::string &name = it.key();
        const json &entry = it.value();
        if (name == "__metadata__") {
            if (!entry.is_object()) fail(RESET_ERR_FORMAT, "'", path, "': __metadata__ is not an object");
            for (auto m = entry.begin(); m != entry.end(); ++m)
                if (m.value().is_string()) metadata_[m.key()] = m.value().get<std::string>();
            continue;
        }
        const std::string where = "'" + path + "': tensor '" + name + "'";
        if (!entry.is_object()) fail(RESET_ERR_FORMAT, where, " is not an object");
        auto dtype_it = entry.find("dtype");
        auto shape_it = entry.find("shape");
        auto offsets_it = entry.find("data_offsets");
        if (dtype_it == entry.end() || !dtype_it->is_string()) fail(RESET_ERR_FORMAT, where, " has no dtype");
        if (shape_it == entry.end() || !shape_it->is_array()) fail(RESET_ERR_FORMAT, where, " has no shape");
        if (offsets_it == entry.end() || !offsets_it->is_array() || offsets_it->size() != 2)
            fail(RESET_ERR_FORMAT, where, " has no data_offsets [begin, end]");
        TensorView view;
        view.name = name;
        view.file = path;
        if (!parse_dtype(dtype_it->get<std::string>(), &view.dtype))
            fail(RESET_ERR_FORMAT, where, " has unknown dtype \"", dtype_it->get<std::string>(), "\"");
        uint64_t numel = 1;
        for (const auto &dim : *shape_it) {
            if (!dim.is_number_unsigned()) fail(RESET_ERR_FORMAT, where, " has a shape entry that is not a non-negative integer");
            const uint64_t d = dim.get<uint64_t>();
            if (d > (1ull << 40) || (d && numel > (1ull << 40) / d)) fail(RESET_ERR_FORMAT, where, " has an absurd shape");
            numel *= d;
            view.shape.push_back(static_cast<int64_t>(d));
        }
        const json &offsets = *offsets_it;
        if (!offsets[0].is_number_unsigned() || !offsets[1].is_number_unsigned())
            fail(RESET_ERR_FORMAT, where, " has data_offsets that are not non-negative integers");
        const uint64_t begin = offsets[0].get<uint64_t>(), end = offsets[1].get<uint64_t>();
        if (begin > end) fail(RESET_ERR_FORMAT, where, " has data_offsets [", begin, ", ", end, "] with begin > end");
        if (end > payload_size)
            fail(RESET_ERR_FORMAT, where, " has data_offsets [", begin, ", ", end, "] outside the file (", payload_size,
                 " bytes of data): the file is truncated or the header is corrupt");
        if (end - begin != numel * dtype_size(view.dtype))
            fail(RESET_ERR_FORMAT, where, ": ", view.describe(), " needs ", numel * dtype_size(view.dtype),
                 " bytes but data_offsets span ", end - begin);
        view.data = payload + begin;
        view.nbytes = static_cast<size_t>(end - begin);
        if (tensors_.count(name)) fail(RESET_ERR_FORMAT, where, " appears in more than one file");
        ranges.push_back({begin, end, name});
        tensors_.emplace(name, std::move(view));
    }
    std::sort(ranges.begin(), ranges.end(), [](const Range &a, const Range &b) { return a.begin < b.begin; });
    for (size_t i = 1; i < ranges.size(); ++i)
        if (ranges[i].begin < ranges[i - 1].end && ranges[i].end > ranges[i].begin)
            fail(RESET_ERR_FORMAT, "'", path, "': tensors '", ranges[i - 1].name, "' and '", ranges[i].name,
                 "' overlap in the file");
}

TensorStore TensorStore::open_file(const std::string &path) {
    TensorStore store;
    store.add_file(path);
    return store;
}

TensorStore TensorStore::open_memory(const uint8_t *bytes, size_t size, const std::string &name) {
    TensorStore store;
    store.add_image(bytes, size, name);
    return store;
}

TensorStore TensorStore::open_directory(const std::string &directory) {
    const std::string single = join_path(directory, "model.safetensors");
    const std::string index_path = join_path(directory, "model.safetensors.index.json");
    TensorStore store;
    if (file_exists(index_path)) {
        json index;
        try {
            index = json::parse(read_text_file(index_path));
        } catch (const json::exception &e) {  // parse_error, or out_of_range for a number past double's range ("1e506")
            fail(RESET_ERR_FORMAT, "'", index_path, "' is not valid JSON: ", e.what());
        }
        auto map = index.find("weight_map");
        if (!index.is_object() || map == index.end() || !map->is_object())
            fail(RESET_ERR_FORMAT, "'", index_path, "' has no \"weight_map\" object");
        std::set<std::string> shards;
        for (auto it = map->begin(); it != map->end(); ++it) {
            if (!it.value().is_string()) fail(RESET_ERR_FORMAT, "'", index_path, "': weight_map entry '", it.key(), "' is not a file name");
            const std::string shard = it.value().get<std::string>();
            if (shard.find('/') != std::string::npos || shard == "..")
                fail(RESET_ERR_FORMAT, "'", index_path, "': shard name '", shard, "' is not a plain file name");
            shards.insert(shard);
        }
        for (const auto &shard : shards) {
            const std::string shard_path = join_path(directory, shard);
            if (!file_exists(shard_path)) fail(RESET_ERR_IO, "shard '", shard_path, "' listed in the index is missing");
            store.add_file(shard_path);
        }
        for (auto it = map->begin(); it != map->end(); ++it) {
            const TensorView *view = store.find(it.key());
            if (!view) fail(RESET_ERR_FORMAT, "'", index_path, "' lists tensor '", it.key(), "' in '", it.value().get<std::string>(), "' but it is not there");
            if (view->file != join_path(directory, it.value().get<std::string>()))
                fail(RESET_ERR_FORMAT, "'", index_path, "' places tensor '", it.key(), "' in the wrong shard");
        }
    } else if (file_exists(single)) {
        store.add_file(single);
    } else {
        fail(RESET_ERR_IO, "no model.safetensors or model.safetensors.index.json in '", directory, "'");
    }
    return store;
}

const TensorView *TensorStore::find(const std::string &name) const {
    auto it = tensors_.find(name);
    return it == tensors_.end() ? nullptr : &it->second;
}

const TensorView &TensorStore::get(const std::string &name) const {
    const TensorView *view = find(name);
    if (!view) fail(RESET_ERR_SHAPE, "tensor '", name, "' is missing from the checkpoint");
    return *view;
}

}  // namespace reset
