// philox.h — the counter-based generator behind every draw (ReSET spec,
// step 8: "all randomness ... must come from a seeded generator").
//
// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3",
// SC'11): ten rounds of a keyed bijection of a 128-bit counter.  Because a
// draw is a pure function of (seed, sequence, step), the CPU engine and the
// CUDA sampler pick the same uniform for the same token without sharing any
// generator state, and a sequence's draws do not depend on how many other
// sequences run beside it.
//
// Layout, fixed (changing it changes every sampled token):
//   key     = (seed low 32 bits, seed high 32 bits)
//   counter = (step low 32 bits, step high 32 bits, sequence, 0)
//   uniform = a 53-bit double in [0, 1) from output words 0 and 1;
//   second_uniform = the same from words 2 and 3 (top-p's second draw,
//   sampling/truncation.h).
#pragma once

#include <cstdint>

#include "rules/host_device.h"

namespace reset::philox {

struct Block {
    uint32_t v[4];
};

// One round: two 32x32->64 multiplications, the high halves mixed with the
// key and the other two words (the published round function).
RESET_HD void round(uint32_t c[4], uint32_t k0, uint32_t k1) {
    const uint64_t p0 = static_cast<uint64_t>(0xD2511F53u) * c[0];
    const uint64_t p1 = static_cast<uint64_t>(0xCD9E8D57u) * c[2];
    const uint32_t hi0 = static_cast<uint32_t>(p0 >> 32), lo0 = static_cast<uint32_t>(p0);
    const uint32_t hi1 = static_cast<uint32_t>(p1 >> 32), lo1 = static_cast<uint32_t>(p1);
    const uint32_t n0 = hi1 ^ c[1] ^ k0;
    const uint32_t n1 = lo1;
    const uint32_t n2 = hi0 ^ c[3] ^ k1;
    const uint32_t n3 = lo0;
    c[0] = n0;
    c[1] = n1;
    c[2] = n2;
    c[3] = n3;
}

// Philox4x32-10 of a counter under a key.
RESET_HD Block philox4x32_10(uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3, uint32_t k0, uint32_t k1) {
    uint32_t c[4] = {c0, c1, c2, c3};
    for (int r = 0; r < 10; ++r) {
        if (r > 0) {
            // The key schedule adds the Weyl constants between rounds.
            k0 += 0x9E3779B9u;
            k1 += 0xBB67AE85u;
        }
        round(c, k0, k1);
    }
    Block out;
    for (int i = 0; i < 4; ++i) out.v[i] = c[i];
    return out;
}

// The four words for (seed, sequence, step) in the layout documented above.
RESET_HD Block draw_block(uint64_t seed, uint32_t sequence, uint64_t step) {
    return philox4x32_10(static_cast<uint32_t>(step), static_cast<uint32_t>(step >> 32), sequence, 0u,
                         static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
}

// A double in [0, 1) from 53 random bits: 27 of `high`, 26 of `low`.
RESET_HD double unit_double(uint32_t high, uint32_t low) {
    const uint64_t bits = (static_cast<uint64_t>(high >> 5) << 26) | static_cast<uint64_t>(low >> 6);
    return static_cast<double>(bits) * (1.0 / 9007199254740992.0);  // 2^-53
}

// A uniform double in [0, 1) with 53 random bits (27 from word 0, 26 from
// word 1), so that even a token of probability 1e-9 in a 152k vocabulary
// has its own slice of the unit interval.
RESET_HD double uniform(uint64_t seed, uint32_t sequence, uint64_t step) {
    const Block b = draw_block(seed, sequence, step);
    return unit_double(b.v[0], b.v[1]);
}

// The block's other 53 bits (words 2 and 3): independent of uniform()'s,
// for a token's second draw.
RESET_HD double second_uniform(uint64_t seed, uint32_t sequence, uint64_t step) {
    const Block b = draw_block(seed, sequence, step);
    return unit_double(b.v[2], b.v[3]);
}

}  // namespace reset::philox
