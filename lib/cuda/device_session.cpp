// device_session.cpp — the CUDA decode engine: one session's KV cache,
// scratch and sampler state on the device, and the decode step as one CUDA
// graph.
//
// One decode step (rows = the session's sequences, all in one launch each):
//   copy in:  positions, lengths, active flags, policies, sampler states, rings
//   sample_tokens: from the current logits → tokens (kernels/sampling.h)
//   embedding_lookup(tokens) → x
//   per layer:  RMSNorm → [W4A4/W4A16 input preparation] → QKV GEMV (+bias)
//               → q/k RMSNorm + RoPE + KV append → split-KV attention
//               → o GEMV + residual → RMSNorm → gate/up GEMV with SiLU·up
//               → down GEMV + residual
//   final RMSNorm → lm_head → logits (the next step samples from them)
//   copy out: tokens, signals, sampler states, rings
// Every length, position and token is read from device memory, so the graph
// is captured once per session and replayed for every token.
//
// Prefill runs the same forward pass over chunks of positions of one sequence
// (rows share a cache slot; row i attends to positions ≤ its own), with the
// lm_head on the last row only.  Two paths, the same arithmetic up to FP32
// summation order:
//   - GEMV: chunks of up to 8 rows through the decode kernels;
//   - GEMM (NVFP4 models, chunks of at least prefill_gemm_tokens rows, up to
//     kDevicePrefillTokens = 256): each NVFP4 weight is dequantized to FP16 a slice of rows at a time
//     (exact: kernels/nvfp4_dequantize.h) and multiplied by the prepared FP16
//     activations with cuBLAS (FP32 accumulation); prefill_epilogue applies
//     the tensor and row scales, the bias and the residual.  The dequantization
//     reads and writes every weight once per chunk, so the GEMM path pays off
//     only from a few dozen rows (the crossover is measured: docs/cuda-engine.md).
#include <cublas_v2.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#ifdef RESET_STEP_TRACE
#include <cstdio>
#endif

#include "cuda/device_model.h"
#include "cuda/staged_copy.h"
#include "engine/device_engine.h"
#include "kernels/attention_decode.h"
#include "kernels/bf16_gemv.h"
#include "kernels/dependent_launch.cuh"
#include "kernels/embedding_lookup.h"
#include "kernels/nvfp4_dequantize.h"
#include "kernels/nvfp4_gemv.h"
#include "kernels/nvfp4_quantize_activations.h"
#include "kernels/prefill_epilogue.h"
#include "kernels/qk_norm_rope_kv_append.h"
#include "kernels/range_copy.h"
#include "kernels/rms_norm.h"
#include "kernels/rms_norm_prepare.h"
#include "kernels/sampling.h"
#include "kernels/silu_mul.h"
#include "kernels/step_trace.h"
#include "kernels/top_logprobs.h"
#include "rules/top_logprobs.h"
#include "util/environment.h"
#include "util/threads.h"

