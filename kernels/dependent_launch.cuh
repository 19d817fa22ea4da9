// dependent_launch.cuh — programmatic dependent launch (PDL, sm_90 and
// later): the one rule every kernel of the decode step follows so that a
// kernel may start while the kernel before it in the stream is finishing.
//
// Why: a Qwen3-8B decode step is ~290 kernels at batch 1; each one, launched the plain
// way, starts only after its predecessor has drained, and then spends its
// first microseconds on the launch ramp and its first DRAM round trip.  With
// PDL the next kernel's CTAs are placed as soon as every CTA of the current
// one has run start_next_kernel(), and whatever they do before
// wait_for_previous_kernel() (the GEMV loads its first weights, which no
// kernel writes) overlaps the current kernel's tail.
//
// The contract, which makes PDL safe in any order of kernels:
//  - every kernel launched through launch_kernel() calls
//    wait_for_previous_kernel() in every CTA before it reads or writes any
//    memory that another kernel of the stream writes or reads (before it
//    only constant data, such as weights, may be read);
//  - griddepcontrol.wait returns when the previous grid has completed and
//    its writes are visible.  Because every grid waits, a grid's completion
//    implies its predecessors' completion, so the ordering is transitive
//    across any chain of launches, cuBLAS calls and copies included.
//
// Launches carry the PDL attribute only inside a ScopedDependentLaunch on the
// launching thread (the CUDA session turns it on for sm_90+ devices); every
// other launch, and every launch on an older GPU, is the plain stream-ordered
// one, and the device-side calls compile to nothing before sm_90.
#pragma once

#include <cuda_runtime.h>

#include <utility>

#include "kernels/cuda_common.cuh"

namespace reset::cuda {

// Host: whether launches from this thread carry the PDL attribute now.
inline bool &dependent_launch_flag() {
    static thread_local bool enabled = false;
    return enabled;
}

// Host: turns PDL on (or off) for the launches of this thread in its scope.
class ScopedDependentLaunch {
public:
    explicit ScopedDependentLaunch(bool enabled) : saved_(dependent_launch_flag()) {
        dependent_launch_flag() = enabled;
    }
    ~ScopedDependentLaunch() { dependent_launch_flag() = saved_; }
    ScopedDependentLaunch(const ScopedDependentLaunch &) = delete;
    ScopedDependentLaunch &operator=(const ScopedDependentLaunch &) = delete;

private:
    bool saved_;
};

// Host: append the PDL attribute to attributes[0, count) where this thread
// asked for it; returns the new count (for launches that set attributes of
// their own, such as a cluster shape).
inline unsigned append_dependent_launch(cudaLaunchAttribute *attributes, unsigned count) {
    if (!dependent_launch_flag()) return count;
    attributes[count].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attributes[count].val.programmaticStreamSerializationAllowed = 1;
    return count + 1;
}

#if defined(__CUDACC__)

// Host: launch `kernel` on `stream`, with the PDL attribute where this thread
// asked for it.  Errors become reset::Error (RESET_ERR_BACKEND) naming `what`.
template <typename... KernelParams, typename... Args>
void launch_kernel(const char *what, void (*kernel)(KernelParams...), dim3 grid, dim3 block, size_t shared_bytes,
                   cudaStream_t stream, Args &&...args) {
    cudaLaunchConfig_t config = {};
    config.gridDim = grid;
    config.blockDim = block;
    config.dynamicSmemBytes = shared_bytes;
    config.stream = stream;
    cudaLaunchAttribute attribute[1];
    config.attrs = attribute;
    config.numAttrs = append_dependent_launch(attribute, 0);
    check(cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...), what);
}

// Device: block until the previous kernel of the stream has completed and its
// writes are visible (a no-op for a plain launch, and before sm_90).
__device__ __forceinline__ void wait_for_previous_kernel() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// Device: let the next kernel of the stream be placed on the GPU once every
// CTA of this one has called this (or exited).  Its CTAs then wait in
// wait_for_previous_kernel() for this grid to complete.
__device__ __forceinline__ void start_next_kernel() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// Device: the usual kernel opening, for kernels with nothing to do before
// their inputs are ready.
__device__ __forceinline__ void begin_dependent_kernel() {
    wait_for_previous_kernel();
    start_next_kernel();
}

// Device: an opening that lets the next kernel be placed before this one's
// own wait, so that the next kernel's CTAs take their slots and do their work
// before the wait (constant loads, L2 prefetches) during the previous
// kernel's tail, one kernel earlier than begin_dependent_kernel() allows.
// The next kernel still waits for this one to complete before it touches
// memory, so the contract above holds.  What it changes is how far launches
// may run ahead of the stream: a kernel whose work before its wait must not
// overlap an earlier launch of the same kernel (nvfp4_gemv_pair's claims)
// must stay separated from it by a kernel that uses begin_dependent_kernel().
// It does not pay everywhere (docs/history/cuda-engine-sessions.md, sessions 16-17): the q/k
// norm uses it before long attention only, and of the row norms only the one
// before the QKV GEMV (RmsNormPrepareArgs::place_next_early); the norm before
// gate_up and the embedding were measured slower with it (the next GEMV's
// early CTAs contend with the one still streaming).
__device__ __forceinline__ void begin_dependent_kernel_placing_next() {
    start_next_kernel();
    wait_for_previous_kernel();
}

// Device: either opening, chosen at run time (the kernels that place the next
// one early only in some launches: the q/k norm, rms_norm_prepare).
__device__ __forceinline__ void begin_dependent_kernel(bool placing_next) {
    if (placing_next) begin_dependent_kernel_placing_next();
    else begin_dependent_kernel();
}

#endif  // __CUDACC__

}  // namespace reset::cuda
