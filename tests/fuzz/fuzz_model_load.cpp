// fuzz_model_load.cpp — reset_model_load on a fuzzed Hugging Face directory,
// then a short generation on what loads.
//
// The input is an archive (fuzz_support.h) of the directory's files:
// config.json, generation_config.json, hf_quant_config.json, safetensors
// files and index, tokenizer files; an optional file "options" chooses the
// load and session options from its bytes and supplies the prompt ids (taken
// modulo vocab_size + 2, so out-of-range ids are tried too).  The CPU backend,
// or with RESET_FUZZ_BACKEND=cuda the CUDA one: fuzzing runs without a GPU,
// and the corpus it grew is replayed on the GPU machine
// (tests/fuzz/replay_on_device.sh).
//
// Checked: load fails only with the statuses reset.h lists for it; nothing
// anywhere is RESET_ERR_INTERNAL or an error without a message; what loads
// describes itself consistently and decodes tokens inside its vocabulary.
#include <cstring>
#include <set>

#include "fuzz_support.h"

using reset_fuzz::expect;
using reset_fuzz::finding;
using reset_fuzz::cuda_backend;
using reset_fuzz::ok_or_clear_error;
using reset_fuzz::ok_or_listed_error;

namespace {

struct Options {
    reset_model_options model;
    reset_session_options session;
    std::string_view prompt;  // bytes, two per id
};

Options options_from(std::string_view bytes) {
    Options o;
    reset_model_options_init(&o.model);
    reset_session_options_init(&o.session);
    o.model.backend = cuda_backend() ? RESET_BACKEND_CUDA : RESET_BACKEND_CPU;
    o.model.threads = 1;
    auto byte = [&](size_t i) { return i < bytes.size() ? static_cast<uint8_t>(bytes[i]) : 0; };
    o.model.weights = static_cast<reset_weights>(byte(0) % 4);
    o.model.quantize_lm_head = byte(1) & 1;
    o.model.w4a16_activations = static_cast<reset_activations>((byte(1) >> 1) & 1);
    o.session.max_context = byte(2) % 40;  // 0 = the model's maximum, capped at 4096
    o.session.kv_cache = static_cast<reset_kv_cache>(byte(3) % 3);
    o.session.sequences = 1 + byte(4) % 8;
    o.prompt = bytes.size() > 5 ? bytes.substr(5, 32) : std::string_view("\x03\x00\x05\x00\x07\x00", 6);
    return o;
}

void generate(reset_model *model, const Options &options) {
    reset_model_info info;
    reset_model_info_init(&info);
    if (!ok_or_clear_error(reset_model_get_info(model, &info), "reset_model_get_info")) finding("get_info failed");
    expect(info.vocab_size > 0 && info.n_layers > 0 && info.hidden_size > 0, "a loaded model with an empty shape");
    const std::set<std::string> architectures{"qwen3", "qwen2", "llama"};
    expect(architectures.count(info.architecture) == 1, std::string("unknown architecture ") + info.architecture);

    reset_session *session = nullptr;
    const reset_status created = reset_session_create(model, &options.session, &session);
    if (!ok_or_clear_error(created, "reset_session_create")) {
        expect(session == nullptr, "a failed reset_session_create left a session");
        return;
    }
    // The session's own policy (generation_config.json's sampling, or greedy) reads back and,
    // set again, is accepted and unchanged (reset.h, reset_session_get_policy).
    reset_policy_params policy, again;
    reset_policy_params_init(&policy);
    reset_policy_params_init(&again);
    expect(reset_session_get_policy(session, &policy) == RESET_OK, "reset_session_get_policy failed");
    expect(ok_or_clear_error(reset_set_policy(session, &policy), "reset_set_policy(the session's own policy)"),
           "the session's own policy was refused when set again");
    expect(reset_session_get_policy(session, &again) == RESET_OK && std::memcmp(&policy, &again, sizeof policy) == 0,
           "setting the session's own policy changed it");
    std::vector<int32_t> ids;
    for (size_t i = 0; i + 1 < options.prompt.size(); i += 2) {
        const int raw = static_cast<uint8_t>(options.prompt[i]) | static_cast<uint8_t>(options.prompt[i + 1]) << 8;
        ids.push_back(raw % (info.vocab_size + 2));
    }
    if (ids.empty()) ids.push_back(0);
    const reset_status prefilled = reset_prefill(session, ids.data(), ids.size());
    bool out_of_range = false;
    for (int32_t id : ids) out_of_range |= id >= info.vocab_size;
    if (out_of_range) expect(prefilled == RESET_ERR_OUT_OF_RANGE, "an id past the vocabulary was not refused");
    if (ok_or_clear_error(prefilled, "reset_prefill")) {
        std::vector<reset_step> steps(8);
        for (int step = 0; step < 3; ++step) {
            reset_step_init(steps.data(), steps.size());
            int32_t active = 0;
            const reset_status decoded = reset_decode_step(session, steps.data(), steps.size(), &active);
            if (!ok_or_clear_error(decoded, "reset_decode_step")) break;
            for (int s = 0; s < options.session.sequences; ++s) {
                const reset_step &st = steps[s];
                expect(st.token >= -1 && st.token < info.vocab_size, "a decoded token outside the vocabulary");
                expect(st.text_len == 0 || st.text != nullptr, "step text length without text");
            }
            if (active == 0) break;
        }
        std::vector<float> logits(info.vocab_size);
        ok_or_clear_error(reset_session_logits(session, 0, logits.data(), logits.size()), "reset_session_logits");
    }
    reset_session_free(session);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const std::string_view input(reinterpret_cast<const char *>(data), size);
    std::vector<reset_fuzz::ArchiveFile> files = reset_fuzz::split_archive(input);
    std::string_view option_bytes;
    for (auto it = files.begin(); it != files.end(); ++it)
        if (it->name == "options") {
            option_bytes = it->data;
            files.erase(it);
            break;
        }
    const Options options = options_from(option_bytes);
    const std::string directory = reset_fuzz::write_directory(files);

    reset_model *model = nullptr;
    const reset_status loaded = reset_model_load(directory.c_str(), &options.model, &model);
    if (loaded != RESET_OK) {
        expect(model == nullptr, "a failed reset_model_load left a model");
        // RESET_ERR_BACKEND only where the CUDA backend was asked for (an upload refused).
        if (loaded == RESET_ERR_BACKEND && cuda_backend())
            ok_or_clear_error(loaded, "reset_model_load");
        else
            ok_or_listed_error(loaded, "reset_model_load",
                               {RESET_ERR_IO, RESET_ERR_FORMAT, RESET_ERR_UNSUPPORTED, RESET_ERR_SHAPE,
                                RESET_ERR_OUT_OF_MEMORY, RESET_ERR_INVALID_ARGUMENT});
        return 0;
    }
    generate(model, options);
    reset_model_free(model);
    return 0;
}