namespace reset {

namespace {

constexpr int kMaxRows = 8;  // rows of one GEMV launch: sequences of a step, positions of a prefill chunk
constexpr int32_t kPrefillStage = kDevicePrefillTokens;  // prompt ids staged to the device per transfer
// A sequence's K/V move through two page-locked halves of 4 MB (cuda/staged_copy.h): a layer of a
// 1k Qwen3-8B sequence (4 MB in BF16) is one half, an 8k one eight, whose host copies overlap the
// device's.  Up to 8 threads copy on the host: the memory system, not more cores, bounds them.
constexpr size_t kKvStagingHalfBytes = size_t(4) << 20;
constexpr int kKvStagingThreads = 8;
constexpr int kGemmRows = kPrefillStage;  // rows of one GEMM prefill chunk (within one stage)
// Default prefill_gemm_tokens: below this many rows a chunk runs through the GEMV.
// Measured on the H100 with the Qwen3-8B shape (docs/cuda-engine.md): a GEMM chunk
// costs ~30 ms however few its rows (the dequantization writes and the GEMM reads
// 16 GB of FP16 weights), the GEMV ~0.39 ms per row: they cross near 77 rows.
constexpr int kDefaultPrefillGemmTokens = 80;
// The FP16 scratch one slice of a dequantized weight lands in before its GEMM.
constexpr size_t kDequantizedBytes = size_t(64) << 20;

void cublas_check(cublasStatus_t status, const char *what) {
    if (status == CUBLAS_STATUS_ALLOC_FAILED) fail(RESET_ERR_OUT_OF_MEMORY, what, ": cuBLAS could not allocate");
    if (status != CUBLAS_STATUS_SUCCESS) fail(RESET_ERR_BACKEND, what, ": cuBLAS status ", int(status));
}

int64_t round_up(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

// How much of the next GEMV's weight the kernels before it ask the L2 for
// (kernels/weight_prefetch.h).  RESET_WEIGHT_PREFETCH_MB overrides it (0 turns
// the prefetch off).
constexpr size_t kDefaultWeightPrefetchMiB = 16;
size_t weight_prefetch_bytes() {
    static const size_t bytes = size_t(environment_integer("RESET_WEIGHT_PREFETCH_MB", kDefaultWeightPrefetchMiB, 0, 4096))
                                << 20;
    return bytes;
}

// When a decode step's attention takes the new token straight from the QKV GEMV's output
// (AttentionDecodeArgs::new_token: the q/k norm, RoPE and K/V append inside attention, one launch less per
// layer; CudaSession::StepGraph).  RESET_NEW_TOKEN_IN_ATTENTION: 1 (the default) where it was
// measured faster (new_token_in_attention_pays), 0 never (qk_norm_rope_kv_append before attention
// in every step), 2 in every step (the GPU tests' way to run the fused form at the 1-4 rows where
// it does not pay).
enum class NewTokenInAttention { kNever = 0, kWherePays = 1, kAlways = 2 };
NewTokenInAttention new_token_in_attention() {
    static const auto mode = static_cast<NewTokenInAttention>(environment_integer("RESET_NEW_TOKEN_IN_ATTENTION", 1, 0, 2));
    return mode;
}

// Whether a step whose longest row holds `length` positions, over `rows` rows, is faster with the
// new token inside attention.  The fused form saves a launch per layer but puts the new token's
// round trip, norm and rotation on attention's path before its first block's product; what pays
// is many rows, not long rows.  Measured on the H100 with the Qwen3-8B shape, fused against
// separate, medians of 2-3 (docs/history/cuda-engine-sessions.md, session 45, runs 2-5):
//   batch 8:   128 -1.9%, 1k -1.7%, 4k -1.7%          batch 6: 128 +0.3% / -0.0%, 1k -1.1% / -0.7%
//   batch 4:   128 -0.0%, 1k +0.1%, 4k +0.0%           batch 2, 3 at 1k: +0.3%
//   batch 1, BF16 cache: 1k +2.0%, 2k +2.7%, 4k +1.2%, 8k +1.0%, 16k +0.3%, 32k +0.75%
//   FP8 cache, 32k: batch 1 -0.6% (session 44: -0.8%), 2 -1.2%, 4 -0.4%; 16k at batch 1 +0.3%
// (session 44's rule, K/V above 10 MB, took the fused form at 1k batch 3-4 and 2.5k-32k batch 1).
// So: from 8 rows; from 6 where attention is long (kernels/attention_decode.h: K/V above 10 MB);
// below 6, with the FP8 cache where the longest row's own K/V exceeds 48 MB (24k positions at
// Qwen3-8B's shape).
constexpr int kNewTokenInAttentionRows = 8;
constexpr int kNewTokenInAttentionLongRows = 6;
constexpr int64_t kNewTokenInAttentionFp8RowKvBytes = int64_t(48) << 20;
bool new_token_in_attention_pays(const KvCacheLayerView &cache, int64_t length, int rows) {
    if (rows >= kNewTokenInAttentionRows) return true;
    if (rows >= kNewTokenInAttentionLongRows) return long_attention(cache, length, rows);
    return cache.type == KvCacheType::kFp8E4M3 &&
           attention_kv_bytes_estimate(cache, length, 1) > kNewTokenInAttentionFp8RowKvBytes;
}

// How the o and down GEMVs get FP16 input where they do not read FP32 directly
// (float_input_max_rows, below): by default their producers, attention and
// gate_up, also write their outputs rounded to FP16 (AttentionDecodeArgs::out16,
// Nvfp4GemvArgs::y16), which is the prepared input wherever a row's max |x| <=
// 32768, and the GEMV reads that copy, multiplying again from the FP32 rows
// where a row does not fit (Nvfp4GemvArgs::x_fallback): no preparation launch.
// Against a preparation launch before each (H200, Qwen3-8B shape, medians of
// 3 / 2; docs/history/cuda-engine-sessions.md, session 47 run 9): 1k batch 1
// -3.0%, batch 8 level, 32k FP8 batch 1 -2.0%; at batch 2 and 4 -4.9% and
// -5.3% once the check was made cheap (session 48: the producers' row maxima
// raised only past 32768, compared after the products).  RESET_PRODUCER_FP16=0
// puts the preparation launches back, for A/B runs.
bool producer_fp16_copies() {
    static const bool on = environment_integer("RESET_PRODUCER_FP16", 1, 0, 1) == 1;
    return on;
}

// From how many rows the BF16 lm_head runs on the BF16 GEMV's tensor cores
// (Bf16GemvArgs::tensor_cores; the other BF16 linears from 2).  Below 4 the
// FP32 path streams its 1.2 GB as fast: alone on the H200, 302 / 315 / 408 µs
// at 2 / 4 / 8 tokens against 311 / 313 / 316 on the tensor cores.  In the
// NVFP4 step at 1k against the FP32 lm_head: 8 rows -3.2%, 4 rows level, 2
// and 3 rows +0.2% if from 2 (docs/history/cuda-engine-sessions.md, session 49
// runs 1-2; sessions 46-47 measured the step slower with the tensor cores,
// before their CTAs read whole lines and one CTA took one group).
// RESET_LM_HEAD_TENSOR_CORES_FROM=N (2 to 9, 9 never) moves it, for A/B runs.
constexpr int kDefaultLmHeadTensorCoresFrom = 4;
int lm_head_tensor_cores_from() {
    static const int rows = int(environment_integer("RESET_LM_HEAD_TENSOR_CORES_FROM", kDefaultLmHeadTensorCoresFrom,
                                                    2, kMaxRows + 1));
    return rows;
}

// From how many rows a layer's gate_up and down GEMVs run as one launch, the
// down product waiting for gate_up's inside it (nvfp4_gemv_pair), where down
// reads gate_up's FP32 output directly (float_input_max_rows, below).
// From 2 rows: there the pair was faster than two launches, at 1 row slower
// (docs/history/cuda-engine-sessions.md, session 14).  Since session 47 down
// reads FP16 input, which was faster still, so the pair runs only where
// RESET_DOWN_FLOAT_INPUT_ROWS raises that bound.  RESET_GEMV_PAIR=N
// moves the pair's bound to N rows (1 to 8; 0 never), for the A/B runs.
constexpr int kDefaultPairMinRows = 2;
int pair_min_rows() {
    static const int rows = [] {
        const int n = int(environment_integer("RESET_GEMV_PAIR", kDefaultPairMinRows, 0, kMaxRows));
        return n == 0 ? kMaxRows + 1 : n;
    }();
    return rows;
}

// Up to how many rows the o and down GEMVs read their producers' FP32 output
// directly (Nvfp4GemvArgs::x_amax: attention, or gate_up's SiLU·up epilogue,
// leaves the row maxima) rather than FP16 (the producers' copies,
// producer_fp16_copies above, or a preparation launch).  None by default.  The
// direct read saves a launch per GEMV (session 8 took it, measured only inside
// a larger change), but each lane reads and converts its own row's FP32
// values, 4× the weight's bytes per quad at 8 rows, and every warp of a K
// slice does it again.  Preparation launches against the direct reads (with
// the pair kernel from 2 rows) on the H200, Qwen3-8B shape, medians of 2-3
// (docs/history/cuda-engine-sessions.md, session 47, runs 2-3): batch 1 -0.8%
// (1k) and -0.9% (32k FP8); at 1k batch 2 -5.5 / -5.4%, 4 -6.3 / -6.6%, 6
// -9.2%, 8 -12.3 / -12.2%; batch 8 at 4k -10.5%, at 32k FP8 -4.8%.
// RESET_O_FLOAT_INPUT_ROWS and RESET_DOWN_FLOAT_INPUT_ROWS set the bounds (0
// to 8) for the A/B runs; every way gives the same bits (gpu_test_nvfp4_gemv).
// Down not reading FP32 directly leaves the pair kernel out (enqueue_mlp_pair:
// its down product reads gate_up's FP32 output inside the launch).
struct FloatInputMaxRows {
    int o, down;
};
const FloatInputMaxRows &float_input_max_rows() {
    constexpr int kDefault = 0;
    static const FloatInputMaxRows rows{
        int(environment_integer("RESET_O_FLOAT_INPUT_ROWS", kDefault, 0, kMaxRows)),
        int(environment_integer("RESET_DOWN_FLOAT_INPUT_ROWS", kDefault, 0, kMaxRows))};
    return rows;
}

#ifdef RESET_STEP_TRACE
// The debug timeline of chosen decode steps (kernels/step_trace.h): where
// RESET_STEP_TRACE_FILE names a file, the process's step numbers in
// RESET_STEP_TRACE_STEPS (default 40, counted from 0) record every
// instrumented warp and append the records to the file as text, after a
// "# step trace" line, one per line: kind tag tag2 block warp sm start waited end.
class StepTraceCapture {
public:
    explicit StepTraceCapture(long long step) {
        const char *file = std::getenv("RESET_STEP_TRACE_FILE");
        if (!file || !chosen(step)) return;
        static trace::Buffer buffer = [] {
            trace::Buffer b;
            b.per_sm = 1u << 13;  // a Qwen3-8B step puts ~3,000 warps on an SM
            cuda_check(cudaMalloc(&b.records, size_t(trace::kMaxSms) * b.per_sm * sizeof(trace::Record)),
                       "step trace");
            cuda_check(cudaMalloc(&b.counts, size_t(trace::kMaxSms) * trace::kCounterStride * sizeof(unsigned)),
                       "step trace");
            return b;
        }();
        cuda_check(cudaMemset(buffer.counts, 0, size_t(trace::kMaxSms) * trace::kCounterStride * sizeof(unsigned)),
                   "step trace");
        cuda_check(cudaDeviceSynchronize(), "step trace");
        trace::set_buffer(buffer);
        buffer_ = buffer;
        path_ = file;
        step_ = step;
    }
    // After the step's synchronization.
    void finish() {
        if (path_.empty()) return;
        trace::set_buffer({});
        std::vector<unsigned> counts(size_t(trace::kMaxSms) * trace::kCounterStride);
        cuda_check(cudaMemcpy(counts.data(), buffer_.counts, counts.size() * sizeof(unsigned), cudaMemcpyDeviceToHost),
                   "step trace");
        FILE *f = std::fopen(path_.c_str(), "a");
        if (!f) return;
        std::fprintf(f, "# step trace: step %lld\n", step_);
        std::vector<trace::Record> records;
        for (unsigned sm = 0; sm < trace::kMaxSms; ++sm) {
            // Only the SM's records taken (~3,000 of its 8,192 slots).
            records.resize(std::min(counts[size_t(sm) * trace::kCounterStride], buffer_.per_sm));
            cuda_check(cudaMemcpy(records.data(), buffer_.records + size_t(sm) * buffer_.per_sm,
                                  records.size() * sizeof(trace::Record), cudaMemcpyDeviceToHost),
                       "step trace");
            for (const trace::Record &r : records)
                std::fprintf(f, "%u %u %u %u %u %u %llu %llu %llu\n", r.kind, r.tag, r.tag2, r.block, r.warp, r.sm,
                             r.start, r.waited, r.end);
        }
        std::fclose(f);
    }

private:
    // RESET_STEP_TRACE_STEPS: a comma-separated list of step numbers (default 40), read once.
    static bool chosen(long long step) {
        static const std::vector<long long> steps = [] {
            std::vector<long long> list;
            const char *text = std::getenv("RESET_STEP_TRACE_STEPS");
            for (const char *at = text ? text : "40"; *at;) {
                char *end = nullptr;
                const long long value = std::strtoll(at, &end, 10);
                if (end == at) {  // not a number: skip the character
                    ++at;
                    continue;
                }
                list.push_back(value);
                at = *end == ',' ? end + 1 : end;
            }
            return list;
        }();
        return std::find(steps.begin(), steps.end(), step) != steps.end();
    }
    trace::Buffer buffer_;
    std::string path_;
    long long step_ = 0;
};
#endif

// What the host writes before a step; copied to the device in one transfer.
struct StepInput {
    int32_t positions[kMaxRows];
    int32_t lengths[kMaxRows];
    int32_t active[kMaxRows];
    SamplingPolicyDevice policies[kMaxRows];
    SamplingSequenceState states[kMaxRows];
};

// What the host reads after a step; written to host_out_ by the step's last launch.
struct StepOutput {
    int32_t tokens[kMaxRows];
    SamplingSignalsDevice signals[kMaxRows];
    SamplingSequenceState states[kMaxRows];
    // [sequence][top_logprobs_], packed: copied back only by sessions that ask for them.
    reset_token_logprob top[kMaxRows * rule::kMaxTopLogprobs];
};

struct PrefillInput {
    int32_t ids[kPrefillStage];
    int32_t positions[kPrefillStage];
    int32_t lengths[kPrefillStage];
    int32_t slots[kPrefillStage];
};

// The FP16 copies of producer_fp16_copies for one GEMV: its input's (with x_amax; x is then
// the FP32 fallback, Nvfp4GemvArgs::x_fallback) and its output's (Nvfp4GemvArgs::y16).
struct Fp16Copy {
    const void *input = nullptr;
    int64_t ld_input = 0;
    void *output = nullptr;
    int64_t ld_output = 0;
};

// How a GEMV whose producer can leave its row maxima (`eligible`: o after attention, down after
// gate_up's SiLU·up epilogue, on the GEMV path) takes that producer's output at `rows` rows: its
// FP32 output read directly up to `direct_max_rows` (float_input_max_rows), else the FP16 copy the
// producer writes beside it (producer_fp16_copies), else neither (a preparation launch first).
struct InputRoute {
    bool direct = false, copy = false;
    bool needs_row_maxima() const { return direct || copy; }
};
InputRoute input_route(bool eligible, int rows, int direct_max_rows) {
    InputRoute route;
    route.direct = eligible && rows <= direct_max_rows;
    route.copy = eligible && !route.direct && producer_fp16_copies();
    return route;
}

class CudaSession final : public DeviceSession {
public:
    CudaSession(const LoadedModel &model, const DeviceSessionOptions &options, const DelimiterSets &delimiters);
    ~CudaSession() override;

    void prefill(int32_t sequence, const int32_t *ids, int32_t n, int32_t start, bool logits) override;
    void copy_sequence(int32_t from, int32_t to, int32_t length) override;
    void copy_logits(int32_t sequence, float *out) override;
    void read_kv(int32_t sequence, int32_t layer, int32_t length, void *keys, void *values) override {
        use_device(dm_.device);
        std::vector<CopySegment> segments;
        add_kv_segments(sequence, layer, length, keys, values, segments);
        kv_copier_.download(segments, stream_, "KV download");
    }
    void write_kv(int32_t sequence, int32_t length, const std::vector<const uint8_t *> &keys,
                  const std::vector<const uint8_t *> &values) override {
        use_device(dm_.device);
        std::vector<CopySegment> segments;
        for (int32_t layer = 0; layer < config_.n_layers; ++layer)  // the upload only reads the host bytes
            add_kv_segments(sequence, layer, length, const_cast<uint8_t *>(keys[size_t(layer)]),
                            const_cast<uint8_t *>(values[size_t(layer)]), segments);
        kv_copier_.upload(segments, stream_, "KV upload");
    }
    void write_logits(int32_t sequence, const float *logits) override;
    void step(const std::vector<SequenceSampler *> &samplers, const std::vector<uint8_t> &active,
              const std::vector<int32_t> &positions, std::vector<DeviceStepResult> &results) override;
    void set_logit_bias(const LogitBias &bias) override {
        use_device(dm_.device);
        if (bias.empty()) return;  // the rows' policies stop reading the array
        const std::vector<float> dense = bias.dense(config_.vocab_size);
        cuda_check(cudaMemcpyAsync(logit_bias_.as<float>(), dense.data(), dense.size() * sizeof(float),
                                   cudaMemcpyHostToDevice, stream_),
                   "upload of the logit bias");
        cuda_check(cudaStreamSynchronize(stream_), "upload of the logit bias");
    }

    void reserve_policy_window(int32_t window) override {
        use_device(dm_.device);
        ensure_ring_capacity(window);
        // Captured again now rather than in the next step (if this fails, the
        // rings stay grown, the policy unchanged, and the next step tries again).
        ensure_graph();
    }
    uint64_t device_bytes() const override { return bytes_; }

private:
    DeviceBuffer allocate(size_t bytes, const std::string &what) {
        DeviceBuffer b(bytes, what);
        bytes_ += bytes;
        return b;
    }
    KvCacheLayerView cache_view(int32_t layer) const;
    // The contiguous runs between one layer's K and V of a sequence in the cache and host buffers in
    // a sequence file's layout (DeviceSession::read_kv / write_kv): one per KV head and part.
    void add_kv_segments(int32_t sequence, int32_t layer, int32_t length, void *keys, void *values,
                         std::vector<CopySegment> &segments) const;
    void ensure_ring_capacity(int32_t window);
    // Capture and instantiate the step graph, if the session uses one and has none: at creation,
    // after the rings grew, so that a decode step does not (reset.h: nothing allocated mid-generation).
    void ensure_graph();
    // Enqueue the forward pass of `rows` tokens (ids at `tokens`, positions and
    // lengths in device memory, slots null = row b uses slot b), logits of
    // rows [lm_first, lm_first + lm_rows) into `logits` rows.
    // `gemm`: the NVFP4 linears of the layers run through the GEMM path (rows up to gemm_rows_).
    // Without it the caller has zeroed amax_ in this stream before (the producers below raise it).
    // before_lm_head: an event the final norm and lm_head wait for (the top_logprobs branch, which
    // reads the logits they replace), or null.
    // fused_new_token: the rows are one new token of each sequence at position
    // lengths[b] - 1, in slot b (the decode step), and attention appends the new K/V rows itself
    // (AttentionDecodeArgs::new_token) instead of qk_norm_rope_kv_append before it.
    void enqueue_forward(int rows, const int32_t *tokens, const int32_t *positions, const int32_t *lengths,
                         const int32_t *slots, int lm_first, int lm_rows, float *logits, bool gemm = false,
                         cudaEvent_t before_lm_head = nullptr, bool fused_new_token = false);
    // RMSNorm of x_ (rows from `first`) with `weight`, then `linear` on it: one fused norm +
    // NVFP4 preparation launch where the linear is a single NVFP4 part over the hidden size
    // (kernels/rms_norm_prepare.h), else rms_norm into normed_ and enqueue_linear.
    // y_amax: the GEMV also leaves the rows' max |y| there where past 32768 (Nvfp4GemvArgs::y_amax),
    // for a next GEMV that reads y or its FP16 copy.  next: what the GEMV's warps ask the L2 for as
    // they finish (Nvfp4GemvArgs::prefetch, prefetch_of the linear after it).
    // place_next_early: where the norm runs as its own launch before the GEMV (not the GEMM
    // path), that launch lets the GEMV's CTAs be placed before its wait (RmsNormPrepareArgs).
    // copy.output: where set, the GEMV also writes y rounded to FP16 there (Fp16Copy, Nvfp4GemvArgs::y16).
    void enqueue_norm_linear(const float *weight, int first, int rows, const DeviceLinear &linear, float *y,
                             int64_t ldy, bool gemm = false, float *y_amax = nullptr, const WeightPrefetch &next = {},
                             bool place_next_early = false, const Fp16Copy &copy = {});
    // The NVFP4 GEMV of one part on the prepared activations in x16_ / row_scale_, or, where
    // x_amax is set, straight from FP32 activations x (Nvfp4GemvArgs::x_amax: no prepare launch).
    // copy: the FP16 copies of producer_fp16_copies (Fp16Copy).
    void enqueue_gemv(const DeviceLinearPart &part, int rows, float *y, int64_t ldy, bool add_residual,
                      float *y_amax = nullptr, const float *x = nullptr, int64_t ldx = 0,
                      const float *x_amax = nullptr, const WeightPrefetch &next = {}, const Fp16Copy &copy = {}) {
        nvfp4_gemv(part.gemv, gemv_args(part, rows, y, ldy, add_residual, y_amax, x, ldx, x_amax, next, copy),
                   stream_);
    }
    // The arguments of that GEMV.
    Nvfp4GemvArgs gemv_args(const DeviceLinearPart &part, int rows, float *y, int64_t ldy, bool add_residual,
                            float *y_amax, const float *x, int64_t ldx, const float *x_amax,
                            const WeightPrefetch &next, const Fp16Copy &copy = {});
    // RMSNorm of x_ (rows from `first`) with `weight`, prepared as part's FP16 input in
    // x16_ / row_scale_ (kernels/rms_norm_prepare.h; fuses_norm).
    void enqueue_norm_prepare(const float *weight, int first, int rows, const DeviceLinearPart &part,
                              bool place_next_early = false);
    // Where `layer`'s MLP can run as the norm, then gate_up and down in one nvfp4_gemv_pair launch
    // (SiLU·up left in act_ with its row maxima act_amax, down added to x_), enqueue it and
    // return true; else enqueue nothing.
    bool enqueue_mlp_pair(const DeviceLayer &layer, int rows, float *act_amax);
    // The same product through the GEMM path: every checkpoint row of the part (a fused
    // gate_up writes [gate | up], 2 * intermediate columns), then the epilogue.
    void enqueue_gemm(const DeviceLinearPart &part, int rows, float *y, int64_t ldy, bool add_residual);
    // enqueue_gemm on the GEMM path, else enqueue_gemv.
    void enqueue_product(const DeviceLinearPart &part, int rows, float *y, int64_t ldy, bool add_residual,
                         bool gemm, float *y_amax = nullptr, const WeightPrefetch &next = {},
                         const Fp16Copy &copy = {}) {
        if (gemm) enqueue_gemm(part, rows, y, ldy, add_residual);
        else enqueue_gemv(part, rows, y, ldy, add_residual, y_amax, nullptr, 0, nullptr, next, copy);
    }
    // Whether RMSNorm and the preparation of `linear`'s input run as one launch
    // (kernels/rms_norm_prepare.h): W4A16, a single NVFP4 part over the hidden size.  Not in
    // W4A4: there the fused kernel quantizes a row in one CTA, slower at M = 1 than the
    // standalone quantizer spread over many CTAs (measured on the H100: a Qwen3-8B step
    // 3.72 ms with two launches, 4.46 ms fused).
    bool fuses_norm(const DeviceLinear &linear) const {
        return !dm_.w4a4 && linear.parts.size() == 1 && linear.parts[0].nvfp4 &&
               linear.parts[0].padded_in == config_.hidden_size && config_.hidden_size % 16 == 0;
    }
    // Whether the decode GEMV of `linear` can read its FP32 activations directly, given their
    // row maxima (W4A16, one NVFP4 part, no K padding): the prepare launch it saves is
    // bit for bit the conversion the GEMV then does as it loads (kernels/nvfp4_gemv.h).
    bool reads_float_input(const DeviceLinear &linear) const {
        return !dm_.w4a4 && linear.parts.size() == 1 && linear.parts[0].nvfp4 &&
               linear.parts[0].padded_in == linear.parts[0].in_features;
    }
    // Whether layer's down GEMV can take gate_up's output without a preparation launch (read
    // directly, or the copy gate_up writes beside it): gate_up's epilogue leaves its row maxima.
    bool down_reads_gate_up_output(const DeviceLayer &layer) const {
        return layer.gate_up.fused_silu && fuses_norm(layer.gate_up) && reads_float_input(layer.down);
    }
    // The row maxima of layer l's attention output (0) or gate_up output (1), kMaxRows each.
    float *row_amax(int32_t layer, int which) { return amax_.as<float>() + (int64_t(layer) * 2 + which) * kMaxRows; }
    // The activation-preparation fields Nvfp4PrepareArgs and RmsNormPrepareArgs share:
    // the mode, the part's input scale, and the x16_ / row_scale_ outputs the GEMV reads.
    template <typename Args>
    void set_preparation(Args &a, const DeviceLinearPart &part) const {
        a.mode = dm_.w4a4 ? Nvfp4ActivationMode::kW4A4 : Nvfp4ActivationMode::kW4A16;
        a.input_scale = part.input_scale;
        a.x16 = x16_.as();
        a.ld_x16 = ld_x16_;
        a.row_scale = row_scale_.as<float>();
    }
    // The fields RmsNormArgs and RmsNormPrepareArgs share: the norm of x_'s rows from `first`.
    template <typename Args>
    void set_norm_input(Args &a, const float *weight, int first, int rows) const {
        a.rows = rows;
        a.cols = config_.hidden_size;
        a.x = x_.as<float>() + int64_t(first) * ld_act_;
        a.ldx = ld_act_;
        a.weight = weight;
        a.eps = static_cast<float>(config_.rms_norm_eps);
    }
    // x_amax (GEMV path, reads_float_input): the rows' max |x|; the GEMV then reads x directly.
    // copy.input (with x_amax): the producer's FP16 copy of x (Fp16Copy).
    void enqueue_linear(const DeviceLinear &linear, int rows, const float *x, int64_t ldx, float *y, int64_t ldy,
                        bool add_residual, bool gemm = false, const float *x_amax = nullptr,
                        const WeightPrefetch &next = {}, const Fp16Copy &copy = {});
    // The start of `linear`'s weight (up to weight_prefetch_bytes()) as a prefetch for the kernel
    // before it (kernels/weight_prefetch.h); nothing for BF16 linears or with the prefetch off.
    WeightPrefetch prefetch_of(const DeviceLinear &linear) const {
        if (linear.parts.empty() || !linear.parts[0].nvfp4) return {};
        return nvfp4_gemv_weight_prefetch(linear.parts[0].gemv, weight_prefetch_bytes());
    }
    // The decode step; fused_new_token: attention appends the new token (StepGraph::kFused).
    void enqueue_step(bool fused_new_token);
    // The step graph (StepGraph, below) of a step whose longest row holds `longest` positions, and
    // of a step with these positions.
    int graph_for(int64_t longest) const;
    int step_graph(const std::vector<int32_t> &positions) const;
    void sync(const char *what) { cuda_check(cudaStreamSynchronize(stream_), what); }
    // Destroy the graphs, the cuBLAS handle and the stream (after the stream's work): the
    // destructor, and the constructor when it throws.
    void release_handles() noexcept;
    void drop_graphs() noexcept;  // destroy the step graphs (ensure_graph makes them again)

    const DeviceModel &dm_;
    const ModelConfig &config_;
    int32_t sequences_, capacity_;
    KvCacheType kv_type_;
    bool use_graph_;
    bool dependent_launch_ = false;  // kernels/dependent_launch.cuh: options and an sm_90+ device
    uint64_t bytes_ = 0;
    cudaStream_t stream_ = nullptr;
    // The decode step's two graphs, the same step with the new token appended by its own launch
    // before attention (kSeparate) or inside attention (kFused, AttentionDecodeArgs::new_token), which give the
    // same bits.  A step takes the fused one where new_token_in_attention_pays (above: many rows,
    // or long rows with the FP8 cache).  The ones a step can pick are captured at creation (nothing
    // is allocated mid-generation): the fused one where the session's capacity at its batch can
    // make it pay, the separate one where its shortest step does not (ensure_graph).
    enum StepGraph { kSeparate = 0, kFused = 1 };
    cudaGraphExec_t graphs_[2] = {nullptr, nullptr};

    int64_t ld_act_ = 0, ld_x16_ = 0, ld_qkv_ = 0, ld_gate_up_ = 0;
    // GEMM prefill: chunk rows (0 = the path is off), and the smallest chunk that takes it.
    int gemm_rows_ = 0, gemm_min_rows_ = 0;
    cublasHandle_t cublas_ = nullptr;
    DeviceBuffer dequantized_, gemm_out_;
    DeviceBuffer keys_, values_;  // every layer: [layer][slot][kv_head][position][head_dim]
    size_t layer_elements_ = 0;
    DeviceBuffer x_, normed_, qkv_, q_, attention_, gate_up_, act_, x16_, row_scale_;
    DeviceBuffer gemv_workspace_, attention_workspace_;
    DeviceBuffer gemv_pair_state_;  // nvfp4_gemv_pair's claim counters, where the pair can run (pair_min_rows)
    // [layer][attention output, gate_up output][kMaxRows] row maxima |x| past 32768 (reads_float_input),
    // zeroed at the start of every GEMV-path forward pass; their producers atomicMax into them.
    DeviceBuffer amax_;
    // gate_up's output rounded to FP16 (Nvfp4GemvArgs::y16), down's input where producer_fp16_copies.
    DeviceBuffer act16_;
    int64_t ld_act16_ = 0;
    DeviceBuffer logits_;
    // Sampler.
    DeviceBuffer delimiter_flags_, sampling_workspace_;
    int32_t top_logprobs_ = 0;         // entries per sequence and step; 0: the step has no top_logprobs kernel
    DeviceBuffer top_logprobs_workspace_;
    // The top_logprobs kernel runs on a branch of the step (forked after the sampler, joined before the
    // final norm), beside the layers rather than before them: only the logits it reads constrain it.
    cudaStream_t top_stream_ = nullptr;
    cudaEvent_t top_fork_ = nullptr, top_join_ = nullptr;
    // [seq][vocab] tokens generated in each sequence's current generation (the penalties' counts): kept by the
    // sampler kernel, which adds what it accepts; uploaded from the host's SequenceSampler when the host changed
    // them another way (a new generation, a rollback), told by its generation_version().
    DeviceBuffer counts_;
    // [vocab] the logit bias (reset_set_logit_bias), read by rows whose policy says so: the host's sampler is
    // the authority on whether one is in force, this array holds its values since the last set.
    DeviceBuffer logit_bias_;
    std::vector<uint64_t> counts_version_;
    std::vector<int32_t> counts_upload_;
    int32_t ring_capacity_ = 0;
    DeviceBuffer step_in_, step_out_, rings_;       // device copies of StepInput/StepOutput, [seq][ring]
    PinnedBuffer host_in_, host_out_, host_rings_;  // what the graph's range copies read and write (mapped)
    DeviceBuffer prefill_in_;
    PinnedBuffer host_prefill_;
    // A sequence's K/V to and from host memory (reset_save_sequence, reset_load_sequence):
    // page-locked halves reserved on first use.
    StagedCopier kv_copier_;
};

CudaSession::CudaSession(const LoadedModel &model, const DeviceSessionOptions &options,
                         const DelimiterSets &delimiters)
    : dm_(*model.device), config_(model.config), sequences_(options.sequences),
      capacity_(options.capacity),
      kv_type_(options.kv_cache == RESET_KV_CACHE_FP8 ? KvCacheType::kFp8E4M3 : KvCacheType::kBFloat16),
      use_graph_(options.cuda_graph), top_logprobs_(options.top_logprobs),
      kv_copier_(kKvStagingHalfBytes, std::min(openmp_threads(model.threads), kKvStagingThreads)) {
    if (sequences_ < 1 || sequences_ > kMaxRows) fail(RESET_ERR_INVALID_ARGUMENT, "sequences ", sequences_);
    if (top_logprobs_ < 0 || top_logprobs_ > std::min(rule::kMaxTopLogprobs, config_.vocab_size))
        fail(RESET_ERR_INVALID_ARGUMENT, "top_logprobs ", top_logprobs_);
    use_device(dm_.device);
    cuda_check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    // From here on a throw (out of memory, most often) must not leak the stream or cuBLAS handle.
    try {
        int major = 0;
        cuda_check(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dm_.device),
                   "cudaDeviceGetAttribute");
        dependent_launch_ = options.programmatic_launch && major >= 9;
        const ModelConfig &c = config_;
        const int64_t q_width = int64_t(c.n_heads) * c.head_dim, kv_width = int64_t(c.n_kv_heads) * c.head_dim;
        ld_act_ = round_up(
            std::max({int64_t(c.hidden_size), int64_t(c.intermediate_size), q_width, dm_.max_padded_in}), 64);
        ld_x16_ = round_up(std::max<int64_t>(dm_.max_padded_in, 64), 64);
        ld_qkv_ = round_up(q_width + 2 * kv_width, 64);
        ld_gate_up_ = round_up(2 * int64_t(c.intermediate_size), 64);

        // The KV cache first: it is the big allocation, and the one whose size the user picks.
        layer_elements_ = size_t(sequences_) * size_t(c.n_kv_heads) * size_t(capacity_) * size_t(c.head_dim);
        const size_t cache_bytes = layer_elements_ * size_t(c.n_layers) * size_t(kv_cache_element_bytes(kv_type_));
        keys_ = allocate(cache_bytes, "the KV cache's keys (" + std::to_string(sequences_) + " sequences x " +
                                           std::to_string(capacity_) + " tokens; lower max_context or sequences)");
        values_ = allocate(cache_bytes, "the KV cache's values");

        // The GEMM prefill path: NVFP4 layers only (a BF16 linear has no FP16 weight to
        // multiply, and BF16 mode keeps FP32 activations, which cuBLAS's FP16 GEMM would round).
        bool all_nvfp4 = true;
        size_t largest_fp16 = 0;  // the largest dequantized weight (the GEMM path holds a slice of it at a time)
        for (const DeviceLayer &layer : dm_.layers)
            for (const DeviceLinear *linear : {&layer.qkv, &layer.o, &layer.gate_up, &layer.down})
                for (const DeviceLinearPart &part : linear->parts) {
                    all_nvfp4 = all_nvfp4 && part.nvfp4;
                    largest_fp16 =
                        std::max(largest_fp16, size_t(part.gemv.layout.rows) * size_t(part.gemv.layout.cols) * 2);
                }
        gemm_min_rows_ = options.prefill_gemm_tokens == 0 ? kDefaultPrefillGemmTokens : options.prefill_gemm_tokens;
        if (all_nvfp4 && gemm_min_rows_ > 0) gemm_rows_ = std::max(kMaxRows, std::min(kGemmRows, capacity_));

        const size_t rows = size_t(std::max(kMaxRows, gemm_rows_));
        x_ = allocate(rows * size_t(ld_act_) * 4, "activations");
        normed_ = allocate(rows * size_t(ld_act_) * 4, "activations");
        qkv_ = allocate(rows * size_t(ld_qkv_) * 4, "activations");
        q_ = allocate(rows * size_t(q_width) * 4, "activations");
        attention_ = allocate(rows * size_t(ld_act_) * 4, "activations");
        gate_up_ = allocate(rows * size_t(ld_gate_up_) * 4, "activations");
        act_ = allocate(rows * size_t(ld_act_) * 4, "activations");
        x16_ = allocate(rows * size_t(ld_x16_) * 2, "activations");
        row_scale_ = allocate(rows * 4, "activations");
        amax_ = allocate(size_t(c.n_layers) * 2 * kMaxRows * 4, "activation row maxima");
        // act16_ where some layer's down GEMV takes gate_up's FP16 copy at the most rows (input_route:
        // a copy taken at fewer rows is taken there too).
        if (std::any_of(dm_.layers.begin(), dm_.layers.end(), [&](const DeviceLayer &l) {
                return input_route(down_reads_gate_up_output(l), kMaxRows, float_input_max_rows().down).copy;
            })) {
            ld_act16_ = round_up(c.intermediate_size, 8);
            act16_ = allocate(size_t(kMaxRows) * size_t(ld_act16_) * 2, "activations");
        }
        gemv_workspace_ = allocate(std::max<size_t>(dm_.gemv_workspace_bytes, 16), "GEMV workspace");
        if (pair_min_rows() <= float_input_max_rows().down)
            gemv_pair_state_ = allocate(kNvfp4GemvPairStateBytes, "GEMV pair state");
        // Sized for the larger of a decode step (sequences_ rows) and a GEMV prefill pass (kMaxRows
        // rows), each with the splits that fill the GPU for it (batch x splits is about constant).
        size_t attention_bytes = 16;
        for (int rows : {sequences_, kMaxRows}) {
            const int splits = attention_decode_splits(rows, c.n_kv_heads, capacity_);
            attention_bytes =
                std::max(attention_bytes, attention_decode_workspace_bytes(rows, c.n_heads, c.head_dim, splits));
        }
        attention_workspace_ = allocate(attention_bytes, "attention workspace");
        logits_ = allocate(size_t(sequences_) * size_t(c.vocab_size) * 4, "logits");
        if (gemm_rows_ > 0) {
            dequantized_ =
                allocate(std::min(largest_fp16, kDequantizedBytes), "the prefill GEMM's dequantized weight slice");
            gemm_out_ = allocate(rows * size_t(ld_act_) * 4, "the prefill GEMM's output");
            cublas_check(cublasCreate(&cublas_), "cublasCreate");
            cublas_check(cublasSetStream(cublas_, stream_), "cublasSetStream");
        }

        std::vector<uint8_t> flags(size_t(c.vocab_size), 0);
        for (int32_t id : delimiters.newline)
            if (id >= 0 && id < c.vocab_size) flags[size_t(id)] |= kDelimiterNewline;
        for (int32_t id : delimiters.double_newline)
            if (id >= 0 && id < c.vocab_size) flags[size_t(id)] |= kDelimiterDoubleNewline;
        delimiter_flags_ = allocate(flags.size(), "delimiter flags");
        cuda_check(cudaMemcpy(delimiter_flags_.as(), flags.data(), flags.size(), cudaMemcpyHostToDevice), "upload");
        sampling_workspace_ = allocate(std::max<size_t>(sampling_workspace_bytes(sequences_, c.vocab_size), 16),
                                       "sampler workspace");
        counts_ = allocate(size_t(sequences_) * size_t(c.vocab_size) * sizeof(int32_t), "the penalties' counts");
        logit_bias_ = allocate(size_t(c.vocab_size) * sizeof(float), "the logit bias");
        if (top_logprobs_ > 0) {  // the workspace zeroed, as the kernel's arrival counters must start
            top_logprobs_workspace_ =
                allocate(top_logprobs_workspace_bytes(sequences_, c.vocab_size), "top_logprobs workspace");
            cuda_check(cudaStreamCreateWithFlags(&top_stream_, cudaStreamNonBlocking), "cudaStreamCreate");
            cuda_check(cudaEventCreateWithFlags(&top_fork_, cudaEventDisableTiming), "cudaEventCreate");
            cuda_check(cudaEventCreateWithFlags(&top_join_, cudaEventDisableTiming), "cudaEventCreate");
        }
        counts_version_.assign(size_t(sequences_), 0);  // no sampler has version 0: the first step uploads
        step_in_ = allocate(sizeof(StepInput), "step input");
        step_out_ = allocate(sizeof(StepOutput), "step output");
        host_in_ = PinnedBuffer(sizeof(StepInput), "step input");
        host_out_ = PinnedBuffer(sizeof(StepOutput), "step output");
        ensure_ring_capacity(32);
        prefill_in_ = allocate(sizeof(PrefillInput), "prefill input");
        host_prefill_ = PinnedBuffer(sizeof(PrefillInput), "prefill input");
        // The zeroing memsets and uploads above ran on the legacy stream, which stream_ (non-blocking)
        // does not wait for.  Without this wait a late memset of the KV cache could wipe what the
        // first prefill wrote (seen with 8 processes sharing the GPU: a process's first prompt
        // decoded to garbage or NaN).
        cuda_check(cudaDeviceSynchronize(), "session allocation");
        ensure_graph();  // the decode step's graph, so that a failure to make it is an error here
    } catch (...) {
        release_handles();
        throw;
    }
}

CudaSession::~CudaSession() {
    cudaSetDevice(dm_.device);
    release_handles();
}

void CudaSession::drop_graphs() noexcept {
    for (cudaGraphExec_t &graph : graphs_) {
        if (graph) cudaGraphExecDestroy(graph);
        graph = nullptr;
    }
}

void CudaSession::release_handles() noexcept {
    drop_graphs();
    if (stream_) cudaStreamSynchronize(stream_);
    if (cublas_) cublasDestroy(cublas_);
    cublas_ = nullptr;
    if (stream_) cudaStreamDestroy(stream_);
    stream_ = nullptr;
    if (top_stream_) cudaStreamDestroy(top_stream_);
    top_stream_ = nullptr;
    if (top_fork_) cudaEventDestroy(top_fork_);
    if (top_join_) cudaEventDestroy(top_join_);
    top_fork_ = top_join_ = nullptr;
}

void CudaSession::ensure_graph() {
    if (!use_graph_) return;
    // Only the graphs a step can pick: new_token_in_attention_pays grows with length, so the
    // shortest and the longest step name them all (a batch-8 session only ever replays the fused
    // one, a batch-1 BF16 one only the separate one).
    for (int kind : {graph_for(1), graph_for(capacity_)}) {
        if (graphs_[kind]) continue;
        cudaGraph_t graph = nullptr;
        cuda_check(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeRelaxed), "graph capture");
        try {
            enqueue_step(kind == kFused);
        } catch (...) {
            cudaStreamEndCapture(stream_, &graph);
            if (graph) cudaGraphDestroy(graph);
            cudaGetLastError();
            throw;
        }
        cuda_check(cudaStreamEndCapture(stream_, &graph), "graph capture");
        const cudaError_t status = cudaGraphInstantiate(&graphs_[kind], graph, 0);
        cudaGraphDestroy(graph);
        if (status != cudaSuccess) graphs_[kind] = nullptr;
        cuda_check(status, "graph instantiation");
    }
}

int CudaSession::graph_for(int64_t longest) const {
    switch (new_token_in_attention()) {
        case NewTokenInAttention::kNever: return kSeparate;
        case NewTokenInAttention::kAlways: return kFused;
        case NewTokenInAttention::kWherePays: break;
    }
    return new_token_in_attention_pays(cache_view(0), longest, sequences_) ? kFused : kSeparate;
}

int CudaSession::step_graph(const std::vector<int32_t> &positions) const {
    int32_t longest = 1;
    for (int32_t p : positions) longest = std::max(longest, std::min(p, capacity_ - 1) + 1);
    return graph_for(longest);
}

void CudaSession::ensure_ring_capacity(int32_t window) {
    if (window <= ring_capacity_) return;
    const int32_t capacity = int32_t(round_up(window, 32));
    const size_t bytes = size_t(sequences_) * size_t(capacity) * sizeof(float);
    // Both new buffers first: if either allocation fails, the rings, their
    // capacity and the graph stay as they were, and the session stays usable.
    DeviceBuffer rings = allocate(bytes, "ReSET window rings");
    PinnedBuffer host_rings;
    try {
        host_rings = PinnedBuffer(bytes, "ReSET window rings");
    } catch (...) {
        bytes_ -= rings.bytes();
        throw;
    }
    bytes_ -= rings_.bytes();
    rings_ = std::move(rings);
    host_rings_ = std::move(host_rings);
    ring_capacity_ = capacity;
    drop_graphs();  // the graphs copy the rings by address: they must be captured again
}

KvCacheLayerView CudaSession::cache_view(int32_t layer) const {
    KvCacheLayerView v;
    const size_t offset = size_t(layer) * layer_elements_ * size_t(kv_cache_element_bytes(kv_type_));
    v.keys = keys_.as<uint8_t>() + offset;
    v.values = values_.as<uint8_t>() + offset;
    v.capacity = capacity_;
    v.n_kv_heads = config_.n_kv_heads;
    v.head_dim = config_.head_dim;
    v.type = kv_type_;
    if (kv_type_ == KvCacheType::kFp8E4M3) {  // the checkpoint's calibrated scales, else 1
        v.k_scale = dm_.layers[size_t(layer)].k_cache_scale;
        v.v_scale = dm_.layers[size_t(layer)].v_cache_scale;
    }
    return v;
}

// ---------------------------------------------------------------------------
// The forward pass
// ---------------------------------------------------------------------------

// The NVFP4 GEMV of one part on the prepared activations in x16_ / row_scale_, or on FP32 x
// with its row maxima x_amax.
Nvfp4GemvArgs CudaSession::gemv_args(const DeviceLinearPart &part, int rows, float *y, int64_t ldy,
                                     bool add_residual, float *y_amax, const float *x, int64_t ldx,
                                     const float *x_amax, const WeightPrefetch &next, const Fp16Copy &copy) {
    float *out = y + part.column;
    Nvfp4GemvArgs args;
    args.tokens = rows;
    args.y16 = copy.output;
    args.ld_y16 = copy.ld_output;
    if (x_amax && copy.input) {
        args.x = copy.input;
        args.ldx = copy.ld_input;
        args.x_amax = x_amax;
        args.x_fallback = x;
        args.ld_x_fallback = ldx;
    } else if (x_amax) {
        args.x = x;
        args.ldx = ldx;
        args.x_amax = x_amax;
    } else {
        args.x = x16_.as();
        args.ldx = ld_x16_;
        args.x_row_scale = row_scale_.as<float>();
    }
    args.y_amax = y_amax;
    args.bias = part.bias;
    args.residual = add_residual ? out : nullptr;
    args.ld_residual = ldy;
    args.y = out;
    args.ldy = ldy;
    args.output = Nvfp4GemvOutput::kFloat32;
    args.workspace = gemv_workspace_.as();
    args.workspace_bytes = gemv_workspace_.bytes();
    args.prefetch = next;
    return args;
}

bool CudaSession::enqueue_mlp_pair(const DeviceLayer &layer, int rows, float *act_amax) {
    // act_amax is set only where gate_up's norm is fused and down reads FP32 input (enqueue_forward).
    if (rows < pair_min_rows() || !act_amax) return false;
    const DeviceLinearPart &gate_up = layer.gate_up.parts[0], &down = layer.down.parts[0];
    const Nvfp4GemvArgs first = gemv_args(gate_up, rows, act_.as<float>(), ld_act_, false, act_amax, nullptr, 0,
                                          nullptr, {});
    const Nvfp4GemvArgs second = gemv_args(down, rows, x_.as<float>(), ld_act_, true, nullptr, act_.as<float>(),
                                           ld_act_, act_amax, {});
    if (!nvfp4_gemv_pair_runs(gate_up.gemv, first, down.gemv, second)) return false;
    enqueue_norm_prepare(layer.post_attention_norm, 0, rows, gate_up);
    nvfp4_gemv_pair(gate_up.gemv, first, down.gemv, second, gemv_pair_state_.as(), stream_);
    return true;
}

void CudaSession::enqueue_gemm(const DeviceLinearPart &part, int rows, float *y, int64_t ldy, bool add_residual) {
    const Nvfp4GemvWeight &w = part.gemv;
    const int64_t n = w.layout.rows, k = w.layout.cols;
    // A residual product lands in gemm_out_ first: the epilogue adds y to it and writes y.
    float *product = add_residual ? gemm_out_.as<float>() : y + part.column;
    const int64_t ld_product = add_residual ? ld_act_ : ldy;
    const int64_t slice = std::max<int64_t>(1, int64_t(dequantized_.bytes() / (size_t(k) * 2)));
    for (int64_t first = 0; first < n; first += slice) {
        const int64_t count = std::min(slice, n - first);
        Nvfp4DequantizeArgs d;
        d.row_begin = first;
        d.row_end = first + count;
        d.out = dequantized_.as();
        d.ld_out = k;
        nvfp4_dequantize(w, d, stream_);
        // Row-major product[rows][count] = x16[rows][k] · slice[count][k]ᵀ, which in cuBLAS's
        // column-major terms is sliceᵀ (count × k) times x16 (k × rows).
        const float one = 1.0f, zero = 0.0f;
        cublas_check(cublasGemmEx(cublas_, CUBLAS_OP_T, CUBLAS_OP_N, int(count), rows, int(k), &one, d.out,
                                  CUDA_R_16F, int(k), x16_.as(), CUDA_R_16F, int(ld_x16_), &zero, product + first,
                                  CUDA_R_32F, int(ld_product), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                     "prefill GEMM");
    }
    PrefillEpilogueArgs e;
    e.rows = rows;
    e.cols = n;
    e.y = product;
    e.ldy = ld_product;
    e.scale = w.tensor_scale * 16384.0f;  // the 2^14 the FP16 weights lack (nvfp4_dequantize.h)
    e.row_scale = row_scale_.as<float>();
    e.bias = part.bias;
    if (add_residual) {
        e.residual = y + part.column;
        e.ld_residual = ldy;
        e.out = y + part.column;
        e.ld_out = ldy;
    }
    prefill_epilogue(e, stream_);
}

void CudaSession::enqueue_norm_prepare(const float *weight, int first, int rows, const DeviceLinearPart &part,
                                       bool place_next_early) {
    RmsNormPrepareArgs a;
    set_norm_input(a, weight, first, rows);
    set_preparation(a, part);
    a.place_next_early = place_next_early;
    rms_norm_prepare(a, stream_);
}

void CudaSession::enqueue_norm_linear(const float *weight, int first, int rows, const DeviceLinear &linear, float *y,
                                      int64_t ldy, bool gemm, float *y_amax, const WeightPrefetch &next,
                                      bool place_next_early, const Fp16Copy &copy) {
    if (fuses_norm(linear)) {
        enqueue_norm_prepare(weight, first, rows, linear.parts[0], place_next_early && !gemm);
        enqueue_product(linear.parts[0], rows, y, ldy, false, gemm, y_amax, next, copy);
        return;
    }
    if (y_amax || copy.output) fail(RESET_ERR_INTERNAL, "row maxima or an FP16 copy asked of a linear without the fused norm");
    RmsNormArgs a;
    set_norm_input(a, weight, first, rows);
    a.out = normed_.as<float>();
    a.ld_out = ld_act_;
    rms_norm(a, stream_);
    enqueue_linear(linear, rows, normed_.as<float>(), ld_act_, y, ldy, false, gemm, nullptr, next);
}

void CudaSession::enqueue_linear(const DeviceLinear &linear, int rows, const float *x, int64_t ldx, float *y,
                                 int64_t ldy, bool add_residual, bool gemm, const float *x_amax,
                                 const WeightPrefetch &next, const Fp16Copy &copy) {
    if (x_amax) {
        if (gemm || !reads_float_input(linear)) fail(RESET_ERR_INTERNAL, "FP32 GEMV input where it does not apply");
        enqueue_gemv(linear.parts[0], rows, y, ldy, add_residual, nullptr, x, ldx, x_amax, next, copy);
        return;
    }
    for (const DeviceLinearPart &part : linear.parts) {
        float *out = y + part.column;
        if (part.nvfp4) {
            Nvfp4PrepareArgs prepare;
            set_preparation(prepare, part);
            prepare.tokens = rows;
            prepare.cols = part.padded_in;  // the zero padding of the activation rows is read as zeros
            prepare.x = x;
            prepare.ldx = ldx;
            prepare.input = Nvfp4ActivationInput::kFloat32;
            nvfp4_prepare_activations(prepare, stream_);
            // The next weight is asked for once, by the linear's last part.
            enqueue_product(part, rows, y, ldy, add_residual, gemm, nullptr,
                            &part == &linear.parts.back() ? next : WeightPrefetch{});
        } else {
            if (gemm) fail(RESET_ERR_INTERNAL, "a BF16 linear on the prefill GEMM path");
            Bf16GemvArgs args;
            args.tokens = rows;
            args.x = x;
            args.ldx = ldx;
            args.weight = part.bf16;
            args.rows = part.out_features;
            args.cols = part.in_features;
            args.bias = part.bias;
            args.residual = add_residual ? out : nullptr;
            args.ld_residual = ldy;
            args.y = out;
            args.ldy = ldy;
            args.tensor_cores = &linear != &dm_.lm_head || rows >= lm_head_tensor_cores_from();
            bf16_gemv(args, stream_);
        }
    }
}

void CudaSession::enqueue_forward(int rows, const int32_t *tokens, const int32_t *positions, const int32_t *lengths,
                                  const int32_t *slots, int lm_first, int lm_rows, float *logits, bool gemm,
                                  cudaEvent_t before_lm_head, bool fused_new_token) {
    const ModelConfig &c = config_;
    const float eps = static_cast<float>(c.rms_norm_eps);
    if (fused_new_token && (gemm || slots)) fail(RESET_ERR_INTERNAL, "the new token inside attention in a prefill chunk");
    // As many context splits as fill the GPU for these rows (a batch-1 step needs 8x the splits of
    // a batch-8 one to keep the same CTAs streaming the cache), within the workspace.
    int attention_splits = attention_decode_splits(rows, c.n_kv_heads, capacity_);
    while (attention_splits > 1 && attention_decode_workspace_bytes(rows, c.n_heads, c.head_dim, attention_splits) >
                                       attention_workspace_.bytes())
        --attention_splits;

    EmbeddingLookupArgs embed;
    embed.tokens = rows;
    embed.ids = tokens;
    embed.table = dm_.embed;
    embed.vocab = c.vocab_size;
    embed.hidden = c.hidden_size;
    embed.x = x_.as<float>();
    embed.ldx = ld_act_;
    embedding_lookup(embed, stream_);

    for (int32_t l = 0; l < c.n_layers; ++l) {
        const DeviceLayer &layer = dm_.layers[size_t(l)];
        const KvCacheLayerView cache = cache_view(l);

        // The L2 is asked for the start of a GEMV's weight where the DRAM has time to spare before
        // it (kernels/weight_prefetch.h): the qkv GEMV's warps ask for o's as they finish (the
        // q/k norm and attention follow), and attention, where its K/V are few, for gate_up's.
        // Measured on the H100 (docs/history/cuda-engine-sessions.md, session 10), the other candidates were
        // slower or no faster: gate_up asking for down's and down for the next qkv's (their
        // last warps still stream while the first ones would ask), and o asking for gate_up's
        // after attention had.
        // The norm lets the QKV GEMV be placed before its own wait.  Measured in the step (H100,
        // docs/history/cuda-engine-sessions.md, session 17, runs 6 and 7): 0.4-1.1% faster at batch 2 and 8 and
        // 0.5-0.8% at 32k with an FP8 cache, 0.1-0.2% at 1k at batch 1.  Not before gate_up:
        // 1.5% slower at batch 1 (its first weights then load against the o GEMV), and from
        // batch 2 on the pair kernel that follows that norm claims work before its wait.
        enqueue_norm_linear(layer.input_norm, 0, rows, layer.qkv, qkv_.as<float>(), ld_qkv_, gemm, nullptr,
                            prefetch_of(layer.o), /*place_next_early=*/true);

        // The rows' q, k and v heads: appended by their own launch, or (a decode step where that pays,
        // fused_new_token) by attention itself.  A prefill chunk's rows share a slot, so they
        // are all appended before attention reads any.
        NewTokenInputs token;
        token.qkv = qkv_.as<float>();
        token.ld_qkv = ld_qkv_;
        token.q_norm = layer.q_norm;
        token.k_norm = layer.k_norm;
        token.eps = eps;
        token.inv_freq = dm_.inv_freq;
        token.rope_attention_factor = dm_.rope_attention_factor;
        if (!fused_new_token) {
            QkNormRopeArgs rope;
            rope.batch = rows;
            rope.n_heads = c.n_heads;
            rope.token = token;
            rope.positions = positions;
            rope.slots = slots;
            rope.q_out = q_.as<float>();
            rope.cache = cache;
            qk_norm_rope_kv_append(rope, stream_);
        }

        AttentionDecodeArgs attention;
        attention.batch = rows;
        attention.n_heads = c.n_heads;
        attention.scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
        if (fused_new_token) attention.new_token = token;
        else attention.q = q_.as<float>();
        attention.cache = cache;
        attention.lengths = lengths;
        attention.slots = slots;
        attention.out = attention_.as<float>();
        attention.splits = attention_splits;
        attention.workspace = attention_workspace_.as<float>();
        attention.workspace_bytes = attention_workspace_.bytes();
        // The o GEMV's input (input_route): attention's FP32 output, or the FP16 copy attention
        // writes beside it into x16_ (free once the QKV GEMV is done), or a preparation launch.
        const InputRoute o_route = input_route(!gemm && reads_float_input(layer.o), rows, float_input_max_rows().o);
        float *attention_amax = o_route.needs_row_maxima() ? row_amax(l, 0) : nullptr;
        attention.out_amax = attention_amax;
        void *attention16 = o_route.copy ? x16_.as() : nullptr;
        attention.out16 = attention16;
        attention.ld_out16 = ld_x16_;
        if (!gemm) attention.prefetch = prefetch_of(layer.gate_up);
        // attention_decode writes [rows][n_heads * head_dim] densely, so the o_proj reads that stride.
        attention_decode(attention, stream_);
        enqueue_linear(layer.o, rows, attention_.as<float>(), int64_t(c.n_heads) * c.head_dim, x_.as<float>(),
                       ld_act_, true, gemm, attention_amax, {}, {attention16, ld_x16_});

        // The GEMM path writes a fused gate_up weight's [gate | up] rows; silu_mul follows.
        float *act_amax = nullptr;
        void *act16 = nullptr;  // gate_up's FP16 copy of its output, down's input
        if (layer.gate_up.fused_silu && !gemm) {
            // The down GEMV's input, as o's: the SiLU·up output, or the FP16 copy gate_up writes
            // beside it into act16_, or a preparation launch.
            const InputRoute down_route =
                input_route(down_reads_gate_up_output(layer), rows, float_input_max_rows().down);
            if (down_route.needs_row_maxima()) act_amax = row_amax(l, 1);
            if (down_route.copy) act16 = act16_.as();
            // Both in one launch where turned on (nvfp4_gemv_pair, pair_min_rows).
            if (down_route.direct && enqueue_mlp_pair(layer, rows, act_amax)) continue;
            enqueue_norm_linear(layer.post_attention_norm, 0, rows, layer.gate_up, act_.as<float>(), ld_act_, false,
                                act_amax, {}, false, {nullptr, 0, act16, ld_act16_});
        } else {
            enqueue_norm_linear(layer.post_attention_norm, 0, rows, layer.gate_up, gate_up_.as<float>(), ld_gate_up_,
                                gemm);
            SiluMulArgs silu;
            silu.rows = rows;
            silu.cols = c.intermediate_size;
            silu.gate = gate_up_.as<float>();
            silu.ld_gate = ld_gate_up_;
            silu.up = gate_up_.as<float>() + c.intermediate_size;
            silu.ld_up = ld_gate_up_;
            silu.out = act_.as<float>();
            silu.ld_out = ld_act_;
            silu_mul(silu, stream_);
        }
        enqueue_linear(layer.down, rows, act_.as<float>(), ld_act_, x_.as<float>(), ld_act_, true, gemm, act_amax, {},
                       {act16, ld_act16_});
    }

    if (lm_rows == 0) return;  // a prefill chunk before the last: only its K/V matter
    if (before_lm_head) cuda_check(cudaStreamWaitEvent(stream_, before_lm_head, 0), "top_logprobs join");
    // The lm_head (one row, perhaps BF16) runs through the GEMV.
    enqueue_norm_linear(dm_.final_norm, lm_first, lm_rows, dm_.lm_head, logits, c.vocab_size);
}

// ---------------------------------------------------------------------------
// Prefill, copies, logits
// ---------------------------------------------------------------------------

void CudaSession::prefill(int32_t sequence, const int32_t *ids, int32_t n, int32_t start, bool logits_wanted) {
    use_device(dm_.device);
    const cuda::ScopedDependentLaunch dependent_launch(dependent_launch_);
    PrefillInput *in = host_prefill_.as<PrefillInput>();
    const PrefillInput *d = prefill_in_.as<PrefillInput>();
    float *logits = logits_.as<float>() + int64_t(sequence) * config_.vocab_size;
    // The ids go to the device a stage at a time; the staging buffer is reused only after a sync.
    for (int32_t staged = 0; staged < n; staged += kPrefillStage) {
        const int32_t count = std::min<int32_t>(kPrefillStage, n - staged);
        for (int32_t i = 0; i < count; ++i) {
            in->ids[i] = ids[staged + i];
            in->positions[i] = start + staged + i;
            in->lengths[i] = start + staged + i + 1;
            in->slots[i] = sequence;
        }
        cuda_check(cudaMemcpyAsync(prefill_in_.as(), in, sizeof(PrefillInput), cudaMemcpyHostToDevice, stream_),
                   "prefill upload");
        for (int32_t done = 0; done < count;) {
            const bool gemm = gemm_rows_ > 0 && count - done >= gemm_min_rows_;
            const int rows = std::min<int>(gemm ? gemm_rows_ : kMaxRows, count - done);
            // Only the prompt's last token needs logits, and only where the caller asks for them.
            const bool last = logits_wanted && staged + done + rows == n;
            // The row maxima the GEMV path's producers (attention, the gate_up GEMV) raise with
            // atomicMax start at zero: one memset for every layer's slots.
            if (!gemm) cuda_check(cudaMemsetAsync(amax_.as(), 0, amax_.bytes(), stream_), "row maxima reset");
            enqueue_forward(rows, d->ids + done, d->positions + done, d->lengths + done, d->slots + done,
                            last ? rows - 1 : 0, last ? 1 : 0, logits, gemm);
            done += rows;
        }
        sync("prefill");
    }
}

void CudaSession::copy_sequence(int32_t from, int32_t to, int32_t length) {
    use_device(dm_.device);
    const ModelConfig &c = config_;
    const size_t element = size_t(kv_cache_element_bytes(kv_type_));
    const size_t head_bytes = size_t(capacity_) * size_t(c.head_dim) * element;  // one (slot, kv_head) run
    const size_t width = size_t(length) * size_t(c.head_dim) * element;
    for (int32_t l = 0; l < c.n_layers; ++l) {
        const KvCacheLayerView v = cache_view(l);
        for (void *base : {v.keys, v.values}) {
            uint8_t *b = static_cast<uint8_t *>(base);
            cuda_check(cudaMemcpy2DAsync(b + size_t(to) * c.n_kv_heads * head_bytes, head_bytes,
                                         b + size_t(from) * c.n_kv_heads * head_bytes, head_bytes, width,
                                         size_t(c.n_kv_heads), cudaMemcpyDeviceToDevice, stream_),
                       "KV copy");
        }
    }
    const size_t row = size_t(c.vocab_size) * sizeof(float);
    cuda_check(cudaMemcpyAsync(logits_.as<uint8_t>() + size_t(to) * row, logits_.as<uint8_t>() + size_t(from) * row,
                               row, cudaMemcpyDeviceToDevice, stream_),
               "logits copy");
    sync("sequence copy");
}

void CudaSession::copy_logits(int32_t sequence, float *out) {
    use_device(dm_.device);
    const size_t row = size_t(config_.vocab_size) * sizeof(float);
    // On stream_, so the copy is ordered after the work that wrote the logits.
    cuda_check(cudaMemcpyAsync(out, logits_.as<uint8_t>() + size_t(sequence) * row, row, cudaMemcpyDeviceToHost,
                               stream_),
               "logits download");
    sync("logits download");
}

// A sequence file's layer (engine/sequence_file.h) is [kv_head][position][head_dim] for positions
// [0, length): the cache's [slot][kv_head][position][head_dim] with the capacity's pitch dropped.
void CudaSession::add_kv_segments(int32_t sequence, int32_t layer, int32_t length, void *keys, void *values,
                                  std::vector<CopySegment> &segments) const {
    const ModelConfig &c = config_;
    const size_t element = size_t(kv_cache_element_bytes(kv_type_));
    const size_t head_bytes = size_t(capacity_) * size_t(c.head_dim) * element;  // the cache's pitch
    const size_t width = size_t(length) * size_t(c.head_dim) * element;          // the file's
    const KvCacheLayerView v = cache_view(layer);
    uint8_t *device[2] = {static_cast<uint8_t *>(v.keys) + size_t(sequence) * c.n_kv_heads * head_bytes,
                          static_cast<uint8_t *>(v.values) + size_t(sequence) * c.n_kv_heads * head_bytes};
    uint8_t *host[2] = {static_cast<uint8_t *>(keys), static_cast<uint8_t *>(values)};
    for (int part = 0; part < 2; ++part)
        for (int32_t head = 0; head < c.n_kv_heads; ++head)
            segments.push_back({host[part] + size_t(head) * width, device[part] + size_t(head) * head_bytes, width});
}

void CudaSession::write_logits(int32_t sequence, const float *logits) {
    use_device(dm_.device);
    const size_t row = size_t(config_.vocab_size) * sizeof(float);
    cuda_check(cudaMemcpyAsync(logits_.as<uint8_t>() + size_t(sequence) * row, logits, row, cudaMemcpyHostToDevice,
                               stream_),
               "logits upload");
    sync("logits upload");
}

// ---------------------------------------------------------------------------
// The decode step
// ---------------------------------------------------------------------------

void CudaSession::enqueue_step(bool fused_new_token) {
    const cuda::ScopedDependentLaunch dependent_launch(dependent_launch_);
    const size_t ring_bytes = size_t(sequences_) * size_t(ring_capacity_) * sizeof(float);
    StepInput *in = step_in_.as<StepInput>();
    StepOutput *out = step_out_.as<StepOutput>();
    // The step's input and the rings, read from page-locked host memory by one launch (no memcpy
    // nodes: kernels/range_copy.h says what they cost), and the forward pass's row maxima zeroed
    // by the same launch (no memset node).
    RangeCopyArgs upload;
    upload.count = 3;
    upload.ranges[0] = {host_in_.device(), in, sizeof(StepInput)};
    upload.ranges[1] = {host_rings_.device(), rings_.as(), ring_bytes};
    upload.ranges[2] = {nullptr, amax_.as(), amax_.bytes()};  // zero-filled
    copy_ranges(upload, stream_);

    SamplingArgs sampling;
    sampling.batch = sequences_;
    sampling.vocab = config_.vocab_size;
    sampling.logits = logits_.as<float>();
    sampling.ld_logits = config_.vocab_size;
    sampling.policies = in->policies;
    sampling.states = in->states;
    sampling.rings = rings_.as<float>();
    sampling.ring_capacity = ring_capacity_;
    sampling.delimiter_flags = delimiter_flags_.as<uint8_t>();
    sampling.workspace = sampling_workspace_.as<float>();
    sampling.counts = counts_.as<int32_t>();
    sampling.bias = logit_bias_.as<float>();
    sampling.tokens = out->tokens;
    sampling.signals = out->signals;
    sampling.active = in->active;
    sample_tokens(sampling, stream_);
    if (top_logprobs_ > 0) {
        // From the logits the sampler just drew from, on a branch beside the layers (session 31 run 3:
        // 14 us alone, ~31 us of a 1k Qwen3-8B step in line); the lm_head that replaces the logits waits
        // for it.  A plain launch: its one dependency is the fork.
        cuda_check(cudaEventRecord(top_fork_, stream_), "top_logprobs fork");
        cuda_check(cudaStreamWaitEvent(top_stream_, top_fork_, 0), "top_logprobs fork");
        const cuda::ScopedDependentLaunch plain(false);
        TopLogprobsArgs top;
        top.batch = sequences_;
        top.vocab = config_.vocab_size;
        top.logits = logits_.as<float>();
        top.ld_logits = config_.vocab_size;
        top.count = top_logprobs_;
        top.signals = out->signals;
        top.active = in->active;
        top.workspace = top_logprobs_workspace_.as();
        top.out = out->top;
        top_logprobs(top, top_stream_);
        cuda_check(cudaEventRecord(top_join_, top_stream_), "top_logprobs join");
    }

    enqueue_forward(sequences_, out->tokens, in->positions, in->lengths, nullptr, 0, sequences_,
                    logits_.as<float>(), false, top_logprobs_ > 0 ? top_join_ : nullptr, fused_new_token);

    // Tokens and signals, the states the sampler updated in place (in the input struct) and the
    // rings, written to page-locked host memory by one launch after the lm_head.
    RangeCopyArgs download;
    download.count = top_logprobs_ > 0 ? 4 : 3;
    StepOutput *host_out = host_out_.device<StepOutput>();
    download.ranges[0] = {out, host_out, offsetof(StepOutput, states)};
    download.ranges[1] = {in->states, host_out->states, sizeof(in->states)};
    download.ranges[2] = {rings_.as(), host_rings_.device(), ring_bytes};
    download.ranges[3] = {out->top, host_out->top,
                          size_t(sequences_) * size_t(top_logprobs_) * sizeof(reset_token_logprob)};
    copy_ranges(download, stream_);
}

void CudaSession::step(const std::vector<SequenceSampler *> &samplers, const std::vector<uint8_t> &active,
                       const std::vector<int32_t> &positions, std::vector<DeviceStepResult> &results) {
    use_device(dm_.device);
    int32_t window = 1;
    for (const SequenceSampler *s : samplers) window = std::max(window, s->policy().window);
    ensure_ring_capacity(window);

    StepInput *in = host_in_.as<StepInput>();
    float *rings = host_rings_.as<float>();
    for (int32_t s = 0; s < sequences_; ++s) {
        const SequenceSampler &sampler = *samplers[size_t(s)];
        const SequenceSampler::Carried carried = sampler.carried();
        // An inactive row still runs through the layers (one graph serves
        // every step); keep its position inside the cache.
        const int32_t position = std::min(positions[size_t(s)], capacity_ - 1);
        in->positions[s] = position;
        in->lengths[s] = position + 1;
        in->active[s] = active[size_t(s)] ? 1 : 0;
        in->policies[s] = sampling_policy_device(sampler.policy());
        in->policies[s].logit_bias = sampler.biased() ? 1 : 0;
        SamplingSequenceState &state = in->states[s];
        state = SamplingSequenceState();
        state.step = carried.state;
        state.accepted = carried.accepted;
        state.last_token = carried.last_token;
        state.prev_token = carried.prev_token;
        state.sequence = uint32_t(s);
        std::copy(carried.ring.begin(), carried.ring.end(), rings + size_t(s) * size_t(ring_capacity_));
        if (sampler.generation_version() != counts_version_[size_t(s)] && sampler.policy().penalized()) {
            // After a prefill, a new generation or a rollback, and only under a penalty (without one the
            // kernel reads no counts; the row stays stale until a policy with a penalty steps): one
            // synchronous copy, ordered before the step by the stream.
            counts_upload_.assign(size_t(config_.vocab_size), 0);
            sampler.add_penalty_counts(counts_upload_.data(), config_.vocab_size);
            cuda_check(cudaMemcpyAsync(counts_.as<int32_t>() + size_t(s) * size_t(config_.vocab_size),
                                       counts_upload_.data(), counts_upload_.size() * sizeof(int32_t),
                                       cudaMemcpyHostToDevice, stream_),
                       "upload of the penalties' counts");
            cuda_check(cudaStreamSynchronize(stream_), "upload of the penalties' counts");
            counts_version_[size_t(s)] = sampler.generation_version();
        }
    }

#ifdef RESET_STEP_TRACE
    static long long traced_steps = 0;
    StepTraceCapture trace_capture(traced_steps++);
#endif
    const int graph = step_graph(positions);
    if (!use_graph_) {
        enqueue_step(graph == kFused);
    } else {
        ensure_graph();  // made at creation and by reset_set_policy; again here only if those failed
        cuda_check(cudaGraphLaunch(graphs_[graph], stream_), "graph launch");
    }
    sync("decode step");
#ifdef RESET_STEP_TRACE
    trace_capture.finish();
#endif

    const StepOutput *out = host_out_.as<StepOutput>();
    results.assign(size_t(sequences_), DeviceStepResult());
    for (int32_t s = 0; s < sequences_; ++s) {
        if (!active[size_t(s)]) continue;
        DeviceStepResult &r = results[size_t(s)];
        const SamplingSignalsDevice &g = out->signals[s];
        r.token = out->tokens[s];
        r.status = g.status;
        r.signals.entropy = g.entropy;
        r.signals.logprob = g.logprob;
        r.signals.step_entropy = g.step_entropy;
        r.signals.global_mean = g.global_mean;
        r.signals.threshold = g.threshold;
        r.signals.temperature = g.temperature;
        r.signals.step_index = g.step_index;
        r.signals.boundary = g.boundary != 0;
        r.signals.uncertain = g.uncertain != 0;
        if (g.status != kSamplingOk) continue;
        const reset_token_logprob *top = out->top + size_t(s) * size_t(top_logprobs_);
        r.top.assign(top, top + top_logprobs_);
        const SamplingSequenceState &state = out->states[s];
        SequenceSampler::Carried carried;
        carried.state = state.step;
        carried.accepted = state.accepted;
        carried.last_token = state.last_token;
        carried.prev_token = state.prev_token;
        const float *ring = rings + size_t(s) * size_t(ring_capacity_);
        carried.ring.assign(ring, ring + samplers[size_t(s)]->policy().window);
        const uint64_t before = samplers[size_t(s)]->generation_version();
        samplers[size_t(s)]->take_carried(carried);
        // The kernel counted the token too, so a row that matched the host before the step matches it after;
        // a stale one stays stale.
        uint64_t &device_version = counts_version_[size_t(s)];
        if (device_version == before) device_version = samplers[size_t(s)]->generation_version();
    }
}

}  // namespace

std::unique_ptr<DeviceSession> create_device_session(const LoadedModel &model, const DeviceSessionOptions &options,
                                                     const DelimiterSets &delimiters) {
    if (!model.device) fail(RESET_ERR_INTERNAL, "a CUDA session on a model without device weights");
    return std::make_unique<CudaSession>(model, options, delimiters);
}

}  // namespace reset
