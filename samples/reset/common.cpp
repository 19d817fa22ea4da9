// common.cpp — argument parsing, model and session ownership, policies and
// chat rendering shared by every subcommand.
#include <unistd.h>

#include <cerrno>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <sys/stat.h>

#include "cli.h"

namespace cli {

void fail(const std::string &message) { throw CliError(message, 1); }
void usage_error(const std::string &message) { throw CliError(message, 2); }

void check(reset_status status, const std::string &what) {
    if (status != RESET_OK) fail(what + ": " + reset_last_error());
}

double now_seconds() {
    using clock = std::chrono::steady_clock;
    return std::chrono::duration<double>(clock::now().time_since_epoch()).count();
}

bool colour_enabled(int fd) { return isatty(fd) && std::getenv("NO_COLOR") == nullptr; }

// --- command line ---------------------------------------------------------

std::string Args::get(const std::string &name, const std::string &fallback) const {
    auto it = options.find(name);
    return it == options.end() ? fallback : it->second.back();
}

long Args::get_int(const std::string &name, long fallback, long min, long max) const {
    return has(name) ? parse_int(get(name, ""), "--" + name, min, max) : fallback;
}

double Args::get_double(const std::string &name, double fallback, double min, double max) const {
    return has(name) ? parse_double(get(name, ""), "--" + name, min, max) : fallback;
}

const std::vector<std::string> &Args::all(const std::string &name) const {
    static const std::vector<std::string> none;
    auto it = options.find(name);
    return it == options.end() ? none : it->second;
}

Args parse_args(int argc, char **argv, int first, const std::set<std::string> &flags,
                const std::set<std::string> &valued) {
    Args args;
    bool only_positional = false;
    for (int i = first; i < argc; ++i) {
        std::string word = argv[i];
        if (only_positional || word.size() < 2 || word.compare(0, 2, "--") != 0) {
            args.positional.push_back(word);
            continue;
        }
        if (word == "--") {
            only_positional = true;
            continue;
        }
        std::string name = word.substr(2), value;
        const size_t eq = name.find('=');
        const bool inline_value = eq != std::string::npos;
        if (inline_value) {
            value = name.substr(eq + 1);
            name = name.substr(0, eq);
        }
        if (flags.count(name)) {
            if (inline_value) usage_error("option --" + name + " takes no value");
            args.options[name].push_back("1");
        } else if (valued.count(name)) {
            if (!inline_value) {
                if (i + 1 >= argc) usage_error("option --" + name + " needs a value");
                value = argv[++i];
            }
            args.options[name].push_back(value);
        } else {
            usage_error("unknown option --" + name + " (see --help)");
        }
    }
    return args;
}

long parse_int(const std::string &text, const std::string &what, long min, long max) {
    char *end = nullptr;
    errno = 0;
    const long value = std::strtol(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || errno != 0 || value < min || value > max)
        usage_error(what + " must be an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "], not '" +
                    text + "'");
    return value;
}

double parse_double(const std::string &text, const std::string &what, double min, double max) {
    char *end = nullptr;
    const double value = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || !std::isfinite(value) || value < min || value > max) {
        std::ostringstream range;
        range << "[" << min << ", " << max << "]";
        usage_error(what + " must be a number in " + range.str() + ", not '" + text + "'");
    }
    return value;
}

// A policy field whose range the library checks (reset_policy_create / reset_set_policy, whose
// message names the field): only text that is not a number a float holds is refused here.
static float parse_float(const std::string &text, const std::string &what) {
    char *end = nullptr;
    const double value = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || !std::isfinite(value) || std::fabs(value) > double(FLT_MAX))
        usage_error(what + " must be a number, not '" + text + "'");
    return float(value);
}

// --- models ----------------------------------------------------------------

const std::set<std::string> kModelValued = {"weights", "lm-head", "backend", "threads", "context", "kv-cache"};

std::set<std::string> with_model_flags(std::set<std::string> flags) {
    flags.insert("no-mmap");
    return flags;
}

reset_kv_cache kv_cache_from_args(const Args &args) {
    const std::string name = args.get("kv-cache", "bf16");
    if (name == "bf16") return RESET_KV_CACHE_BF16;
    if (name == "fp8") return RESET_KV_CACHE_FP8;
    if (name == "fp32") return RESET_KV_CACHE_FP32;
    usage_error("unknown KV cache type '" + name + "' (bf16, fp8, fp32)");
}

