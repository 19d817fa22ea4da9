// test_cuda_engine.cpp — the CUDA backend against the CPU reference engine,
// through the public C API, on real Hugging Face checkpoints (made by
// tests/gpu/make_engine_models.py; head dimensions 64 and 128).
//
//   test_cuda_engine MODEL_DIR...
//
// Per model and weight format (BF16, NVFP4 W4A16, NVFP4 W4A4):
//   - prefill logits, then the logits after every one of 64 greedy steps:
//     relative L2 ≤ 2e-3 (BF16) / 5e-3 (NVFP4) — the issue's bounds.  Both
//     engines see the same weights and round the same things (the CPU's W4A16
//     feeds FP16 activations as the GPU GEMV does, its KV cache rounds as the
//     append kernel does), so what differs is FP32 summation order (~1e-6).
//   - the 64 greedy tokens are identical.  Random-weight models have near
//     ties; a token that differs counts as a failure unless the CPU's own
//     logits put the two tokens within 2·max|Δlogit| of each other (the GPU's
//     argmax of logits that are within the bound), and the comparison ends
//     there (the sequences differ from then on);
//   - sampled tokens (FIXED T=0.8 + top-p, and ReSET) over 4 parallel sequences
//     with one seed are identical while the logits agree; a draw that lands
//     within the two engines' probability difference of a cumulative boundary
//     may pick the neighbouring token: explained when both engines applied the
//     same temperature and the GPU's token has probability ≥ 1e-4 under the
//     CPU's tempered logits (the sampler's exactness on identical logits is
//     test_sampling's job);
//   - W4A4 quantizes activations to E2M1: a value within ~1e-7 of a rounding
//     boundary takes the other code on one engine (a summation-order
//     difference), which moves the logits by a quantization step and is
//     inherited through the KV cache.  Everything else in W4A4 is exact
//     (E2M1 x E2M1 products), so the engines agree to ~1e-7 until such a
//     flip: W4A4 runs are held to 1e-4, far inside the bound, and end at the
//     first step past it (a flip); flips are counted, and must stay below
//     three quarters of the runs: the tiny random models make about half
//     of them flip (20 of 40 runs in sessions 6-7; 21 of 40 in session 8,
//     once the norm's and attention's summation orders changed), while a
//     W4A4 bug moves every run past 1e-4 at its first comparison;
//   - an FP8 (E4M3) KV cache rounds K/V in steps of 6-12%: in W4A16, whose
//     engines differ by up to ~1e-3 before the cache (FP16 activation
//     roundings an ulp apart), about 1 cached element in 100 lies that close
//     to a rounding midpoint and moves by a whole step on one engine, so W4A16
//     FP8 runs are held to 5e-2 (as before; the FP8-vs-FP32-cache effect
//     itself is printed: 2e-3..0.46); BF16 FP8 runs keep the BF16 bound, W4A4
//     FP8 runs the W4A4 rule;
//   - a prefill appended to an unfinished generation (8 greedy steps, 5 ids,
//     16 more steps) is held to the same bounds, and so is one appended to a
//     single sequence of three (reset_prefill_sequence), whose neighbours'
//     logits must stay bit for bit as they were;
//   - reset_truncate (0.6): sessions cut inside their answers or back to the
//     prompt, then prefilled, against new sessions given the kept tokens, to
//     the same bound and near-tie rule (the kept positions came from the decode
//     graph, the new session's from the prefill path); a sequence cut alone
//     leaves its neighbours' logits bit for bit;
//   - reset_set_logit_bias (0.6): both engines with the same bias (bans of
//     the 8 likeliest tokens, 8 raised), sampled and greedy, to the same
//     bound and rules; nothing banned drawn;
//   - graph replay, eager launches and plain stream order (programmatic
//     dependent launch off) give bit-identical logits: the same kernels in the
//     same order, so any difference is a missing wait (a data race);
//   - the CPU sessions use the same KV cache type as the GPU ones (BF16 by
//     default; the CPU rounds K/V on write exactly as the append kernel does),
//     so an FP8 KV cache is held to the same bounds;
#include <cuda_runtime_api.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <numeric>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpu_test_util.h"
#include "model/safetensors.h"
#include "reset.h"
#include "tests/patched_checkpoint.h"

namespace {

using gpu_test::g_checks;
using gpu_test::g_failures;

void ok(reset_status s, const char *what) {
    if (s != RESET_OK) {
        std::fprintf(stderr, "%s failed: %s\n", what, reset_last_error());
        std::exit(1);
    }
}

double rel_l2(const std::vector<float> &a, const std::vector<float> &b) {
    double num = 0, den = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        num += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
        den += double(b[i]) * b[i];
    }
    return std::sqrt(num / (den > 0 ? den : 1));
}

reset_model *load(const std::string &dir, reset_weights weights, reset_backend backend, bool quantize_lm_head = false) {
    reset_model_options o;
    reset_model_options_init(&o);
    o.weights = weights;
    o.backend = backend;
    o.quantize_lm_head = quantize_lm_head;
    reset_model *m = nullptr;
    ok(reset_model_load(dir.c_str(), &o, &m), "reset_model_load");
    return m;
}

reset_model_info info_of(reset_model *m) {
    reset_model_info info;
    reset_model_info_init(&info);
    ok(reset_model_get_info(m, &info), "reset_model_get_info");
    return info;
}

// The same checkpoint loaded on both engines, freed at scope exit; `info` is the CUDA model's.
struct EnginePair {
    reset_model *cpu, *gpu;
    reset_model_info info;
    EnginePair(const std::string &dir, reset_weights weights, bool quantize_lm_head = false)
        : cpu(load(dir, weights, RESET_BACKEND_CPU, quantize_lm_head)),
          gpu(load(dir, weights, RESET_BACKEND_CUDA, quantize_lm_head)),
          info(info_of(gpu)) {}
    EnginePair(const EnginePair &) = delete;
    EnginePair &operator=(const EnginePair &) = delete;
    ~EnginePair() {
        reset_model_free(cpu);
        reset_model_free(gpu);
    }
};

reset_session *session(reset_model *m, int sequences, int context, reset_kv_cache kv = RESET_KV_CACHE_BF16,
                        int eager = 0, int prefill_gemm_tokens = 0, int programmatic_launch = 0) {
    reset_session_options o;
    reset_session_options_init(&o);
    o.sequences = sequences;
    o.max_context = context;
    o.kv_cache = kv;
    o.eager = eager;
    o.prefill_gemm_tokens = prefill_gemm_tokens;
    o.programmatic_launch = programmatic_launch;
    reset_session *s = nullptr;
    ok(reset_session_create(m, &o, &s), "reset_session_create");
    return s;
}

std::vector<float> logits(reset_session *s, int sequence, int vocab) {
    std::vector<float> out(static_cast<size_t>(vocab));
    ok(reset_session_logits(s, sequence, out.data(), out.size()), "reset_session_logits");
    return out;
}

void set_policy(reset_session *s, reset_policy_kind kind, int32_t window = 8) {
    reset_policy_params p;
    reset_policy_params_init(&p);
    p.kind = kind;
    p.seed = 1234;
    if (kind == RESET_POLICY_FIXED) {
        p.temperature = 0.8f;
        p.top_p = 0.95f;
        p.top_k = 50;
    }
    if (kind == RESET_POLICY_RESET) {
        p.t_low = 0.3f;
        p.tau0 = 1.0f;
        p.window = window;
        p.top_p = 0.95f;
    }
    p.reset_state = 1;
    ok(reset_set_policy(s, &p), "reset_set_policy");
}

// Fixed T 0.8 under top-p 0.95 with the penalties given.
reset_policy_params penalized_policy(uint64_t seed, float presence, float frequency, float repetition) {
    reset_policy_params p;
    reset_policy_params_init(&p);
    p.kind = RESET_POLICY_FIXED;
    p.temperature = 0.8f;
    p.top_p = 0.95f;
    p.seed = seed;
    p.presence_penalty = presence;
    p.frequency_penalty = frequency;
    p.repetition_penalty = repetition;
    return p;
}

std::vector<int32_t> prompt(int vocab, int n, unsigned seed) {
    std::vector<int32_t> ids;
    unsigned x = seed;
    for (int i = 0; i < n; ++i) {
        x = x * 1664525u + 1013904223u;
        ids.push_back(int32_t((x >> 8) % unsigned(vocab)));
    }
    return ids;
}

// Explained events, printed at the end.  W4A4 flips must stay a minority: a systematic error
// would end (nearly) every W4A4 run at its first comparison, while the random-weight models,
// whose tiny hidden sizes make each code flip visible, flip in half of the runs (20 of 40 on
// the H100); more than half fails the test.  A run is counted once, in prefill_flipped(),
// which every W4A4 comparison passes first.
int g_flips = 0, g_near_ties = 0, g_w4a4_runs = 0;
int g_ended_logits = 0;  // decode_both: sequences seen ending, whose CUDA logits were refused
int g_window_runs = 0, g_window_wraps = 0;  // test_reset_window: runs, and runs whose ring wrapped
int g_turn_runs = 0, g_turn_diverged = 0;    // test_second_turn: runs, and runs whose sequences diverged

// Whether a token the GPU chose differently is explained (see the header): `cpu_logits` and
// `gpu_logits` are what the two engines sampled from.
bool mismatch_explained(const std::vector<float> &cpu_logits, const std::vector<float> &gpu_logits,
                        const reset_step &a, const reset_step &b) {
    if (a.temperature <= 0.0f || b.temperature <= 0.0f) {  // greedy
        double max_diff = 0;
        for (size_t i = 0; i < cpu_logits.size(); ++i)
            max_diff = std::max(max_diff, std::fabs(double(cpu_logits[i]) - gpu_logits[i]));
        const double gap = double(cpu_logits[size_t(a.token)]) - cpu_logits[size_t(b.token)];
        return a.temperature == b.temperature && gap <= 2 * max_diff;
    }
    if (a.temperature != b.temperature) return false;
    double top = -INFINITY, sum = 0;
    for (float v : cpu_logits) top = std::max(top, double(v));
    for (float v : cpu_logits) sum += std::exp((double(v) - top) / a.temperature);
    return std::exp((double(cpu_logits[size_t(b.token)]) - top) / a.temperature) / sum >= 1e-4;
}

// W4A4 agreement before a code flip (see the header): FP32 summation order only.
constexpr double kExactAgreement = 1e-4;

// Decode `steps` steps on both sessions: the worst logits rel L2 while they agree, and what differed.
struct Compared {
    double worst = 0;
    int mismatches = 0, unexplained = 0, tokens = 0, entropy_off = 0, logprob_off = 0;
    int longest = 0;       // steps in which some sequence still produced a token
    bool flipped = false;  // W4A4: ended at an activation-code flip
};

// `before` holds the logits both engines will sample from first (after the prefill).
Compared decode_both(reset_session *cpu, reset_session *gpu, int sequences, int vocab, int steps, double bound,
                     bool w4a4) {
    Compared c;
    std::vector<reset_step> a(static_cast<size_t>(sequences)), b(static_cast<size_t>(sequences));
    std::vector<std::vector<float>> cpu_before(static_cast<size_t>(sequences)), gpu_before(static_cast<size_t>(sequences));
    for (int s = 0; s < sequences; ++s) {
        cpu_before[size_t(s)] = logits(cpu, s, vocab);
        gpu_before[size_t(s)] = logits(gpu, s, vocab);
    }
    for (int t = 0; t < steps; ++t) {
        reset_step_init(a.data(), a.size());
        reset_step_init(b.data(), b.size());
        int32_t active_a = 0, active_b = 0;
        if (reset_decode_step(cpu, a.data(), a.size(), &active_a) != RESET_OK) break;
        ok(reset_decode_step(gpu, b.data(), b.size(), &active_b), "reset_decode_step (cuda)");
        for (int s = 0; s < sequences; ++s) {
            if (a[size_t(s)].token < 0) continue;
            ++c.tokens;
            c.longest = t + 1;
            if (a[size_t(s)].token != b[size_t(s)].token) {
                ++c.mismatches;
                if (mismatch_explained(cpu_before[size_t(s)], gpu_before[size_t(s)], a[size_t(s)], b[size_t(s)]))
                    ++g_near_ties;
                else
                    ++c.unexplained;
            }
            const float ea = a[size_t(s)].entropy, eb = b[size_t(s)].entropy;
            if (std::fabs(ea - eb) > 1e-2f * std::max(1.0f, std::fabs(ea))) ++c.entropy_off;
            // The same token's log-probability, from logits that agree to the mode's rel L2 bound: the
            // entropy's tolerance.
            const float la = a[size_t(s)].logprob, lb = b[size_t(s)].logprob;
            if (a[size_t(s)].token == b[size_t(s)].token && !(std::fabs(la - lb) <= 1e-2f * std::max(1.0f, -la)))
                ++c.logprob_off;
        }
        // A sequence that drew its end-of-generation token: the CPU keeps the logits it was drawn
        // from, the CUDA backend refuses (reset_session_logits).
        for (int s = 0; s < sequences; ++s) {
            if (a[size_t(s)].end_reason != RESET_END_EOS || b[size_t(s)].end_reason != RESET_END_EOS) continue;
            std::vector<float> row(static_cast<size_t>(vocab));
            EXPECT(reset_session_logits(cpu, s, row.data(), row.size()) == RESET_OK, "CPU logits of an ended sequence");
            EXPECT(reset_session_logits(gpu, s, row.data(), row.size()) == RESET_ERR_STATE,
                   "CUDA logits of an ended sequence were not refused");
            ++g_ended_logits;
        }
        if (c.mismatches) break;  // sequences diverged; later logits are not comparable
        if (active_a == 0) break;
        for (int s = 0; s < sequences; ++s) {
            if (a[size_t(s)].end_of_generation) continue;
            cpu_before[size_t(s)] = logits(cpu, s, vocab);
            gpu_before[size_t(s)] = logits(gpu, s, vocab);
            const double d = rel_l2(gpu_before[size_t(s)], cpu_before[size_t(s)]);
            if (w4a4 && d > kExactAgreement) {
                c.flipped = true;
                ++g_flips;
                return c;
            }
            c.worst = std::max(c.worst, d);
        }
    }
    return c;
}

