// test_range_copy.cu — copy_ranges (kernels/range_copy.cu): one launch moving
// up to four ranges between mapped page-locked host memory and the device,
// in every direction, on the 16-byte and the 4-byte path, against the bytes
// the host wrote, and ranges without a source, which zero-fill theirs.
// Every byte around a destination is poisoned first and must stay so (no
// word written past a range).  Also: a copy captured in a CUDA
// graph reads what the host writes between replays (what the decode step
// relies on), and the launcher's argument checks.  Fresh random data every
// run (seed printed, argv[1] repeats it).  RESET_GPU_TEST_QUICK=1: fewer sizes,
// no timing (compute-sanitizer).
#include <algorithm>
#include <cstring>
#include <memory>

#include "api/errors.h"
#include "gpu_test_util.h"
#include "kernels/range_copy.h"

using namespace gpu_test;

namespace {

bool g_quick = false;
constexpr size_t kGuard = 64;  // poisoned bytes on each side of a destination
constexpr uint8_t kPoison = 0xA5;

// Mapped page-locked host memory freed on scope exit.
struct HostBuffer {
    void *ptr = nullptr, *device = nullptr;
    explicit HostBuffer(size_t n) {
        CUDA_OK(cudaMallocHost(&ptr, n ? n : 1));
        CUDA_OK(cudaHostGetDevicePointer(&device, ptr, 0));
    }
    ~HostBuffer() { cudaFreeHost(ptr); }
    HostBuffer(const HostBuffer &) = delete;
    HostBuffer &operator=(const HostBuffer &) = delete;
};

// Where a range's bytes live: host (mapped) or device.  The buffer holds
// guard + offset + bytes + guard bytes; the range starts at guard + offset.
struct End {
    bool host;
    size_t offset, bytes;
    std::unique_ptr<HostBuffer> h;
    std::unique_ptr<DeviceBuffer> d;
    End(bool on_host, size_t off, size_t n) : host(on_host), offset(off), bytes(n) {
        const size_t total = 2 * kGuard + off + n;
        if (host) h = std::make_unique<HostBuffer>(total);
        else d = std::make_unique<DeviceBuffer>(total);
    }
    size_t total() const { return 2 * kGuard + offset + bytes; }
    uint8_t *device_base() const { return static_cast<uint8_t *>(host ? h->device : d->ptr); }
    void *range() const { return device_base() + kGuard + offset; }
    void fill(const std::vector<uint8_t> &all) {
        if (host) std::memcpy(h->ptr, all.data(), all.size());
        else CUDA_OK(cudaMemcpy(d->ptr, all.data(), all.size(), cudaMemcpyHostToDevice));
    }
    std::vector<uint8_t> read() const {
        std::vector<uint8_t> all(total());
        if (host) std::memcpy(all.data(), h->ptr, all.size());
        else CUDA_OK(cudaMemcpy(all.data(), d->ptr, all.size(), cudaMemcpyDeviceToHost));
        return all;
    }
};

struct Case {
    bool from_host, to_host;
    size_t from_offset, to_offset, bytes;
    bool zeros = false;  // no source: the destination is zero-filled
};

void run(const std::vector<Case> &cases) {
    std::vector<std::unique_ptr<End>> from, to;
    std::vector<std::vector<uint8_t>> source;
    reset::RangeCopyArgs args;
    args.count = static_cast<int>(cases.size());
    for (size_t r = 0; r < cases.size(); ++r) {
        const Case &c = cases[r];
        from.push_back(std::make_unique<End>(c.from_host, c.from_offset, c.bytes));
        to.push_back(std::make_unique<End>(c.to_host, c.to_offset, c.bytes));
        std::vector<uint8_t> bytes(from.back()->total());
        for (auto &b : bytes) b = static_cast<uint8_t>(g_rng());
        from.back()->fill(bytes);
        source.push_back(bytes);
        to.back()->fill(std::vector<uint8_t>(to.back()->total(), kPoison));
        if (c.zeros) std::fill(source.back().begin(), source.back().end(), uint8_t(0));
        args.ranges[r] = {c.zeros ? nullptr : from.back()->range(), to.back()->range(), c.bytes};
    }
    reset::copy_ranges(args, nullptr);
    CUDA_OK(cudaDeviceSynchronize());
    for (size_t r = 0; r < cases.size(); ++r) {
        const Case &c = cases[r];
        const std::vector<uint8_t> got = to[r]->read();
        size_t wrong = 0, outside = 0;
        for (size_t i = 0; i < got.size(); ++i) {
            const size_t begin = kGuard + c.to_offset;
            if (i >= begin && i < begin + c.bytes)
                wrong += got[i] != source[r][kGuard + c.from_offset + (i - begin)];
            else
                outside += got[i] != kPoison;
        }
        EXPECT(wrong == 0 && outside == 0,
               "range %zu of %zu: %s -> %s, offsets %zu -> %zu, %zu bytes: %zu wrong, %zu written outside", r,
               cases.size(), c.zeros ? "zeros" : c.from_host ? "host" : "device", c.to_host ? "host" : "device", c.from_offset,
               c.to_offset, c.bytes, wrong, outside);
    }
}

// A copy captured in a graph reads the host's bytes at each replay, not at capture.
void graph_replay() {
    HostBuffer host(4096);
    DeviceBuffer device(4096);
    cudaStream_t stream;
    CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    reset::RangeCopyArgs args;
    args.count = 1;
    args.ranges[0] = {host.device, device.ptr, 4096};
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed));
    reset::copy_ranges(args, stream);
    CUDA_OK(cudaStreamEndCapture(stream, &graph));
    CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
    for (int replay = 0; replay < 3; ++replay) {
        std::vector<uint8_t> bytes(4096);
        for (auto &b : bytes) b = static_cast<uint8_t>(g_rng());
        std::memcpy(host.ptr, bytes.data(), bytes.size());
        CUDA_OK(cudaGraphLaunch(exec, stream));
        CUDA_OK(cudaStreamSynchronize(stream));
        EXPECT(device.download<uint8_t>(4096) == bytes, "graph replay %d: the copy did not read the host's new bytes",
               replay);
    }
    CUDA_OK(cudaGraphExecDestroy(exec));
    CUDA_OK(cudaGraphDestroy(graph));
    CUDA_OK(cudaStreamDestroy(stream));
}

