// load_trace.h — RESET_LOAD_TRACE=1 in the environment prints where a model
// load's time goes, one line per phase on stderr (docs/cuda-engine.md, "How to
// run"): the way to find the next thing to speed up, on the machine that loads.
// Off, it costs a clock read per phase.
#pragma once

#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace reset {

inline bool load_trace_enabled() {
    static const bool enabled = [] {
        const char *v = std::getenv("RESET_LOAD_TRACE");
        return v && *v && *v != '0';
    }();
    return enabled;
}

// Seconds between calls of split(), and a sum of intervals for a phase that
// comes in pieces (each layer's allocation, each flush).
class PhaseClock {
public:
    double split() {
        const auto now = std::chrono::steady_clock::now();
        const double seconds = std::chrono::duration<double>(now - last_).count();
        last_ = now;
        return seconds;
    }

private:
    std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

template <typename... Args>
void load_trace(const char *format, Args... args) {
    if (!load_trace_enabled()) return;
    std::fprintf(stderr, "reset load: ");
    std::fprintf(stderr, format, args...);
    std::fputc('\n', stderr);
}

}  // namespace reset
