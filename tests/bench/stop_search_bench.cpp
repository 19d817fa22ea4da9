// stop_search_bench.cpp — what searching for stop strings costs the host per
// sequence and decode step (reset_set_stop; lib/engine/stop_conditions.cpp).
// Build and run from the repository root (no GPU, no library build), one line:
//   g++ -O2 -std=c++17 -Ilib -Iinclude tests/bench/stop_search_bench.cpp lib/engine/stop_conditions.cpp
//       lib/text/utf8.cpp lib/api/errors.cpp -o /tmp/stop_search_bench && /tmp/stop_search_bench
// Cases: the worst the limits allow (16 strings of 256 bytes that all match
// 255 held bytes, each one's last byte different, plus a 16-byte piece), and
// a chat-like one ("\n\nUser: hello there" against the same strings).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "engine/stop_conditions.h"

int main() {
    std::vector<std::string> strings(RESET_MAX_STOP_STRINGS, std::string(RESET_MAX_STOP_STRING_BYTES - 1, 'a'));
    for (size_t k = 0; k < strings.size(); ++k) strings[k] += char('b' + k);
    std::vector<const char *> pointers;
    for (const std::string &s : strings) pointers.push_back(s.c_str());
    reset_stop_options o = {};  // what reset_stop_options_init gives, without linking the library
    o.struct_size = sizeof o;
    o.strings = pointers.data();
    o.string_count = pointers.size();
    const reset::StopConditions conditions = reset::make_stop_conditions(&o, 1000, true);
    const std::string worst(RESET_MAX_STOP_STRING_BYTES - 1 + 16, 'a'), chat = "\n\nUser: hello there";
    for (const std::string *text : {&worst, &chat}) {
        std::vector<double> us;
        size_t sink = 0;
        for (int round = 0; round < 9; ++round) {
            constexpr int kSearches = 5000;
            const auto t0 = std::chrono::steady_clock::now();
            for (int i = 0; i < kSearches; ++i) sink += reset::find_stop(conditions, *text).hold;
            const auto t1 = std::chrono::steady_clock::now();
            us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / kSearches);
        }
        std::sort(us.begin(), us.end());
        std::printf("%3zu bytes against 16 strings of 256: median %.2f us per search (9 rounds; %zu)\n",
                    text->size(), us[us.size() / 2], sink);
    }
}
