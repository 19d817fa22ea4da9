// version_api.cpp — versions, status names and the last-error message.
#include "api/errors.h"
#include "reset.h"

namespace reset {
const char *last_error();
}

extern "C" {

uint32_t reset_version(void) { return RESET_VERSION_NUMBER; }

const char *reset_version_string(void) {
#if defined(RESET_WITH_CUDA)
    return RESET_VERSION_STRING " (cpu, cuda)";
#else
    return RESET_VERSION_STRING " (cpu)";
#endif
}

const char *reset_last_error(void) { return reset::last_error(); }

const char *reset_status_name(reset_status status) {
    switch (status) {
        case RESET_OK: return "RESET_OK";
        case RESET_ERR_INVALID_ARGUMENT: return "RESET_ERR_INVALID_ARGUMENT";
        case RESET_ERR_INVALID_HANDLE: return "RESET_ERR_INVALID_HANDLE";
        case RESET_ERR_IO: return "RESET_ERR_IO";
        case RESET_ERR_FORMAT: return "RESET_ERR_FORMAT";
        case RESET_ERR_UNSUPPORTED: return "RESET_ERR_UNSUPPORTED";
        case RESET_ERR_SHAPE: return "RESET_ERR_SHAPE";
        case RESET_ERR_OUT_OF_RANGE: return "RESET_ERR_OUT_OF_RANGE";
        case RESET_ERR_CONTEXT_OVERFLOW: return "RESET_ERR_CONTEXT_OVERFLOW";
        case RESET_ERR_OUT_OF_MEMORY: return "RESET_ERR_OUT_OF_MEMORY";
        case RESET_ERR_BAD_UTF8: return "RESET_ERR_BAD_UTF8";
        case RESET_ERR_BUFFER_TOO_SMALL: return "RESET_ERR_BUFFER_TOO_SMALL";
        case RESET_ERR_CANCELLED: return "RESET_ERR_CANCELLED";
        case RESET_ERR_STATE: return "RESET_ERR_STATE";
        case RESET_ERR_BACKEND: return "RESET_ERR_BACKEND";
        case RESET_ERR_INTERNAL: return "RESET_ERR_INTERNAL";
    }
    return "RESET_ERR_UNKNOWN";
}

}  // extern "C"
