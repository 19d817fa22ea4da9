// device_engine_none.cpp — the CUDA backend's entry points in a build
// without CUDA: each says why there is no device backend.
#ifndef RESET_WITH_CUDA

#include "api/errors.h"
#include "engine/device_engine.h"

namespace reset {

namespace {
constexpr const char *kNoCuda =
    "this libreset was built without CUDA (configure with -DRESET_CUDA=ON where nvcc is installed)";
}

bool cuda_backend_available(std::string *why) {
    if (why) *why = kNoCuda;
    return false;
}

std::shared_ptr<DeviceModel> upload_model(const LoadedModel &, int32_t) { fail(RESET_ERR_BACKEND, kNoCuda); }

uint64_t device_model_bytes(const DeviceModel &) { return 0; }

std::unique_ptr<DeviceSession> create_device_session(const LoadedModel &, const DeviceSessionOptions &,
                                                     const DelimiterSets &) {
    fail(RESET_ERR_BACKEND, kNoCuda);
}

}  // namespace reset

#endif  // RESET_WITH_CUDA
