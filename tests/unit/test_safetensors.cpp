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
