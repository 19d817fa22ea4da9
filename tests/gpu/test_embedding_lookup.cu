// test_embedding_lookup.cu — BF16 embedding rows to FP32 (kernels/embedding_lookup.cu)
// against the exact widening on the CPU: hidden sizes of the models and odd
// ones (vector and element-wise paths), 1..8 tokens, repeated ids, ids outside
// the vocabulary (zero rows), padding never written.  Fresh random data every
// run (seed printed, argv[1] repeats it); outputs poisoned with NaN first.
// RESET_GPU_TEST_QUICK=1: small cases only, no timing (compute-sanitizer).
#include <algorithm>
#include <climits>
#include <functional>

#include "api/errors.h"
#include "gpu_test_util.h"
#include "kernels/embedding_lookup.h"

using namespace gpu_test;

namespace {

bool g_quick = false;

// x_offset (floats) shifts x off 16-byte alignment to force the element-wise path.
void run_case(int tokens, int64_t vocab, int64_t hidden, int64_t ldx, int x_offset, bool bad_ids) {
    std::vector<uint16_t> table(static_cast<size_t>(vocab * hidden));
    for (auto &t : table) t = float_to_bf16(normal(0.05f));
    std::vector<int32_t> ids(static_cast<size_t>(tokens));
    for (auto &id : ids) id = static_cast<int32_t>(g_rng() % static_cast<uint64_t>(vocab));
    if (tokens > 1) ids[1] = ids[0];  // a repeated id
    if (bad_ids) {
        const int32_t bad[4] = {-1, static_cast<int32_t>(vocab), INT_MIN, INT_MAX};
        for (int t = 0; t < tokens; t += 2) ids[size_t(t)] = bad[(t / 2) % 4];
    }
    const size_t x_elems = size_t(tokens) * size_t(ldx) + size_t(x_offset);
    DeviceBuffer d_table(table.size() * 2), d_ids(ids.size() * 4), d_x(x_elems * 4);
    d_table.upload(table);
    d_ids.upload(ids);
    d_x.poison();
    reset::EmbeddingLookupArgs a;
    a.tokens = tokens;
    a.ids = d_ids.as<int32_t>();
    a.table = d_table.ptr;
    a.vocab = vocab;
    a.hidden = hidden;
    a.x = d_x.as<float>() + x_offset;
    a.ldx = ldx;
    reset::embedding_lookup(a, nullptr);
    CUDA_OK(cudaDeviceSynchronize());
    const std::vector<float> got = d_x.download<float>(x_elems);
    size_t wrong = 0, written_padding = 0;
    for (size_t i = 0; i < size_t(x_offset); ++i) written_padding += std::isnan(got[i]) ? 0 : 1;
    for (int t = 0; t < tokens; ++t) {
        const int32_t id = ids[size_t(t)];
        const bool valid = id >= 0 && id < vocab;
        for (int64_t i = 0; i < ldx; ++i) {
            const float v = got[size_t(x_offset) + size_t(t) * size_t(ldx) + size_t(i)];
            if (i >= hidden) {
                written_padding += std::isnan(v) ? 0 : 1;
                continue;
            }
            const float want = valid ? bf16_to_float(table[size_t(id) * size_t(hidden) + size_t(i)]) : 0.0f;
            uint32_t a_bits, b_bits;
            std::memcpy(&a_bits, &v, 4);
            std::memcpy(&b_bits, &want, 4);
            wrong += (a_bits != b_bits) ? 1 : 0;
        }
    }
    EXPECT(wrong == 0, "tokens %d vocab %lld hidden %lld ldx %lld offset %d bad_ids %d: %zu wrong elements", tokens,
           (long long)vocab, (long long)hidden, (long long)ldx, x_offset, int(bad_ids), wrong);
    EXPECT(written_padding == 0, "tokens %d hidden %lld: %zu padding elements written", tokens, (long long)hidden,
           written_padding);
}

void timing() {
    const int64_t vocab = 151936, hidden = 4096;  // Qwen3-8B
    DeviceBuffer d_table(size_t(vocab * hidden) * 2), d_ids(8 * 4), d_x(size_t(8 * hidden) * 4);
    CUDA_OK(cudaMemset(d_table.ptr, 0x3c, d_table.bytes));
    std::vector<int32_t> ids(8);
    for (auto &id : ids) id = static_cast<int32_t>(g_rng() % uint64_t(vocab));
    d_ids.upload(ids);
    for (int tokens : {1, 8}) {
        reset::EmbeddingLookupArgs a;
        a.tokens = tokens;
        a.ids = d_ids.as<int32_t>();
        a.table = d_table.ptr;
        a.vocab = vocab;
        a.hidden = hidden;
        a.x = d_x.as<float>();
        a.ldx = hidden;
        const float us = median_us([&] { reset::embedding_lookup(a, nullptr); }, 50);
        std::printf("timing: embedding_lookup vocab %lld hidden %lld tokens %d: median %.2f us\n", (long long)vocab,
                    (long long)hidden, tokens, us);
    }
}

void expect_status(const reset::EmbeddingLookupArgs &a, reset_status want, const char *what) {
    expect_error(want, what, [&] { reset::embedding_lookup(a, nullptr); });
}

}  // namespace

int main(int argc, char **argv) {
    if (!start("test_embedding_lookup", argc, argv)) return 0;
    g_quick = std::getenv("RESET_GPU_TEST_QUICK") != nullptr;
    try {
        const std::vector<int64_t> hiddens = g_quick ? std::vector<int64_t>{1, 8, 100, 4096}
                                                     : std::vector<int64_t>{1, 7, 8, 64, 1000, 3584, 4096, 5120};
        for (int64_t hidden : hiddens)
            for (int tokens : {1, 3, 8})
                for (bool bad : {false, true}) {
                    const int64_t vocab = g_quick ? 37 : 1000;
                    run_case(tokens, vocab, hidden, hidden, 0, bad);            // contiguous
                    run_case(tokens, vocab, hidden, hidden + 4, 0, bad);        // padded rows
                    run_case(tokens, vocab, hidden, hidden + 3, 1, bad);        // misaligned: element-wise path
                }
        if (!g_quick) run_case(300, 151, 256, 260, 0, true);  // a prefill-sized batch

        DeviceBuffer d(64);
        reset::EmbeddingLookupArgs a;
        expect_status(a, RESET_ERR_INVALID_ARGUMENT, "empty arguments");
        a.tokens = 1;
        a.ids = d.as<int32_t>();
        a.table = d.ptr;
        a.vocab = 2;
        a.hidden = 8;
        a.x = d.as<float>();
        a.ldx = 7;
        expect_status(a, RESET_ERR_INVALID_ARGUMENT, "ldx < hidden");
        a.ldx = 8;
        a.tokens = 70000;
        expect_status(a, RESET_ERR_UNSUPPORTED, "70,000 tokens");
        a.tokens = 1;
        a.ids = nullptr;
        expect_status(a, RESET_ERR_INVALID_ARGUMENT, "null ids");
        if (!g_quick) timing();
    } catch (const reset::Error &e) {
        std::fprintf(stderr, "FAIL: unexpected reset::Error %d: %s\n", static_cast<int>(e.status()), e.what());
        return 1;
    }
    return finish("test_embedding_lookup");
}
