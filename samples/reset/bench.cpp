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

int bench_decode(int argc, char **argv) {
    std::set<std::string> valued = kModelValued;
    valued.insert({"prompt-tokens", "tokens", "repeat"});
    const Args args = parse_args(argc, argv, 3, {"help"}, valued);
    if (args.has("help") || args.positional.size() != 1) {
        std::printf(
            "usage: reset bench decode MODEL_DIR [--prompt-tokens N] [--tokens N] [--repeat R]\n"
            "                          [--weights auto|bf16|nvfp4|w4a4] [--backend auto|cpu|cuda] [--threads N]\n"
            "Prefills N synthetic prompt ids (default 128), decodes --tokens greedily (default 128), R times\n"
            "(default 3), and prints the median prefill and decode tokens/s.  Batch 1.\n");
        return args.has("help") ? 0 : 2;
    }
    const long prompt_tokens = args.get_int("prompt-tokens", 128, 1, 1 << 24);
    const long tokens = args.get_int("tokens", 128, 1, 1 << 24);
    const long repeat = args.get_int("repeat", 3, 1, 1000);
    Model model(args.positional[0], args);
    const int32_t vocab = model.info.vocab_size;
    auto is_eos = [&](int32_t id) {
        for (int k = 0; k < model.info.n_eos && k < 8; ++k)
            if (model.info.eos_ids[k] == id) return true;
        return false;
    };
    // Ids spread over the vocabulary, avoiding end-of-generation ids.
    std::vector<int32_t> prompt;
    for (long i = 0; i < prompt_tokens; ++i) {
        int32_t id = int32_t((uint64_t(i) * 7919u + 17u) % uint64_t(vocab));
        while (is_eos(id)) id = (id + 1) % vocab;
        prompt.push_back(id);
    }
    const long context = std::min<long>(model.info.max_position_embeddings, prompt_tokens + tokens + 8);
    if (prompt_tokens + tokens > context) usage_error("prompt and decoded tokens exceed the model's positions");
    Session session(model.handle, int32_t(context), 1);
    reset_policy_params greedy;
    reset_policy_params_init(&greedy);
    greedy.kind = RESET_POLICY_GREEDY;
    check(reset_set_policy(session.handle, &greedy), "policy");
    std::vector<double> prefill_rates, decode_rates;
    Progress progress("bench", uint64_t(repeat), "runs");
    for (long r = 0; r < repeat; ++r) {
        check(reset_session_reset(session.handle), "reset");
        double t0 = now_seconds();
        check(reset_prefill(session.handle, prompt.data(), prompt.size()), "prefill");
        prefill_rates.push_back(double(prompt_tokens) / (now_seconds() - t0));
        double decode_time = 0;
        for (long n = 0; n < tokens; ++n) {
            reset_step step;
            reset_step_init(&step, 1);
            t0 = now_seconds();
            check(reset_decode_step(session.handle, &step, 1, nullptr), "decode");
            decode_time += now_seconds() - t0;
            // An end-of-generation id is not run through the model: append it
            // (untimed) so that every timed step is a full forward pass.
            if (step.end_of_generation) check(reset_prefill(session.handle, &step.token, 1), "prefill");
        }
        decode_rates.push_back(double(tokens) / decode_time);
        progress.update(uint64_t(r + 1));
    }
    progress.finish();
    std::printf("model %s: %s, %d layers, %s on %s\n", args.positional[0].c_str(), model.info.architecture,
                model.info.n_layers, weights_name(model.info.weights), backend_name(model.info.backend));
    std::printf("prefill %ld tokens: %.1f tokens/s (median of %ld)\n", prompt_tokens, median(prefill_rates), repeat);
    std::printf("decode  %ld tokens: %.1f tokens/s (median of %ld, batch 1, greedy)\n", tokens, median(decode_rates),
                repeat);
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
