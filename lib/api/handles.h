// handles.h — validation of the opaque handles the C ABI hands out.
//
// Every live handle is recorded in a registry of its kind, so a call with a
// freed or foreign pointer is answered with RESET_ERR_INVALID_HANDLE instead of
// touching freed memory.  (An address reused by a newer object of the same
// kind cannot be told apart; reset.h says so.)
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstddef>
#include <cstring>
#include <mutex>
#include <type_traits>
#include <unordered_set>

#include "api/errors.h"
#include "reset.h"

namespace reset {

template <typename T>
class HandleRegistry {
public:
    static HandleRegistry &instance() {
        static HandleRegistry registry;
        return registry;
    }
    void add(const T *handle) {
        std::lock_guard<std::mutex> lock(mutex_);
        live_.insert(handle);
    }
    // True if the handle was live (and is now forgotten).
    bool remove(const T *handle) {
        std::lock_guard<std::mutex> lock(mutex_);
        return live_.erase(handle) == 1;
    }
    bool contains(const T *handle) {
        std::lock_guard<std::mutex> lock(mutex_);
        return live_.count(handle) == 1;
    }
    // Run fn(handle) while holding the registry's lock, if the handle is live:
    // a free on another thread (remove, then delete) cannot come between the
    // check and fn.  For short work only (every handle check waits on it).
    template <typename Fn>
    bool with_live(T *handle, Fn &&fn) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (live_.count(handle) != 1) return false;
        fn(handle);
        return true;
    }

private:
    std::mutex mutex_;
    std::unordered_set<const T *> live_;
};

[[noreturn]] inline void fail_not_live(const char *what) {
    fail(RESET_ERR_INVALID_HANDLE, what, " is not a live handle (already freed, or not made by libreset)");
}

// The handle itself, or an exception naming what is wrong with it.
template <typename T>
T *checked_handle(T *handle, const char *what) {
    if (!handle) fail(RESET_ERR_INVALID_ARGUMENT, what, " is NULL");
    if (!HandleRegistry<std::remove_const_t<T>>::instance().contains(handle)) fail_not_live(what);
    return handle;
}

// fn(handle) under the registry's lock, so that a free on another thread cannot
// come between the check and fn; the same errors as checked_handle otherwise.
template <typename T, typename Fn>
void with_checked_handle(T *handle, const char *what, Fn &&fn) {
    if (!handle) fail(RESET_ERR_INVALID_ARGUMENT, what, " is NULL");
    if (!HandleRegistry<T>::instance().with_live(handle, fn)) fail_not_live(what);
}

// The pointer fields of the structs a caller passes in.  No older layout
// ended inside a field, and half of a caller's pointer over the default's
// other half is no pointer at all, so a struct_size ending inside one of these
// is refused instead of read (fuzz_policy found the strlen of such a preset).
template <typename Options>
struct PointerFields {
    static constexpr std::array<size_t, 0> offsets{};
};
template <>
struct PointerFields<reset_model_options> {
    static constexpr std::array offsets{offsetof(reset_model_options, progress),
                                        offsetof(reset_model_options, progress_user_data)};
};
template <>
struct PointerFields<reset_policy_params> {
    static constexpr std::array offsets{offsetof(reset_policy_params, preset)};
};
template <>
struct PointerFields<reset_policy_options> {
    static constexpr std::array offsets{offsetof(reset_policy_options, newline_ids),
                                        offsetof(reset_policy_options, double_newline_ids)};
};
template <>
struct PointerFields<reset_calibration_options> {
    static constexpr std::array offsets{offsetof(reset_calibration_options, progress),
                                        offsetof(reset_calibration_options, progress_user_data)};
};
template <>
struct PointerFields<reset_stop_options> {
    static constexpr std::array offsets{offsetof(reset_stop_options, strings), offsetof(reset_stop_options, ids)};
};
template <>
struct PointerFields<reset_chat_options> {
    static constexpr std::array offsets{offsetof(reset_chat_options, tools_json),
                                        offsetof(reset_chat_options, tool_calls_json)};
};
template <>
struct PointerFields<reset_step> {
    static constexpr std::array offsets{offsetof(reset_step, text), offsetof(reset_step, top_logprobs)};
};

// Whether a caller's struct_size ends inside one of T's pointer fields.
template <typename T>
bool ends_inside_pointer(uint32_t size) {
    for (size_t offset : PointerFields<T>::offsets)
        if (size > offset && size < offset + sizeof(void *)) return true;
    return false;
}

// Check a caller's struct_size: at least the size field, at most the struct
// this library knows, and not ending inside a pointer field.
template <typename Options>
void check_struct_size(uint32_t size, const char *what) {
    const bool cuts_pointer = ends_inside_pointer<Options>(size);
    if (size < sizeof(uint32_t) || size > sizeof(Options) || cuts_pointer)
        fail(RESET_ERR_INVALID_ARGUMENT, what, "->struct_size is ", size, " (expected ", sizeof(Options),
             cuts_pointer ? ", or an older layout's size: this one ends inside a pointer field"
                          : "; call the _init function first",
             ")");
}

// Check the struct_size of a struct the library fills, or reads only up to
// what it knows (a newer header's larger struct is fine): at least the size
// field, and not ending inside a pointer field.
template <typename T>
void check_caller_struct(uint32_t size, const char *what, const char *init) {
    if (size < sizeof(uint32_t))
        fail(RESET_ERR_INVALID_ARGUMENT, what, "->struct_size is ", size, " (call ", init, " first)");
    if (ends_inside_pointer<T>(size))
        fail(RESET_ERR_INVALID_ARGUMENT, what, "->struct_size is ", size, ", which ends inside a pointer field (call ",
             init, " first)");
}

// What every reset_*_init_sized does (reset.h): the caller's struct is
// `size` bytes (sizeof as its header declares it); give it the library's
// defaults for the part both know, zeros for a tail this library does not
// know, and struct_size = size; never write past it.  A size too small to
// hold struct_size writes nothing (the call that reads the struct refuses it).
template <typename T>
void write_defaults(T *out, size_t size, const T &defaults) {
    if (!out || size < sizeof(uint32_t) || size > UINT32_MAX) return;
    std::memset(out, 0, size);
    std::memcpy(out, &defaults, std::min(size, sizeof(T)));
    out->struct_size = static_cast<uint32_t>(size);
}

// Read a caller's option struct of possibly older (smaller) layout: start from
// the library's defaults and copy the first struct_size bytes the caller has.
template <typename Options>
Options read_options(const Options *given, void (*init)(Options *, size_t), const char *what) {
    Options options;
    init(&options, sizeof options);
    if (!given) return options;
    const uint32_t size = given->struct_size;
    check_struct_size<Options>(size, what);
    const uint32_t own_size = options.struct_size;
    std::memcpy(&options, given, size);
    options.struct_size = own_size;
    return options;
}

}  // namespace reset
