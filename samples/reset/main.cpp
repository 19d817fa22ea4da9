// main.cpp — the `reset` command: dispatch to a subcommand, and turn every
// failure into one line on stderr and a non-zero exit code.
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>

#include "cli.h"

static const char kUsage[] =
    "usage: reset COMMAND [ARGS]        (libreset %s)\n"
    "\n"
    "  chat [MODEL_DIR]            talk to a model (streaming, /help inside); stdin may be a pipe\n"
    "  generate MODEL_DIR PROMPT   one answer to stdout; --jsonl FILE writes per-token signals\n"
    "  serve [MODEL_DIR]           an OpenAI-compatible HTTP server (/v1/chat/completions, /v1/completions)\n"
    "  tokenize MODEL_DIR TEXT     token ids (and --pieces: their texts)\n"
    "  info MODEL_DIR              architecture, sizes, weight format, bytes, backend, tokenizer\n"
    "  bench decode MODEL_DIR      prefill and decode tokens/s on this backend\n"
    "  bench gemv [ARGS]           the NVFP4 GEMV benchmark (tests/bench/nvfp4_gemv_bench, CUDA builds)\n"
    "  eval MODEL_DIR DATA.jsonl   math accuracy of policies (\\boxed{} answers), per-sample JSONL\n"
    "  calibrate MODEL_DIR DATA.jsonl   tau0 for ReSET from the model's token entropies\n"
    "  score TEXT EXPECTED         how eval scores one answer (last \\boxed{}, normalised)\n"
    "\n"
    "Common options: --weights auto|bf16|nvfp4|w4a4  --lm-head auto|nvfp4  --backend auto|cpu|cuda  --threads N\n"
    "                --context N  --kv-cache bf16|fp8|fp32  --no-mmap (read the model's files, don't map them)\n"
    "Policies: greedy | fixed T | reset | entropy, then key=value (t_low= tau0= t_high= window= top_p= seed=\n"
    "          presence_penalty= frequency_penalty= repetition_penalty=)\n"
    "Run `reset COMMAND --help` for a command's options.\n";

int main(int argc, char **argv) {
    if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "help")) {
        std::printf(kUsage, reset_version_string());
        return argc < 2 ? 2 : 0;
    }
    if (!std::strcmp(argv[1], "--version")) {
        std::printf("reset (libreset %s)\n", reset_version_string());
        return 0;
    }
    const char *command = argv[1];
    try {
        if (!std::strcmp(command, "chat")) return cli::cmd_chat(argc, argv);
        if (!std::strcmp(command, "generate")) return cli::cmd_generate(argc, argv);
        if (!std::strcmp(command, "tokenize")) return cli::cmd_tokenize(argc, argv);
        if (!std::strcmp(command, "info")) return cli::cmd_info(argc, argv);
        if (!std::strcmp(command, "bench")) return cli::cmd_bench(argc, argv, argv[0]);
        if (!std::strcmp(command, "eval")) return cli::cmd_eval(argc, argv);
        if (!std::strcmp(command, "calibrate")) return cli::cmd_calibrate(argc, argv);
        if (!std::strcmp(command, "score")) return cli::cmd_score(argc, argv);
        if (!std::strcmp(command, "serve")) return cli::cmd_serve(argc, argv);
        std::fprintf(stderr,
                     "reset: unknown command '%s' (chat, generate, serve, tokenize, info, bench, eval, calibrate, score)\n",
                     command);
        return 2;
    } catch (const cli::CliError &e) {
        std::fflush(stdout);
        std::fprintf(stderr, "reset %s: %s\n", command, e.what());
        return e.exit_code;
    } catch (const std::bad_alloc &) {
        std::fprintf(stderr, "reset %s: out of memory\n", command);
        return 1;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "reset %s: %s\n", command, e.what());
        return 1;
    }
}