// The prefill comparison: W4A4 a flip in the prefill itself ends the run (see the header).
bool prefill_flipped(double d, bool w4a4) {
    g_w4a4_runs += w4a4 ? 1 : 0;
    if (!(w4a4 && d > kExactAgreement)) return false;
    ++g_flips;
    return true;
}

// Both engines' sessions under `kind`: the same prefill, the prefill logits compared, then (unless a
// W4A4 code flip ended the run there) `steps` decode steps compared by decode_both.
struct Prefilled {
    double prefill = 0;  // relative L2 of the prefill logits, sequence 0
    bool flipped = false;
    Compared c;
};
Prefilled prefill_and_decode(reset_session *cpu, reset_session *gpu, reset_policy_kind kind,
                             const std::vector<int32_t> &ids, int sequences, int vocab, int steps, double bound,
                             bool w4a4) {
    set_policy(cpu, kind);
    set_policy(gpu, kind);
    ok(reset_prefill(cpu, ids.data(), ids.size()), "prefill cpu");
    ok(reset_prefill(gpu, ids.data(), ids.size()), "prefill cuda");
    Prefilled r;
    r.prefill = rel_l2(logits(gpu, 0, vocab), logits(cpu, 0, vocab));
    r.flipped = prefill_flipped(r.prefill, w4a4);
    if (!r.flipped) r.c = decode_both(cpu, gpu, sequences, vocab, steps, bound, w4a4);
    return r;
}

void test_model(const std::string &dir) {
    const reset_weights formats[] = {RESET_WEIGHTS_BF16, RESET_WEIGHTS_NVFP4_W4A16, RESET_WEIGHTS_NVFP4_W4A4};
    const char *names[] = {"", "bf16", "w4a16", "w4a4"};
    for (reset_weights w : formats) {
        {
            // A ModelOpt NVFP4 export has no BF16 weights to load.
            reset_model_options o;
            reset_model_options_init(&o);
            o.weights = w;
            o.backend = RESET_BACKEND_CPU;
            reset_model *probe = nullptr;
            if (reset_model_load(dir.c_str(), &o, &probe) != RESET_OK) {
                std::printf("%-40s %-6s not loadable in this format (%s): skipped\n", dir.c_str(),
                            w == RESET_WEIGHTS_BF16 ? "bf16" : "nvfp4", reset_last_error());
                continue;
            }
            reset_model_free(probe);
        }
        const EnginePair models(dir, w);
        reset_model *cpu_model = models.cpu, *gpu_model = models.gpu;
        const reset_model_info &info = models.info;
        EXPECT(info.backend == RESET_BACKEND_CUDA, "backend %d", int(info.backend));
        EXPECT(info.device_bytes > 0, "device_bytes %llu", (unsigned long long)info.device_bytes);
        const int vocab = info.vocab_size;
        const double bound = w == RESET_WEIGHTS_BF16 ? 2e-3 : 5e-3;
        const std::vector<int32_t> ids = prompt(vocab, 37, 7u + unsigned(w));
        const bool w4a4 = w == RESET_WEIGHTS_NVFP4_W4A4;

        // Greedy, one sequence: prefill logits and 64 steps.
        {
            reset_session *a = session(cpu_model, 1, 512), *b = session(gpu_model, 1, 512);
            EXPECT(reset_session_device_bytes(a) == 0, "a CPU session holds device memory");
            // At least the BF16 K/V of 512 positions of every layer.
            EXPECT(reset_session_device_bytes(b) >= uint64_t(info.n_layers) * 2 * 512 * info.n_kv_heads *
                                                       info.head_dim * 2,
                   "device bytes %llu", (unsigned long long)reset_session_device_bytes(b));
            const auto [prefill, flipped, c] =
                prefill_and_decode(a, b, RESET_POLICY_GREEDY, ids, 1, vocab, 64, bound, w4a4);
            EXPECT(prefill <= bound || flipped, "%s %s prefill logits rel L2 %.3g > %.3g", dir.c_str(), names[w],
                   prefill, bound);
            EXPECT(c.unexplained == 0, "%s %s greedy: %d of %d tokens differ (not near ties)", dir.c_str(), names[w],
                   c.unexplained, c.tokens);
            EXPECT(c.worst <= bound, "%s %s greedy logits rel L2 %.3g > %.3g", dir.c_str(), names[w], c.worst, bound);
            EXPECT(c.entropy_off == 0, "%s %s: %d entropies differ", dir.c_str(), names[w], c.entropy_off);
            EXPECT(c.logprob_off == 0, "%s %s: %d logprobs differ", dir.c_str(), names[w], c.logprob_off);
            std::printf("%-40s %-6s prefill rel L2 %.2e%s, greedy %d tokens%s, worst step rel L2 %.2e\n",
                        dir.c_str(), names[w], prefill, flipped ? " (W4A4 code flip)" : "", c.tokens,
                        c.flipped ? " (then a W4A4 code flip)" : c.mismatches ? " (then a near tie)" : "", c.worst);
            reset_session_free(a);
            reset_session_free(b);
        }
        // A prefill between decode steps, as `reset chat --think-budget` appends "</think>": 8
        // greedy steps, 5 ids appended to the unfinished sequence, then 16 more steps, all against
        // the CPU.  Skipped where the first 8 steps ended, differed or met a W4A4 code flip.
        {
            reset_session *a = session(cpu_model, 1, 512), *b = session(gpu_model, 1, 512);
            const Prefilled first = prefill_and_decode(a, b, RESET_POLICY_GREEDY, ids, 1, vocab, 8, bound, w4a4);
            if (!first.flipped && !first.c.flipped && first.c.mismatches == 0 && first.c.longest == 8 &&
                reset_session_length(a, 0) == int32_t(ids.size()) + 8) {
                const std::vector<int32_t> more = prompt(vocab, 5, 99u + unsigned(w));
                ok(reset_prefill(a, more.data(), more.size()), "mid-generation prefill (cpu)");
                ok(reset_prefill(b, more.data(), more.size()), "mid-generation prefill (cuda)");
                EXPECT(reset_session_length(b, 0) == int32_t(ids.size()) + 13, "%s %s: length %d after it",
                       dir.c_str(), names[w], reset_session_length(b, 0));
                const double d = rel_l2(logits(b, 0, vocab), logits(a, 0, vocab));
                const bool flip = prefill_flipped(d, w4a4);
                EXPECT(d <= bound || flip, "%s %s mid-generation prefill logits rel L2 %.3g > %.3g", dir.c_str(),
                       names[w], d, bound);
                const Compared c = flip ? Compared() : decode_both(a, b, 1, vocab, 16, bound, w4a4);
                EXPECT(c.unexplained == 0 && c.worst <= bound,
                       "%s %s after a mid-generation prefill: %d of %d tokens differ, worst rel L2 %.3g",
                       dir.c_str(), names[w], c.unexplained, c.tokens, c.worst);
                std::printf("%-40s %-6s mid-generation prefill rel L2 %.2e%s, then %d tokens, worst %.2e\n",
                            dir.c_str(), names[w], d, flip ? " (W4A4 code flip)" : "", c.tokens, c.worst);
            } else {
                std::printf("%-40s %-6s mid-generation prefill: skipped (the first 8 steps ended, differed or "
                            "flipped)\n", dir.c_str(), names[w]);
            }
            reset_session_free(a);
            reset_session_free(b);
        }
        // A session used the moment it exists, while the legacy stream is busy: the session's
        // zeroing memsets queue behind ~8 GB of memset on that stream, so unless session creation
        // waits for them they land after the prefill has written the KV cache (the bug that, with
        // 8 processes sharing the GPU, turned a process's first prompt into garbage or NaN).
        if (w == RESET_WEIGHTS_BF16) {
            const size_t scratch_bytes = size_t(2) << 30;
            void *scratch = nullptr;
            if (cudaMalloc(&scratch, scratch_bytes) == cudaSuccess) {
                reset_session *a = session(cpu_model, 2, 512);
                set_policy(a, RESET_POLICY_GREEDY);
                ok(reset_prefill(a, ids.data(), ids.size()), "prefill cpu");
                for (int i = 0; i < 4; ++i) cudaMemsetAsync(scratch, i + 1, scratch_bytes, nullptr);
                reset_session *b = session(gpu_model, 2, 512);
                set_policy(b, RESET_POLICY_GREEDY);
                ok(reset_prefill(b, ids.data(), ids.size()), "prefill cuda");
                const double prefill = rel_l2(logits(b, 0, vocab), logits(a, 0, vocab));
                const Compared c = decode_both(a, b, 2, vocab, 8, bound, false);
                EXPECT(prefill <= bound && c.unexplained == 0 && c.worst <= bound,
                       "%s %s session used at once behind a busy legacy stream: prefill rel L2 %.3g, "
                       "%d of %d tokens differ, worst %.3g",
                       dir.c_str(), names[w], prefill, c.unexplained, c.tokens, c.worst);
                std::printf("%-40s %-6s fresh session behind a busy legacy stream: prefill rel L2 %.2e, %d tokens\n",
                            dir.c_str(), names[w], prefill, c.tokens);
                reset_session_free(a);
                reset_session_free(b);
                cudaFree(scratch);
            }
        }
        // Sampling over parallel sequences (shared prefill, then divergence): FIXED over 4, ReSET
        // over 8, where the decode step takes the new token inside attention by default
        // (device_session.cpp: new_token_in_attention_pays), so the main pass checks that graph too.
        for (reset_policy_kind kind : {RESET_POLICY_FIXED, RESET_POLICY_RESET}) {
            const int rows = kind == RESET_POLICY_RESET ? 8 : 4;
            reset_session *a = session(cpu_model, rows, 512), *b = session(gpu_model, rows, 512);
            const Prefilled run = prefill_and_decode(a, b, kind, ids, rows, vocab, 48, bound, w4a4);
            const bool flipped = run.flipped;
            const Compared &c = run.c;
            EXPECT(c.unexplained == 0, "%s %s policy %d: %d of %d sampled tokens differ (not explained)", dir.c_str(),
                   names[w], int(kind), c.unexplained, c.tokens);
            EXPECT(c.worst <= bound, "%s %s policy %d: logits rel L2 %.3g", dir.c_str(), names[w], int(kind),
                   c.worst);
            std::printf("%-40s %-6s policy %d x%d: %d tokens%s, worst rel L2 %.2e\n", dir.c_str(), names[w], int(kind),
                        rows, c.tokens,
                        flipped || c.flipped ? " (to a W4A4 code flip)" : c.mismatches ? " (to a near tie)" : "",
                        c.worst);
            reset_session_free(a);
            reset_session_free(b);
        }
        // The GEMM prefill path (NVFP4: chunks of up to 256 rows, dequantized weights through
        // cuBLAS) against the CPU, and against the GEMV path on the same GPU.  300 ids as GEMM
        // chunks of 256 and 44 rows (threshold 16); or mixed as a chat turn: 260 ids through the GEMM, then
        // 40 more in a second prefill, through the GEMV (threshold 100), reading the GEMM's cache.
        if (w != RESET_WEIGHTS_BF16) {
            const std::vector<int32_t> long_ids = prompt(vocab, 300, 11u + unsigned(w));
            reset_session *a = session(cpu_model, 1, 512), *gemm = session(gpu_model, 1, 512, RESET_KV_CACHE_BF16, 0, 16),
                          *mixed = session(gpu_model, 1, 512, RESET_KV_CACHE_BF16, 0, 100),
                          *gemv = session(gpu_model, 1, 512, RESET_KV_CACHE_BF16, 0, -1);
            for (reset_session *x : {a, gemm, mixed, gemv}) {
                set_policy(x, RESET_POLICY_GREEDY);
                if (x == mixed) {
                    ok(reset_prefill(x, long_ids.data(), 260), "prefill (260 ids)");
                    ok(reset_prefill(x, long_ids.data() + 260, 40), "prefill (40 more ids)");
                } else {
                    ok(reset_prefill(x, long_ids.data(), long_ids.size()), "prefill (300 ids)");
                }
            }
            const std::vector<float> cpu = logits(a, 0, vocab), by_gemm = logits(gemm, 0, vocab),
                                     by_mixed = logits(mixed, 0, vocab), by_gemv = logits(gemv, 0, vocab);
            const double d_cpu = rel_l2(by_gemm, cpu), d_gemv = rel_l2(by_gemm, by_gemv),
                         d_mixed = rel_l2(by_mixed, by_gemv);
            // GEMM and GEMV compute the same products (exact FP16 operands, FP32 accumulation) in
            // another order; in W4A16 that order difference also moves some activations' FP16
            // rounding by an ulp downstream, as between GPU and CPU, so the bound holds there;
            // W4A4 is exact up to a code flip (kExactAgreement).
            const double tolerance = w4a4 ? kExactAgreement : bound;
            const bool within = d_cpu <= tolerance && d_gemv <= tolerance && d_mixed <= tolerance;
            const bool flipped = prefill_flipped(within ? 0.0 : INFINITY, w4a4);
            EXPECT(within || flipped,
                   "%s %s GEMM prefill: rel L2 %.3g to the CPU, %.3g to the GEMV path (mixed chunks %.3g)",
                   dir.c_str(), names[w], d_cpu, d_gemv, d_mixed);
            const Compared c = flipped ? Compared() : decode_both(a, gemm, 1, vocab, 16, bound, w4a4);
            EXPECT(c.unexplained == 0 && c.worst <= bound, "%s %s after a GEMM prefill: %d of %d differ, worst %.3g",
                   dir.c_str(), names[w], c.unexplained, c.tokens, c.worst);
            std::printf("%-40s %-6s GEMM prefill (300 ids): rel L2 %.2e to the CPU, %.2e to the GEMV path, mixed "
                        "%.2e%s; then %d greedy tokens, worst %.2e\n",
                        dir.c_str(), names[w], d_cpu, d_gemv, d_mixed, flipped ? " (code flip)" : "", c.tokens,
                        c.worst);
            for (reset_session *x : {a, gemm, mixed, gemv}) reset_session_free(x);
        }
        // Graph replay against eager launches, and programmatic dependent launch against plain
        // stream order (a prompt of 300 ids: GEMV and, for NVFP4, GEMM prefill chunks): the same
        // kernels in the same order, so the same bits.
        {
            const std::vector<int32_t> long_ids = prompt(vocab, 300, 4242u + unsigned(w));
            reset_session *g = session(gpu_model, 2, 512), *e = session(gpu_model, 2, 512, RESET_KV_CACHE_BF16, 1),
                          *plain = session(gpu_model, 2, 512, RESET_KV_CACHE_BF16, 0, 0, -1);
            for (reset_session *x : {g, e, plain}) {
                set_policy(x, RESET_POLICY_FIXED);
                ok(reset_prefill(x, long_ids.data(), long_ids.size()), "prefill");
            }
            bool same_eager = true, same_plain = true;
            std::vector<reset_step> sg(2), se(2), sp(2);
            for (int t = 0; t < 24 && same_eager && same_plain; ++t) {
                reset_step_init(sg.data(), 2);
                reset_step_init(se.data(), 2);
                reset_step_init(sp.data(), 2);
                int32_t n = 0;
                ok(reset_decode_step(g, sg.data(), 2, &n), "step graph");
                ok(reset_decode_step(e, se.data(), 2, &n), "step eager");
                ok(reset_decode_step(plain, sp.data(), 2, &n), "step plain");
                for (int s = 0; s < 2; ++s) {
                    same_eager = same_eager && sg[size_t(s)].token == se[size_t(s)].token;
                    same_plain = same_plain && sg[size_t(s)].token == sp[size_t(s)].token;
                    if (!sg[size_t(s)].end_of_generation) {
                        const std::vector<float> lg = logits(g, s, vocab);
                        same_eager = same_eager && lg == logits(e, s, vocab);
                        same_plain = same_plain && lg == logits(plain, s, vocab);
                    }
                }
            }
            EXPECT(same_eager, "%s %s: graph replay and eager launches differ", dir.c_str(), names[w]);
            EXPECT(same_plain, "%s %s: programmatic dependent launch and plain stream order differ", dir.c_str(),
                   names[w]);
            for (reset_session *x : {g, e, plain}) reset_session_free(x);
        }
        // FP8 KV cache on both sides: the CPU rounds K/V to E4M3 as the append kernel does, so
        // the same bounds hold; the FP32 cache shows how far FP8 moves the logits.
        {
            reset_session *a = session(cpu_model, 1, 512, RESET_KV_CACHE_FP8),
                          *b = session(gpu_model, 1, 512, RESET_KV_CACHE_FP8),
                          *r = session(cpu_model, 1, 512, RESET_KV_CACHE_FP32);
            set_policy(a, RESET_POLICY_GREEDY);
            set_policy(b, RESET_POLICY_GREEDY);
            ok(reset_prefill(a, ids.data(), ids.size()), "prefill cpu fp8");
            ok(reset_prefill(b, ids.data(), ids.size()), "prefill cuda fp8");
            ok(reset_prefill(r, ids.data(), ids.size()), "prefill cpu fp32");
            const double d = rel_l2(logits(b, 0, vocab), logits(a, 0, vocab));
            const double from_fp32 = rel_l2(logits(a, 0, vocab), logits(r, 0, vocab));
            // The header says why W4A16 FP8 runs are held to 5e-2.
            const double fp8_bound = w == RESET_WEIGHTS_NVFP4_W4A16 ? 5e-2 : bound;
            const bool flipped = prefill_flipped(d, w4a4);
            EXPECT(d <= fp8_bound || flipped, "%s %s FP8 KV prefill logits rel L2 %.3g > %.3g", dir.c_str(), names[w],
                   d, fp8_bound);
            const Compared c = flipped ? Compared() : decode_both(a, b, 1, vocab, 64, fp8_bound, w4a4);
            EXPECT(c.unexplained == 0 && c.worst <= fp8_bound, "%s %s FP8 KV greedy: %d of %d differ, worst %.3g",
                   dir.c_str(), names[w], c.unexplained, c.tokens, c.worst);
            std::printf("%-40s %-6s fp8 kv: prefill rel L2 %.2e (FP8 vs FP32 cache %.2e)%s, greedy %d of %d%s, "
                        "worst %.2e\n",
                        dir.c_str(), names[w], d, from_fp32, flipped ? " (code flip)" : "",
                        c.tokens - c.mismatches, c.tokens, c.flipped ? " (to a code flip)" : "", c.worst);
            reset_session_free(a);
            reset_session_free(b);
            reset_session_free(r);
            // The CUDA backend has no FP32 cache: a clear error, not a silent substitute.
            reset_session_options o;
            reset_session_options_init(&o);
            o.kv_cache = RESET_KV_CACHE_FP32;
            reset_session *none = nullptr;
            EXPECT(reset_session_create(gpu_model, &o, &none) == RESET_ERR_UNSUPPORTED && none == nullptr,
                   "a CUDA session with an FP32 KV cache was not refused");
        }
        if (w == RESET_WEIGHTS_BF16 && std::getenv("RESET_GPU_TEST_QUICK")) break;
    }
}

