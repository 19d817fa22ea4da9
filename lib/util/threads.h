// threads.h — the OpenMP team size for reset_model_options.threads, one rule
// for every parallel loop of the CPU engine and of loading (quantizing a BF16
// checkpoint to NVFP4), so that threads = 1 keeps all of them on one thread.
#pragma once

#include <omp.h>

#include <cstdint>

namespace reset {

// requested: reset_model_options.threads (0 = all cores, as OpenMP would choose).
inline int openmp_threads(int32_t requested) { return requested > 0 ? requested : omp_get_max_threads(); }

}  // namespace reset
