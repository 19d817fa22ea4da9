// safetensors.cpp — mapping (or reading) and validating safetensors files.
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
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <system_error>
#include <thread>
#include <vector>

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

namespace {

// Reads bytes [begin, end) of `fd` into `image` + begin.  A file that ends early was truncated after
// it was opened (or is a kernel file whose st_size is not its length): an error, never a short
// image read as if whole.
void read_range(int fd, uint8_t *image, size_t begin, size_t end, size_t size, const std::string &path) {
    size_t done = begin;
    while (done < end) {
        // Linux moves at most 0x7ffff000 bytes per call; smaller pieces change nothing else.
        const size_t piece = std::min<size_t>(end - done, size_t(1) << 30);
        const ssize_t n = ::pread(fd, image + done, piece, static_cast<off_t>(done));
        if (n < 0) {
            if (errno == EINTR) continue;
            fail(RESET_ERR_IO, "cannot read '", path, "': ", std::strerror(errno));
        }
        if (n == 0)
            fail(RESET_ERR_IO, "'", path, "' ended after ", done, " of its ", size,
                 " bytes while it was read: was it being rewritten? Load it again once it is complete");
        done += static_cast<size_t>(n);
    }
}

// Reads the whole file into `image`, in 32 MiB pieces claimed by up to 8 threads: one thread copies
// from the page cache at ~2 GB/s, most of it faulting in the image's fresh pages (an 8B model's
// 8.2 GB took 3.8-4.0 s on the H100's host, session 43 run 2), and several keep a disk busier.
void read_whole(int fd, uint8_t *image, size_t size, const std::string &path) {
    constexpr size_t kPiece = size_t(32) << 20;
    const size_t pieces = (size + kPiece - 1) / kPiece;
    const size_t workers = std::min<size_t>({pieces, 8, std::max(1u, std::thread::hardware_concurrency())});
    if (workers <= 1) return read_range(fd, image, 0, size, size, path);
    std::atomic<size_t> next{0};
    std::atomic<bool> failed{false};
    std::mutex error_mutex;
    std::exception_ptr error;
    const auto work = [&] {
        try {
            for (size_t i; !failed.load(std::memory_order_relaxed) && (i = next.fetch_add(1)) < pieces;)
                read_range(fd, image, i * kPiece, std::min(size, (i + 1) * kPiece), size, path);
        } catch (...) {
            std::lock_guard<std::mutex> lock(error_mutex);
            if (!error) error = std::current_exception();
            failed = true;
        }
    };
    std::vector<std::thread> threads;
    try {
        for (size_t t = 1; t < workers; ++t) threads.emplace_back(work);
    } catch (const std::system_error &) {
        // No thread to be had: the ones that started, and this one, read it all.
    }
    work();
    for (std::thread &thread : threads) thread.join();
    if (error) std::rethrow_exception(error);
}

// The host memory the kernel counts as available without swapping (MemAvailable), or SIZE_MAX if it
// does not say.
size_t available_memory() {
    FILE *meminfo = std::fopen("/proc/meminfo", "r");
    if (!meminfo) return SIZE_MAX;
    char line[256];
    unsigned long long kib = 0;
    bool found = false;
    while (!found && std::fgets(line, sizeof line, meminfo))
        found = std::sscanf(line, "MemAvailable: %llu kB", &kib) == 1;
    std::fclose(meminfo);
    return found ? size_t(kib) * 1024 : SIZE_MAX;
}

bool same_file_state(const struct stat &a, const struct stat &b) {
    return a.st_size == b.st_size && a.st_mtim.tv_sec == b.st_mtim.tv_sec && a.st_mtim.tv_nsec == b.st_mtim.tv_nsec;
}

}  // namespace