// The lm_head in NVFP4 too (quantize_lm_head; a ModelOpt export's BF16 lm_head is quantized on
// load as well): the CUDA engine's NVFP4 lm_head GEMV against the CPU's, by the greedy rules above,
// and its device bytes below the BF16 lm_head's by about vocab x hidden x (2 - 0.5625).
// A ReSET window above the 32 slots a session starts with: its device ring is reserved by
// reset_set_policy (the bytes show there, and the steps allocate nothing more), and decoding with
// it matches the CPU engine over more tokens than the window holds, so the ring wraps.
void test_reset_window(const std::string &dir) {
    constexpr int kSequences = 4, kWindow = 40, kSteps = 64;  // ring capacity 64: round_up(40, 32)
    const EnginePair models(dir, RESET_WEIGHTS_NVFP4_W4A16);
    const int vocab = models.info.vocab_size;
    reset_session *a = session(models.cpu, kSequences, 512), *b = session(models.gpu, kSequences, 512);
    const uint64_t created = reset_session_device_bytes(b);
    set_policy(a, RESET_POLICY_RESET, kWindow);
    set_policy(b, RESET_POLICY_RESET, kWindow);
    const uint64_t grown = uint64_t(kSequences) * (64 - 32) * sizeof(float);
    EXPECT(reset_session_device_bytes(b) == created + grown,
           "%s: device bytes %llu after a window of %d, %llu + %llu expected", dir.c_str(),
           (unsigned long long)reset_session_device_bytes(b), kWindow, (unsigned long long)created,
           (unsigned long long)grown);
    const std::vector<int32_t> ids = prompt(vocab, 37, 23u);
    ok(reset_prefill(a, ids.data(), ids.size()), "prefill cpu");
    ok(reset_prefill(b, ids.data(), ids.size()), "prefill cuda");
    const Compared c = decode_both(a, b, kSequences, vocab, kSteps, 5e-3, false);
    EXPECT(c.unexplained == 0, "%s window %d: %d of %d sampled tokens differ (not explained)", dir.c_str(), kWindow,
           c.unexplained, c.tokens);
    // Whether a sequence produced more tokens than the window holds (its ring wrapped) before the
    // engines diverged at a near tie or every sequence ended; main() requires it of some model.
    if (c.mismatches == 0 && c.longest > kWindow) ++g_window_wraps;
    EXPECT(reset_session_device_bytes(b) == created + grown, "%s: device bytes changed while decoding (%llu)",
           dir.c_str(), (unsigned long long)reset_session_device_bytes(b));
    // A smaller window keeps the larger ring.
    set_policy(b, RESET_POLICY_RESET, 8);
    EXPECT(reset_session_device_bytes(b) == created + grown, "%s: a smaller window changed device bytes", dir.c_str());
    std::printf("%-40s w4a16  ReSET window %d x%d: %d tokens, longest %d, worst rel L2 %.2e\n", dir.c_str(), kWindow,
                kSequences, c.tokens, c.longest, c.worst);
    ++g_window_runs;
    reset_session_free(a);
    reset_session_free(b);
}

// A prefill cancelled between its chunks (256 prompt tokens each) leaves the session as it was,
// its current logits included: on the device, only a sequence's last chunk computes logits, and it
// runs with no cancellation check before it completes.  Before session 24 every chunk computed
// its last token's logits, so a cancel after the first chunk left those in place of the previous
// turn's.  Each try: a session holds a 37-token turn; a 3,000-token prefill is cancelled from
// another thread after a delay within the prefill's measured time; a CANCELLED result must leave
// the length and the logits bit for bit as they were, and a full prefill afterwards must give the
// logits of a session never cancelled (the K/V the cancelled chunks wrote past the length are
// overwritten).  Models whose maximum context is under 4,096 are skipped.
void test_cancelled_prefill(const std::string &dir) {
    reset_model *m = load(dir, RESET_WEIGHTS_NVFP4_W4A16, RESET_BACKEND_CUDA);
    const reset_model_info info = info_of(m);
    constexpr int kContext = 4096, kTurn = 37, kLong = 3000;
    if (info.max_position_embeddings < kContext) {
        std::printf("%-40s cancelled prefill: skipped (maximum context %d)\n", dir.c_str(),
                    info.max_position_embeddings);
        reset_model_free(m);
        return;
    }
    const int vocab = info.vocab_size;
    const std::vector<int32_t> turn = prompt(vocab, kTurn, 31u), long_prompt = prompt(vocab, kLong, 37u);
    // The reference: both prefills, never cancelled; and the long prefill's time, the faster of two
    // sessions' (the first pays one-time costs, cuBLAS's first GEMMs: session 30 measured 20.2 ms
    // where the prefill takes half that, and no delay landed inside it).
    std::vector<float> expected;
    double total_ms = 0.0;
    for (int run = 0; run < 2; ++run) {
        reset_session *reference = session(m, 1, kContext);
        ok(reset_prefill(reference, turn.data(), turn.size()), "prefill turn");
        const auto t0 = std::chrono::steady_clock::now();
        ok(reset_prefill(reference, long_prompt.data(), long_prompt.size()), "prefill long");
        const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        total_ms = run == 0 ? ms : std::min(total_ms, ms);
        if (run == 0) expected = logits(reference, 0, vocab);
        reset_session_free(reference);
    }

    int cancelled = 0, tries = 0;
    for (double fraction : {0.15, 0.3, 0.45, 0.6, 0.75, 0.25, 0.5}) {
        ++tries;
        reset_session *s = session(m, 1, kContext);
        ok(reset_prefill(s, turn.data(), turn.size()), "prefill turn");
        const std::vector<float> before = logits(s, 0, vocab);
        std::atomic<bool> started{false};
        std::thread canceller([&] {
            while (!started.load()) std::this_thread::yield();
            std::this_thread::sleep_for(std::chrono::microseconds(int64_t(fraction * total_ms * 1000)));
            reset_session_cancel(s);
        });
        started = true;
        const reset_status status = reset_prefill(s, long_prompt.data(), long_prompt.size());
        canceller.join();
        if (status == RESET_ERR_CANCELLED) {
            ++cancelled;
            EXPECT(reset_session_length(s, 0) == kTurn, "%s: length %d after a cancelled prefill", dir.c_str(),
                   reset_session_length(s, 0));
            const std::vector<float> after = logits(s, 0, vocab);
            EXPECT(std::memcmp(after.data(), before.data(), after.size() * sizeof(float)) == 0,
                   "%s: a prefill cancelled at %.0f%% of its time changed the logits (rel L2 %.3g)", dir.c_str(),
                   fraction * 100, rel_l2(after, before));
            ok(reset_prefill(s, long_prompt.data(), long_prompt.size()), "prefill long after the cancel");
            const std::vector<float> full = logits(s, 0, vocab);
            EXPECT(std::memcmp(full.data(), expected.data(), full.size() * sizeof(float)) == 0,
                   "%s: after a cancelled prefill, the full prefill's logits differ (rel L2 %.3g)", dir.c_str(),
                   rel_l2(full, expected));
        } else {
            // The cancel came after the last check: the prefill completed, and the request waits for
            // the next call.
            EXPECT(status == RESET_OK, "%s: prefill returned %d", dir.c_str(), int(status));
        }
        reset_session_free(s);
    }
    // A delay within the prefill's time and past its first check must have landed between chunks
    // at least once (the first check runs microseconds after the call, the delays are milliseconds).
    EXPECT(cancelled > 0, "%s: no cancel landed inside a %.1f ms prefill in %d tries", dir.c_str(), total_ms, tries);
    std::printf("%-40s cancelled prefill: %d of %d tries cancelled inside a %.1f ms prefill of %d tokens\n",
                dir.c_str(), cancelled, tries, total_ms, kLong);
    reset_model_free(m);
}

