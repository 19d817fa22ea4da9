// eval.cpp — `reset eval` (math accuracy of sampling policies) and
// `reset calibrate` (tau0 for ReSET), both on JSONL problem sets.
//
// Protocol (shared/docs/reset-algorithm.md, "Evaluation protocol"): the chat
// template with thinking on, one user turn holding the problem; n samples
// per problem; the answer is the last \boxed{...} (balanced braces),
// normalised, compared as strings, then as numbers (fractions allowed,
// tolerance 1e-6).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>

#include "cli.h"

namespace cli {

// --- scoring -------------------------------------------------------------------

std::string last_boxed(const std::string &text, bool *found) {
    static const std::string kOpen = "\\boxed{";
    size_t at = text.rfind(kOpen);
    // The last one that closes: a truncated generation may end inside one.
    while (at != std::string::npos) {
        int depth = 1;
        for (size_t i = at + kOpen.size(); i < text.size(); ++i) {
            if (text[i] == '{') ++depth;
            else if (text[i] == '}' && --depth == 0) {
                *found = true;
                return text.substr(at + kOpen.size(), i - at - kOpen.size());
            }
        }
        at = at == 0 ? std::string::npos : text.rfind(kOpen, at - 1);
    }
    *found = false;
    return "";
}

static std::string trim_spaces_and_dollars(const std::string &s) {
    size_t b = 0, e = s.size();
    auto skip = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '$'; };
    while (b < e && skip(s[b])) ++b;
    while (e > b && skip(s[e - 1])) --e;
    return s.substr(b, e - b);
}

std::string normalise_answer(std::string a) {
    a = trim_spaces_and_dollars(a);
    // \text{X} -> X (balanced braces inside X are kept).
    for (size_t at; (at = a.find("\\text{")) != std::string::npos;) {
        int depth = 1;
        size_t i = at + 6;
        for (; i < a.size(); ++i) {
            if (a[i] == '{') ++depth;
            else if (a[i] == '}' && --depth == 0) break;
        }
        if (i >= a.size()) break;  // unbalanced: leave it as written
        a = a.substr(0, at) + a.substr(at + 6, i - at - 6) + a.substr(i + 1);
    }
    for (size_t at; (at = a.find("\\%")) != std::string::npos;) a.replace(at, 2, "%");
    a = trim_spaces_and_dollars(a);
    if (!a.empty() && a.back() == '.') a.pop_back();
    if (!a.empty() && a[0] == '+') a.erase(0, 1);
    return trim_spaces_and_dollars(a);
}

// A decimal, "a/b", or \frac{a}{b} (\dfrac, \tfrac), with an optional sign.
static bool as_number(const std::string &s, double *value) {
    auto decimal = [](const std::string &t, double *v) {
        if (t.empty()) return false;
        char *end = nullptr;
        *v = std::strtod(t.c_str(), &end);
        return *end == '\0' && std::isfinite(*v) && t.find_first_of("xXpPnN") == std::string::npos;
    };
    std::string t = s;
    double sign = 1;
    if (!t.empty() && t[0] == '-') {
        sign = -1;
        t.erase(0, 1);
    }
    for (const char *frac : {"\\frac{", "\\dfrac{", "\\tfrac{"}) {
        const size_t n = std::strlen(frac);
        if (t.compare(0, n, frac) == 0 && t.back() == '}') {
            const size_t mid = t.find("}{", n);
            if (mid == std::string::npos) return false;
            double num, den;
            if (!decimal(t.substr(n, mid - n), &num) || !decimal(t.substr(mid + 2, t.size() - mid - 3), &den) || den == 0)
                return false;
            *value = sign * num / den;
            return true;
        }
    }
    const size_t slash = t.find('/');
    if (slash != std::string::npos) {
        double num, den;
        if (!decimal(t.substr(0, slash), &num) || !decimal(t.substr(slash + 1), &den) || den == 0) return false;
        *value = sign * num / den;
        return true;
    }
    if (!decimal(t, value)) return false;
    *value *= sign;
    return true;
}

bool answers_match(const std::string &predicted, const std::string &expected) {
    const std::string p = normalise_answer(predicted), e = normalise_answer(expected);
    if (p == e) return true;
    double a, b;
    return as_number(p, &a) && as_number(e, &b) && std::fabs(a - b) <= 1e-6;
}

