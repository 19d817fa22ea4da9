// bench.cpp — `reset bench`: one command that reproduces the benchmarks.
//
//   decode: prefill and decode tokens/s of a model on the backend it loads on
//           (greedy, synthetic prompt ids; the median of --repeat runs).
//   gemv:   runs the NVFP4 GEMV benchmark binary of a CUDA build.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "cli.h"

namespace cli {

namespace {

bool executable(const std::string &path) {
    struct stat st;
    return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

int bench_gemv(int argc, char **argv) {
    const std::string dir = executable_dir();
    // build/samples/reset and build/tests/nvfp4_gemv_bench (the CMake target of a CUDA build).
    std::vector<std::string> candidates = {dir + "/../tests/nvfp4_gemv_bench", dir + "/nvfp4_gemv_bench"};
    // An explicit path is the user's choice: never fall back to another binary behind their back.
    if (const char *env = std::getenv("RESET_GEMV_BENCH")) candidates = {env};
    for (const std::string &path : candidates) {
        if (!executable(path)) continue;
        std::vector<char *> child = {const_cast<char *>(path.c_str())};
        for (int i = 3; i < argc; ++i) child.push_back(argv[i]);
        child.push_back(nullptr);
        std::fflush(stdout);
        execv(path.c_str(), child.data());
        fail("cannot run " + path + ": " + std::strerror(errno));
    }
    fail("the GEMV benchmark (tests/bench/nvfp4_gemv_bench) is not built here: it needs a CUDA build "
         "(cmake -DRESET_CUDA=ON); or set RESET_GEMV_BENCH to its path");
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// "1,4,8" -> {1, 4, 8}, each in [lo, hi].
std::vector<long> int_list(const std::string &text, const char *option, long lo, long hi) {
    std::vector<long> values;
    size_t at = 0;
    while (at <= text.size()) {
        const size_t comma = text.find(',', at);
        const std::string piece = text.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
        char *end = nullptr;
        const long v = std::strtol(piece.c_str(), &end, 10);
        if (piece.empty() || *end || v < lo || v > hi)
            usage_error(std::string("--") + option + " takes numbers in " + std::to_string(lo) + ".." +
                        std::to_string(hi) + ", comma-separated");
        values.push_back(v);
        if (comma == std::string::npos) break;
        at = comma + 1;
    }
    return values;
}

struct DecodeCase {
    long sequences = 1, prompt_tokens = 128;
    bool fp8 = false, eager = false;
    long prefill_gemm_tokens = 0;  // reset_session_options.prefill_gemm_tokens
    long programmatic_launch = 0;  // reset_session_options.programmatic_launch
    long top_logprobs = 0;         // reset_session_options.top_logprobs
};

struct DecodeResult {
    double prefill_tokens_per_s = 0, ms_per_step = 0;
    uint64_t session_device_bytes = 0;  // the session's KV cache, activations and sampler on the device
};

DecodeResult run_decode_case(const Model &model, const DecodeCase &c, long tokens, long repeat,
                             const PolicySpec &policy) {
    const int32_t vocab = model.info.vocab_size;
    auto is_eos = [&](int32_t id) {
        for (int k = 0; k < model.info.n_eos && k < 8; ++k)
            if (model.info.eos_ids[k] == id) return true;
        return false;
    };
    // Ids spread over the vocabulary, avoiding end-of-generation ids.
    std::vector<int32_t> prompt;
    for (long i = 0; i < c.prompt_tokens; ++i) {
        int32_t id = int32_t((uint64_t(i) * 7919u + 17u) % uint64_t(vocab));
        while (is_eos(id)) id = (id + 1) % vocab;
        prompt.push_back(id);
    }
    const long context = std::min<long>(model.info.max_position_embeddings, c.prompt_tokens + tokens + 8);
    if (c.prompt_tokens + tokens > context) usage_error("prompt and decoded tokens exceed the model's positions");
    reset_session_options options;
    reset_session_options_init(&options);
    options.max_context = int32_t(context);
    options.sequences = int32_t(c.sequences);
    options.kv_cache = c.fp8 ? RESET_KV_CACHE_FP8 : RESET_KV_CACHE_BF16;
    options.eager = c.eager ? 1 : 0;
    options.prefill_gemm_tokens = int32_t(c.prefill_gemm_tokens);
    options.programmatic_launch = int32_t(c.programmatic_launch);
    options.top_logprobs = int32_t(c.top_logprobs);
    reset_session *session = nullptr;
    check(reset_session_create(model.handle, &options, &session), "session");
    const uint64_t session_bytes = reset_session_device_bytes(session);
    std::vector<double> prefill_rates, step_ms;
    std::vector<reset_step> steps(static_cast<size_t>(c.sequences));
    try {
        check(reset_set_policy(session, &policy.params), "policy");
        // Every timed step a full forward pass of every sequence: an end-of-generation id is one
        // more token (until 0.5 a single sequence prefilled it back, untimed, and parallel ones ended).
        reset_stop_options stop;
        reset_stop_options_init(&stop);
        stop.ignore_eos = 1;
        check(reset_set_stop(session, &stop), "stop conditions");
        for (long r = 0; r < repeat; ++r) {
            check(reset_session_reset(session), "reset");
            double t0 = now_seconds();
            check(reset_prefill(session, prompt.data(), prompt.size()), "prefill");
            prefill_rates.push_back(double(c.prompt_tokens) / (now_seconds() - t0));
            std::vector<double> times;
            for (long n = 0; n < tokens; ++n) {
                reset_step_init(steps.data(), steps.size());
                int32_t active = 0;
                t0 = now_seconds();
                check(reset_decode_step(session, steps.data(), steps.size(), &active), "decode");
                times.push_back(now_seconds() - t0);
                if (active == 0) break;
            }
            step_ms.push_back(1e3 * median(times));
        }
    } catch (...) {
        reset_session_free(session);
        throw;
    }
    reset_session_free(session);
    return {median(prefill_rates), median(step_ms), session_bytes};
}

int bench_decode(int argc, char **argv) {
    std::set<std::string> valued = kModelValued;
    valued.insert({"prompt-tokens", "tokens", "repeat", "sequences", "kv-cache", "policy", "prefill-gemm-tokens",
                   "programmatic-launch", "top-logprobs"});
    const Args args = parse_args(argc, argv, 3, with_model_flags({"help", "eager", "compare-eager", "json"}), valued);
    if (args.has("help") || args.positional.size() != 1) {
        std::printf(
            "usage: reset bench decode MODEL_DIR [--prompt-tokens N,..] [--tokens N] [--repeat R] [--sequences B,..]\n"
            "                          [--policy TEXT] [--kv-cache bf16|fp8|bf16,fp8] [--eager | --compare-eager]\n"
            "                          [--prefill-gemm-tokens T,..] [--programmatic-launch 0,-1]\n"
            "                          [--top-logprobs N,..] [--json]\n"
            "                          [--weights auto|bf16|nvfp4|w4a4] [--lm-head auto|nvfp4]\n"
            "                          [--backend auto|cpu|cuda] [--threads N] [--no-mmap]\n"
            "For every combination of the comma-separated lists: prefill N synthetic prompt ids (default 128),\n"
            "decode --tokens steps (default 128) of B parallel sequences (default 1) under --policy (default\n"
            "greedy; `fixed T`, `reset` and `entropy` keep top-p 0.95 unless top_p=1 is given), R times (default\n"
            "3); print the median prefill tokens/s and the median ms per decode step\n"
            "(wall time of reset_prefill / reset_decode_step: host work and synchronisation included).\n"
            "--kv-cache and --eager (launch kernels one by one instead of replaying the step's CUDA graph;\n"
            "--compare-eager runs both) and --prefill-gemm-tokens (prompt chunks of at least T tokens take the GEMM\n"
            "path; 0 = the library's default, -1 = never) and --programmatic-launch (0 = programmatic dependent\n"
            "launch where the GPU has it, -1 = plain stream order) apply to the CUDA backend.  --top-logprobs\n"
            "(0..20, default 0): each step also reports that many most likely tokens.  --json: one JSON\n"
            "object per case.\n");
        return args.has("help") ? 0 : 2;
    }
    const std::vector<long> prompt_list = int_list(args.get("prompt-tokens", "128"), "prompt-tokens", 1, 1 << 24);
    const std::vector<long> sequence_list = int_list(args.get("sequences", "1"), "sequences", 1, 8);
    const std::vector<long> gemm_list =
        int_list(args.get("prefill-gemm-tokens", "0"), "prefill-gemm-tokens", -1, 1 << 24);
    const std::vector<long> launch_list = int_list(args.get("programmatic-launch", "0"), "programmatic-launch", -1, 0);
    const std::vector<long> top_list =
        int_list(args.get("top-logprobs", "0"), "top-logprobs", 0, RESET_MAX_TOP_LOGPROBS);
    const long tokens = args.get_int("tokens", 128, 1, 1 << 24);
    const long repeat = args.get_int("repeat", 3, 1, 1000);
    const std::string kv = args.get("kv-cache", "bf16");
    std::vector<bool> kv_list;
    if (kv == "bf16") kv_list = {false};
    else if (kv == "fp8") kv_list = {true};
    else if (kv == "bf16,fp8") kv_list = {false, true};
    else usage_error("--kv-cache must be bf16, fp8 or bf16,fp8");
    std::vector<bool> eager_list = {args.has("eager")};
    if (args.has("compare-eager")) eager_list = {false, true};
    const PolicySpec policy = parse_policy(args.get("policy", "greedy"));
    Model model(args.positional[0], args);
    if (!args.has("json"))
        std::printf("model %s: %s, %d layers, %s on %s\n", args.positional[0].c_str(), model.info.architecture,
                    model.info.n_layers, weights_name(model.info.weights), backend_name(model.info.backend));
    // Every combination of the lists, the first list outermost.
    std::vector<DecodeCase> cases(1);
    const auto expand = [&cases](const auto &values, auto set) {
        std::vector<DecodeCase> next;
        for (const DecodeCase &base : cases)
            for (const auto value : values) {
                DecodeCase c = base;
                set(c, value);
                next.push_back(c);
            }
        cases = std::move(next);
    };
    expand(prompt_list, [](DecodeCase &c, long v) { c.prompt_tokens = v; });
    expand(kv_list, [](DecodeCase &c, bool v) { c.fp8 = v; });
    expand(sequence_list, [](DecodeCase &c, long v) { c.sequences = v; });
    expand(eager_list, [](DecodeCase &c, bool v) { c.eager = v; });
    expand(gemm_list, [](DecodeCase &c, long v) { c.prefill_gemm_tokens = v; });
    expand(launch_list, [](DecodeCase &c, long v) { c.programmatic_launch = v; });
    expand(top_list, [](DecodeCase &c, long v) { c.top_logprobs = v; });
    for (const DecodeCase &c : cases) {
        const DecodeResult r = run_decode_case(model, c, tokens, repeat, policy);
        const double tokens_per_s = 1e3 * double(c.sequences) / r.ms_per_step;
        if (args.has("json")) {
            std::printf(
                "{\"model\": \"%s\", \"architecture\": \"%s\", \"weights\": \"%s\", \"lm_head\": \"%s\", "
                "\"backend\": \"%s\", \"weight_bytes\": %llu, \"sequences\": %ld, "
                "\"prompt_tokens\": %ld, \"decode_tokens\": %ld, \"kv_cache\": \"%s\", "
                "\"cuda_graph\": %s, \"policy\": \"%s\", \"top_k\": %d, \"top_p\": %.3g, \"min_p\": %.3g, "
                "\"presence_penalty\": %.3g, \"frequency_penalty\": %.3g, \"repetition_penalty\": %.3g, "
                "\"prefill_tokens_per_s\": %.1f, "
                "\"ms_per_step\": %.4f, \"tokens_per_s\": %.1f, \"repeat\": %ld, "
                "\"model_device_bytes\": %llu, \"session_device_bytes\": %llu, "
                "\"prefill_gemm_tokens\": %ld, \"programmatic_launch\": %ld, \"top_logprobs\": %ld}\n",
                args.positional[0].c_str(), model.info.architecture, weights_name(model.info.weights),
                model.info.lm_head_nvfp4 ? "nvfp4" : "bf16",
                backend_name(model.info.backend), (unsigned long long)model.info.weight_bytes, c.sequences,
                c.prompt_tokens, tokens, c.fp8 ? "fp8" : "bf16", c.eager ? "false" : "true", policy.label.c_str(),
                int(policy.params.top_k), double(policy.params.top_p), double(policy.params.min_p),
                double(policy.params.presence_penalty), double(policy.params.frequency_penalty),
                double(policy.params.repetition_penalty),
                r.prefill_tokens_per_s, r.ms_per_step, tokens_per_s, repeat,
                (unsigned long long)model.info.device_bytes, (unsigned long long)r.session_device_bytes,
                c.prefill_gemm_tokens, c.programmatic_launch, c.top_logprobs);
        } else {
            std::printf("prefill %ld tokens: %.1f tokens/s (median of %ld)\n", c.prompt_tokens,
                        r.prefill_tokens_per_s, repeat);
            std::printf("decode  %ld steps: %.3f ms per step, %.1f tokens/s (batch %ld, %s%s%s%s)\n", tokens,
                        r.ms_per_step, tokens_per_s, c.sequences, policy.label.c_str(), c.fp8 ? ", FP8 KV" : "",
                        c.eager ? ", eager" : "",
                        c.top_logprobs ? (", top_logprobs " + std::to_string(c.top_logprobs)).c_str() : "");
        }
        std::fflush(stdout);
    }
    return 0;
}

}  // namespace

int cmd_bench(int argc, char **argv, const char *) {
    const std::string what = argc > 2 ? argv[2] : "";
    if (what == "gemv") return bench_gemv(argc, argv);
    if (what == "decode") return bench_decode(argc, argv);
    usage_error("bench what? `reset bench decode MODEL_DIR` or `reset bench gemv [ARGS]`");
}

}  // namespace cli