// A CPU and a CUDA session of `sequences` sequences on `models`, both sampling with
// set_policy's FIXED policy (one seed) and both prefilled with `ids`; the caller frees them.
std::pair<reset_session *, reset_session *> sampled_pair(const EnginePair &models, int sequences,
                                                         const std::vector<int32_t> &ids) {
    reset_session *a = session(models.cpu, sequences, 512), *b = session(models.gpu, sequences, 512);
    set_policy(a, RESET_POLICY_FIXED);
    set_policy(b, RESET_POLICY_FIXED);
    ok(reset_prefill(a, ids.data(), ids.size()), "prefill cpu");
    ok(reset_prefill(b, ids.data(), ids.size()), "prefill cuda");
    return {a, b};
}

// A chat's next turn after parallel samples diverged: the sequences no longer share their tokens,
// so the prompt is prefilled once per sequence (each in 256-token chunks, the last chunk of every
// sequence after all the others, session 24), and each sequence's logits must match the CPU
// engine's, and so must the decoding after it.  W4A16, 2 sequences sampled at T 0.8 until their
// tokens differ (both engines drawing the same tokens), then 300 more prompt ids, then 8 steps.
void test_second_turn(const std::string &dir) {
    constexpr int kSequences = 2, kSampled = 16, kTurn = 300;
    const EnginePair models(dir, RESET_WEIGHTS_NVFP4_W4A16);
    const int vocab = models.info.vocab_size;
    constexpr double kBound = 5e-3;  // the issue's NVFP4 bound, as everywhere in this test
    const std::vector<int32_t> ids = prompt(vocab, 37, 41u), turn = prompt(vocab, kTurn, 43u);
    const auto [a, b] = sampled_pair(models, kSequences, ids);
    bool diverged = false, engines_agree = true;
    std::vector<reset_step> sa(kSequences), sb(kSequences);
    for (int t = 0; t < kSampled && !diverged && engines_agree; ++t) {
        reset_step_init(sa.data(), sa.size());
        reset_step_init(sb.data(), sb.size());
        if (reset_decode_step(a, sa.data(), sa.size(), nullptr) != RESET_OK) break;  // every sequence ended
        ok(reset_decode_step(b, sb.data(), sb.size(), nullptr), "reset_decode_step (cuda)");
        for (int s = 0; s < kSequences; ++s) engines_agree = engines_agree && sa[size_t(s)].token == sb[size_t(s)].token;
        diverged = sa[0].token != sa[1].token;
    }
    if (!engines_agree) {
        // A near tie drew the engines apart (decode_both's rules judge those elsewhere): nothing to compare.
        std::printf("%-40s w4a16  second turn: skipped (the engines drew different tokens)\n", dir.c_str());
    } else {
        ok(reset_prefill(a, turn.data(), turn.size()), "second prefill cpu");
        ok(reset_prefill(b, turn.data(), turn.size()), "second prefill cuda");
        double worst = 0;
        for (int s = 0; s < kSequences; ++s) worst = std::max(worst, rel_l2(logits(b, s, vocab), logits(a, s, vocab)));
        EXPECT(worst <= kBound, "%s second turn: logits rel L2 %.3g > %.3g", dir.c_str(), worst, kBound);
        const Compared c = decode_both(a, b, kSequences, vocab, 8, kBound, false);
        EXPECT(c.unexplained == 0 && c.worst <= kBound, "%s second turn: %d of %d tokens differ, worst %.3g",
               dir.c_str(), c.unexplained, c.tokens, c.worst);
        ++g_turn_runs;
        g_turn_diverged += diverged ? 1 : 0;
        std::printf("%-40s w4a16  second turn of %d ids after %s: logits rel L2 %.2e, then %d tokens\n",
                    dir.c_str(), kTurn, diverged ? "the samples diverged" : "no divergence", worst, c.tokens);
    }
    reset_session_free(a);
    reset_session_free(b);
}

// reset_prefill_sequence, as `reset eval --think-budget` closes one sample's reasoning: W4A16, 3
// sequences sampled at T 0.8 for 8 steps, then 5 ids appended to sequence 1 only.  Sequences 0
// and 2 must keep their device logits bit for bit (nothing ran on them), sequence 1's must match
// the CPU engine's, and so must the 16 steps of all three after it.
void test_sequence_prefill(const std::string &dir) {
    constexpr int kSequences = 3, kSampled = 8;
    const EnginePair models(dir, RESET_WEIGHTS_NVFP4_W4A16);
    const int vocab = models.info.vocab_size;
    constexpr double kBound = 5e-3;  // the issue's NVFP4 bound, as everywhere in this test
    const std::vector<int32_t> ids = prompt(vocab, 37, 47u), more = prompt(vocab, 5, 53u);
    const auto [a, b] = sampled_pair(models, kSequences, ids);
    const Compared first = decode_both(a, b, kSequences, vocab, kSampled, kBound, false);
    bool all_running = first.mismatches == 0;
    for (int s = 0; s < kSequences; ++s)
        all_running = all_running && reset_session_length(a, s) == int32_t(ids.size()) + kSampled &&
                      reset_session_length(b, s) == int32_t(ids.size()) + kSampled;
    if (!all_running) {
        std::printf("%-40s w4a16  sequence prefill: skipped (a sequence ended, or the engines drew apart)\n",
                    dir.c_str());
    } else {
        const std::vector<float> before0 = logits(b, 0, vocab), before2 = logits(b, 2, vocab);
        ok(reset_prefill_sequence(a, 1, more.data(), more.size()), "sequence prefill cpu");
        ok(reset_prefill_sequence(b, 1, more.data(), more.size()), "sequence prefill cuda");
        EXPECT(logits(b, 0, vocab) == before0 && logits(b, 2, vocab) == before2,
               "%s sequence prefill changed another sequence's logits", dir.c_str());
        EXPECT(reset_session_length(b, 0) == int32_t(ids.size()) + kSampled &&
                   reset_session_length(b, 1) == int32_t(ids.size()) + kSampled + 5,
               "%s sequence prefill: lengths %d and %d", dir.c_str(), reset_session_length(b, 0),
               reset_session_length(b, 1));
        const double d = rel_l2(logits(b, 1, vocab), logits(a, 1, vocab));
        EXPECT(d <= kBound, "%s sequence prefill: logits rel L2 %.3g > %.3g", dir.c_str(), d, kBound);
        const Compared c = decode_both(a, b, kSequences, vocab, 16, kBound, false);
        EXPECT(c.unexplained == 0 && c.worst <= kBound, "%s after a sequence prefill: %d of %d tokens differ, "
               "worst %.3g", dir.c_str(), c.unexplained, c.tokens, c.worst);
        std::printf("%-40s w4a16  sequence prefill of 5 ids into sequence 1 of 3: logits rel L2 %.2e, the others "
                    "unchanged; then %d tokens, worst %.2e\n", dir.c_str(), d, c.tokens, c.worst);
    }
    reset_session_free(a);
    reset_session_free(b);
}

// Presence and frequency penalties: the token counts live on the device (the sampler adds what it
// accepts) and are uploaded again when the host's generation changes another way.  A CUDA session
// of 3 sequences is checked against standalone policies (the CPU sampler) fed that session's own
// logits, through: a cancelled step (rolled back), a new generation (reset_state), the penalties
// off for a while (counting goes on) and on again, a sequence prefill, and a session reset.  Same
// logits on both sides, so every token must agree, bar a draw within 3 ulp of a slot edge
// (expf on the device), which on these 3 x 60 draws would be a one-in-a-million event.
void test_penalties(const std::string &dir) {
    constexpr int kSequences = 3, kSteps = 60;
    const EnginePair models(dir, RESET_WEIGHTS_NVFP4_W4A16);
    const int vocab = models.info.vocab_size;
    reset_session *s = session(models.gpu, kSequences, 512);
    // The repetition penalty counts the prompt too: the references are given it (reset_policy_add_context).
    const reset_policy_params p = penalized_policy(77, 1.5f, 0.5f, 1.3f);
    ok(reset_set_policy(s, &p), "reset_set_policy");
    const std::vector<int32_t> ids = prompt(vocab, 29, 61u), more = prompt(vocab, 4, 67u);
    std::vector<reset_policy *> reference(kSequences);
    for (int k = 0; k < kSequences; ++k) {
        reset_policy_options o;
        reset_policy_options_init(&o);
        o.sequence = k;
        ok(reset_policy_create(&p, &o, &reference[size_t(k)]), "reset_policy_create");
        ok(reset_policy_add_context(reference[size_t(k)], ids.data(), ids.size()), "reset_policy_add_context");
    }
    ok(reset_prefill(s, ids.data(), ids.size()), "prefill");
    std::vector<bool> ended(kSequences, false);
    int compared = 0, differ = 0;
    auto apply_everywhere = [&](const reset_policy_params &q) {
        ok(reset_set_policy(s, &q), "reset_set_policy");
        for (reset_policy *r : reference) ok(reset_policy_set_params(r, &q), "reset_policy_set_params");
    };
    for (int step = 0; step < kSteps; ++step) {
        if (step == 10) {  // rolled back before the device runs: nothing to upload, nothing counted
            ok(reset_session_cancel(s), "cancel");
            std::vector<reset_step> st(kSequences);
            reset_step_init(st.data(), st.size());
            EXPECT(reset_decode_step(s, st.data(), st.size(), nullptr) == RESET_ERR_CANCELLED, "%s: cancel",
                   dir.c_str());
        }
        if (step == 20) {  // a new generation: the host's counts restart and go up to the device
            reset_policy_params q = p;
            q.reset_state = 1;
            apply_everywhere(q);
        }
        if (step == 28) {  // off: the device counts on without lowering anything
            reset_policy_params q = p;
            q.presence_penalty = q.frequency_penalty = 0.0f;
            q.repetition_penalty = 1.0f;
            apply_everywhere(q);
        }
        if (step == 34) apply_everywhere(p);  // on again, over every token since step 20
        if (step == 40 && !ended[1]) {  // new context for sequence 1 alone, uploaded before the next step
            ok(reset_prefill_sequence(s, 1, more.data(), more.size()), "sequence prefill");
            ok(reset_policy_add_context(reference[1], more.data(), more.size()), "reset_policy_add_context");
        }
        if (step == 48) {  // a reset: a new generation on the host, uploaded as zeros
            ok(reset_session_reset(s), "reset");
            for (reset_policy *r : reference) {
                ok(reset_policy_reset(r), "reset_policy_reset");
                ok(reset_policy_add_context(r, ids.data(), ids.size()), "reset_policy_add_context");
            }
            ok(reset_prefill(s, ids.data(), ids.size()), "prefill after the reset");
            std::fill(ended.begin(), ended.end(), false);
        }
        std::vector<int32_t> want(kSequences, -1);
        std::vector<reset_decision> decided(kSequences);
        for (int k = 0; k < kSequences; ++k) {
            if (ended[size_t(k)]) continue;
            const std::vector<float> z = logits(s, k, vocab);
            reset_decision_init(&decided[size_t(k)]);
            ok(reset_policy_sample(reference[size_t(k)], z.data(), z.size(), &want[size_t(k)], &decided[size_t(k)]),
               "reset_policy_sample");
        }
        std::vector<reset_step> st(kSequences);
        reset_step_init(st.data(), st.size());
        const reset_status status = reset_decode_step(s, st.data(), st.size(), nullptr);
        if (status == RESET_ERR_STATE) break;  // every sequence ended
        ok(status, "reset_decode_step");
        for (int k = 0; k < kSequences; ++k) {
            if (ended[size_t(k)]) continue;
            ++compared;
            if (st[size_t(k)].token != want[size_t(k)]) {
                ++differ;
                std::printf("  penalties step %d sequence %d: token %d, the CPU sampler's %d\n", step, k,
                            st[size_t(k)].token, want[size_t(k)]);
            } else {
                // The raw row's logprob, however penalized the draw: 1e-6 relative, a float ulp plus
                // another summation order of the same logits.
                const float got = st[size_t(k)].logprob, cpu = decided[size_t(k)].logprob;
                EXPECT(std::fabs(got - cpu) <= 1e-6f * std::max(1.0f, -cpu), "%s penalties step %d sequence %d: "
                       "logprob %.9g, the CPU sampler's %.9g", dir.c_str(), step, k, got, cpu);
            }
            ok(reset_policy_accept(reference[size_t(k)], st[size_t(k)].token), "reset_policy_accept");
            ended[size_t(k)] = st[size_t(k)].end_of_generation != 0;
        }
    }
    reset_policy_params back;
    reset_policy_params_init(&back);
    ok(reset_session_get_policy(s, &back), "reset_session_get_policy");
    EXPECT(back.presence_penalty == 1.5f && back.frequency_penalty == 0.5f, "%s: get_policy lost the penalties",
           dir.c_str());
    EXPECT(differ == 0, "%s penalties: %d of %d tokens differ from the CPU sampler's", dir.c_str(), differ, compared);
    EXPECT(compared >= kSequences * 8, "%s penalties: only %d tokens compared", dir.c_str(), compared);
    std::printf("%-40s w4a16  penalties: %d tokens compared with the CPU sampler on the session's logits, %d "
                "differ\n", dir.c_str(), compared, differ);
    for (reset_policy *r : reference) reset_policy_free(r);
    reset_session_free(s);
}

