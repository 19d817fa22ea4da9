// loaded_model.h — everything a loaded model owns, shared (by reference
// count) between the reset_model handle and every session made from it, so a
// session keeps its model alive even if the caller frees the handle first.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "model/config.h"
#include "model/safetensors.h"
#include "model/weights.h"
#include "reset.h"

struct reset_tokenizer;

namespace reset {

struct DeviceModel;  // engine/device_engine.h

struct LoadedModel {
    std::string directory;
    ModelConfig config;
    TensorStore store;             // the mapped checkpoint files (BF16 weights point into them)
    ModelWeights weights;
    reset_weights weights_format = RESET_WEIGHTS_BF16;  // resolved
    reset_backend backend = RESET_BACKEND_CPU;          // resolved
    int32_t threads = 0;           // CPU threads, 0 = all
    reset_activations w4a16_activations = RESET_ACTIVATIONS_FP16;  // what CPU W4A16 linears multiply
    std::vector<float> rope_inv_freq;  // head_dim / 2 entries, llama3 or YaRN scaling applied
    float rope_attention_factor = 1.0f;  // YaRN: RoPE's cosines and sines are multiplied by it (in FP32)
    reset_tokenizer *tokenizer = nullptr;  // owned; null when the directory has none
    std::shared_ptr<DeviceModel> device;   // the weights on the GPU (CUDA backend), else null
    // Rows 0, middle and last of the embedding as the checkpoint stores them, taken at load for the
    // sequence files' fingerprint (sequence_file.h): the CUDA backend lets go of `store`.
    std::vector<uint8_t> fingerprint_rows;
    int32_t device_ordinal = 0;

    ~LoadedModel();
};

// Load from a directory; throws reset::Error.
std::shared_ptr<LoadedModel> load_model(const std::string &directory, const reset_model_options &options);

// RoPE inverse frequencies as Hugging Face computes them (FP32), with the
// llama3 or YaRN frequency scaling when configured (YaRN's attention factor
// is LoadedModel::rope_attention_factor).
std::vector<float> rope_inverse_frequencies(const ModelConfig &config);

}  // namespace reset