FileImage::FileImage(const std::string &path, FileAccess access) : path_(path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) fail(RESET_ERR_IO, "cannot open '", path, "': ", std::strerror(errno));
    // Closes the descriptor on every way out; the mapping (either kind) does not need it.
    struct Descriptor {
        int fd;
        ~Descriptor() { ::close(fd); }
    } descriptor{fd};
    struct stat info;
    if (::fstat(fd, &info) != 0) fail(RESET_ERR_IO, "cannot stat '", path, "': ", std::strerror(errno));
    if (!S_ISREG(info.st_mode))
        fail(RESET_ERR_IO, "cannot map '", path, "': ",
             S_ISDIR(info.st_mode) ? "it is a directory" : "not a regular file");
    size_ = static_cast<size_t>(info.st_size);
    if (size_ == 0) return;
    if (access == FileAccess::Map) {
        void *mapping = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
        if (mapping == MAP_FAILED) fail(RESET_ERR_IO, "cannot map '", path, "': ", std::strerror(errno));
        data_ = static_cast<const uint8_t *>(mapping);
        return;
    }
    // Read into memory the host does not have, the copy would push the system into swap or the
    // process into the OOM killer, neither of which is an error a caller can handle.
    if (const size_t available = available_memory(); size_ > available)
        fail(RESET_ERR_OUT_OF_MEMORY, "reading '", path, "' into memory needs ", size_ >> 20, " MiB but only ",
             available >> 20, " MiB of host memory are available: load it mapped (RESET_FILE_ACCESS_MAP)");
    // An anonymous mapping, not new[]: page-aligned as the file's mapping is (tensors keep the
    // alignment their offsets give them), and its untouched pages cost nothing until read into.
    void *copy = ::mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (copy == MAP_FAILED) {
        const int err = errno;
        fail(err == ENOMEM ? RESET_ERR_OUT_OF_MEMORY : RESET_ERR_IO, "cannot allocate ", size_, " bytes to read '",
             path, "' into: ", std::strerror(err));
    }
    data_ = static_cast<const uint8_t *>(copy);  // owned from here: the destructor unmaps it if reading fails
    // Hints; failure changes nothing.  Huge pages: 512 times fewer page faults filling the image.
    ::madvise(copy, size_, MADV_HUGEPAGE);
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    try {
        read_whole(fd, static_cast<uint8_t *>(copy), size_, path);
        struct stat after;
        if (::fstat(fd, &after) != 0) fail(RESET_ERR_IO, "cannot stat '", path, "': ", std::strerror(errno));
        // Written to while read: what was read may be half old, half new.
        if (!same_file_state(info, after))
            fail(RESET_ERR_IO, "'", path, "' changed while it was read (its size or modification time): was it "
                 "being rewritten? Load it again once it is complete");
    } catch (...) {
        ::munmap(copy, size_);
        data_ = nullptr;
        throw;
    }
    ::mprotect(copy, size_, PROT_READ);  // read-only from here, as a mapped file is; failure changes nothing
}

FileImage::~FileImage() {
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

void TensorStore::add_file(const std::string &path, FileAccess access) {
    auto file = std::make_shared<FileImage>(path, access);
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

TensorStore TensorStore::open_file(const std::string &path, FileAccess access) {
    TensorStore store;
    store.add_file(path, access);
    return store;
}

TensorStore TensorStore::open_memory(const uint8_t *bytes, size_t size, const std::string &name) {
    TensorStore store;
    store.add_image(bytes, size, name);
    return store;
}

TensorStore TensorStore::open_directory(const std::string &directory, FileAccess access) {
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
            store.add_file(shard_path, access);
        }
        for (auto it = map->begin(); it != map->end(); ++it) {
            const TensorView *view = store.find(it.key());
            if (!view) fail(RESET_ERR_FORMAT, "'", index_path, "' lists tensor '", it.key(), "' in '", it.value().get<std::string>(), "' but it is not there");
            if (view->file != join_path(directory, it.value().get<std::string>()))
                fail(RESET_ERR_FORMAT, "'", index_path, "' places tensor '", it.key(), "' in the wrong shard");
        }
    } else if (file_exists(single)) {
        store.add_file(single, access);
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