// Whether the checkpoint itself stores an NVFP4 lm_head (llm-compressor's NVFP4A16 with the head
// quantized: "lm_head.weight_packed"; ModelOpt: a U8 "lm_head.weight").  Such a model's head is NVFP4
// with or without quantize_lm_head.
bool checkpoint_has_nvfp4_lm_head(const std::string &dir) {
    const reset::TensorStore store = reset::TensorStore::open_directory(dir);
    const reset::TensorView *head = store.find("lm_head.weight");
    return store.find("lm_head.weight_packed") || (head && head->dtype == reset::Dtype::U8);
}

void test_nvfp4_lm_head(const std::string &dir) {
    const char *names[] = {"", "bf16", "w4a16", "w4a4"};
    // The fixture ct-nvfp4a16-head-qwen3 stores its head in NVFP4: both loads below have it (first run
    // on it in session 43; the runs since session 39 ran test_model only).
    const bool own_nvfp4_head = checkpoint_has_nvfp4_lm_head(dir);
    for (reset_weights w : {RESET_WEIGHTS_NVFP4_W4A16, RESET_WEIGHTS_NVFP4_W4A4}) {
        // The quick set (under compute-sanitizer) runs the NVFP4 lm_head GEMV once, in W4A16.
        if (w == RESET_WEIGHTS_NVFP4_W4A4 && std::getenv("RESET_GPU_TEST_QUICK")) break;
        const EnginePair models(dir, w, /*quantize_lm_head=*/true);
        const reset_model_info &info = models.info;
        reset_model *gpu_bf16_head = load(dir, w, RESET_BACKEND_CUDA);
        const reset_model_info bf16_head = info_of(gpu_bf16_head);
        reset_model_free(gpu_bf16_head);
        EXPECT(info.lm_head_nvfp4 == 1 && bf16_head.lm_head_nvfp4 == (own_nvfp4_head ? 1 : 0),
               "%s %s: lm_head_nvfp4 %d / %d (the checkpoint's own head %s)", dir.c_str(), names[w],
               info.lm_head_nvfp4, bf16_head.lm_head_nvfp4, own_nvfp4_head ? "NVFP4" : "BF16");
        // Untied, the BF16 lm_head's 2 bytes per weight give way to the GEMV layout's NVFP4 records
        // (2304 bytes per 16 rows x 256 columns, padded: nvfp4_gemv_layout.h); tied, the BF16 lm_head is
        // the embedding table (on the device anyway), and the NVFP4 one comes on top of it.
        const double nvfp4_head = double((info.vocab_size + 15) / 16) * ((info.hidden_size + 255) / 256) * 2304;
        const double saved = double(bf16_head.device_bytes) - double(info.device_bytes);
        const double expected =
            own_nvfp4_head ? 0.0 : (info.tied_embeddings ? 0 : 2.0 * info.vocab_size * info.hidden_size) - nvfp4_head;
        EXPECT(std::fabs(saved - expected) < 0.05 * std::fabs(expected) + 65536,
               "%s %s: the NVFP4 lm_head saved %.0f device bytes, not about %.0f", dir.c_str(), names[w], saved,
               expected);
        const int vocab = info.vocab_size;
        const bool w4a4 = w == RESET_WEIGHTS_NVFP4_W4A4;
        const std::vector<int32_t> ids = prompt(vocab, 37, 17u + unsigned(w));
        reset_session *a = session(models.cpu, 1, 512), *b = session(models.gpu, 1, 512);
        const auto [prefill, flipped, c] =
            prefill_and_decode(a, b, RESET_POLICY_GREEDY, ids, 1, vocab, 64, 5e-3, w4a4);
        EXPECT(prefill <= 5e-3 || flipped, "%s %s NVFP4 lm_head: prefill logits rel L2 %.3g", dir.c_str(), names[w],
               prefill);
        // (decode_both holds W4A4 to its 1e-4 rule and ends it at a code flip, as above.)
        EXPECT(c.unexplained == 0 && c.worst <= 5e-3, "%s %s NVFP4 lm_head greedy: %d of %d differ, worst %.3g",
               dir.c_str(), names[w], c.unexplained, c.tokens, c.worst);
        std::printf("%-40s %-6s NVFP4 lm_head: prefill rel L2 %.2e%s, greedy %d tokens, worst %.2e; %.1f MB less "
                    "device memory\n",
                    dir.c_str(), names[w], prefill, flipped ? " (W4A4 code flip)" : "", c.tokens, c.worst, saved / 1e6);
        reset_session_free(a);
        reset_session_free(b);
    }
}

// reset_session_options.top_logprobs on the CUDA backend: every step's entries against the logits the
// device drew from (read before the step): the same tokens in the same order as sorting that row by
// (logit descending, id ascending) — exactly, it is the same row — their logprobs against a log-softmax
// in double, the drawn token's entry equal to the step's logprob bit for bit.  Graph and eager steps,
// ReSET sampling with top-p at 3 sequences, a count past a short vocabulary's is not asked (20 < every
// model's), ended sequences report none, and a session that asks for none reports none.
int g_top_entries = 0, g_top_drawn = 0;
void test_top_logprobs(const std::string &dir) {
    constexpr int kSequences = 3, kSteps = 24, kTop = 20;
    const EnginePair models(dir, RESET_WEIGHTS_NVFP4_W4A16);
    const int vocab = models.info.vocab_size;
    const std::vector<int32_t> ids = prompt(vocab, 23, 91u);
    for (int eager : {0, 1}) {
        reset_session_options o;
        reset_session_options_init(&o);
        o.sequences = kSequences;
        o.max_context = 256;
        o.eager = eager;
        o.top_logprobs = kTop;
        reset_session *s = nullptr;
        ok(reset_session_create(models.gpu, &o, &s), "reset_session_create (top_logprobs)");
        set_policy(s, RESET_POLICY_RESET);
        ok(reset_prefill(s, ids.data(), ids.size()), "prefill");
        std::vector<bool> ended(kSequences, false);
        for (int t = 0; t < kSteps; ++t) {
            std::vector<std::vector<float>> before(kSequences);
            for (int k = 0; k < kSequences; ++k)
                if (!ended[size_t(k)]) before[size_t(k)] = logits(s, k, vocab);
            std::vector<reset_step> st(kSequences);
            reset_step_init(st.data(), st.size());
            int32_t active = 0;
            ok(reset_decode_step(s, st.data(), st.size(), &active), "reset_decode_step");
            for (int k = 0; k < kSequences; ++k) {
                const reset_step &r = st[size_t(k)];
                if (ended[size_t(k)]) {
                    EXPECT(r.top_logprob_count == 0 && r.top_logprobs == nullptr,
                           "%s eager %d step %d seq %d: an ended sequence reports %d top_logprobs", dir.c_str(),
                           eager, t, k, r.top_logprob_count);
                    continue;
                }
                const std::vector<float> &z = before[size_t(k)];
                EXPECT(r.top_logprob_count == kTop && r.top_logprobs != nullptr,
                       "%s eager %d step %d seq %d: %d top_logprobs", dir.c_str(), eager, t, k, r.top_logprob_count);
                if (r.top_logprob_count != kTop || !r.top_logprobs) continue;
                std::vector<int32_t> order(static_cast<size_t>(vocab));
                std::iota(order.begin(), order.end(), 0);
                std::partial_sort(order.begin(), order.begin() + kTop, order.end(), [&](int32_t x, int32_t y) {
                    return z[size_t(x)] != z[size_t(y)] ? z[size_t(x)] > z[size_t(y)] : x < y;
                });
                double top = -INFINITY, sum = 0.0;
                for (float v : z) top = std::max(top, double(v));
                for (float v : z) sum += std::exp(double(v) - top);
                for (int j = 0; j < kTop; ++j) {
                    const reset_token_logprob &e = r.top_logprobs[j];
                    EXPECT(e.token == order[size_t(j)], "%s eager %d step %d seq %d entry %d: token %d, the row's %d",
                           dir.c_str(), eager, t, k, j, e.token, order[size_t(j)]);
                    // 1e-6 relative: a float ulp of the result plus another summation order of the same doubles.
                    const double want = double(z[size_t(order[size_t(j)])]) - top - std::log(sum);
                    EXPECT(std::fabs(e.logprob - want) <= 1e-6 * std::max(1.0, std::fabs(want)),
                           "%s eager %d step %d seq %d entry %d: logprob %.9g vs %.9g", dir.c_str(), eager, t, k, j,
                           e.logprob, want);
                    if (e.token == r.token) {
                        EXPECT(std::memcmp(&e.logprob, &r.logprob, sizeof(float)) == 0,
                               "%s eager %d step %d seq %d: the drawn token's entry %.9g, the step's logprob %.9g",
                               dir.c_str(), eager, t, k, e.logprob, r.logprob);
                        ++g_top_drawn;
                    }
                    ++g_top_entries;
                }
                if (r.end_of_generation) ended[size_t(k)] = true;
            }
            if (active == 0) break;
        }
        reset_session_free(s);
    }
    reset_session *none = session(models.gpu, 1, 64);
    ok(reset_prefill(none, ids.data(), ids.size()), "prefill");
    reset_step step;
    reset_step_init(&step, 1);
    ok(reset_decode_step(none, &step, 1, nullptr), "reset_decode_step");
    EXPECT(step.top_logprob_count == 0 && step.top_logprobs == nullptr, "%s: a session that asked for none got %d",
           dir.c_str(), step.top_logprob_count);
    reset_session_free(none);
}

// Stop conditions (reset_set_stop) on the CUDA backend.  They are decided on the host, but where
// a sequence's context ends is the device's: the token that reaches max_tokens was run by the
// step's graph and stays in the context, a stop token leaves it, and an ended row keeps running in
// later graphs without touching the other rows.  All on the CUDA engine, against itself:
//  1. 3 sequences, max_tokens 12: each ends with "length" after 12 tokens (or earlier on an EOS),
//     then a 5-id turn is prefilled; a session that decoded the same 12 steps without the limit
//     and prefilled the same turn has the same logits (1e-4 relative L2: the same kernels on the
//     same inputs; a context off by one token differs by O(1)).
//  2. With a tokenizer: a stop string cut from sequence 0's text of run 1 ends it at the token
//     that completes the string's first occurrence, reporting the text before it, with the stop
//     token out of the context, while sequences 1 and 2 draw what they drew in run 1.
int g_stop_lengths = 0, g_stop_strings = 0;

struct StopRun {
    std::vector<int32_t> tokens;
    std::string text;
    reset_end_reason end = RESET_END_NONE;
    int32_t stop_index = -1;
};

std::vector<StopRun> decode_until_ended(reset_session *s, int sequences, int max_steps) {
    std::vector<StopRun> runs(static_cast<size_t>(sequences));
    for (int t = 0; t < max_steps; ++t) {
        std::vector<reset_step> st(static_cast<size_t>(sequences));
        reset_step_init(st.data(), st.size());
        int32_t active = 0;
        if (reset_decode_step(s, st.data(), st.size(), &active) != RESET_OK) break;
        for (int k = 0; k < sequences; ++k) {
            const reset_step &r = st[size_t(k)];
            StopRun &run = runs[size_t(k)];
            if (run.end != RESET_END_NONE) continue;
            run.tokens.push_back(r.token);
            run.text.append(r.text, r.text_len);
            if (r.end_of_generation) run.end = r.end_reason, run.stop_index = r.stop_index;
        }
        if (active == 0) break;
    }
    return runs;
}

