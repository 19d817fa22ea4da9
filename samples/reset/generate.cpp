// generate.cpp — `reset generate`, `reset tokenize` and `reset info`.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <iterator>
#include <memory>

#include <nlohmann/json.hpp>

#include "cli.h"

namespace cli {

namespace {

std::set<std::string> with_model_options(std::set<std::string> extra) {
    extra.insert(kModelValued.begin(), kModelValued.end());
    return extra;
}

// The prompt: the positional words after the model, or all of stdin.
std::string prompt_text(const Args &args) {
    if (args.positional.size() > 1 && !(args.positional.size() == 2 && args.positional[1] == "-")) {
        std::string text;
        for (size_t i = 1; i < args.positional.size(); ++i) text += (i > 1 ? " " : "") + args.positional[i];
        return text;
    }
    if (isatty(0)) usage_error("give a prompt after the model directory, or pipe one in");
    std::string text((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
    return text;
}

// A trace line whose "top_logprobs" entries also carry each token's text (the library's line has ids
// only), through nlohmann::json so the rest of the line stays as the library wrote it.
std::string with_top_texts(const std::string &line, const reset_tokenizer *tokenizer) {
    nlohmann::ordered_json record = nlohmann::ordered_json::parse(line);
    for (auto &entry : record["top_logprobs"]) {
        const int32_t id = entry["token"].get<int32_t>();
        entry["text"] = token_text(tokenizer, id);
    }
    return record.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

// --prompt-cache FILE (llama.cpp's): the sequence as an earlier run left it after its prompt
// (reset_save_sequence).  The prefix it shares with this prompt is kept and only the rest is
// prefilled; the state after this prompt is then saved for the next run.  A cache that does not
// fit (another model, a broken file) is reported and ignored: it only ever saves time.
void prefill_with_prompt_cache(reset_session *session, const std::vector<int32_t> &ids, const std::string &path) {
    size_t reused = 0;
    // A missing file, or a sequence file of another model or session, is (re)written; a file that is
    // no sequence file at all may be anything the path names by mistake, so it is left alone.
    bool save = true;
    struct stat info;
    if (::stat(path.c_str(), &info) == 0) {
        const reset_status loaded = reset_load_sequence(session, 0, path.c_str());
        if (loaded != RESET_OK) {
            save = loaded == RESET_ERR_SHAPE || loaded == RESET_ERR_CONTEXT_OVERFLOW;
            std::fprintf(stderr, "reset generate: ignoring the prompt cache%s: %s\n",
                         save ? "" : " (the file is left as it is)", reset_last_error());
            check(reset_session_reset(session), "reset");
        } else {
            const std::vector<int32_t> cached = session_tokens(session, 0);
            size_t common = 0;
            while (common < cached.size() && common < ids.size() && cached[common] == ids[common]) ++common;
            float probe;
            const bool has_logits = reset_session_logits(session, 0, &probe, 0) == RESET_ERR_BUFFER_TOO_SMALL;
            // The whole prompt with its logits is ready to decode; otherwise at least the prompt's last
            // token is prefilled again, which gives them.  The cut restarts the sampler, as a new
            // session given the kept tokens as its prompt would be.
            if (common == ids.size() && cached.size() == ids.size() && has_logits) {
                reused = ids.size();
            } else {
                reused = std::min(common, ids.size() - 1);
                check(reset_truncate(session, int32_t(reused)), "cutting the prompt cache");
            }
        }
    }
    if (reused < ids.size()) check(reset_prefill(session, ids.data() + reused, ids.size() - reused), "prefill");
    std::fprintf(stderr, "reset generate: prompt cache %s: %zu of %zu prompt tokens reused\n", path.c_str(), reused,
                 ids.size());
    if (save && reused < ids.size() && reset_save_sequence(session, 0, path.c_str()) != RESET_OK)
        std::fprintf(stderr, "reset generate: the prompt cache was not saved: %s\n", reset_last_error());
}

struct FileCloser {
    void operator()(FILE *f) const {
        if (f && f != stdout) std::fclose(f);
    }
};

}  // namespace

int cmd_generate(int argc, char **argv) {
    std::set<std::string> valued =
        with_model_options({"policy", "max-tokens", "jsonl", "system", "think-budget", "top-logprobs", "prompt-cache"});
    valued.insert(kSamplingValued.begin(), kSamplingValued.end());
    valued.insert(kStopValued.begin(), kStopValued.end());
    const Args args = parse_args(argc, argv, 2, with_model_flags({"raw", "no-think", "ignore-eos", "help"}), valued);
    if (args.has("help") || args.positional.empty()) {
        std::printf(
            "usage: reset generate MODEL_DIR [PROMPT...|-] [--policy P] [--max-tokens N] [--jsonl FILE|-]\n"
            "                      [--raw] [--no-think] [--system TEXT] [--seed N] [--top-p P] [--top-k K]\n"
            "                      [--presence-penalty X] [--frequency-penalty X] [--repetition-penalty R]\n"
            "                      [--think-budget N] [--top-logprobs N] [--stop TEXT]... [--stop-id N]...\n"
            "                      [--ignore-eos] [--logit-bias ID:BIAS]... [--prompt-cache FILE]\n"
            "The prompt is chat-formatted (thinking on unless --no-think) unless --raw.  --jsonl writes one\n"
            "line of per-token signals per token (to stdout with '-', instead of the text).  --think-budget:\n"
            "after N reasoning tokens, \"</think>\" is appended as prompt text (not a step of the trace).\n"
            "--presence-penalty / --frequency-penalty (each in [-2, 2], 0 = off) lower the logits of the tokens\n"
            "already generated (not the prompt's): by X once a token has appeared / by X per appearance.\n"
            "--repetition-penalty R (in [0.1, 10], 1 = off) divides a positive logit / multiplies a negative one\n"
            "of every token already in the context, the prompt's included (Hugging Face / llama.cpp).\n"
            "--top-logprobs N (0..20, with --jsonl): each line also lists the N most likely tokens of the\n"
            "distribution the token was drawn from, with their log-probabilities and texts (OpenAI's\n"
            "top_logprobs).\n"
            "--stop TEXT (up to 16, each 1..256 bytes of UTF-8; in bash $'\\n' is a newline) ends the answer\n"
            "where its text first contains TEXT, which is not printed; --stop-id N ends it on token N, as on the\n"
            "model's end-of-generation ids (vLLM's stop and stop_token_ids).  --ignore-eos: those ids are\n"
            "tokens like any other, and the answer runs to --max-tokens (or a stop).\n"
            "--logit-bias ID:BIAS (up to 1024) adds BIAS (in [-100, 100], or -inf: never drawn) to token ID's\n"
            "logit before every draw, after the penalties (OpenAI's logit_bias, llama.cpp's --logit-bias).\n"
            "--prompt-cache FILE: the state after the prompt is saved to FILE; a later run keeps the prefix\n"
            "its prompt shares with FILE's and prefills only the rest (llama.cpp's --prompt-cache).  FILE holds\n"
            "the KV cache (147 KB per token for Qwen3-8B in BF16); one that does not fit is ignored.\n");
        return args.has("help") ? 0 : 2;
    }
    const long max_tokens = args.get_int("max-tokens", 512, 1, 1L << 30);
    const long think_budget = args.get_int("think-budget", 0, 0, 1L << 30);
    const long top_logprobs = args.get_int("top-logprobs", 0, 0, RESET_MAX_TOP_LOGPROBS);
    if (top_logprobs > 0 && !args.has("jsonl")) usage_error("--top-logprobs lists them in the trace: add --jsonl");
    std::unique_ptr<FILE, FileCloser> trace;
    if (args.has("jsonl")) {
        const std::string path = args.get("jsonl", "");
        trace.reset(path == "-" ? stdout : std::fopen(path.c_str(), "wb"));
        if (!trace) fail("cannot write " + path + ": " + std::strerror(errno));
    }
    const bool text_out = !(trace && trace.get() == stdout);
    check_policy_args(args);
    Model model(args.positional[0], args);
    const reset_tokenizer *tokenizer = model.tokenizer();
    const std::string prompt = prompt_text(args);
    std::vector<int32_t> ids;
    if (args.has("raw")) {
        ids = tokenize(tokenizer, prompt, RESET_TOKENIZE_ADD_BOS);
    } else {
        std::vector<Message> messages;
        if (args.has("system")) messages.push_back({"system", args.get("system", "")});
        messages.push_back({"user", prompt});
        ids = tokenize(tokenizer, chat_render(tokenizer, messages, !args.has("no-think")), RESET_TOKENIZE_PARSE_SPECIAL);
    }
    if (ids.empty()) usage_error("the prompt is empty");
    Session session(model.handle, int32_t(args.get_int("context", 0, 0, 1 << 24)), 1, int32_t(top_logprobs),
                    kv_cache_from_args(args));
    set_policy_from_args(session.handle, args);
    // The library ends the answer at max_tokens (reporting "length" and any text a stop string
    // held back); a --think-budget prefill starts its count again, so each call sets what is left.
    const StopArgs stop(args);
    stop.set(session.handle, max_tokens);
    set_logit_bias_from_args(session.handle, args);
    if (args.has("prompt-cache")) prefill_with_prompt_cache(session.handle, ids, args.get("prompt-cache", ""));
    else check(reset_prefill(session.handle, ids.data(), ids.size()), "prefill");

    reset_tokenizer_info tinfo;
    reset_tokenizer_info_init(&tinfo);
    check(reset_tokenizer_get_info(tokenizer, &tinfo), "tokenizer info");
    const std::string eos_text = tinfo.n_eos > 0 ? token_text(tokenizer, tinfo.eos_ids[0]) : "";
    std::string line(512, '\0');
    ReasoningTracker reasoning;
    // Text a stop string may begin is held back until it cannot; one that ends the answer here
    // prints it.  (The trace has only what the steps reported.)
    auto print_held_text = [&] {
        const std::string held = held_text(session.handle);
        std::fwrite(held.data(), 1, held.size(), stdout);
    };
    for (long n = 0; n < max_tokens; ++n) {
        reset_step step;
        reset_step_init(&step, 1);
        const reset_status status = reset_decode_step(session.handle, &step, 1, nullptr);
        if (status == RESET_ERR_CONTEXT_OVERFLOW) {
            if (text_out) print_held_text();
            std::fprintf(stderr, "reset generate: stopped at the end of the context\n");
            break;
        }
        check(status, "decode");
        if (trace) {
            size_t length = 0;
            reset_status s = reset_step_to_json(&step, &line[0], line.size(), &length);
            if (s == RESET_ERR_BUFFER_TOO_SMALL) {
                line.resize(length + 1);
                s = reset_step_to_json(&step, &line[0], line.size(), &length);
            }
            check(s, "trace");
            if (step.top_logprob_count > 0) {
                const std::string with_texts = with_top_texts(std::string(line.data(), length), tokenizer);
                std::fwrite(with_texts.data(), 1, with_texts.size(), trace.get());
            } else {
                std::fwrite(line.data(), 1, length, trace.get());
            }
        }
        if (text_out) {
            std::string text(step.text, step.text_len);
            if (step.end_of_generation && !eos_text.empty() && text.size() >= eos_text.size() &&
                text.compare(text.size() - eos_text.size(), eos_text.size(), eos_text) == 0)
                text.resize(text.size() - eos_text.size());
            std::fwrite(text.data(), 1, text.size(), stdout);
            std::fflush(stdout);
        }
        if (step.end_of_generation) break;
        reasoning.see(std::string_view(step.text, step.text_len));
        if (reasoning.over(think_budget)) {
            if (text_out) print_held_text();  // the prefill below forgets it
            std::string appended;
            std::vector<int32_t> appended_ids;
            const reset_status closed =
                close_reasoning(session.handle, tokenizer, reasoning.after_newline, &appended, &appended_ids);
            if (closed == RESET_ERR_CONTEXT_OVERFLOW) {
                std::fprintf(stderr, "reset generate: stopped at the end of the context\n");
                break;
            }
            check(closed, "closing the reasoning");
            stop.set(session.handle, max_tokens - n - 1);
            if (text_out) std::fwrite(appended.data(), 1, appended.size(), stdout);
            reasoning.closed();
        }
    }
    if (text_out) std::printf("\n");
    if (trace && (std::fflush(trace.get()) != 0 || std::ferror(trace.get()))) fail("cannot write the trace");
    return 0;
}

int cmd_tokenize(int argc, char **argv) {
    const Args args = parse_args(argc, argv, 2, {"pieces", "special", "bos", "help"}, {});
    if (args.has("help") || args.positional.size() < 2) {
        std::printf(
            "usage: reset tokenize MODEL_DIR|TOKENIZER_FILE TEXT... [--pieces] [--special] [--bos]\n"
            "Prints the ids, one line.  --pieces: one token per line with its text.  --special: parse special\n"
            "tokens' text (<|im_start|>...) as those tokens.  --bos: prepend BOS.\n");
        return args.has("help") ? 0 : 2;
    }
    reset_tokenizer *raw = nullptr;
    check(reset_tokenizer_load(args.positional[0].c_str(), &raw), "cannot load a tokenizer from '" +
                                                                       args.positional[0] + "'");
    std::unique_ptr<reset_tokenizer, void (*)(reset_tokenizer *)> tokenizer(raw, reset_tokenizer_free);
    std::string text;
    for (size_t i = 1; i < args.positional.size(); ++i) text += (i > 1 ? " " : "") + args.positional[i];
    uint32_t flags = 0;
    if (args.has("special")) flags |= RESET_TOKENIZE_PARSE_SPECIAL;
    if (args.has("bos")) flags |= RESET_TOKENIZE_ADD_BOS;
    const std::vector<int32_t> ids = tokenize(tokenizer.get(), text, flags);
    if (args.has("pieces")) {
        for (int32_t id : ids) std::printf("%6d  %s\n", id, json_string(token_text(tokenizer.get(), id)).c_str());
    } else {
        for (size_t i = 0; i < ids.size(); ++i) std::printf("%s%d", i ? " " : "", ids[i]);
        std::printf("\n");
    }
    std::fprintf(stderr, "%zu tokens\n", ids.size());
    return 0;
}

static const char *template_name(reset_chat_template t) {
    switch (t) {
    case RESET_CHAT_TEMPLATE_QWEN3: return "Qwen3";
    case RESET_CHAT_TEMPLATE_DEEPSEEK_R1: return "DeepSeek-R1";
    case RESET_CHAT_TEMPLATE_LLAMA3: return "Llama 3";
    case RESET_CHAT_TEMPLATE_PLAIN: return "plain";
    default: return "not recognised";
    }
}

int cmd_info(int argc, char **argv) {
    const Args args = parse_args(argc, argv, 2, with_model_flags({"help"}), kModelValued);
    if (args.has("help") || args.positional.size() != 1) {
        std::printf(
            "usage: reset info MODEL_DIR [--weights auto|bf16|nvfp4|w4a4] [--lm-head auto|nvfp4] "
            "[--backend auto|cpu|cuda]\n");
        return args.has("help") ? 0 : 2;
    }
    Model model(args.positional[0], args);
    const reset_model_info &i = model.info;
    std::printf("libreset      %s\n", reset_version_string());
    std::printf("model         %s\n", args.positional[0].c_str());
    std::printf("architecture  %s, %d layers, hidden %d, intermediate %d\n", i.architecture, i.n_layers,
                i.hidden_size, i.intermediate_size);
    std::printf("attention     %d query heads, %d kv heads, head_dim %d\n", i.n_heads, i.n_kv_heads, i.head_dim);
    std::printf("vocabulary    %d%s, max positions %d\n", i.vocab_size, i.tied_embeddings ? " (tied embeddings)" : "",
                i.max_position_embeddings);
    std::printf("parameters    %.3f M\n", double(i.n_parameters) / 1e6);
    std::printf("weights       %s%s%s, lm_head %s, %d linears kept in BF16\n", weights_name(i.weights),
                i.checkpoint_format == RESET_CHECKPOINT_MODELOPT             ? " (ModelOpt checkpoint)"
                : i.checkpoint_format == RESET_CHECKPOINT_COMPRESSED_TENSORS ? " (compressed-tensors checkpoint)"
                                                                             : "",
                i.weights == RESET_WEIGHTS_NVFP4_W4A4 ? (i.dynamic_input_scale ? ", dynamic input scale" : ", calibrated input scale") : "",
                i.lm_head_nvfp4 ? "nvfp4" : "bf16", i.n_bf16_linears);
    if (i.kv_cache_scales) std::printf("kv cache      calibrated FP8 scales from the checkpoint (an FP8 cache uses them)\n");
    std::printf("bytes         %.2f MB of weights, %.2f MB host, %.2f MB device\n", double(i.weight_bytes) / 1e6,
                double(i.host_bytes) / 1e6, double(i.device_bytes) / 1e6);
    std::printf("backend       %s\n", backend_name(i.backend));
    std::printf("load time     %.2f s\n", model.load_seconds);
    std::printf("end ids      ");
    for (int k = 0; k < i.n_eos && k < 8; ++k) std::printf(" %d", i.eos_ids[k]);
    std::printf("%s\n", i.n_eos ? "" : " none");
    {
        // A session's initial policy is the model's sampling (generation_config.json, else greedy);
        // one position of context is all it needs to be read.
        Session probe(model.handle, 1, 1);
        reset_policy_params policy;
        reset_policy_params_init(&policy);
        check(reset_session_get_policy(probe.handle, &policy), "the session's policy");
        std::printf("sampling      %s\n", describe_policy(policy).c_str());
    }
    const reset_tokenizer *tokenizer = reset_model_tokenizer(model.handle);
    if (!tokenizer) {
        std::printf("tokenizer     none\n");
        return 0;
    }
    reset_tokenizer_info t;
    reset_tokenizer_info_init(&t);
    check(reset_tokenizer_get_info(tokenizer, &t), "tokenizer info");
    std::printf("tokenizer     %s, %d tokens, bos %d, chat template %s\n", t.kind, t.vocab_size, t.bos_id,
                t.has_chat_template ? template_name(t.chat_template) : "none");
    return 0;
}

}  // namespace cli
