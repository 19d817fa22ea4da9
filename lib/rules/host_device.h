// host_device.h — the one macro that lets a rule header be compiled by both
// the host C++ compiler (CPU reference engine) and nvcc (CUDA kernels), so the
// two backends run literally the same code for every shared rule.
#pragma once

#if defined(__CUDACC__)
#define RESET_HD __host__ __device__ __forceinline__
#else
#define RESET_HD inline
#endif