void test_stop_conditions(const std::string &dir) {
    constexpr int kSequences = 3, kMaxTokens = 12;
    reset_model *gpu = load(dir, RESET_WEIGHTS_NVFP4_W4A16, RESET_BACKEND_CUDA);
    const int vocab = info_of(gpu).vocab_size;
    const std::vector<int32_t> ids = prompt(vocab, 29, 97u), turn = prompt(vocab, 5, 101u);
    const int32_t prompt_length = int32_t(ids.size());
    auto sampled = [&]() {
        reset_session *s = session(gpu, kSequences, 128);
        set_policy(s, RESET_POLICY_FIXED);
        ok(reset_prefill(s, ids.data(), ids.size()), "prefill");
        return s;
    };
    reset_stop_options o;
    reset_stop_options_init(&o);
    o.max_tokens = kMaxTokens;
    reset_session *limited = sampled();
    ok(reset_set_stop(limited, &o), "reset_set_stop");
    const std::vector<StopRun> ref = decode_until_ended(limited, kSequences, 100);
    reset_session *unlimited = sampled();
    const std::vector<StopRun> plain = decode_until_ended(unlimited, kSequences, kMaxTokens);
    ok(reset_prefill(limited, turn.data(), turn.size()), "turn prefill (limited)");
    ok(reset_prefill(unlimited, turn.data(), turn.size()), "turn prefill (unlimited)");
    for (int k = 0; k < kSequences; ++k) {
        const StopRun &r = ref[size_t(k)];
        EXPECT(r.end == RESET_END_LENGTH || r.end == RESET_END_EOS, "%s seq %d: ended with reason %d", dir.c_str(), k,
               int(r.end));
        const bool full = r.tokens.size() == size_t(kMaxTokens);
        EXPECT(r.tokens.size() <= size_t(kMaxTokens) && (r.end == RESET_END_EOS || full),
               "%s seq %d: %zu tokens, reason %d", dir.c_str(), k, r.tokens.size(), int(r.end));
        const std::vector<int32_t> &unlimited_tokens = plain[size_t(k)].tokens;
        EXPECT(r.tokens.size() <= unlimited_tokens.size() &&
                   std::equal(r.tokens.begin(), r.tokens.end(), unlimited_tokens.begin()),
               "%s seq %d: max_tokens changed the draws", dir.c_str(), k);
        if (r.end != RESET_END_LENGTH || plain[size_t(k)].end != RESET_END_NONE) continue;
        EXPECT(reset_session_length(limited, k) == prompt_length + kMaxTokens + 5, "%s seq %d: length %d, want %d",
               dir.c_str(), k, reset_session_length(limited, k), prompt_length + kMaxTokens + 5);
        const double d = rel_l2(logits(limited, k, vocab), logits(unlimited, k, vocab));
        EXPECT(d <= 1e-4, "%s seq %d: after max_tokens and a turn, logits rel L2 %.3g from the unlimited session's",
               dir.c_str(), k, d);
        ++g_stop_lengths;
    }
    reset_session_free(unlimited);

    // 2. A stop string from sequence 0's text (at character boundaries, from its third character).
    const std::string &text = ref[0].text;
    std::vector<size_t> b;
    for (size_t i = 0; i <= text.size(); ++i)
        if (i == text.size() || (static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) b.push_back(i);
    if (reset_model_tokenizer(gpu) != nullptr && b.size() > 6) {
        const std::string stop = text.substr(b[2], b[5] - b[2]);
        const char *strings[] = {stop.c_str()};
        o.strings = strings;
        o.string_count = 1;
        ok(reset_set_stop(limited, &o), "reset_set_stop (string)");
        ok(reset_session_reset(limited), "reset");
        ok(reset_prefill(limited, ids.data(), ids.size()), "prefill");
        const std::vector<StopRun> got = decode_until_ended(limited, kSequences, 100);
        for (int k = 0; k < kSequences; ++k) {
            const StopRun &want = ref[size_t(k)], &have = got[size_t(k)];
            const size_t at = want.text.find(stop);
            EXPECT(have.tokens.size() <= want.tokens.size() &&
                       std::equal(have.tokens.begin(), have.tokens.end(), want.tokens.begin()),
                   "%s seq %d: a stop string changed the draws", dir.c_str(), k);
            if (at == std::string::npos) {
                EXPECT(have.text == want.text && have.end == want.end, "%s seq %d: no stop, yet text or end differ",
                       dir.c_str(), k);
                continue;
            }
            EXPECT(have.end == RESET_END_STOP && have.stop_index == 0 && have.text == want.text.substr(0, at),
                   "%s seq %d: end %d, stop_index %d, text of %zu bytes (want %zu)", dir.c_str(), k, int(have.end),
                   have.stop_index, have.text.size(), at);
            EXPECT(reset_session_length(limited, k) == prompt_length + int32_t(have.tokens.size()) - 1,
                   "%s seq %d: length %d after a stop at token %zu", dir.c_str(), k,
                   reset_session_length(limited, k), have.tokens.size());
            ++g_stop_strings;
        }
    }
    reset_session_free(limited);
    reset_model_free(gpu);
}

int g_bias_compared = 0;  // test_logit_bias: engine pairs compared with a logit bias in force

// reset_set_logit_bias (0.6) on both engines: the CPU's SequenceSampler adds the bias to its copy of
// the row, the device sampler to the row it loads; the same tokens within decode_both's rules (W4A16,
// 3 sequences sampled at T 0.8 under top-p/top-k, and greedy).  The bias bans the prefill's 8 most
// likely tokens of sequence 0 and raises 8 middling ones by 3, so it moves the draws; no banned token
// may be drawn.
void test_logit_bias(const std::string &dir) {
    constexpr int kSequences = 3, kSteps = 16;
    constexpr double kBound = 5e-3;  // the issue's NVFP4 bound, as everywhere in this test
    const EnginePair models(dir, RESET_WEIGHTS_NVFP4_W4A16);
    const int vocab = models.info.vocab_size;
    const std::vector<int32_t> ids = prompt(vocab, 23, 113u);
    for (const reset_policy_kind kind : {RESET_POLICY_FIXED, RESET_POLICY_GREEDY}) {
        reset_session *a = session(models.cpu, kSequences, 256), *b = session(models.gpu, kSequences, 256);
        set_policy(a, kind);
        set_policy(b, kind);
        ok(reset_prefill(a, ids.data(), ids.size()), "prefill cpu");
        ok(reset_prefill(b, ids.data(), ids.size()), "prefill cuda");
        std::vector<float> z = logits(a, 0, vocab);
        std::vector<int32_t> order(static_cast<size_t>(vocab));
        std::iota(order.begin(), order.end(), 0);
        std::sort(order.begin(), order.end(), [&](int32_t x, int32_t y) { return z[size_t(x)] > z[size_t(y)]; });
        std::vector<reset_logit_bias> bias;
        for (int i = 0; i < 8; ++i) bias.push_back({order[size_t(i)], -INFINITY});
        const int raised = std::min(std::max(8, vocab / 64), vocab - 8);  // past the banned ones
        for (int i = 0; i < 8; ++i) bias.push_back({order[size_t(raised + i)], 3.0f});
        ok(reset_set_logit_bias(a, bias.data(), bias.size()), "reset_set_logit_bias cpu");
        ok(reset_set_logit_bias(b, bias.data(), bias.size()), "reset_set_logit_bias cuda");
        const Compared c = decode_both(a, b, kSequences, vocab, kSteps, kBound, false);
        EXPECT(c.unexplained == 0 && c.worst <= kBound && c.tokens > 0,
               "%s logit bias (%s): %d of %d tokens differ unexplained, worst %.3g", dir.c_str(),
               kind == RESET_POLICY_GREEDY ? "greedy" : "fixed", c.unexplained, c.tokens, c.worst);
        // A few more steps on the GPU alone: nothing banned is drawn.
        std::vector<reset_step> st(kSequences);
        for (int t = 0; t < 16; ++t) {
            reset_step_init(st.data(), st.size());
            if (reset_decode_step(b, st.data(), st.size(), nullptr) != RESET_OK) break;
            for (const reset_step &r : st)
                for (int i = 0; i < 8; ++i)
                    EXPECT(r.token != bias[size_t(i)].token, "%s: banned token %d drawn", dir.c_str(), r.token);
        }
        ++g_bias_compared;
        reset_session_free(a);
        reset_session_free(b);
    }
}

// The tokens a sequence's context holds (reset_session_tokens).
std::vector<int32_t> tokens_of(reset_session *s, int sequence) {
    size_t n = 0;
    reset_session_tokens(s, sequence, nullptr, 0, &n);
    std::vector<int32_t> out(n);
    ok(reset_session_tokens(s, sequence, out.data(), out.size(), &n), "reset_session_tokens");
    return out;
}

int g_truncate_compared = 0;  // test_truncate: cut-back sessions compared with new ones

// reset_truncate on the CUDA backend (0.6), against new CUDA sessions given the kept tokens as
// their prompt (reset.h: the two are the same).  The kept positions of the cut session came from
// the decode graph and the new session's from the prefill path, so their logits agree to the
// issue's NVFP4 bound (5e-3, as the engines do), not bit for bit, and decode_both's near-tie rule
// judges a token drawn differently.  ignore_eos keeps end-of-generation ids out of the comparison
// (decode_both expects its first session to keep an ended sequence's logits, as the CPU does).
void test_truncate(const std::string &dir) {
    constexpr int kSequences = 3, kFirst = 16, kAgain = 12;
    constexpr double kBound = 5e-3;
    reset_model *gpu = load(dir, RESET_WEIGHTS_NVFP4_W4A16, RESET_BACKEND_CUDA);
    const int vocab = info_of(gpu).vocab_size;
    const std::vector<int32_t> ids = prompt(vocab, 29, 107u), extra = prompt(vocab, 7, 109u);
    const int32_t length = int32_t(ids.size());
    auto fresh = [&]() {
        reset_session *s = session(gpu, kSequences, 128);
        set_policy(s, RESET_POLICY_FIXED);
        reset_stop_options o;
        reset_stop_options_init(&o);
        o.ignore_eos = 1;
        ok(reset_set_stop(s, &o), "reset_set_stop");
        return s;
    };
    auto compare = [&](reset_session *reference, reset_session *cut, const char *what) {
        double worst = 0;
        for (int k = 0; k < kSequences; ++k)
            worst = std::max(worst, rel_l2(logits(cut, k, vocab), logits(reference, k, vocab)));
        const Compared c = decode_both(reference, cut, kSequences, vocab, kAgain, kBound, false);
        EXPECT(worst <= kBound && c.unexplained == 0 && c.worst <= kBound && c.tokens > 0,
               "%s %s: prefill logits rel L2 %.3g, %d of %d tokens differ unexplained, worst %.3g", dir.c_str(), what,
               worst, c.unexplained, c.tokens, c.worst);
        ++g_truncate_compared;
    };

    // 1. Every sequence cut inside its answer, then a new turn: as a new session given the kept tokens.
    reset_session *a = fresh();
    ok(reset_prefill(a, ids.data(), ids.size()), "prefill");
    const std::vector<StopRun> first = decode_until_ended(a, kSequences, kFirst);
    for (int k = 0; k < kSequences; ++k) {
        std::vector<int32_t> want = ids;
        want.insert(want.end(), first[size_t(k)].tokens.begin(), first[size_t(k)].tokens.end());
        EXPECT(tokens_of(a, k) == want, "%s seq %d: reset_session_tokens is not the prompt and the drawn tokens",
               dir.c_str(), k);
    }
    const int32_t cut = length + 5;
    ok(reset_truncate(a, cut), "reset_truncate");
    std::vector<reset_step> st(kSequences);
    reset_step_init(st.data(), st.size());
    EXPECT(reset_decode_step(a, st.data(), st.size(), nullptr) == RESET_ERR_STATE,
           "%s: a decode step right after reset_truncate was not refused", dir.c_str());
    ok(reset_prefill(a, extra.data(), extra.size()), "prefill after reset_truncate");
    reset_session *b = fresh();
    ok(reset_prefill(b, ids.data(), ids.size()), "prefill (new session)");
    for (int k = 0; k < kSequences; ++k) {
        std::vector<int32_t> rest = tokens_of(a, k);
        rest.erase(rest.begin(), rest.begin() + length);
        ok(reset_prefill_sequence(b, k, rest.data(), rest.size()), "prefill_sequence (new session)");
    }
    compare(b, a, "cut inside the answers");
    reset_session_free(b);

    // 2. Parallel samples cut back to the end of the prompt draw the same answers again.
    ok(reset_truncate(a, length - 1), "reset_truncate to the prompt");
    ok(reset_prefill(a, &ids[size_t(length) - 1], 1), "the prompt's last token again");
    b = fresh();
    ok(reset_prefill(b, ids.data(), ids.size()), "prefill (new session)");
    compare(b, a, "cut back to the prompt");
    reset_session_free(b);

    // 3. One sequence cut back: the others' logits stay bit for bit; it needs a prefill.
    const std::vector<float> before0 = logits(a, 0, vocab), before2 = logits(a, 2, vocab);
    ok(reset_truncate_sequence(a, 1, length + 2), "reset_truncate_sequence");
    EXPECT(logits(a, 0, vocab) == before0 && logits(a, 2, vocab) == before2,
           "%s: cutting sequence 1 changed another sequence's logits", dir.c_str());
    std::vector<float> row(static_cast<size_t>(vocab));
    EXPECT(reset_session_logits(a, 1, row.data(), row.size()) == RESET_ERR_STATE,
           "%s: the logits of a sequence just cut back were not refused", dir.c_str());
    ok(reset_prefill_sequence(a, 1, extra.data(), extra.size()), "prefill_sequence after the cut");
    reset_step_init(st.data(), st.size());
    ok(reset_decode_step(a, st.data(), st.size(), nullptr), "decode after the cut");
    reset_session_free(a);
    reset_model_free(gpu);
}

int g_copies_compared = 0;  // test_copy_sequence: engine pairs compared after a copy

// reset_copy_sequence (0.7) on both engines: the CUDA backend copies the KV cache's rows and the
// logits on the device, the host copies the sampler (its penalties' counts reach the device's rows
// through the counts upload).  The sequences first diverge (a prompt continuation of their own each,
// then 4 greedy steps with the penalties, which count and advance the draw counter; sampled steps
// there met a near tie on 3 of the 8 models in session 34's runs 1 and 3, leaving the engines in
// different states), sequence 0 is copied onto sequence 2, and both engines then decode on, sampled:
// sequence 2 draws with its own key from sequence 0's state.  Right after the copy the device's rows
// hold the same bytes (a copy, no arithmetic); afterwards the engines agree to the NVFP4 bound under
// decode_both's near-tie rule, as everywhere in this test.
void test_copy_sequence(const std::string &dir) {
    constexpr int kSequences = 3, kBefore = 4, kAfter = 14;
    constexpr double kBound = 5e-3;
    const EnginePair models(dir, RESET_WEIGHTS_NVFP4_W4A16);
    const int vocab = models.info.vocab_size;
    const std::vector<int32_t> ids = prompt(vocab, 21, 131u);
    reset_session *a = session(models.cpu, kSequences, 256), *b = session(models.gpu, kSequences, 256);
    reset_policy_params p = penalized_policy(91, 1.0f, 0.0f, 1.3f);
    p.kind = RESET_POLICY_GREEDY;  // until the copy
    reset_stop_options o;
    reset_stop_options_init(&o);
    o.ignore_eos = 1;  // decode_both compares ended sequences' logits only as the CPU keeps them
    for (reset_session *s : {a, b}) {
        ok(reset_set_policy(s, &p), "reset_set_policy");
        ok(reset_set_stop(s, &o), "reset_set_stop");
        ok(reset_prefill(s, ids.data(), ids.size()), "prefill");
        for (int k = 0; k < kSequences; ++k) {
            const std::vector<int32_t> own = prompt(vocab, 3 + 2 * k, 137u + unsigned(k));
            ok(reset_prefill_sequence(s, k, own.data(), own.size()), "prefill_sequence");
        }
    }
    const Compared before = decode_both(a, b, kSequences, vocab, kBefore, kBound, false);
    if (before.mismatches > 0) {  // a near tie before the copy: the engines now hold different states
        std::printf("%s copy: skipped after a near tie before the copy\n", dir.c_str());
    } else {
        ok(reset_copy_sequence(a, 0, 2), "reset_copy_sequence cpu");
        ok(reset_copy_sequence(b, 0, 2), "reset_copy_sequence cuda");
        p.kind = RESET_POLICY_FIXED;  // the step state, counts and draw counter kept (reset_state 0)
        for (reset_session *s : {a, b}) ok(reset_set_policy(s, &p), "reset_set_policy (sampled)");
        EXPECT(logits(b, 2, vocab) == logits(b, 0, vocab), "%s: the copied sequence's device logits differ",
               dir.c_str());
        EXPECT(tokens_of(b, 2) == tokens_of(b, 0), "%s: the copied sequence's tokens differ", dir.c_str());
        const Compared after = decode_both(a, b, kSequences, vocab, kAfter, kBound, false);
        EXPECT(after.unexplained == 0 && after.worst <= kBound && after.tokens > 0,
               "%s copy: %d of %d tokens differ unexplained, worst %.3g", dir.c_str(), after.unexplained,
               after.tokens, after.worst);
        ++g_copies_compared;
    }
    reset_session_free(a);
    reset_session_free(b);
}

int g_files_compared = 0;  // test_sequence_file: engine pairs compared after loading each other's files

// A file's bytes, or "" if it cannot be read.
std::string file_bytes(const std::string &path) {
    std::FILE *f = std::fopen(path.c_str(), "rb");
    if (!f) return "";
    std::string bytes;
    char buffer[1 << 16];
    for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, f)) > 0;) bytes.append(buffer, n);
    std::fclose(f);
    return bytes;
}