void timing() {
    // A decode step's upload at batch 8 (StepInput plus 8 rings of 64): host -> device.
    HostBuffer host(8192);
    DeviceBuffer device(8192);
    for (size_t bytes : {size_t(1024), size_t(8192)}) {
        reset::RangeCopyArgs args;
        args.count = 1;
        args.ranges[0] = {host.device, device.ptr, bytes};
        const float us = median_us([&] { reset::copy_ranges(args, nullptr); }, 200);
        std::printf("timing: copy_ranges host -> device %zu bytes: median %.2f us\n", bytes, us);
    }
}

void expect_status(const reset::RangeCopyArgs &a, const char *what) {
    expect_error(RESET_ERR_INVALID_ARGUMENT, what, [&] { reset::copy_ranges(a, nullptr); });
}

}  // namespace

int main(int argc, char **argv) {
    if (!start("test_range_copy", argc, argv)) return 0;
    g_quick = std::getenv("RESET_GPU_TEST_QUICK") != nullptr;
    try {
        const std::vector<size_t> sizes = g_quick ? std::vector<size_t>{4, 16, 1028, 4096}
                                                  : std::vector<size_t>{4, 12, 16, 48, 1028, 4096, 65540, 262144};
        // 16-byte path (offsets and size multiples of 16) and 4-byte path, every direction.
        for (size_t bytes : sizes)
            for (int direction = 0; direction < 4; ++direction)
                for (size_t offset : {size_t(0), size_t(4), size_t(32)}) {
                    const bool from_host = direction & 1, to_host = direction & 2;
                    run({{from_host, to_host, offset, offset == 4 ? 8 : offset, bytes}});
                }
        // Zero-filled destinations (poisoned before: kPoison is not 0), host and device, both paths.
        for (size_t bytes : sizes)
            for (bool to_host : {false, true})
                for (size_t offset : {size_t(0), size_t(4)}) run({{false, to_host, 0, offset, bytes, true}});
        // Several ranges in one launch, of mixed paths and directions (the step's download has three).
        for (int trial = 0; trial < (g_quick ? 4 : 40); ++trial) {
            std::vector<Case> cases;
            const int count = 1 + static_cast<int>(g_rng() % reset::RangeCopyArgs::kMaxRanges);
            for (int r = 0; r < count; ++r)
                cases.push_back({bool(g_rng() & 1), bool(g_rng() & 1), 4 * size_t(g_rng() % 8), 4 * size_t(g_rng() % 8),
                                 4 * size_t(g_rng() % 3000), g_rng() % 4 == 0});
            run(cases);
        }
        graph_replay();

        DeviceBuffer d(64);
        reset::RangeCopyArgs a;
        expect_status(a, "no ranges");
        a.count = reset::RangeCopyArgs::kMaxRanges + 1;
        expect_status(a, "five ranges");
        a.count = 1;
        a.ranges[0] = {d.ptr, d.as<uint8_t>() + 32, 6};
        expect_status(a, "6 bytes");
        a.ranges[0] = {d.as<uint8_t>() + 2, d.as<uint8_t>() + 32, 8};
        expect_status(a, "misaligned source");
        a.ranges[0] = {d.ptr, nullptr, 8};
        expect_status(a, "null destination");
        a.ranges[0] = {d.ptr, d.as<uint8_t>() + 32, size_t(1) << 31};
        expect_status(a, "2 GiB");
        a.ranges[0] = {d.ptr, d.as<uint8_t>() + 16, 32};
        expect_status(a, "a destination overlapping its source");
        a.count = 2;
        a.ranges[0] = {d.ptr, d.as<uint8_t>() + 32, 16};
        a.ranges[1] = {d.as<uint8_t>() + 8, d.as<uint8_t>() + 40, 8};
        expect_status(a, "two overlapping destinations");
        a.ranges[1] = {d.as<uint8_t>() + 36, d.as<uint8_t>() + 56, 4};
        expect_status(a, "a destination overlapping another range's source");
        a.ranges[1] = {d.as<uint8_t>() + 8, d.as<uint8_t>() + 48, 8};
        reset::copy_ranges(a, nullptr);  // adjacent, not overlapping: accepted
        CUDA_OK(cudaDeviceSynchronize());
        a.ranges[1] = {nullptr, d.as<uint8_t>() + 40, 8};
        expect_status(a, "a zero-filled destination overlapping another range's");
        a.ranges[1] = {nullptr, d.as<uint8_t>() + 48, 16};
        reset::copy_ranges(a, nullptr);  // a zero fill beside a copy: accepted
        CUDA_OK(cudaDeviceSynchronize());
        a.ranges[1] = {nullptr, d.as<uint8_t>() + 50, 8};
        expect_status(a, "a misaligned zero-filled destination");
        a.count = 1;
        a.ranges[0] = {nullptr, nullptr, 0};
        reset::copy_ranges(a, nullptr);  // nothing to copy: no launch, no error
        CUDA_OK(cudaDeviceSynchronize());
        if (!g_quick) timing();
    } catch (const reset::Error &e) {
        std::fprintf(stderr, "FAIL: unexpected reset::Error %d: %s\n", static_cast<int>(e.status()), e.what());
        return 1;
    }
    return finish("test_range_copy");
}
