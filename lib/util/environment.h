// environment.h — the one rule for the A/B knobs read from the environment
// (RESET_* variables of docs/cuda-engine.md and the kernels' comments): a whole
// number in range, or the default.
#pragma once

#include <cstdlib>

namespace reset {

// An integer from the environment variable `name`: `fallback` where it is
// unset, not a whole number, or outside [lo, hi].
inline long long environment_integer(const char *name, long long fallback, long long lo, long long hi) {
    const char *v = std::getenv(name);
    if (!v) return fallback;
    char *end = nullptr;
    const long long parsed = std::strtoll(v, &end, 10);
    return end != v && *end == '\0' && parsed >= lo && parsed <= hi ? parsed : fallback;
}

}  // namespace reset