// A safetensors file's bytes after its header (the tensors), or "" if it cannot be read.
std::string file_payload(const std::string &path) {
    const std::string bytes = file_bytes(path);
    if (bytes.size() < 8) return "";
    uint64_t header = 0;
    for (int i = 7; i >= 0; --i) header = (header << 8) | uint8_t(bytes[size_t(i)]);
    return header + 8 <= bytes.size() ? bytes.substr(size_t(header) + 8) : "";
}

// reset_save_sequence / reset_load_sequence (0.8) on the CUDA backend and across backends, for the
// BF16 and the FP8 cache.  The engines first diverge as in test_copy_sequence (greedy, with the
// penalties); then each saves sequence 0, and a new CUDA session loading the CUDA file holds the saving
// sequence's tokens and logits exactly, as it does loading the same state saved to memory (0.9), whose
// bytes are the file's.  Then each engine takes the *other's* file while the other
// copies its own sequence 0 to the same place: sequence 1 holds the CUDA state on both (the CPU
// session reads the device's bytes), sequence 2 the CPU state on both (the device reads K/V the CPU
// encoded: BF16 bits, E4M3 bytes with their sign).  Each pair then shares its past K/V and its logits
// bit for bit, so, decoded on sampled, the engines agree to the bound of this test's header under
// decode_both's near-tie rule (5e-3 with the BF16 cache; 5e-2 with FP8, whose roundings of K/V a whole
// step apart on the two engines the header explains: run 1 and 2 of session 35 met 5.2e-3 to 8.7e-3
// there, on the llama3 models, with no token differing unexplained).  An element decoded wrongly, a
// head or position transposed, would show far past either bound.
void test_sequence_file(const std::string &dir) {
    constexpr int kSequences = 3, kBefore = 4, kAfter = 14;
    const EnginePair models(dir, RESET_WEIGHTS_NVFP4_W4A16);
    const int vocab = models.info.vocab_size;
    const std::vector<int32_t> ids = prompt(vocab, 23, 151u);
    char pattern[] = "/tmp/reset-gpu-sequence-file-XXXXXX";
    const char *tmp = mkdtemp(pattern);
    EXPECT(tmp != nullptr, "mkdtemp failed");
    if (!tmp) return;
    for (const reset_kv_cache kv : {RESET_KV_CACHE_BF16, RESET_KV_CACHE_FP8}) {
        const char *kv_name = kv == RESET_KV_CACHE_FP8 ? "fp8" : "bf16";
        const double kBound = kv == RESET_KV_CACHE_FP8 ? 5e-2 : 5e-3;  // the header's W4A16 bounds
        reset_session *a = session(models.cpu, kSequences, 256, kv), *b = session(models.gpu, kSequences, 256, kv);
        reset_policy_params p = penalized_policy(97, 0.6f, 0.0f, 1.2f);
        p.kind = RESET_POLICY_GREEDY;  // until the files are loaded
        reset_stop_options o;
        reset_stop_options_init(&o);
        o.ignore_eos = 1;
        for (reset_session *s : {a, b}) {
            ok(reset_set_policy(s, &p), "reset_set_policy");
            ok(reset_set_stop(s, &o), "reset_set_stop");
            ok(reset_prefill(s, ids.data(), ids.size()), "prefill");
            for (int k = 0; k < kSequences; ++k) {
                const std::vector<int32_t> own = prompt(vocab, 4 + k, 157u + unsigned(k));
                ok(reset_prefill_sequence(s, k, own.data(), own.size()), "prefill_sequence");
            }
        }
        const Compared before = decode_both(a, b, kSequences, vocab, kBefore, kBound, false);
        if (before.mismatches > 0) {
            std::printf("%s sequence file (%s): skipped after a near tie before saving\n", dir.c_str(), kv_name);
        } else {
            const std::string cpu_file = std::string(tmp) + "/cpu-" + kv_name + ".safetensors";
            const std::string gpu_file = std::string(tmp) + "/gpu-" + kv_name + ".safetensors";
            ok(reset_save_sequence(a, 0, cpu_file.c_str()), "reset_save_sequence cpu");
            ok(reset_save_sequence(b, 0, gpu_file.c_str()), "reset_save_sequence cuda");
            const std::vector<float> cpu_logits = logits(a, 0, vocab), gpu_logits = logits(b, 0, vocab);
            // The CUDA file in a new CUDA session: the saved tokens and logits exactly.
            reset_session *c = session(models.gpu, kSequences, 256, kv);
            ok(reset_load_sequence(c, 1, gpu_file.c_str()), "reset_load_sequence cuda -> cuda");
            EXPECT(tokens_of(c, 1) == tokens_of(b, 0) && logits(c, 1, vocab) == gpu_logits,
                   "%s (%s): a CUDA file loaded on CUDA lost its tokens or logits", dir.c_str(), kv_name);
            // (0.9) The same state through memory: the file's bytes exactly (the K/V rows read straight
            // into the caller's buffer), and loaded from them, the same tokens and logits.
            size_t size = 0;
            EXPECT(reset_save_sequence_to_memory(b, 0, nullptr, 0, &size) == RESET_ERR_BUFFER_TOO_SMALL,
                   "%s (%s): asking the size in memory", dir.c_str(), kv_name);
            std::string image(size, '\0');
            ok(reset_save_sequence_to_memory(b, 0, image.data(), image.size(), &size), "reset_save_sequence_to_memory");
            EXPECT(image == file_bytes(gpu_file) && !image.empty(),
                   "%s (%s): the CUDA state in memory is not its file's bytes", dir.c_str(), kv_name);
            ok(reset_load_sequence_from_memory(c, 2, image.data(), image.size()), "reset_load_sequence_from_memory");
            EXPECT(tokens_of(c, 2) == tokens_of(b, 0) && logits(c, 2, vocab) == gpu_logits,
                   "%s (%s): a CUDA state loaded from memory lost its tokens or logits", dir.c_str(), kv_name);
            const std::string memory_again = std::string(tmp) + "/memory-again.safetensors";
            ok(reset_save_sequence(c, 2, memory_again.c_str()), "reset_save_sequence (loaded from memory)");
            EXPECT(file_bytes(memory_again) == image, "%s (%s): a state loaded from memory saves to other bytes",
                   dir.c_str(), kv_name);
            std::remove(memory_again.c_str());
            reset_session_free(c);
            // Sequence 1: the CUDA state on both engines; sequence 2: the CPU state on both.
            ok(reset_load_sequence(a, 1, gpu_file.c_str()), "reset_load_sequence cuda -> cpu");
            ok(reset_copy_sequence(b, 0, 1), "reset_copy_sequence cuda");
            ok(reset_load_sequence(b, 2, cpu_file.c_str()), "reset_load_sequence cpu -> cuda");
            ok(reset_copy_sequence(a, 0, 2), "reset_copy_sequence cpu");
            EXPECT(logits(a, 1, vocab) == gpu_logits && logits(b, 2, vocab) == cpu_logits,
                   "%s (%s): loaded logits are not the saving engine's", dir.c_str(), kv_name);
            EXPECT(tokens_of(a, 1) == tokens_of(b, 0) && tokens_of(b, 2) == tokens_of(a, 0),
                   "%s (%s): loaded tokens differ", dir.c_str(), kv_name);
            // Saved again by the engine that loaded it, a file is the same past its header (which names
            // the backend): the other engine's K/V bytes came through its decoding and encoding exactly.
            const std::string cpu_again = std::string(tmp) + "/cpu-again.safetensors";
            const std::string gpu_again = std::string(tmp) + "/gpu-again.safetensors";
            ok(reset_save_sequence(a, 1, gpu_again.c_str()), "reset_save_sequence (the CUDA file, from the CPU)");
            ok(reset_save_sequence(b, 2, cpu_again.c_str()), "reset_save_sequence (the CPU file, from CUDA)");
            EXPECT(file_payload(gpu_again) == file_payload(gpu_file) && !file_payload(gpu_file).empty(),
                   "%s (%s): the CUDA file saved again by the CPU backend differs", dir.c_str(), kv_name);
            EXPECT(file_payload(cpu_again) == file_payload(cpu_file) && !file_payload(cpu_file).empty(),
                   "%s (%s): the CPU file saved again by the CUDA backend differs", dir.c_str(), kv_name);
            std::remove(cpu_again.c_str());
            std::remove(gpu_again.c_str());
            p.kind = RESET_POLICY_FIXED;  // the step state, counts and draw counter kept (reset_state 0)
            for (reset_session *s : {a, b}) ok(reset_set_policy(s, &p), "reset_set_policy (sampled)");
            const Compared after = decode_both(a, b, kSequences, vocab, kAfter, kBound, false);
            EXPECT(after.unexplained == 0 && after.worst <= kBound && after.tokens > 0,
                   "%s sequence file (%s): %d of %d tokens differ unexplained, worst %.3g", dir.c_str(), kv_name,
                   after.unexplained, after.tokens, after.worst);
            ++g_files_compared;
            std::remove(cpu_file.c_str());
            std::remove(gpu_file.c_str());
        }
        reset_session_free(a);
        reset_session_free(b);
    }
    rmdir(tmp);
}

}  // namespace