reset_weights parse_weights(const std::string &name) {
    if (name == "auto") return RESET_WEIGHTS_AUTO;
    if (name == "bf16") return RESET_WEIGHTS_BF16;
    if (name == "nvfp4" || name == "w4a16") return RESET_WEIGHTS_NVFP4_W4A16;
    if (name == "w4a4") return RESET_WEIGHTS_NVFP4_W4A4;
    usage_error("unknown weight format '" + name + "' (auto, bf16, nvfp4, w4a4)");
}

const char *weights_name(reset_weights weights) {
    switch (weights) {
    case RESET_WEIGHTS_BF16: return "bf16";
    case RESET_WEIGHTS_NVFP4_W4A16: return "nvfp4 (w4a16)";
    case RESET_WEIGHTS_NVFP4_W4A4: return "nvfp4 (w4a4)";
    default: return "auto";
    }
}

const char *backend_name(reset_backend backend) {
    switch (backend) {
    case RESET_BACKEND_CPU: return "cpu";
    case RESET_BACKEND_CUDA: return "cuda";
    default: return "auto";
    }
}

static bool is_directory(const std::string &path) {
    struct stat st;
    return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// The directory holding this executable, to find models/ of the checkout it
// was built from (build/samples/reset -> ../../models/default).
std::string executable_dir() {
    char buffer[4096];
    const ssize_t n = readlink("/proc/self/exe", buffer, sizeof buffer - 1);
    if (n <= 0) return ".";
    std::string path(buffer, size_t(n));
    const size_t slash = path.rfind('/');
    return slash == std::string::npos ? "." : path.substr(0, slash);
}

std::string model_path_or_default(const Args &args, size_t index) {
    if (args.positional.size() > index) return args.positional[index];
    // An explicit RESET_MODEL wins, and a wrong one is an error, never a
    // silent fall back to the embedded model.
    if (const char *env = std::getenv("RESET_MODEL")) {
        if (is_directory(env)) return env;
        fail(std::string("RESET_MODEL='") + env + "' is not a model directory");
    }
    std::vector<std::string> candidates;
    const std::string exe = executable_dir();
    for (const char *relative : {"/../models/default", "/../../models/default", "/../share/reset/models/default"})
        candidates.push_back(exe + relative);
#ifdef RESET_CHECKOUT_DEFAULT_MODEL
    candidates.push_back(RESET_CHECKOUT_DEFAULT_MODEL);  // the checkout this executable was built from
#endif
    candidates.push_back("models/default");
    for (const std::string &candidate : candidates)
        if (is_directory(candidate)) return candidate;
    fail("no model given and no default model found (RESET_MODEL, models/default); name a Hugging Face model "
         "directory, e.g. `reset chat tests/fixtures/chat-model`, or set RESET_MODEL=/path/to/model");
}

Model::Model(const std::string &path, const Args &args) {
    reset_model_options options;
    reset_model_options_init(&options);
    options.weights = parse_weights(args.get("weights", "auto"));
    // auto: the lm_head as the checkpoint stores it (BF16 unless the file holds NVFP4);
    // nvfp4: a BF16 one quantized on load as well (the library refuses it with BF16 weights).
    const std::string lm_head = args.get("lm-head", "auto");
    if (lm_head == "nvfp4") options.quantize_lm_head = 1;
    else if (lm_head != "auto") usage_error("unknown lm_head format '" + lm_head + "' (auto, nvfp4)");
    const std::string backend = args.get("backend", "auto");
    if (backend == "auto") options.backend = RESET_BACKEND_AUTO;
    else if (backend == "cpu") options.backend = RESET_BACKEND_CPU;
    else if (backend == "cuda") options.backend = RESET_BACKEND_CUDA;
    else usage_error("unknown backend '" + backend + "' (auto, cpu, cuda)");
    options.threads = int32_t(args.get_int("threads", 0, 0, 1024));
    // llama.cpp's name: the files read whole into memory, so one rewritten meanwhile is an error,
    // not a SIGBUS in the middle of a conversation (reset_file_access).
    if (args.has("no-mmap")) options.file_access = RESET_FILE_ACCESS_READ;
    if (!is_directory(path)) fail("model directory '" + path + "' does not exist");
    // Loading may quantize a large checkpoint layer by layer: the library
    // reports the fraction done, drawn as a bar with rate and ETA.
    Progress progress(std::string("loading ") + weights_name(options.weights), 100, "%");
    options.progress = [](float fraction, void *user) {
        static_cast<Progress *>(user)->update(uint64_t(fraction * 100.0f));
        return 0;
    };
    options.progress_user_data = &progress;
    const double start = now_seconds();
    const reset_status status = reset_model_load(path.c_str(), &options, &handle);
    load_seconds = now_seconds() - start;
    if (status == RESET_OK) progress.finish();
    check(status, "cannot load model '" + path + "'");
    reset_model_info_init(&info);
    check(reset_model_get_info(handle, &info), "model info");
}

const reset_tokenizer *Model::tokenizer() const {
    const reset_tokenizer *tokenizer = reset_model_tokenizer(handle);
    if (!tokenizer) fail("the model directory has no tokenizer (tokenizer.json or tokenizer.model)");
    return tokenizer;
}

Session::Session(reset_model *model, int32_t max_context, int32_t sequences, int32_t top_logprobs,
                 reset_kv_cache kv_cache) {
    reset_session_options options;
    reset_session_options_init(&options);
    options.kv_cache = kv_cache;
    options.max_context = max_context;
    options.sequences = sequences;
    options.top_logprobs = top_logprobs;
    check(reset_session_create(model, &options, &handle), "cannot create a session");
}

// --- policies ----------------------------------------------------------------

PolicySpec parse_policy(const std::string &text) {
    PolicySpec spec;
    reset_policy_params_init(&spec.params);
    spec.label = text;
    std::vector<std::string> words;
    std::string word;
    for (char c : text + " ") {
        if (c == ' ' || c == '\t' || c == ':' || c == ',') {
            if (!word.empty()) words.push_back(word);
            word.clear();
        } else {
            word += c;
        }
    }
    if (words.empty()) usage_error("empty policy (greedy, fixed T, reset, entropy)");
    reset_policy_params &p = spec.params;
    const std::string &kind = words[0];
    size_t next = 1;
    if (kind == "greedy") {
        p.kind = RESET_POLICY_GREEDY;
    } else if (kind == "fixed") {
        p.kind = RESET_POLICY_FIXED;
        p.top_p = 0.95f;  // the paper's baseline sampling
        if (next < words.size() && words[next].find('=') == std::string::npos)
            p.temperature = float(parse_double(words[next++], "fixed temperature", 0, 100));
    } else if (kind == "reset" || kind == "entropy") {
        p.kind = kind == "reset" ? RESET_POLICY_RESET : RESET_POLICY_ENTROPY;
        p.top_p = 0.95f;
    } else {
        usage_error("unknown policy '" + kind + "' (greedy, fixed T, reset, entropy)");
    }
    for (; next < words.size(); ++next) {
        const std::string &kv = words[next];
        const size_t eq = kv.find('=');
        if (eq == std::string::npos) usage_error("policy parameter '" + kv + "' is not key=value");
        const std::string key = kv.substr(0, eq), value = kv.substr(eq + 1);
        if (key == "t" || key == "temperature") p.temperature = float(parse_double(value, key, 0, 100));
        else if (key == "top_p") p.top_p = float(parse_double(value, key, 0, 1));
        else if (key == "top_k") p.top_k = int32_t(parse_int(value, key, 0, 1 << 30));
        else if (key == "min_p") p.min_p = float(parse_double(value, key, 0, 1));
        else if (key == "seed") p.seed = uint64_t(parse_int(value, key, 0, 0x7fffffffffffffffL));
        else if (key == "t_high") p.t_high = float(parse_double(value, key, 0, 100));
        else if (key == "t_low") p.t_low = float(parse_double(value, key, 0, 100));
        else if (key == "tau0") p.tau0 = float(parse_double(value, key, 0, 100));
        else if (key == "window") p.window = int32_t(parse_int(value, key, 1, 1 << 20));
        else if (key == "preset") spec.preset = value;
        else if (key == "presence_penalty") p.presence_penalty = float(parse_double(value, key, -2, 2));
        else if (key == "frequency_penalty") p.frequency_penalty = float(parse_double(value, key, -2, 2));
        else if (key == "repetition_penalty") p.repetition_penalty = parse_float(value, key);
        else usage_error("unknown policy parameter '" + key + "'");
    }
    spec.point_preset();
    return spec;
}

const std::set<std::string> kSamplingValued = {"seed", "top-p", "top-k", "presence-penalty", "frequency-penalty",
                                               "repetition-penalty"};

void apply_sampling_overrides(PolicySpec &spec, const Args &args) {
    if (args.has("seed")) spec.params.seed = uint64_t(args.get_int("seed", 0, 0, 0x7fffffffffffffffL));
    if (args.has("top-p")) spec.params.top_p = float(args.get_double("top-p", 1, 0, 1));
    if (args.has("top-k")) spec.params.top_k = int32_t(args.get_int("top-k", 0, 0, 1 << 30));
    if (args.has("presence-penalty"))
        spec.params.presence_penalty = float(args.get_double("presence-penalty", 0, -2, 2));
    if (args.has("frequency-penalty"))
        spec.params.frequency_penalty = float(args.get_double("frequency-penalty", 0, -2, 2));
    if (args.has("repetition-penalty"))
        spec.params.repetition_penalty = parse_float(args.get("repetition-penalty", ""), "--repetition-penalty");
}

bool has_sampling_overrides(const Args &args) {
    for (const std::string &name : kSamplingValued)
        if (args.has(name)) return true;
    return false;
}

void check_policy_args(const Args &args) {
    PolicySpec scratch;
    if (args.has("policy")) scratch = parse_policy(args.get("policy", ""));
    else reset_policy_params_init(&scratch.params);  // the model's own sampling stands in
    apply_sampling_overrides(scratch, args);
    // The library's own validation, before the model loads: a standalone policy
    // checks every parameter as reset_set_policy will.  T_low / tau0 left to the
    // model's preset are only known once it loads, so they are stood in for here.
    reset_policy_params params = scratch.params;
    if (!params.preset && params.t_low < 0) params.t_low = 0.5f * params.t_high;
    if (!params.preset && params.tau0 < 0) params.tau0 = 1.0f;
    reset_policy *policy = nullptr;
    const reset_status status = reset_policy_create(&params, nullptr, &policy);
    reset_policy_free(policy);
    if (status != RESET_OK) usage_error(std::string("bad sampling options: ") + reset_last_error());
}

void set_policy_from_args(reset_session *session, const Args &args) {
    if (!args.has("policy") && !has_sampling_overrides(args)) return;
    PolicySpec spec;
    if (args.has("policy")) {
        spec = parse_policy(args.get("policy", ""));
    } else {
        reset_policy_params_init(&spec.params);
        check(reset_session_get_policy(session, &spec.params), "cannot read the session's policy");
        spec.label = "the model's sampling";
    }
    apply_sampling_overrides(spec, args);
    check(reset_set_policy(session, &spec.params), "cannot use policy '" + spec.label + "'");
}

reset_status close_reasoning(reset_session *session, const reset_tokenizer *tokenizer, bool after_newline,
                             std::string *text, std::vector<int32_t> *ids, int32_t sequence) {
    *text = std::string(after_newline ? "" : "\n") + "</think>\n\n";
    *ids = tokenize(tokenizer, *text, RESET_TOKENIZE_PARSE_SPECIAL);
    return sequence < 0 ? reset_prefill(session, ids->data(), ids->size())
                        : reset_prefill_sequence(session, sequence, ids->data(), ids->size());
}

void ReasoningTracker::see(std::string_view piece) {
    if (!thinking && piece.find("<think>") != std::string_view::npos) {
        thinking = true;
        tokens = 0;
    } else if (thinking && piece.find("</think>") != std::string_view::npos) {
        thinking = false;
    } else if (thinking) {
        ++tokens;
        after_newline = !piece.empty() && piece.back() == '\n';
    }
}

// The penalties apply to every kind, greedy included; they are named only when
// on (0, or 1 for the multiplicative repetition penalty, is off), so the summary
// of a policy without them reads as it did before 0.2.
static std::string describe_penalties(const reset_policy_params &p) {
    struct Penalty {
        const char *name;
        float value, off;
    };
    std::string text;
    for (const Penalty &penalty : {Penalty{"presence_penalty", p.presence_penalty, 0.0f},
                                   Penalty{"frequency_penalty", p.frequency_penalty, 0.0f},
                                   Penalty{"repetition_penalty", p.repetition_penalty, 1.0f}}) {
        if (penalty.value == penalty.off) continue;
        char number[32];
        std::snprintf(number, sizeof number, "%g", double(penalty.value));
        text += std::string(" ") + penalty.name + "=" + number;
    }
    return text;
}

// The kind and its own parameters.
static std::string describe_kind(const reset_policy_params &p) {
    char buffer[256];
    switch (p.kind) {
    case RESET_POLICY_GREEDY: return "greedy";
    case RESET_POLICY_FIXED:
        std::snprintf(buffer, sizeof buffer, "fixed T=%g top_p=%g top_k=%d seed=%llu", p.temperature, p.top_p,
                      p.top_k, (unsigned long long)p.seed);
        return buffer;
    default: {
        // Negative T_low / tau0: not resolved yet (the model's preset, at reset_set_policy).
        auto value = [](float v) {
            char text[32];
            std::snprintf(text, sizeof text, "%g", v);
            return v < 0 ? std::string("preset") : std::string(text);
        };
        std::snprintf(buffer, sizeof buffer, "%s T_high=%g T_low=%s tau0=%s window=%d top_p=%g top_k=%d seed=%llu",
                      p.kind == RESET_POLICY_RESET ? "reset" : "entropy", p.t_high, value(p.t_low).c_str(),
                      value(p.tau0).c_str(), p.window, p.top_p, p.top_k, (unsigned long long)p.seed);
        return buffer;
    }
    }
}

std::string describe_policy(const reset_policy_params &p) { return describe_kind(p) + describe_penalties(p); }

// --- text ------------------------------------------------------------------

std::string chat_render(const reset_tokenizer *tokenizer, const std::vector<Message> &messages, bool thinking,
                        bool generation_prompt, const std::string &tools_json) {
    std::vector<reset_chat_message> raw;
    std::vector<const char *> tool_calls;
    bool any_calls = false;
    for (const Message &m : messages) {
        raw.push_back({m.role.c_str(), m.content.data(), m.content.size()});
        tool_calls.push_back(m.tool_calls_json.empty() ? nullptr : m.tool_calls_json.c_str());
        any_calls = any_calls || !m.tool_calls_json.empty();
    }
    reset_chat_options options;
    reset_chat_options_init(&options);
    options.enable_thinking = thinking ? 1 : 0;
    options.add_generation_prompt = generation_prompt ? 1 : 0;
    if (!tools_json.empty()) options.tools_json = tools_json.c_str();
    if (any_calls) options.tool_calls_json = tool_calls.data();
    size_t needed = 0;
    reset_status status = reset_chat_format(tokenizer, raw.data(), raw.size(), &options, nullptr, 0, &needed);
    if (status != RESET_ERR_BUFFER_TOO_SMALL && status != RESET_OK) check(status, "chat template");
    std::string text(needed, '\0');
    check(reset_chat_format(tokenizer, raw.data(), raw.size(), &options, &text[0], text.size(), &needed),
          "chat template");
    text.resize(needed);
    return text;
}

std::vector<int32_t> tokenize(const reset_tokenizer *tokenizer, const std::string &text, uint32_t flags) {
    size_t needed = 0;
    reset_status status = reset_tokenize(tokenizer, text.data(), text.size(), flags, nullptr, 0, &needed);
    if (status != RESET_ERR_BUFFER_TOO_SMALL && status != RESET_OK) check(status, "tokenize");
    std::vector<int32_t> ids(needed);
    check(reset_tokenize(tokenizer, text.data(), text.size(), flags, ids.data(), ids.size(), &needed), "tokenize");
    ids.resize(needed);
    return ids;
}

const std::set<std::string> kStopValued = {"stop", "stop-id", "logit-bias"};

StopArgs::StopArgs(const Args &args) : strings(args.all("stop")), ignore_eos(args.has("ignore-eos")) {
    for (const std::string &id : args.all("stop-id")) ids.push_back(int32_t(parse_int(id, "--stop-id", 0, INT32_MAX)));
}

void StopArgs::set(reset_session *session, long max_tokens) const {
    std::vector<const char *> texts;
    for (const std::string &text : strings) texts.push_back(text.c_str());
    reset_stop_options stop;
    reset_stop_options_init(&stop);
    stop.strings = texts.data();
    stop.string_count = texts.size();
    stop.ids = ids.data();
    stop.id_count = ids.size();
    stop.max_tokens = int32_t(std::min<long>(max_tokens, INT32_MAX));
    stop.ignore_eos = ignore_eos ? 1 : 0;
    check(reset_set_stop(session, &stop), "the stop conditions");
}

void set_logit_bias_from_args(reset_session *session, const Args &args) {
    std::vector<reset_logit_bias> bias;
    for (const std::string &entry : args.all("logit-bias")) {
        const size_t colon = entry.find(':');
        if (colon == std::string::npos) usage_error("--logit-bias takes ID:BIAS, not '" + entry + "'");
        const std::string value = entry.substr(colon + 1);
        const float amount = value == "-inf" ? -INFINITY
                                             : float(parse_double(value, "--logit-bias's BIAS", -100.0, 100.0));
        bias.push_back({int32_t(parse_int(entry.substr(0, colon), "--logit-bias's ID", 0, INT32_MAX)), amount});
    }
    check(reset_set_logit_bias(session, bias.data(), bias.size()), "the logit bias");
}

std::vector<int32_t> session_tokens(const reset_session *session, int32_t sequence) {
    size_t needed = 0;
    reset_status status = reset_session_tokens(session, sequence, nullptr, 0, &needed);
    if (status != RESET_ERR_BUFFER_TOO_SMALL && status != RESET_OK) check(status, "session tokens");
    std::vector<int32_t> ids(needed);
    check(reset_session_tokens(session, sequence, ids.data(), ids.size(), &needed), "session tokens");
    return ids;
}

std::string detokenize(const reset_tokenizer *tokenizer, const std::vector<int32_t> &ids, uint32_t flags) {
    size_t needed = 0;
    reset_status status = reset_detokenize(tokenizer, ids.data(), ids.size(), flags, nullptr, 0, &needed);
    std::string text(needed, '\0');
    if (status == RESET_ERR_BUFFER_TOO_SMALL)
        status = reset_detokenize(tokenizer, ids.data(), ids.size(), flags, &text[0], text.size(), &needed);
    check(status, "detokenize");
    text.resize(needed);
    return text;
}

std::string held_text(const reset_session *session, int32_t sequence) {
    const char *held = nullptr;
    size_t held_len = 0;
    check(reset_session_held_text(session, sequence, &held, &held_len), "the held text");
    return std::string(held, held_len);
}

std::string token_text(const reset_tokenizer *tokenizer, int32_t id) {
    char buffer[256];
    size_t n = 0;
    if (reset_token_to_text(tokenizer, id, 0, buffer, sizeof buffer, &n) != RESET_OK) return "";
    return std::string(buffer, n);
}

// --- progress ----------------------------------------------------------------

Progress::Progress(std::string label, uint64_t total, std::string unit)
    : label_(std::move(label)), unit_(std::move(unit)), total_(total), start_(now_seconds()), tty_(isatty(2)) {}

static std::string clock_text(double seconds) {
    if (!std::isfinite(seconds) || seconds < 0) return "--:--";
    const long s = long(seconds + 0.5);
    char buffer[32];
    if (s >= 3600) std::snprintf(buffer, sizeof buffer, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
    else std::snprintf(buffer, sizeof buffer, "%ld:%02ld", s / 60, s % 60);
    return buffer;
}

void Progress::update(uint64_t done, const std::string &note) {
    const double t = now_seconds(), elapsed = t - start_;
    const bool last = done >= total_;
    if (last && printed_last_) return;
    printed_last_ = last;
    // Plain lines go to logs: one every 5 s is enough; a bar redraws at 10 Hz.
    if (!last && t - last_print_ < (tty_ ? 0.1 : 5.0)) return;
    last_print_ = t;
    const double rate = elapsed > 0 ? double(done) / elapsed : 0;
    const double eta = rate > 0 ? double(total_ - std::min(done, total_)) / rate : NAN;
    char stats[160];
    std::snprintf(stats, sizeof stats, "%llu/%llu %s  %.2f %s/s  ETA %s", (unsigned long long)done,
                  (unsigned long long)total_, unit_.c_str(), rate, unit_.c_str(), clock_text(eta).c_str());
    if (tty_) {
        const int width = 24;
        const int filled = total_ ? int(double(width) * double(std::min(done, total_)) / double(total_)) : width;
        std::string bar(size_t(filled), '#');
        bar.resize(size_t(width), '.');
        std::fprintf(stderr, "\r\033[K%s [%s] %s %s", label_.c_str(), bar.c_str(), stats, note.c_str());
    } else {
        std::fprintf(stderr, "%s: %s %s\n", label_.c_str(), stats, note.c_str());
    }
    std::fflush(stderr);
}

void Progress::finish(const std::string &note) {
    update(total_, note);
    if (tty_) std::fputc('\n', stderr);
}

}  // namespace cli
