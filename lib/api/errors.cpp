// errors.cpp — the thread-local last-error message behind reset_last_error().
#include "api/errors.h"

namespace reset {
namespace {
thread_local std::string last_error_message;
}

reset_status set_last_error(reset_status status, const std::string &message) {
    try {
        last_error_message = message;
    } catch (...) {
        // Keeping the status matters more than the text when memory is gone.
    }
    return status;
}

void clear_last_error() { last_error_message.clear(); }

const char *last_error() { return last_error_message.c_str(); }

}  // namespace reset
