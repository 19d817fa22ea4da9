// loaded_model.cpp — load a model directory into everything the engine needs.
#include "engine/loaded_model.h"

#include <algorithm>
#include <cmath>

#include "api/errors.h"
#include "engine/device_engine.h"
#include "engine/sequence_file.h"
#include "text/tokenizer.h"
#include "util/load_trace.h"

namespace reset {

LoadedModel::~LoadedModel() { destroy_tokenizer_handle(tokenizer); }

namespace {

// base^(2i/d) for each rotation pair i, as transformers forms it: exponent and power in FP32.  Its
// reciprocal is the plain inverse frequency.
std::vector<float> rope_base_powers(const ModelConfig &config) {
    std::vector<float> powers(static_cast<size_t>(config.head_dim / 2));
    for (size_t i = 0; i < powers.size(); ++i) {
        const float exponent = static_cast<float>(2 * i) / static_cast<float>(config.head_dim);
        powers[i] = std::pow(static_cast<float>(config.rope_theta), exponent);
    }
    return powers;
}

// YaRN's frequencies in transformers' arithmetic (_compute_yarn_parameters): FP32 tensors, the ramp's
// ends in double.  Dimension pair i keeps its own frequency below the ramp (fast rotations, extrapolated),
// takes frequency / factor above it (slow ones, interpolated), and a linear blend on it.
std::vector<float> yarn_inverse_frequencies(const ModelConfig &config) {
    const YarnRopeScaling &y = config.yarn;
    const double dim = double(config.head_dim), base = config.rope_theta;
    const double original = double(y.original_max_position_embeddings);
    // The dimension whose wavelength makes `rotations` turns over the original context.
    const auto correction_dim = [&](double rotations) {
        return dim * std::log(original / (rotations * 2.0 * M_PI)) / (2.0 * std::log(base));
    };
    double low = correction_dim(y.beta_fast), high = correction_dim(y.beta_slow);
    if (y.truncate) {
        low = std::floor(low);
        high = std::ceil(high);
    }
    low = std::max(low, 0.0);
    high = std::min(high, dim - 1.0);
    if (low == high) high += 0.001;  // as transformers: no division by zero
    const float factor = static_cast<float>(y.factor);
    const float ramp_start = static_cast<float>(low), ramp_width = static_cast<float>(high - low);
    std::vector<float> inv_freq = rope_base_powers(config);
    for (size_t i = 0; i < inv_freq.size(); ++i) {
        const float position_freq = inv_freq[i];  // base^(2i/d), transformers' pos_freqs
        const float extrapolation = 1.0f / position_freq, interpolation = 1.0f / (factor * position_freq);
        const float ramp = std::clamp((static_cast<float>(i) - ramp_start) / ramp_width, 0.0f, 1.0f);
        const float keep = 1.0f - ramp;  // the share of the original frequency
        const float interpolated = interpolation * (1.0f - keep), extrapolated = extrapolation * keep;
        inv_freq[i] = interpolated + extrapolated;
    }
    return inv_freq;
}

}  // namespace

std::vector<float> rope_inverse_frequencies(const ModelConfig &config) {
    if (config.yarn.enabled) return yarn_inverse_frequencies(config);
    std::vector<float> inv_freq = rope_base_powers(config);
    for (float &f : inv_freq) f = 1.0f / f;  // as transformers: 1 / base^(2i/d)
    const Llama3RopeScaling &s = config.rope_scaling;
    if (!s.enabled) return inv_freq;
    // Llama 3.1's recipe: long wavelengths are slowed by `factor`, short ones
    // kept, and the band between them interpolated smoothly.
    const double old_context = static_cast<double>(s.original_max_position_embeddings);
    const double low_freq_wavelen = old_context / s.low_freq_factor;
    const double high_freq_wavelen = old_context / s.high_freq_factor;
    for (auto &f : inv_freq) {
        const double wavelen = 2.0 * M_PI / f;
        if (wavelen < high_freq_wavelen) continue;
        if (wavelen > low_freq_wavelen) {
            f = static_cast<float>(f / s.factor);
            continue;
        }
        const double smooth = (old_context / wavelen - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
        f = static_cast<float>((1.0 - smooth) * f / s.factor + smooth * f);
    }
    return inv_freq;
}

std::shared_ptr<LoadedModel> load_model(const std::string &directory, const reset_model_options &options) {
    const int32_t weights = enum_as_int(options.weights), backend = enum_as_int(options.backend);
    if (weights < RESET_WEIGHTS_AUTO || weights > RESET_WEIGHTS_NVFP4_W4A4)
        fail(RESET_ERR_INVALID_ARGUMENT, "options->weights = ", weights, " is not a reset_weights value");
    if (backend < RESET_BACKEND_AUTO || backend > RESET_BACKEND_CUDA)
        fail(RESET_ERR_INVALID_ARGUMENT, "options->backend = ", backend, " is not a reset_backend value");
    if (options.threads < 0) fail(RESET_ERR_INVALID_ARGUMENT, "options->threads = ", options.threads, " is negative");
    if (options.device < 0) fail(RESET_ERR_INVALID_ARGUMENT, "options->device = ", options.device, " is negative");
    const int32_t activations = enum_as_int(options.w4a16_activations);
    if (activations != RESET_ACTIVATIONS_FP16 && activations != RESET_ACTIVATIONS_FP32)
        fail(RESET_ERR_INVALID_ARGUMENT, "options->w4a16_activations = ", activations,
             " is not a reset_activations value");
    const int32_t file_access = enum_as_int(options.file_access);
    if (file_access != RESET_FILE_ACCESS_MAP && file_access != RESET_FILE_ACCESS_READ)
        fail(RESET_ERR_INVALID_ARGUMENT, "options->file_access = ", file_access, " is not a reset_file_access value");
    // The CUDA GEMV reads FP16 activations only.  An explicit CUDA request is
    // refused before looking for a device, so the answer does not depend on the machine.
    const auto refuse_fp32_on_cuda = [&](reset_backend backend) {
        if (backend == RESET_BACKEND_CUDA && activations == RESET_ACTIVATIONS_FP32)
            fail(RESET_ERR_UNSUPPORTED, "options->w4a16_activations = RESET_ACTIVATIONS_FP32 is the CPU "
                 "reference's; the CUDA backend reads W4A16 activations in FP16 (load with RESET_BACKEND_CPU)");
    };
    refuse_fp32_on_cuda(options.backend);
    // Decide the backend before the (possibly long) load, so a missing device fails at once.
    reset_backend resolved = RESET_BACKEND_CPU;
    if (options.backend != RESET_BACKEND_CPU) {
        std::string why;
        if (cuda_backend_available(&why)) resolved = RESET_BACKEND_CUDA;
        else if (options.backend == RESET_BACKEND_CUDA) fail(RESET_ERR_BACKEND, "RESET_BACKEND_CUDA: ", why);
    }
    refuse_fp32_on_cuda(resolved);  // AUTO found a device

    PhaseClock clock;
    auto model = std::make_shared<LoadedModel>();
    model->directory = directory;
    model->config = read_model_config(directory);
    model->store = TensorStore::open_directory(
        directory, file_access == RESET_FILE_ACCESS_READ ? FileAccess::Read : FileAccess::Map);
    load_trace("'%s': config and safetensors headers %.3f s", directory.c_str(), clock.split());
    model->fingerprint_rows = fingerprint_rows(model->store);
    LoadOptions load;
    load.threads = options.threads;
    load.weights = options.weights;
    load.quantize_lm_head = options.quantize_lm_head != 0;
    load.progress = options.progress;
    load.progress_user_data = options.progress_user_data;
    model->weights = load_weights(model->config, model->store, directory, load);
    load_trace("weights read from the checkpoint %.3f s", clock.split());
    model->weights_format = load.weights;
    model->backend = resolved;
    model->threads = options.threads;
    model->w4a16_activations = options.w4a16_activations;
    model->rope_inv_freq = rope_inverse_frequencies(model->config);
    if (model->config.yarn.enabled) model->rope_attention_factor = static_cast<float>(model->config.yarn.attention_factor);
    model->device_ordinal = options.device;
    if (resolved == RESET_BACKEND_CUDA) {
        model->device = upload_model(*model, options.device);
        load_trace("on the device %.3f s", clock.split());
        // Sessions of this model decode on the device only: what the host owns goes (an 8B model quantized
        // at load frees ~4.4 GB of codes here; a ModelOpt export's are the checkpoint's mapping).
        release_host_weights(model->weights);
        // Nothing points into the files now: unmapping them means a checkpoint rewritten after the
        // load can no longer kill the process with SIGBUS (reset_file_access), and the read copy's
        // memory goes back.
        model->store = TensorStore();
        load_trace("host weights released %.3f s", clock.split());
    }
    if (Tokenizer::directory_has_tokenizer(directory)) {
        std::unique_ptr<Tokenizer> tokenizer = Tokenizer::load(directory);
        if (tokenizer->vocab_size() > model->config.vocab_size)
            fail(RESET_ERR_FORMAT, "the tokenizer in '", directory, "' has ", tokenizer->vocab_size(),
                 " tokens, more than the model's vocab_size ", model->config.vocab_size);
        model->tokenizer = make_tokenizer_handle(std::move(tokenizer), /*owned_by_model=*/true);
        load_trace("tokenizer %.3f s", clock.split());
    }
    return model;
}

}  // namespace reset