// The CUDA backend repacks a ModelOpt export's NVFP4 weights into the GEMV
// layout in an OpenMP loop over the layers (lib/cuda/device_model.cpp), which
// no exception may leave.  A block scale the GEMV cannot decode (negative:
// the loader's scan refuses only NaN) must fail that load with
// RESET_ERR_FORMAT naming it, in the first layer and in the last, leave no
// model, and the intact checkpoint must then load and decode as before.
// ModelOpt exports only.
void test_repack_error(const std::string &dir) {
    if (!std::filesystem::exists(dir + "/hf_quant_config.json")) return;
    const auto config = nlohmann::json::parse(reset::read_text_file(dir + "/config.json"));
    const int layers = config["num_hidden_layers"].get<int>();
    EXPECT(layers > 0, "%s: no layers in a ModelOpt export", dir.c_str());
    if (layers <= 0) return;
    const std::string first = "model.layers.0.self_attn.q_proj.weight_scale",
                      last = "model.layers." + std::to_string(layers - 1) + ".mlp.down_proj.weight_scale";
    std::printf("test_repack_error: %s (%d layers)\n", dir.c_str(), layers);
    for (const std::string &name : {first, last}) {
        char pattern[] = "/tmp/reset-gpu-repack-error-XXXXXX";
        const char *tmp = mkdtemp(pattern);
        EXPECT(tmp != nullptr, "mkdtemp failed");
        if (!tmp) return;
        try {
            // E4M3 -1.0: finite, so only the repack sees it (the loader's scan refuses NaN only).
            test_support::copy_checkpoint_with_last_byte(dir, tmp, name, char(0xb8));
        } catch (const std::exception &e) {
            EXPECT(false, "%s: %s", dir.c_str(), e.what());
            return;
        }
        for (reset_weights weights : {RESET_WEIGHTS_AUTO, RESET_WEIGHTS_NVFP4_W4A4}) {
            reset_model_options o;
            reset_model_options_init(&o);
            o.backend = RESET_BACKEND_CUDA;
            o.weights = weights;
            reset_model *m = nullptr;
            const reset_status status = reset_model_load(tmp, &o, &m);
            const std::string message = reset_last_error();
            EXPECT(status == RESET_ERR_FORMAT && m == nullptr &&
                       message.find("block scale code 184") != std::string::npos &&
                       message.find("is negative or NaN") != std::string::npos,
                   "%s with a negative scale in %s: status %d, model %p, message '%s'", dir.c_str(), name.c_str(),
                   int(status), static_cast<void *>(m), message.c_str());
            if (m) reset_model_free(m);
        }
        std::filesystem::remove_all(tmp);
    }
    // The intact checkpoint, after the failed loads: it loads and decodes.
    reset_model *m = load(dir, RESET_WEIGHTS_AUTO, RESET_BACKEND_CUDA);
    reset_session_options so;
    reset_session_options_init(&so);
    so.max_context = 64;
    reset_session *s = nullptr;
    ok(reset_session_create(m, &so, &s), "reset_session_create");
    const int32_t prompt[3] = {1, 2, 3};
    ok(reset_prefill(s, prompt, 3), "reset_prefill");
    reset_step step;
    reset_step_init(&step, 1);
    EXPECT(reset_decode_step(s, &step, 1, nullptr) == RESET_OK, "%s: decoding after the failed loads: %s",
           dir.c_str(), reset_last_error());
    reset_session_free(s);
    reset_model_free(m);
}

int g_file_access_runs = 0;  // test_file_access: loads from a copy of the checkpoint, then truncated

// reset_file_access (0.12): mapped or read, the CUDA backend keeps neither the mapping nor the copy
// once the weights are on the device.  A model loaded from a copy of the directory: the process's
// mappings no longer name the copy's files, and with those files truncated to nothing the model
// decodes as one loaded from the intact directory, bit for bit (the same bytes on the device, the
// same kernels, the same prompt: nothing may differ).  Before session 43 the mapping stayed.
void test_file_access(const std::string &dir) {
    reset_model *reference = load(dir, RESET_WEIGHTS_AUTO, RESET_BACKEND_CUDA);
    const int vocab = info_of(reference).vocab_size;
    const std::vector<int32_t> ids = prompt(vocab, 11, 113u);
    // The logits after the prompt, and after one greedy step (the decode step's GEMVs and graph).
    auto run = [&](reset_model *m) {
        reset_session *s = session(m, 1, 64);
        set_policy(s, RESET_POLICY_GREEDY);
        ok(reset_prefill(s, ids.data(), ids.size()), "reset_prefill");
        std::vector<float> out = logits(s, 0, vocab);
        reset_step step;
        reset_step_init(&step, 1);
        ok(reset_decode_step(s, &step, 1, nullptr), "reset_decode_step");
        const std::vector<float> after = logits(s, 0, vocab);
        out.insert(out.end(), after.begin(), after.end());
        reset_session_free(s);
        return out;
    };
    const std::vector<float> want = run(reference);
    reset_model_free(reference);
    for (reset_file_access access : {RESET_FILE_ACCESS_MAP, RESET_FILE_ACCESS_READ}) {
        const char *name = access == RESET_FILE_ACCESS_MAP ? "mapped" : "read";
        char pattern[] = "/tmp/reset-gpu-file-access-XXXXXX";
        const char *tmp = mkdtemp(pattern);
        EXPECT(tmp != nullptr, "mkdtemp failed");
        if (!tmp) return;
        std::filesystem::copy(dir, tmp, std::filesystem::copy_options::recursive);
        reset_model_options o;
        reset_model_options_init(&o);
        o.backend = RESET_BACKEND_CUDA;
        o.file_access = access;
        reset_model *m = nullptr;
        ok(reset_model_load(tmp, &o, &m), "reset_model_load (a copy)");
        const std::string maps = reset::read_text_file("/proc/self/maps");
        EXPECT(maps.find(tmp) == std::string::npos, "%s, %s: the process still maps the checkpoint's files after "
               "the load", dir.c_str(), name);
        int truncated = 0;
        for (const auto &entry : std::filesystem::directory_iterator(tmp))
            if (entry.path().extension() == ".safetensors") {
                std::filesystem::resize_file(entry.path(), 0);
                ++truncated;
            }
        EXPECT(truncated > 0, "%s: no safetensors file to truncate", dir.c_str());
        const std::vector<float> got = run(m);
        EXPECT(got == want, "%s, %s, its files truncated after the load: logits differ from the intact model's "
               "(rel L2 %.3g)", dir.c_str(), name, rel_l2(got, want));
        ++g_file_access_runs;
        reset_model_free(m);
        std::filesystem::remove_all(tmp);
    }
}

int main(int argc, char **argv) {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        std::printf("test_cuda_engine: skipped (no CUDA device)\n");
        return 0;
    }
    if (argc < 2) {
        std::printf("test_cuda_engine: skipped (no models given; make them with tests/gpu/make_engine_models.py)\n");
        return 0;
    }
    // RESET_GPU_TEST_ONLY=test_a,test_b runs only those tests (a rerun of one test after a fix); the
    // summary checks below then hold only for what ran.
    const char *only = std::getenv("RESET_GPU_TEST_ONLY");
    auto wanted = [&](const char *name) {
        if (!only) return true;
        const std::string list = std::string(",") + only + ",";
        return list.find(std::string(",") + name + ",") != std::string::npos;
    };
    for (int i = 1; i < argc; ++i) {
        if (wanted("test_model")) test_model(argv[i]);
        if (wanted("test_nvfp4_lm_head")) test_nvfp4_lm_head(argv[i]);
        if (wanted("test_reset_window")) test_reset_window(argv[i]);
        if (wanted("test_cancelled_prefill")) test_cancelled_prefill(argv[i]);
        if (wanted("test_second_turn")) test_second_turn(argv[i]);
        if (wanted("test_sequence_prefill")) test_sequence_prefill(argv[i]);
        if (wanted("test_penalties")) test_penalties(argv[i]);
        if (wanted("test_top_logprobs")) test_top_logprobs(argv[i]);
        if (wanted("test_stop_conditions")) test_stop_conditions(argv[i]);
        if (wanted("test_truncate")) test_truncate(argv[i]);
        if (wanted("test_logit_bias")) test_logit_bias(argv[i]);
        if (wanted("test_copy_sequence")) test_copy_sequence(argv[i]);
        if (wanted("test_sequence_file")) test_sequence_file(argv[i]);
        if (wanted("test_repack_error")) test_repack_error(argv[i]);
        if (wanted("test_file_access")) test_file_access(argv[i]);
    }
    if (wanted("test_file_access")) EXPECT(g_file_access_runs > 0, "reset_file_access untested");
    std::printf("test_cuda_engine: %d models decoded with their files truncated after the load\n",
                g_file_access_runs);
    if (wanted("test_sequence_file")) EXPECT(g_files_compared > 0, "reset_save_sequence / reset_load_sequence untested");
    std::printf("test_cuda_engine: %d engine pairs compared after loading each other's sequence files\n",
                g_files_compared);
    if (wanted("test_copy_sequence")) EXPECT(g_copies_compared > 0, "reset_copy_sequence untested");
    std::printf("test_cuda_engine: %d engine pairs compared after reset_copy_sequence\n", g_copies_compared);
    if (wanted("test_logit_bias")) EXPECT(g_bias_compared > 0, "reset_set_logit_bias untested");
    std::printf("test_cuda_engine: %d engine pairs compared with a logit bias\n", g_bias_compared);
    if (wanted("test_truncate")) EXPECT(g_truncate_compared > 0, "reset_truncate untested");
    std::printf("test_cuda_engine: %d cut-back sessions compared with new ones\n", g_truncate_compared);
    if (wanted("test_stop_conditions"))
        EXPECT(g_stop_lengths > 0 && g_stop_strings > 0, "stop conditions untested: %d max_tokens ends compared, %d "
               "stop strings matched", g_stop_lengths, g_stop_strings);
    std::printf("test_cuda_engine: %d max_tokens ends compared with an unlimited session, %d stop strings matched\n",
                g_stop_lengths, g_stop_strings);
    if (wanted("test_top_logprobs"))
        EXPECT(g_top_drawn > 0, "no drawn token was among the top_logprobs: the bit-for-bit rule went untested");
    std::printf("test_cuda_engine: %d top_logprobs entries checked, %d of them the drawn token\n", g_top_entries,
                g_top_drawn);
    std::printf("test_cuda_engine: %d explained near-tie tokens; %d W4A4 code flips in %d W4A4 runs\n",
                g_near_ties, g_flips, g_w4a4_runs);
    // Only where W4A4 ran (the quick set under compute-sanitizer runs one model without it).
    if (g_w4a4_runs > 0)
        EXPECT(g_flips * 4 < g_w4a4_runs * 3, "%d W4A4 code flips in %d W4A4 runs: three quarters or more", g_flips,
               g_w4a4_runs);
    // Not in the quick set: its one random model draws an end-of-generation id within 6 tokens (H100,
    // session 24 run 1); in the full set the golden fixtures, the chat fixture and the embedded model
    // decode all 64 steps.
    if (g_window_runs > 0 && !std::getenv("RESET_GPU_TEST_QUICK"))
        EXPECT(g_window_wraps > 0, "no model decoded past its ReSET window of 40 in %d runs", g_window_runs);
    if (!std::getenv("RESET_GPU_TEST_QUICK") && !only)  // the random models draw end-of-generation ids (run 1)
        EXPECT(g_ended_logits > 0, "no sequence ended in any comparison: the ended-logits rule went untested");
    std::printf("test_cuda_engine: %d ended sequences' logits refused on the CUDA backend\n", g_ended_logits);
    if (g_turn_runs > 0)
        EXPECT(g_turn_diverged > 0, "no model's samples diverged before the second turn in %d runs", g_turn_runs);
    std::printf("test_cuda_engine: %d checks, %d failures\n", g_checks, g_failures);
    return g_failures ? 1 : 0;
}
