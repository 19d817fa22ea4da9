// device_buffer.h — owned device memory and the CUDA error checks of the
// backend's host code.  Every allocation goes through DeviceBuffer, so a
// model or session knows its device bytes and an allocation failure is a
// RESET_ERR_OUT_OF_MEMORY that names what did not fit.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "api/errors.h"

namespace reset {

// Throw RESET_ERR_BACKEND with the CUDA error's text when `status` is not success.
inline void cuda_check(cudaError_t status, const char *what) {
    if (status != cudaSuccess) fail(RESET_ERR_BACKEND, what, ": ", cudaGetErrorString(status));
}

class DeviceBuffer {
public:
    DeviceBuffer() = default;
    // Allocate `bytes` (zeroed); `what` names it in the out-of-memory message.
    DeviceBuffer(size_t bytes, const std::string &what) : bytes_(bytes) {
        if (bytes == 0) return;
        const cudaError_t status = cudaMalloc(&ptr_, bytes);
        if (status != cudaSuccess) {
            cudaGetLastError();  // clear the sticky-free allocation error
            ptr_ = nullptr;
            size_t free_bytes = 0, total_bytes = 0;
            cudaMemGetInfo(&free_bytes, &total_bytes);
            fail(RESET_ERR_OUT_OF_MEMORY, "device memory: ", what, " needs ", bytes >> 20, " MiB but only ",
                 free_bytes >> 20, " MiB of ", total_bytes >> 20, " MiB are free (", cudaGetErrorString(status), ")");
        }
        cuda_check(cudaMemset(ptr_, 0, bytes), "cudaMemset");
    }
    ~DeviceBuffer() {
        if (ptr_) cudaFree(ptr_);
    }
    DeviceBuffer(DeviceBuffer &&other) noexcept : ptr_(other.ptr_), bytes_(other.bytes_) {
        other.ptr_ = nullptr;
        other.bytes_ = 0;
    }
    DeviceBuffer &operator=(DeviceBuffer &&other) noexcept {
        if (this != &other) {
            if (ptr_) cudaFree(ptr_);
            ptr_ = other.ptr_;
            bytes_ = other.bytes_;
            other.ptr_ = nullptr;
            other.bytes_ = 0;
        }
        return *this;
    }
    DeviceBuffer(const DeviceBuffer &) = delete;
    DeviceBuffer &operator=(const DeviceBuffer &) = delete;

    template <typename T = void>
    T *as() const { return static_cast<T *>(ptr_); }
    size_t bytes() const { return bytes_; }

    // Allocate and copy host data in.
    template <typename T>
    static DeviceBuffer from(const T *data, size_t count, const std::string &what) {
        DeviceBuffer b(count * sizeof(T), what);
        if (count) cuda_check(cudaMemcpy(b.ptr_, data, count * sizeof(T), cudaMemcpyHostToDevice), "upload");
        return b;
    }
    template <typename T>
    static DeviceBuffer from(const std::vector<T> &v, const std::string &what) {
        return from(v.data(), v.size(), what);
    }

private:
    void *ptr_ = nullptr;
    size_t bytes_ = 0;
};

// Page-locked host memory, mapped into the device's address space: what the decode step's
// graph reads and writes from the host (kernels/range_copy.h).
class PinnedBuffer {
public:
    PinnedBuffer() = default;
    PinnedBuffer(size_t bytes, const std::string &what) : bytes_(bytes) {
        if (bytes == 0) return;
        if (cudaMallocHost(&ptr_, bytes) != cudaSuccess) {
            cudaGetLastError();
            ptr_ = nullptr;
            fail(RESET_ERR_OUT_OF_MEMORY, "page-locked host memory: ", what, " needs ", bytes, " bytes");
        }
        std::memset(ptr_, 0, bytes);
        // Kernels read and write it directly (kernels/range_copy.h): its address on the device.
        if (cudaHostGetDevicePointer(&device_, ptr_, 0) != cudaSuccess) {
            cudaGetLastError();
            cudaFreeHost(ptr_);
            ptr_ = nullptr;
            fail(RESET_ERR_UNSUPPORTED, "page-locked host memory for ", what,
                 " cannot be mapped into the device's address space");
        }
    }
    ~PinnedBuffer() {
        if (ptr_) cudaFreeHost(ptr_);
    }
    PinnedBuffer(const PinnedBuffer &) = delete;
    PinnedBuffer &operator=(const PinnedBuffer &) = delete;
    PinnedBuffer(PinnedBuffer &&other) noexcept : ptr_(other.ptr_), device_(other.device_), bytes_(other.bytes_) {
        other.ptr_ = nullptr;
        other.device_ = nullptr;
        other.bytes_ = 0;
    }
    PinnedBuffer &operator=(PinnedBuffer &&other) noexcept {
        if (this != &other) {
            if (ptr_) cudaFreeHost(ptr_);
            ptr_ = other.ptr_;
            device_ = other.device_;
            bytes_ = other.bytes_;
            other.ptr_ = nullptr;
            other.device_ = nullptr;
            other.bytes_ = 0;
        }
        return *this;
    }
    template <typename T = void>
    T *as() const { return static_cast<T *>(ptr_); }
    size_t bytes() const { return bytes_; }

    // The same memory as the device addresses it (mapped page-locked memory).
    template <typename T = void>
    T *device() const { return static_cast<T *>(device_); }

private:
    void *ptr_ = nullptr;
    void *device_ = nullptr;
    size_t bytes_ = 0;
};

}  // namespace reset