// --- data ----------------------------------------------------------------------

namespace {

struct Problem {
    std::string text, answer;
};

// Reads every problem first, so that a bad line fails before a model loads.
std::vector<Problem> read_problems(const std::string &path, long limit) {
    std::ifstream in(path, std::ios::binary);
    if (!in) fail("cannot read " + path + ": " + std::strerror(errno));
    std::vector<Problem> problems;
    std::string line;
    for (long number = 1; std::getline(in, line); ++number) {
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        const std::string where = path + ":" + std::to_string(number);
        auto members = parse_json_object(line, where);
        Problem p;
        if (members.count("problem")) p.text = members["problem"];
        else if (members.count("question")) p.text = members["question"];
        else fail(where + ": needs a \"problem\" or a \"question\"");
        if (!members.count("answer")) fail(where + ": needs an \"answer\"");
        p.answer = members["answer"];
        // GSM8K: the worked solution ends in "#### N".
        const size_t hashes = p.answer.rfind("####");
        if (hashes != std::string::npos) p.answer = p.answer.substr(hashes + 4);
        p.answer = normalise_answer(p.answer);
        problems.push_back(std::move(p));
        if (limit > 0 && long(problems.size()) >= limit) break;
    }
    if (problems.empty()) fail(path + " holds no problems");
    return problems;
}

std::vector<int32_t> problem_prompt(const reset_tokenizer *tokenizer, const std::string &problem) {
    return tokenize(tokenizer, chat_render(tokenizer, {{"user", problem}}, true), RESET_TOKENIZE_PARSE_SPECIAL);
}

}  // namespace

// --- eval ----------------------------------------------------------------------

