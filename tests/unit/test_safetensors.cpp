// The safetensors reader on good and on every class of broken file.
#include <doctest/doctest.h>

#include "api/errors.h"
#include "model/safetensors.h"
#include "test_support.h"

using namespace reset;
using namespace test_support;

namespace {

// The status a TensorStore::open_file of these bytes throws (RESET_OK if none).
reset_status open_status(const std::string &bytes, std::string *message = nullptr) {
    const std::string path = temp_directory("st") + "/model.safetensors";
    write_file(path, bytes);
    try {
        TensorStore::open_file(path);
    } catch (const Error &e) {
        if (message) *message = e.what();
        return e.status();
    }
    return RESET_OK;
}

std::string with_header(const std::string &json, const std::string &payload) {
    std::string out(8, '\0');
    const uint64_t n = json.size();
    for (int i = 0; i < 8; ++i) out[size_t(i)] = char((n >> (8 * i)) & 0xff);
    return out + json + payload;
}

}  // namespace

TEST_CASE("a valid file maps every tensor with its dtype, shape and bytes") {
    const std::string path = temp_directory("st") + "/model.safetensors";
    write_file(path, safetensors_bytes({{"a", "F32", {2}, std::string("\0\0\x80\x3f\0\0\0\x40", 8)},
                                        {"b", "U8", {1, 3}, "xyz"}},
                                       "{\"format\":\"pt\"}"));
    const TensorStore store = TensorStore::open_file(path);
    const TensorView &a = store.get("a");
    CHECK(a.dtype == Dtype::F32);
    CHECK(a.shape == std::vector<int64_t>{2});
    float values[2];
    std::memcpy(values, a.data, 8);
    CHECK(values[0] == 1.0f);
    CHECK(values[1] == 2.0f);
    CHECK(std::string(reinterpret_cast<const char *>(store.get("b").data), 3) == "xyz");
    CHECK(store.metadata().at("format") == "pt");
    CHECK(store.find("c") == nullptr);
    CHECK_THROWS_AS(store.get("c"), Error);
}

TEST_CASE("a truncated file is a format error") {
    std::string message;
    CHECK(open_status("abc", &message) == RESET_ERR_FORMAT);
    CHECK(message.find("truncated") != std::string::npos);
    const std::string good = safetensors_bytes({{"a", "F32", {4}, std::string(16, '\1')}});
    CHECK(open_status(good.substr(0, good.size() - 4), &message) == RESET_ERR_FORMAT);
    CHECK(message.find("outside the file") != std::string::npos);
    CHECK(open_status(good.substr(0, 20), &message) == RESET_ERR_FORMAT);  // header cut short
}

TEST_CASE("header offsets outside the file, reversed or overlapping are refused") {
    std::string message;
    CHECK(open_status(with_header("{\"a\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,400]}}", "abcd"), &message) ==
          RESET_ERR_FORMAT);
    CHECK(message.find("outside") != std::string::npos);
    CHECK(open_status(with_header("{\"a\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[3,1]}}", "abcd")) ==
          RESET_ERR_FORMAT);
    CHECK(open_status(with_header("{\"a\":{\"dtype\":\"U8\",\"shape\":[3],\"data_offsets\":[0,3]},"
                                  "\"b\":{\"dtype\":\"U8\",\"shape\":[3],\"data_offsets\":[1,4]}}",
                                  "abcd"),
                      &message) == RESET_ERR_FORMAT);
    CHECK(message.find("overlap") != std::string::npos);
}

TEST_CASE("a size that disagrees with dtype and shape is refused") {
    std::string message;
    CHECK(open_status(with_header("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,4]}}", "abcd"), &message) ==
          RESET_ERR_FORMAT);
    CHECK(message.find("needs 8 bytes") != std::string::npos);
}

TEST_CASE("unknown dtypes, invalid JSON and absurd headers are format errors naming the problem") {
    std::string message;
    CHECK(open_status(with_header("{\"a\":{\"dtype\":\"Q7\",\"shape\":[1],\"data_offsets\":[0,1]}}", "x"), &message) ==
          RESET_ERR_FORMAT);
    CHECK(message.find("unknown dtype \"Q7\"") != std::string::npos);
    CHECK(open_status(with_header("{\"a\": [1, 2", "x"), &message) == RESET_ERR_FORMAT);
    CHECK(message.find("not valid JSON") != std::string::npos);
    CHECK(open_status(with_header("[1]", "x")) == RESET_ERR_FORMAT);
    std::string huge(8, '\xff');
    CHECK(open_status(huge + "{}") == RESET_ERR_FORMAT);
    CHECK(open_status(with_header("{\"a\":{\"dtype\":\"U8\",\"shape\":[-1],\"data_offsets\":[0,1]}}", "x")) ==
          RESET_ERR_FORMAT);
}

