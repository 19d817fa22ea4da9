// fuzz_support.h — what the fuzz targets share (tests/fuzz/README.md).
//
// Each target is one file defining LLVMFuzzerTestOneInput, so it builds both
// as a libFuzzer program (clang, -DRESET_FUZZ=ON) and, with replay_main.cpp,
// as a plain program that runs the committed corpus: a ctest, with the
// sanitizers in scripts/test.sh's AddressSanitizer build.
//
// A finding is an abort with a message: a crash or a sanitizer report, a
// status the header does not allow, RESET_ERR_INTERNAL (a malformed input must
// get a clear error, never "internal error"), or a broken promise of the
// header (a round trip, a buffer protocol).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "reset.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

namespace reset_fuzz {

[[noreturn]] inline void finding(const std::string &what) {
    std::fprintf(stderr, "FUZZ FINDING: %s\n", what.c_str());
    std::fflush(stderr);
    std::abort();
}

inline void expect(bool condition, const std::string &what) {
    if (!condition) finding(what);
}

// A status from an API call on fuzzed input: anything but an internal error
// (the call must have said what was wrong).  Returns status == RESET_OK.
inline bool ok_or_clear_error(reset_status status, const char *call) {
    static const bool verbose = std::getenv("RESET_FUZZ_VERBOSE") != nullptr;  // what the corpus reaches
    if (verbose)
        std::fprintf(stderr, "  %s: %s %s\n", call, reset_status_name(status), status ? reset_last_error() : "");
    if (status == RESET_ERR_INTERNAL)
        finding(std::string(call) + " returned RESET_ERR_INTERNAL: " + reset_last_error());
    if (status != RESET_OK) {
        const char *message = reset_last_error();
        if (message == nullptr || message[0] == '\0')
            finding(std::string(call) + " failed with " + reset_status_name(status) + " and no message");
    }
    return status == RESET_OK;
}

// Reads fields off the input; zeros once it is exhausted.
class Bytes {
public:
    Bytes(const uint8_t *data, size_t size) : data_(data), size_(size) {}
    bool empty() const { return at_ >= size_; }
    size_t left() const { return at_ < size_ ? size_ - at_ : 0; }
    uint8_t u8() { return at_ < size_ ? data_[at_++] : 0; }
    template <typename T>
    T raw() {
        T value{};
        const size_t n = std::min(sizeof(T), left());
        if (n > 0) std::memcpy(&value, data_ + at_, n);
        at_ += n;
        return value;
    }
    // A float: a multiple of 1/64 in [-0.25, 1.73] (0, 1, negatives, just
    // past 1) unless the top bit asks for raw bits.
    float number() {
        const uint8_t b = u8();
        if (b & 0x80) return raw<float>();
        return static_cast<float>(b) / 64.0f - 0.25f;
    }
    // An int: -8..119 unless the top bit asks for raw bits.
    int32_t integer() {
        const uint8_t b = u8();
        if (b & 0x80) return raw<int32_t>();
        return static_cast<int32_t>(b) - 8;
    }

private:
    const uint8_t *data_;
    size_t size_;
    size_t at_ = 0;
};

// A call's status from fuzzed input: RESET_OK, or one of the errors reset.h
// lists for that call (and, as ok_or_clear_error checks, with a message and
// never INTERNAL).  Returns status == RESET_OK.
inline bool ok_or_listed_error(reset_status status, const char *call, std::initializer_list<reset_status> listed) {
    const bool ok = ok_or_clear_error(status, call);
    if (!ok && std::find(listed.begin(), listed.end(), status) == listed.end())
        finding(std::string(call) + " returned " + reset_status_name(status) + ", which reset.h does not list: " +
                reset_last_error());
    return ok;
}

// RESET_FUZZ_BACKEND=cuda: the targets that load models load them on the CUDA
// backend (a replay on the GPU machine; fuzzing itself runs without a GPU).
inline bool cuda_backend() {
    static const bool cuda = [] {
        const char *name = std::getenv("RESET_FUZZ_BACKEND");
        return name != nullptr && std::string(name) == "cuda";
    }();
    return cuda;
}

// One file of an archive input: "%%FILE <name>\n" then its bytes up to the next
// "%%FILE " line (tests/fuzz/make_seeds.py writes them).
struct ArchiveFile {
    std::string name;
    std::string_view data;
};

// The files of an archive input.  Names outside [A-Za-z0-9._-]{1,64} (which
// could leave the directory) and repeats are dropped; bytes before the first
// marker are ignored.
std::vector<ArchiveFile> split_archive(std::string_view input);

// A directory of this process, emptied and filled with the files on each
// call; its path.
std::string write_directory(const std::vector<ArchiveFile> &files);

// The bytes of a file (the replay driver and seeds).
std::string read_file(const std::string &path);

}  // namespace reset_fuzz

namespace reset_fuzz {

// Whether bytes are valid UTF-8 (RFC 3629: no overlongs, no surrogates,
// nothing above U+10FFFF), written here rather than taken from the library
// so that the library's own check is what is tested.
bool valid_utf8(std::string_view bytes);

// reset.h's buffer protocol, checked on a call that fills a caller's buffer:
// call(buffer, capacity, &needed) is made with capacity 0 to ask the size
// (RESET_OK exactly when nothing is needed), then with exactly that capacity
// into a buffer one `guard` element longer, which must stay untouched.
// Returns the first call's status (RESET_OK, or an error other than
// BUFFER_TOO_SMALL, with an empty result) and the result.
template <typename Container, typename Call>
std::pair<reset_status, Container> read_buffer(const std::string &what, typename Container::value_type guard,
                                               Call call) {
    size_t needed = 12345;
    const reset_status asked = call(nullptr, 0, &needed);
    if (asked != RESET_OK && asked != RESET_ERR_BUFFER_TOO_SMALL) {
        ok_or_clear_error(asked, what.c_str());
        return {asked, Container()};
    }
    expect((asked == RESET_OK) == (needed == 0), what + ": capacity 0 and a non-empty result did not agree");
    Container out(needed + 1, guard);
    size_t written = 0;
    const reset_status done = call(out.data(), needed, &written);
    if (!ok_or_clear_error(done, what.c_str()) || written != needed || out[needed] != guard)
        finding(what + ": the result did not fit the capacity it asked for");
    out.resize(needed);
    return {RESET_OK, out};
}

inline std::pair<reset_status, std::string> detokenize(const reset_tokenizer *tokenizer,
                                                       const std::vector<int32_t> &ids, uint32_t flags) {
    return read_buffer<std::string>("reset_detokenize", '\x7f', [&](char *buffer, size_t capacity, size_t *needed) {
        return reset_detokenize(tokenizer, ids.data(), ids.size(), flags, buffer, capacity, needed);
    });
}

inline std::pair<reset_status, std::vector<int32_t>> tokenize(const reset_tokenizer *tokenizer, std::string_view text,
                                                              uint32_t flags) {
    return read_buffer<std::vector<int32_t>>("reset_tokenize", -77, [&](int32_t *ids, size_t capacity, size_t *needed) {
        return reset_tokenize(tokenizer, text.data(), text.size(), flags, ids, capacity, needed);
    });
}

}  // namespace reset_fuzz