int cmd_eval(int argc, char **argv) {
    std::set<std::string> valued = kModelValued;
    valued.insert(kSamplingValued.begin(), kSamplingValued.end());
    valued.insert({"policy", "samples", "max-tokens", "out", "limit", "think-budget"});
    const Args args = parse_args(argc, argv, 2, with_model_flags({"help"}), valued);
    if (args.has("help") || args.positional.size() != 2) {
        std::printf(
            "usage: reset eval MODEL_DIR DATA.jsonl [--policy P]... [--samples N] [--max-tokens N] [--limit K]\n"
            "                  [--out SAMPLES.jsonl] [--seed S] [--top-p P] [--top-k K] [--presence-penalty X]\n"
            "                  [--frequency-penalty X] [--repetition-penalty R] [--think-budget N]\n"
            "                  [--weights auto|bf16|nvfp4|w4a4] [--context N] [--no-mmap]\n"
            "DATA: one JSON object per line, {\"problem\",\"answer\"} or GSM8K's {\"question\",\"answer\": \"... #### N\"}.\n"
            "Each policy (default: fixed 0.6, top_p 0.95) draws N samples (default 1) per problem.  Up to 8\n"
            "samples run as the parallel sequences of one session, which draw independent Philox streams; the\n"
            "seed of problem i's samples k..k+7 is S + i*N + k (S: --seed, else the policy's seed=, else 0),\n"
            "so no two problems share random numbers.  Accuracy is the mean over samples; the 95%% interval is\n"
            "over problems (normal approximation of the mean of per-problem accuracies; Wilson's interval for\n"
            "one problem).  --think-budget N: after N reasoning tokens a sample's reasoning is closed with\n"
            "\"</think>\" appended as prompt text to that sample alone, and it goes on to its answer.\n"
            "--top-p, --top-k, and --presence-penalty / --frequency-penalty (each in [-2, 2]) replace that field\n"
            "of every policy; the penalties count each sample's own generated tokens.  --repetition-penalty R\n"
            "(in [0.1, 10], 1 = off) divides a positive logit / multiplies a negative one of every token already\n"
            "in the sample's context, its problem's prompt included (Hugging Face / llama.cpp).\n");
        return args.has("help") ? 0 : 2;
    }
    std::vector<PolicySpec> policies;
    for (const std::string &p : args.all("policy")) policies.push_back(parse_policy(p));
    if (policies.empty()) policies.push_back(parse_policy("fixed 0.6"));
    for (PolicySpec &p : policies) apply_sampling_overrides(p, args);
    const long samples = args.get_int("samples", 1, 1, 1 << 20);
    const long max_tokens = args.get_int("max-tokens", 32768, 1, 1L << 30);
    const long think_budget = args.get_int("think-budget", 0, 0, 1L << 30);
    const std::vector<Problem> problems = read_problems(args.positional[1], args.get_int("limit", 0, 0, 1L << 30));

    std::unique_ptr<FILE, int (*)(FILE *)> out(nullptr, std::fclose);
    if (args.has("out")) {
        out.reset(std::fopen(args.get("out", "").c_str(), "wb"));
        if (!out) fail("cannot write " + args.get("out", "") + ": " + std::strerror(errno));
    }
    Model model(args.positional[0], args);
    const reset_tokenizer *tokenizer = model.tokenizer();
    const int32_t context = int32_t(args.get_int("context", 0, 0, 1 << 24));
    // Samples of one problem run as parallel sequences sharing one prefill.
    const long width = std::min<long>(samples, 8);
    Session wide(model.handle, context, int32_t(width), 0, kv_cache_from_args(args));
    std::unique_ptr<Session> narrow;
    if (samples % width)
        narrow = std::make_unique<Session>(model.handle, context, int32_t(samples % width), 0, kv_cache_from_args(args));

    // correct[policy][problem] = number of correct samples.
    std::vector<std::vector<long>> correct(policies.size(), std::vector<long>(problems.size(), 0));
    Progress progress("eval", uint64_t(problems.size() * policies.size() * size_t(samples)), "samples");
    uint64_t done = 0;
    for (size_t pi = 0; pi < problems.size(); ++pi) {
        const std::vector<int32_t> ids = problem_prompt(tokenizer, problems[pi].text);
        for (size_t qi = 0; qi < policies.size(); ++qi) {
            for (long first = 0; first < samples; first += width) {
                const long n = std::min(width, samples - first);
                reset_session *s = n == width ? wide.handle : narrow->handle;
                reset_policy_params params = policies[qi].params;
                // Sequences draw independent Philox streams; the seed moves with
                // the problem and the chunk (--seed already replaced the policy's seed).
                params.seed = policies[qi].params.seed + uint64_t(pi) * uint64_t(samples) + uint64_t(first);
                params.reset_state = 1;
                check(reset_session_reset(s), "reset");
                check(reset_set_policy(s, &params), "cannot use policy '" + policies[qi].label + "'");
                check(reset_prefill(s, ids.data(), ids.size()), "prefill of problem " + std::to_string(pi + 1));
                const size_t count = static_cast<size_t>(n);
                std::vector<std::string> texts(count);
                std::vector<long> tokens(count, 0);
                // Per sample: sum and count of the finite reset_step.logprob (raw softmax; "mean_logprob").
                std::vector<double> logprob_sum(count, 0.0);
                std::vector<long> logprob_tokens(count, 0);
                std::vector<int> finished(count, 0), closed(count, 0);
                std::vector<ReasoningTracker> reasoning(count);
                std::vector<reset_step> steps(count);
                bool context_full = false;
                for (long t = 0; t < max_tokens && !context_full; ++t) {
                    reset_step_init(steps.data(), steps.size());
                    int32_t active = 0;
                    const reset_status status = reset_decode_step(s, steps.data(), steps.size(), &active);
                    if (status == RESET_ERR_CONTEXT_OVERFLOW) break;
                    check(status, "decode");
                    for (long k = 0; k < n; ++k) {
                        const reset_step &st = steps[size_t(k)];
                        if (st.token < 0) continue;
                        texts[size_t(k)].append(st.text, st.text_len);
                        ++tokens[size_t(k)];
                        if (std::isfinite(st.logprob)) {
                            logprob_sum[size_t(k)] += st.logprob;
                            ++logprob_tokens[size_t(k)];
                        }
                        if (st.end_reason == RESET_END_EOS) finished[size_t(k)] = 1;
                        if (st.end_of_generation) continue;
                        // The budget closes this sample's reasoning; the others go on as they were.
                        reasoning[size_t(k)].see(std::string_view(st.text, st.text_len));
                        if (context_full || !reasoning[size_t(k)].over(think_budget)) continue;
                        std::string appended;
                        std::vector<int32_t> appended_ids;
                        const reset_status closing = close_reasoning(s, tokenizer, reasoning[size_t(k)].after_newline,
                                                                     &appended, &appended_ids, int32_t(k));
                        // A full context ends these samples, as it does in a decode step.
                        context_full = closing == RESET_ERR_CONTEXT_OVERFLOW;
                        if (context_full) continue;
                        check(closing, "closing the reasoning");
                        texts[size_t(k)] += appended;
                        reasoning[size_t(k)].closed();
                        closed[size_t(k)] = 1;
                    }
                    if (active == 0) break;
                }
                for (long k = 0; k < n; ++k) {
                    bool found = false;
                    const std::string boxed = last_boxed(texts[size_t(k)], &found);
                    const bool ok = found && answers_match(boxed, problems[pi].answer);
                    correct[qi][pi] += ok;
                    if (!out) continue;
                    char mean_logprob[32] = "null";
                    if (logprob_tokens[size_t(k)])
                        std::snprintf(mean_logprob, sizeof mean_logprob, "%.9g",
                                      logprob_sum[size_t(k)] / double(logprob_tokens[size_t(k)]));
                    std::fprintf(out.get(),
                                 "{\"problem\":%zu,\"policy\":%s,\"sample\":%ld,\"seed\":%llu,\"sequence\":%ld,"
                                 "\"tokens\":%ld,\"mean_logprob\":%s,\"finished\":%s,\"reasoning_closed\":%s,"
                                 "\"extracted\":%s,\"expected\":%s,\"correct\":%s,\"text\":%s}\n",
                                 pi, json_string(policies[qi].label).c_str(), first + k,
                                 (unsigned long long)params.seed, k, tokens[size_t(k)], mean_logprob,
                                 finished[size_t(k)] ? "true" : "false", closed[size_t(k)] ? "true" : "false",
                                 found ? json_string(normalise_answer(boxed)).c_str() : "null",
                                 json_string(problems[pi].answer).c_str(), ok ? "true" : "false",
                                 json_string(texts[size_t(k)]).c_str());
                }
                done += uint64_t(n);
                progress.update(done, "problem " + std::to_string(pi + 1) + "/" + std::to_string(problems.size()));
            }
        }
    }
    progress.finish();
    if (out && (std::fflush(out.get()) != 0 || std::ferror(out.get()))) fail("cannot write the samples file");

    std::printf("%-40s %9s %9s %9s  %s\n", "policy", "problems", "samples", "accuracy", "95% interval");
    const double z = 1.959964;
    for (size_t qi = 0; qi < policies.size(); ++qi) {
        const double P = double(problems.size()), N = double(samples);
        double mean = 0, var = 0;
        for (long c : correct[qi]) mean += double(c) / N;
        mean /= P;
        for (long c : correct[qi]) var += (double(c) / N - mean) * (double(c) / N - mean);
        double low, high;
        if (problems.size() > 1) {
            const double half = z * std::sqrt(var / (P - 1) / P);
            low = std::max(0.0, mean - half);
            high = std::min(1.0, mean + half);
        } else {
            // Wilson's score interval on the samples of the one problem.
            const double centre = (mean + z * z / (2 * N)) / (1 + z * z / N);
            const double half = z * std::sqrt(mean * (1 - mean) / N + z * z / (4 * N * N)) / (1 + z * z / N);
            low = std::max(0.0, centre - half);
            high = std::min(1.0, centre + half);
        }
        std::printf("%-40s %9zu %9ld %8.1f%%  [%.1f%%, %.1f%%]\n", policies[qi].label.c_str(), problems.size(),
                    long(problems.size()) * samples, 100 * mean, 100 * low, 100 * high);
    }
    return 0;
}

