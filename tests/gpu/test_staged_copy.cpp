// test_staged_copy.cpp — StagedCopier (lib/cuda/staged_copy.h): segments of
// random sizes (empty ones, ones longer than a half, many within one) at
// random places, uploaded from pageable memory and downloaded back, for
// halves of 1 byte, 1000 bytes, 64 KB and 4 MB and 1, 3 and 8 host threads,
// and without staging (half 0: the path taken when page-locked memory is
// refused).
// The device's bytes must be the host's (read back with a plain cudaMemcpy,
// not the code under test), the downloaded bytes the device's, and no byte
// outside a segment written on either side (poisoned beforehand).  Fresh
// random data each run (seed printed, argv[1] repeats it).
#include <memory>

#include "cuda/staged_copy.h"
#include "gpu_test_util.h"

using namespace gpu_test;

namespace {

constexpr uint8_t kPoison = 0xA5;

struct Layout {
    std::vector<reset::CopySegment> segments;
    std::vector<std::pair<size_t, size_t>> host_ranges, device_ranges;  // [begin, end) of each segment
};

// Segments laid out in order on the host and shuffled on the device, with gaps on both sides.
Layout random_layout(uint8_t *host, uint8_t *device, size_t count, size_t longest, size_t *host_end,
                     size_t *device_end) {
    Layout layout;
    std::vector<size_t> sizes(count);
    for (size_t &s : sizes) {
        const int kind = int(g_rng() % 8);
        s = kind == 0 ? 0 : kind == 1 ? longest : 1 + g_rng() % longest;
    }
    size_t at = 0;
    std::vector<size_t> host_at(count);
    for (size_t i = 0; i < count; ++i) {
        at += g_rng() % 64;  // a gap
        host_at[i] = at;
        at += sizes[i];
    }
    *host_end = at + 64;
    std::vector<size_t> order(count);
    for (size_t i = 0; i < count; ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), g_rng);
    std::vector<size_t> device_at(count);
    at = 0;
    for (size_t i : order) {
        at += g_rng() % 64;
        device_at[i] = at;
        at += sizes[i];
    }
    *device_end = at + 64;
    for (size_t i = 0; i < count; ++i) {
        layout.segments.push_back({host + host_at[i], device + device_at[i], sizes[i]});
        layout.host_ranges.push_back({host_at[i], host_at[i] + sizes[i]});
        layout.device_ranges.push_back({device_at[i], device_at[i] + sizes[i]});
    }
    return layout;
}

// Whether `bytes` holds `want` inside the ranges and the poison everywhere else.
bool written_exactly(const std::vector<uint8_t> &bytes, const std::vector<std::pair<size_t, size_t>> &ranges,
                     const std::vector<uint8_t> &source, const std::vector<std::pair<size_t, size_t>> &source_ranges) {
    std::vector<uint8_t> want(bytes.size(), kPoison);
    for (size_t i = 0; i < ranges.size(); ++i)
        std::memcpy(want.data() + ranges[i].first, source.data() + source_ranges[i].first,
                    ranges[i].second - ranges[i].first);
    return bytes == want;
}

void round_trip(size_t half, int threads, size_t count, size_t longest) {
    constexpr size_t kSpace = 24 << 20;
    std::vector<uint8_t> host(kSpace), back(kSpace, kPoison);
    for (uint8_t &b : host) b = uint8_t(g_rng());  // random bytes, never zeros throughout
    DeviceBuffer device(kSpace);
    CUDA_OK(cudaMemset(device.ptr, kPoison, kSpace));
    size_t host_end = 0, device_end = 0;
    Layout up = random_layout(host.data(), device.as<uint8_t>(), count, longest, &host_end, &device_end);
    if (host_end > kSpace || device_end > kSpace) {
        std::printf("layout too large, skipped\n");
        return;
    }
    cudaStream_t stream;
    CUDA_OK(cudaStreamCreate(&stream));
    reset::StagedCopier copier(half, threads);
    copier.upload(up.segments, stream, "upload");
    const std::vector<uint8_t> on_device = device.download<uint8_t>(kSpace);
    EXPECT(written_exactly(on_device, up.device_ranges, host, up.host_ranges),
           "half %zu, %d threads, %zu segments up to %zu bytes: the device's bytes are not the host's", half, threads,
           count, longest);
    // Back into a poisoned buffer at the host places, twice: a second call reuses the halves.
    for (int call = 0; call < 2; ++call) {
        std::fill(back.begin(), back.end(), kPoison);
        std::vector<reset::CopySegment> down = up.segments;
        for (size_t i = 0; i < down.size(); ++i) down[i].host = back.data() + up.host_ranges[i].first;
        copier.download(down, stream, "download");
        EXPECT(written_exactly(back, up.host_ranges, on_device, up.device_ranges),
               "half %zu, %d threads, call %d: the downloaded bytes are not the device's", half, threads, call);
    }
    CUDA_OK(cudaStreamDestroy(stream));
}

}  // namespace

int main(int argc, char **argv) {
    if (!start("test_staged_copy", argc, argv)) return 0;
    for (size_t half : {size_t(0), size_t(1), size_t(1000), size_t(64) << 10, size_t(4) << 20})
        for (int threads : {1, 3, 8}) {
            if (half <= 1 && threads != 3) continue;  // no staging, or a byte per half: one case is enough
            // Segments spanning several halves (without staging, as long as the 64 KB case's).
            const size_t longest = half == 1 ? 300 : half == 0 ? 196625 : 3 * half + 17;
            const size_t count = half == 1 ? 20 : std::min<size_t>(64, (16 << 20) / (longest + 64));
            round_trip(half, threads, count, longest);
            round_trip(half, threads, 0, 1);  // nothing to copy
        }
    // The K/V shape itself: 16 runs of 2 MB (an 8k layer's 8 heads, two parts) through 4 MB halves.
    round_trip(size_t(4) << 20, 8, 16, size_t(2) << 20);
    return finish("test_staged_copy");
}
