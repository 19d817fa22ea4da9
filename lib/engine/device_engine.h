// device_engine.h — what a session needs from the CUDA backend, in plain C++
// so the backend-independent code (engine/session.cpp, engine/loaded_model.cpp)
// compiles without CUDA.  lib/cuda/ implements it; a build without CUDA links
// engine/device_engine_none.cpp, whose functions fail with RESET_ERR_BACKEND.
//
// The split of work: the host Session keeps every piece of bookkeeping
// (lengths, ended flags, streaming text, the SequenceSampler objects, which
// stay the authority for sampler state so snapshots and policy changes work
// the same on every backend); the device session holds the weights' views,
// the KV cache, the logits, and runs the decode step — sampler included — as
// one CUDA graph replay.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "reset.h"
#include "sampling/sampler.h"

namespace reset {

struct LoadedModel;
struct DeviceModel;  // lib/cuda/device_model.h: the weights in device memory

// True when this build has the CUDA backend and a device is present; else
// false with the reason in *why.
bool cuda_backend_available(std::string *why);

// Copy a loaded model's weights to device `device` in the layouts the kernels
// read.  Throws reset::Error: RESET_ERR_BACKEND (no CUDA build or device),
// RESET_ERR_OUT_OF_MEMORY (device memory), RESET_ERR_UNSUPPORTED (a shape the
// kernels lack).
std::shared_ptr<DeviceModel> upload_model(const LoadedModel &model, int32_t device);
uint64_t device_model_bytes(const DeviceModel &model);

// Prompt tokens per DeviceSession::prefill call.  Session checks for
// cancellation between calls (a call takes tens of ms), and the CUDA session
// sizes its GEMM prefill chunk, and so its activations, for this many rows
// (512-row chunks were no faster at a 2k prompt: each row's attention reads
// its whole prefix, docs/history/cuda-engine-sessions.md, session 4).
constexpr int32_t kDevicePrefillTokens = 256;

struct DeviceSessionOptions {
    int32_t sequences = 1;
    int32_t capacity = 0;                        // positions per sequence
    reset_kv_cache kv_cache = RESET_KV_CACHE_BF16;
    bool cuda_graph = true;                      // false: eager launches (for comparison)
    int32_t prefill_gemm_tokens = 0;             // reset_session_options.prefill_gemm_tokens
    bool programmatic_launch = true;             // where the GPU has it (sm_90+): kernels/dependent_launch.cuh
    int32_t top_logprobs = 0;                    // entries of DeviceStepResult::top per step (0: no kernel)
};

// One sequence's result of a device decode step.
struct DeviceStepResult {
    int32_t token = -1;
    SamplerSignals signals;
    int32_t status = 0;  // 0 ok, else the sampler's kSampling* code (bad logits, bad policy)
    std::vector<reset_token_logprob> top;  // DeviceSessionOptions::top_logprobs entries when status is 0
};

class DeviceSession {
public:
    virtual ~DeviceSession() = default;
    // Run ids[0..n) of `sequence` at positions start.., writing their K/V.
    // With `logits`, the last one's logits become the sequence's current
    // logits; without, the lm_head is skipped and the current logits stay, so
    // a prompt prefilled over several calls and cancelled between them leaves
    // the sequence's logits as they were.
    virtual void prefill(int32_t sequence, const int32_t *ids, int32_t n, int32_t start, bool logits) = 0;
    // Copy K/V positions [0, length) and the current logits of one sequence onto another.
    virtual void copy_sequence(int32_t from, int32_t to, int32_t length) = 0;
    // The current logits of a sequence (vocab_size floats).
    virtual void copy_logits(int32_t sequence, float *out) = 0;
    // K and V of a sequence as a sequence file holds them (engine/sequence_file.h):
    // positions [0, length) as [kv_head][position][head_dim] in the cache's element
    // encoding, in host memory.  read_kv gives one layer's (the file is written a layer
    // at a time); write_kv takes every layer's (keys[l], values[l]), so the copies of
    // one layer overlap the next's.
    virtual void read_kv(int32_t sequence, int32_t layer, int32_t length, void *keys, void *values) = 0;
    virtual void write_kv(int32_t sequence, int32_t length, const std::vector<const uint8_t *> &keys,
                          const std::vector<const uint8_t *> &values) = 0;
    // Make `logits` (vocab_size floats) the sequence's current logits.
    virtual void write_logits(int32_t sequence, const float *logits) = 0;
    // One decode step: every sequence s with active[s] samples a token from its
    // current logits with samplers[s] (its policy and carried state go to the
    // device, the accepted state comes back into it), then that token runs at
    // positions[s] and its logits become current.  Inactive sequences are left
    // exactly as they were.
    virtual void step(const std::vector<SequenceSampler *> &samplers, const std::vector<uint8_t> &active,
                      const std::vector<int32_t> &positions, std::vector<DeviceStepResult> &results) = 0;
    // Make room for a policy whose ReSET window holds `window` slots per
    // sequence, before the policy is used: running out of memory is then an
    // error of the call that sets the policy (the session unchanged), not of
    // a decode step.
    virtual void reserve_policy_window(int32_t window) = 0;
    // reset_set_logit_bias: the bias every sequence's draw adds from the next
    // step on (empty: none), uploaded now into memory reserved with the session.
    virtual void set_logit_bias(const LogitBias &bias) = 0;
    virtual uint64_t device_bytes() const = 0;
};

// Reserve everything a generation needs (KV cache, scratch, graph) now, so
// running out of device memory fails here with RESET_ERR_OUT_OF_MEMORY.
std::unique_ptr<DeviceSession> create_device_session(const LoadedModel &model, const DeviceSessionOptions &options,
                                                     const DelimiterSets &delimiters);

}  // namespace reset
