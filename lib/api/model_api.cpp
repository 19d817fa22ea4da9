// model_api.cpp — the C ABI of models: load, free, describe.
#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstring>

#include "api/errors.h"
#include "engine/device_engine.h"
#include "api/handles.h"
#include "engine/loaded_model.h"
#include "reset.h"

struct reset_model {
    std::shared_ptr<reset::LoadedModel> model;
};

namespace reset {
// For the other API files (sessions, tokenizers, policies).
std::shared_ptr<LoadedModel> shared_model(const reset_model *handle) {
    return checked_handle(handle, "model")->model;
}
}  // namespace reset

using namespace reset;

extern "C" {

void reset_model_options_init_sized(reset_model_options *options, size_t struct_size) {
    reset_model_options defaults;
    std::memset(&defaults, 0, sizeof defaults);
    defaults.weights = RESET_WEIGHTS_AUTO;
    defaults.backend = RESET_BACKEND_AUTO;
    defaults.quantize_lm_head = 0;
    defaults.device = 0;
    defaults.threads = 0;
    defaults.w4a16_activations = RESET_ACTIVATIONS_FP16;
    defaults.file_access = RESET_FILE_ACCESS_MAP;
    write_defaults(options, struct_size, defaults);
}

void (reset_model_options_init)(reset_model_options *options) {
    reset_model_options_init_sized(options, sizeof *options);
}

reset_status reset_model_load(const char *path, const reset_model_options *options, reset_model **out_model) {
    if (out_model) *out_model = nullptr;
    return api_call([&] {
        require(path, "path");
        require(out_model, "out_model");
        const reset_model_options resolved = read_options(options, reset_model_options_init_sized, "options");
        auto handle = std::make_unique<reset_model>();
        handle->model = load_model(path, resolved);
        HandleRegistry<reset_model>::instance().add(handle.get());
        *out_model = handle.release();
    });
}

void reset_model_free(reset_model *model) {
    if (!model) return;
    // Sessions hold their own reference: the weights live until the last one goes.
    if (HandleRegistry<reset_model>::instance().remove(model)) delete model;
}

void reset_model_info_init_sized(reset_model_info *info, size_t struct_size) {
    reset_model_info defaults;
    std::memset(&defaults, 0, sizeof defaults);
    defaults.bos_id = -1;
    write_defaults(info, struct_size, defaults);
}

// Programs built before 0.10 call this: their struct ends before checkpoint_format.
void (reset_model_info_init)(reset_model_info *info) {
    reset_model_info_init_sized(info, offsetof(reset_model_info, checkpoint_format));
}

reset_status reset_model_get_info(const reset_model *model, reset_model_info *info) {
    return api_call([&] {
        const LoadedModel &m = *checked_handle(model, "model")->model;
        require(info, "info");
        const uint32_t size = info->struct_size;
        if (size < sizeof(uint32_t) || size > sizeof(reset_model_info))
            fail(RESET_ERR_INVALID_ARGUMENT, "info->struct_size is ", size, "; call reset_model_info_init first");
        reset_model_info out;
        reset_model_info_init(&out);
        const ModelConfig &c = m.config;
        std::snprintf(out.architecture, sizeof out.architecture, "%s", c.architecture.c_str());
        out.n_layers = c.n_layers;
        out.hidden_size = c.hidden_size;
        out.intermediate_size = c.intermediate_size;
        out.n_heads = c.n_heads;
        out.n_kv_heads = c.n_kv_heads;
        out.head_dim = c.head_dim;
        out.vocab_size = c.vocab_size;
        out.max_position_embeddings = c.max_position_embeddings;
        out.tied_embeddings = c.tie_word_embeddings;
        out.weights = m.weights_format;
        out.backend = m.backend;
        out.lm_head_nvfp4 = m.weights.lm_head.format == LinearFormat::NVFP4;
        out.from_modelopt = m.weights.checkpoint_format == CheckpointFormat::ModelOpt;
        bool dynamic = false;
        if (m.weights_format == RESET_WEIGHTS_NVFP4_W4A4)
            for (const auto &layer : m.weights.layers)
                for (const Linear *l : {&layer.q, &layer.k, &layer.v, &layer.o, &layer.gate, &layer.up, &layer.down})
                    if (l->format == LinearFormat::NVFP4 && !(l->input_scale > 0.0f)) dynamic = true;
        out.dynamic_input_scale = dynamic;
        out.n_bf16_linears = m.weights.n_bf16_linears;
        out.n_parameters = m.weights.n_parameters;
        out.weight_bytes = m.weights.weight_bytes;
        out.host_bytes = m.weights.owned_bytes;
        out.device_bytes = m.device ? device_model_bytes(*m.device) : 0;
        out.n_eos = static_cast<int32_t>(std::min<size_t>(c.eos_ids.size(), 8));
        for (int32_t i = 0; i < out.n_eos; ++i) out.eos_ids[i] = c.eos_ids[size_t(i)];
        out.bos_id = c.bos_id;
        switch (m.weights.checkpoint_format) {
            case CheckpointFormat::Unquantized: out.checkpoint_format = RESET_CHECKPOINT_UNQUANTIZED; break;
            case CheckpointFormat::ModelOpt: out.checkpoint_format = RESET_CHECKPOINT_MODELOPT; break;
            case CheckpointFormat::CompressedTensors: out.checkpoint_format = RESET_CHECKPOINT_COMPRESSED_TENSORS; break;
        }
        out.kv_cache_scales = m.weights.kv_cache_scales;
        std::memcpy(reinterpret_cast<char *>(info) + sizeof(uint32_t), reinterpret_cast<const char *>(&out) + sizeof(uint32_t),
                    size - sizeof(uint32_t));
    });
}

const reset_tokenizer *reset_model_tokenizer(const reset_model *model) {
    const reset_tokenizer *tokenizer = nullptr;
    const reset_status status = api_call([&] {
        tokenizer = checked_handle(model, "model")->model->tokenizer;
        if (!tokenizer) set_last_error(RESET_OK, "the model directory has no tokenizer");
    });
    return status == RESET_OK ? tokenizer : nullptr;
}

}  // extern "C"