TEST_CASE("a missing file is an I/O error") {
    CHECK_THROWS_AS(TensorStore::open_file("/nonexistent/model.safetensors"), Error);
    try {
        TensorStore::open_directory(temp_directory("empty"));
        FAIL("no error");
    } catch (const Error &e) {
        CHECK(e.status() == RESET_ERR_IO);
    }
}

TEST_CASE("sharded checkpoints: every tensor of the index is found in its shard") {
    const std::string dir = temp_directory("shards");
    write_file(dir + "/a.safetensors", safetensors_bytes({{"x", "U8", {2}, "ab"}}));
    write_file(dir + "/b.safetensors", safetensors_bytes({{"y", "U8", {1}, "c"}}));
    write_file(dir + "/model.safetensors.index.json",
               "{\"metadata\":{},\"weight_map\":{\"x\":\"a.safetensors\",\"y\":\"b.safetensors\"}}");
    const TensorStore store = TensorStore::open_directory(dir);
    CHECK(store.get("y").file == dir + "/b.safetensors");
    // An index naming a tensor that is not in its shard is refused.
    write_file(dir + "/model.safetensors.index.json", "{\"weight_map\":{\"x\":\"b.safetensors\"}}");
    CHECK_THROWS_AS(TensorStore::open_directory(dir), Error);
    write_file(dir + "/model.safetensors.index.json", "{\"weight_map\":{\"x\":\"../a.safetensors\"}}");
    CHECK_THROWS_AS(TensorStore::open_directory(dir), Error);
    write_file(dir + "/model.safetensors.index.json", "{\"weight_map\":{\"x\":\"gone.safetensors\"}}");
    try {
        TensorStore::open_directory(dir);
        FAIL("no error");
    } catch (const Error &e) {
        CHECK(e.status() == RESET_ERR_IO);
    }
}

TEST_CASE("FileAccess::Read: the same tensors as the mapped file, kept when the file is then truncated") {
    const std::string dir = temp_directory("read");
    const std::string bytes = safetensors_bytes({{"a", "F32", {2}, std::string("\0\0\x80\x3f\0\0\0\x40", 8)},
                                                 {"b", "U8", {1, 3}, "xyz"}},
                                                "{\"format\":\"pt\"}");
    write_file(dir + "/model.safetensors", bytes);
    const TensorStore mapped = TensorStore::open_directory(dir, FileAccess::Map);
    const TensorStore read = TensorStore::open_directory(dir, FileAccess::Read);
    REQUIRE(read.tensors().size() == 2);
    for (const auto &[name, view] : mapped.tensors()) {
        const TensorView &copy = read.get(name);
        CHECK(copy.data != view.data);
        CHECK(copy.shape == view.shape);
        REQUIRE(copy.nbytes == view.nbytes);
        CHECK(std::memcmp(copy.data, view.data, view.nbytes) == 0);
    }
    CHECK(read.metadata().at("format") == "pt");
    // What was read no longer depends on the file (a mapped store's pages would now be gone: SIGBUS).
    REQUIRE(::truncate((dir + "/model.safetensors").c_str(), 0) == 0);
    CHECK(std::string(reinterpret_cast<const char *>(read.get("b").data), 3) == "xyz");
    float values[2];
    std::memcpy(values, read.get("a").data, 8);
    CHECK(values[0] == 1.0f);
    CHECK(values[1] == 2.0f);
    // Read again, the truncated file is what it now is: too short for a header.
    std::string message;
    try {
        TensorStore::open_directory(dir, FileAccess::Read);
        FAIL("no error");
    } catch (const Error &e) {
        CHECK(e.status() == RESET_ERR_FORMAT);
        message = e.what();
    }
    CHECK(message.find("truncated") != std::string::npos);
}

TEST_CASE("FileAccess::Read: a file that ends before the size it was opened with is an I/O error") {
    // A sysfs attribute is a regular file whose st_size (4096) is more than it yields: as a file
    // truncated between the fstat and the read, which a test cannot time.
    const std::string path = "/sys/kernel/mm/transparent_hugepage/enabled";
    struct stat info;
    if (::stat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode) || info.st_size < 64) {
        MESSAGE("skipped: no sysfs attribute that is shorter than its size (", path, ")");
        return;
    }
    try {
        TensorStore::open_file(path, FileAccess::Read);
        FAIL("no error");
    } catch (const Error &e) {
        CHECK(e.status() == RESET_ERR_IO);
        const std::string message = e.what();
        CHECK(message.find("ended after") != std::string::npos);
        CHECK(message.find("was it being rewritten?") != std::string::npos);
    }
}

