// errors.h — how failures travel inside the library and how they cross the C ABI.
//
// Inside, code throws reset::Error(status, message).  Every exported function
// runs its body through reset::api_call(), which turns any exception into a
// reset_status and a thread-local message, so nothing ever crosses the ABI.
#pragma once

#include <cstdint>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "reset.h"

namespace reset {

class Error : public std::runtime_error {
public:
    Error(reset_status status, const std::string &message) : std::runtime_error(message), status_(status) {}
    reset_status status() const { return status_; }

private:
    reset_status status_;
};

inline std::string to_text(char c) { return std::string(1, c); }
inline std::string to_text(const char *s) { return s ? std::string(s) : std::string("(null)"); }
template <typename T>
std::string to_text(const T &value) {
    if constexpr (std::is_enum_v<T>) return std::to_string(static_cast<long long>(value));
    else if constexpr (std::is_arithmetic_v<T>) return std::to_string(value);
    else return std::string(value);
}

// Build a message from pieces: fail(RESET_ERR_FORMAT, "tensor '", name, "' ...").
template <typename... Parts>
[[noreturn]] void fail(reset_status status, Parts &&...parts) {
    std::string message;
    (message.append(to_text(parts)), ...);
    throw Error(status, message);
}

// Record a failure for reset_last_error() on this thread and return its status.
reset_status set_last_error(reset_status status, const std::string &message);
void clear_last_error();

// Run an API body; translate every exception.  The body returns nothing:
// success is RESET_OK.
template <typename Body>
reset_status api_call(Body &&body) noexcept {
    try {
        body();
        return RESET_OK;
    } catch (const Error &e) {
        return set_last_error(e.status(), e.what());
    } catch (const std::bad_alloc &) {
        return set_last_error(RESET_ERR_OUT_OF_MEMORY, "out of host memory");
    } catch (const std::exception &e) {
        return set_last_error(RESET_ERR_INTERNAL, std::string("internal error: ") + e.what());
    } catch (...) {
        return set_last_error(RESET_ERR_INTERNAL, "internal error: unknown exception");
    }
}

// The value of an enum field a caller filled in.  It may hold any bit pattern,
// and loading one outside the enumerators' range as the enum type is undefined
// behaviour (UBSan's -fsanitize=enum flags it), so it is read as its bytes.
template <typename Enum>
int32_t enum_as_int(const Enum &value) {
    static_assert(std::is_enum_v<Enum> && sizeof(Enum) == sizeof(int32_t), "a 32-bit enum");
    int32_t raw;
    std::memcpy(&raw, &value, sizeof raw);
    return raw;
}

// A required pointer argument.
inline void require(const void *pointer, const char *what) {
    if (!pointer) fail(RESET_ERR_INVALID_ARGUMENT, what, " is NULL");
}

// The snprintf idiom of reset.h: report the size in *needed, copy only if it
// fits (RESET_ERR_BUFFER_TOO_SMALL otherwise; buffer may be NULL when n is 0).
template <typename T>
void copy_out(const T *data, size_t n, T *buffer, size_t capacity, size_t *needed) {
    *needed = n;
    if (n > capacity)
        fail(RESET_ERR_BUFFER_TOO_SMALL, "the buffer holds ", capacity, " but ", n, " are needed");
    if (n > 0) {
        require(buffer, "buffer");
        std::memcpy(buffer, data, n * sizeof(T));
    }
}

}  // namespace reset