// --- calibrate -------------------------------------------------------------------

int cmd_calibrate(int argc, char **argv) {
    std::set<std::string> valued = kModelValued;
    valued.insert({"limit", "temperature", "top-p", "seed", "max-tokens", "percentile"});
    const Args args = parse_args(argc, argv, 2, with_model_flags({"processed-scores", "help"}), valued);
    if (args.has("help") || args.positional.size() != 2) {
        std::printf(
            "usage: reset calibrate MODEL_DIR DATA.jsonl [--limit K] [--temperature T] [--top-p P] [--seed S]\n"
            "                       [--max-tokens N] [--percentile Q] [--processed-scores] [--weights ...]\n"
            "Decodes the first K problems (default 5; chat template, thinking on) at temperature T (0.6),\n"
            "top-p P (0.95), and prints tau0 = the Q-th percentile (80) of the per-token entropies of the\n"
            "raw logits (reset-algorithm.md).  --processed-scores measures the sampled distribution instead,\n"
            "as the authors' script does.\n");
        return args.has("help") ? 0 : 2;
    }
    reset_calibration_options options;
    reset_calibration_options_init(&options);
    options.temperature = float(args.get_double("temperature", options.temperature, 1e-6, 100));
    options.top_p = float(args.get_double("top-p", options.top_p, 1e-6, 1));
    options.seed = uint64_t(args.get_int("seed", 0, 0, 0x7fffffffffffffffL));
    options.max_new_tokens = int32_t(args.get_int("max-tokens", options.max_new_tokens, 1, 1 << 30));
    options.percentile = float(args.get_double("percentile", options.percentile, 0, 100));
    options.processed_scores = args.has("processed-scores") ? 1 : 0;
    const std::vector<Problem> problems = read_problems(args.positional[1], args.get_int("limit", 5, 1, 1L << 30));
    Model model(args.positional[0], args);
    const reset_tokenizer *tokenizer = model.tokenizer();
    std::vector<std::vector<int32_t>> prompts;
    for (const Problem &p : problems) prompts.push_back(problem_prompt(tokenizer, p.text));
    std::vector<const int32_t *> pointers;
    std::vector<size_t> lengths;
    for (const auto &p : prompts) {
        pointers.push_back(p.data());
        lengths.push_back(p.size());
    }
    std::fprintf(stderr, "calibrating on %zu prompts (up to %d new tokens each, T=%g, top_p=%g)\n",
                 prompts.size(), options.max_new_tokens, options.temperature, options.top_p);
    Progress progress("calibrate", 100, "%");
    options.progress = [](float fraction, void *user) {
        static_cast<Progress *>(user)->update(uint64_t(fraction * 100.0f));
        return 0;
    };
    options.progress_user_data = &progress;
    const double start = now_seconds();
    reset_calibration_result result;
    reset_calibration_result_init(&result);
    check(reset_calibrate(model.handle, pointers.data(), lengths.data(), prompts.size(), &options, &result),
          "calibration");
    progress.finish();
    const double seconds = now_seconds() - start;
    std::printf("tau0 %.6g   (p%g of %llu token entropies, %s logits)\n", result.tau0, options.percentile,
                (unsigned long long)result.n_tokens, options.processed_scores ? "processed" : "raw");
    std::printf("prompts %d (%d ended with EOS), %.1f s, %.1f tokens/s\n", result.n_prompts, result.n_finished,
                seconds, seconds > 0 ? double(result.n_tokens) / seconds : 0.0);
    std::printf("entropy mean %.6g nats; percentile table:\n", result.mean);
    for (int p = 0; p <= 100; p += 10) {
        std::printf("  p%-3d %.6g", p, result.percentiles[p]);
        if (p % 50 == 40 || p == 100) std::printf("\n");
    }
    std::printf("use it: --policy \"reset tau0=%.6g t_low=0.6\"\n", result.tau0);
    return 0;
}

}  // namespace cli

namespace cli {

// `reset score TEXT EXPECTED`: how `reset eval` scores one answer, so a user
// can check a dataset's answer format (and the tests can check the rules).
int cmd_score(int argc, char **argv) {
    const Args args = parse_args(argc, argv, 2, {"help"}, {});
    if (args.has("help") || args.positional.size() != 2) {
        std::printf("usage: reset score GENERATED_TEXT EXPECTED_ANSWER\n"
                    "Prints the last \\boxed{} of the text, normalised, and whether it matches (exit 0 either way).\n");
        return args.has("help") ? 0 : 2;
    }
    bool found = false;
    const std::string boxed = last_boxed(args.positional[0], &found);
    std::printf("extracted %s\nexpected %s\n%s\n", found ? json_string(normalise_answer(boxed)).c_str() : "none",
                json_string(normalise_answer(args.positional[1])).c_str(),
                found && answers_match(boxed, args.positional[1]) ? "correct" : "wrong");
    return 0;
}

}  // namespace cli