TEST_CASE("FileAccess::Read: a file of many pieces is read whole, each byte in its place") {
    // 100 MiB of tensor data, more than 3 of the reader's 32 MiB pieces (so several threads read it):
    // a sparse file, with a distinct byte pattern around every piece boundary and at the end, where a
    // misplaced or missing piece would show.
    const size_t n = size_t(100) << 20;
    const std::string header = "{\"big\":{\"dtype\":\"U8\",\"shape\":[" + std::to_string(n) +
                               "],\"data_offsets\":[0," + std::to_string(n) + "]}}";
    std::string prefix(8, '\0');
    for (int i = 0; i < 8; ++i) prefix[size_t(i)] = char((header.size() >> (8 * i)) & 0xff);
    prefix += header;
    const std::string path = temp_directory("pieces") + "/model.safetensors";
    write_file(path, prefix);
    REQUIRE(::truncate(path.c_str(), off_t(prefix.size() + n)) == 0);
    std::vector<size_t> marks;
    for (size_t at = (size_t(32) << 20) - prefix.size() - 3; at < n; at += size_t(32) << 20) marks.push_back(at);
    marks.push_back(n - 8);
    {
        std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
        for (size_t k = 0; k < marks.size(); ++k) {
            file.seekp(std::streamoff(prefix.size() + marks[k]));
            const std::string pattern = "m" + std::to_string(k) + "#";
            file.write(pattern.data(), std::streamsize(pattern.size()));
        }
    }
    const TensorStore mapped = TensorStore::open_file(path, FileAccess::Map);
    const TensorStore read = TensorStore::open_file(path, FileAccess::Read);
    const TensorView &a = mapped.get("big"), &b = read.get("big");
    REQUIRE(a.nbytes == n);
    REQUIRE(b.nbytes == n);
    CHECK(std::memcmp(a.data, b.data, n) == 0);
    for (size_t k = 0; k < marks.size(); ++k)
        CHECK(std::string(reinterpret_cast<const char *>(b.data) + marks[k], 3) == "m" + std::to_string(k) + "#");
}

TEST_CASE("FileAccess::Read: a file larger than the host's available memory is refused before a byte is read") {
    // A sparse file of four times the machine's memory (nothing on disk).  Were the check missing, an
    // overcommitting kernel (vm.overcommit_memory 1) would let the copy's mapping through and the read
    // would run the machine out of memory: the test runs only under the heuristic or strict modes,
    // where the mapping itself is refused with another message (which the test tells apart).
    std::ifstream overcommit("/proc/sys/vm/overcommit_memory");
    int mode = -1;
    overcommit >> mode;
    std::ifstream meminfo("/proc/meminfo");
    std::string key;
    unsigned long long total_kib = 0;
    meminfo >> key >> total_kib;
    if (mode == 1 || mode == -1 || key != "MemTotal:" || total_kib == 0) {
        MESSAGE("skipped: vm.overcommit_memory is ", mode, " (1: a missing check could exhaust memory), MemTotal ",
                total_kib, " kB");
        return;
    }
    const std::string path = temp_directory("huge") + "/model.safetensors";
    write_file(path, "");
    if (::truncate(path.c_str(), off_t(total_kib) * 1024 * 4) != 0) {
        MESSAGE("skipped: the file system holds no sparse file of ", 4 * total_kib, " kB");
        return;
    }
    try {
        TensorStore::open_file(path, FileAccess::Read);
        FAIL("no error");
    } catch (const Error &e) {
        CHECK(e.status() == RESET_ERR_OUT_OF_MEMORY);
        const std::string message = e.what();
        CHECK(message.find("of host memory are available") != std::string::npos);
        CHECK(message.find("RESET_FILE_ACCESS_MAP") != std::string::npos);
    }
    // Mapped, the same file opens (and is then refused for what it holds: zeros are no header).
    try {
        TensorStore::open_file(path, FileAccess::Map);
        FAIL("no error");
    } catch (const Error &e) {
        CHECK(e.status() == RESET_ERR_FORMAT);
    }
    ::unlink(path.c_str());
}
