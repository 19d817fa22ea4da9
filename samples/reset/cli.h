// cli.h — what the subcommands of the `reset` command share.
//
// The command uses only the public C ABI (reset.h), as any application
// would.  Internally a failure is a CliError thrown up to main(), which
// prints it as one line and exits non-zero: the user never sees an abort.
#pragma once

#include <reset.h>

#include <cstdint>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace cli {

// Exit codes: 1 = the work failed (a model, a file, the library), 2 = the
// command line is wrong.
struct CliError : std::runtime_error {
    int exit_code;
    CliError(const std::string &message, int code) : std::runtime_error(message), exit_code(code) {}
};

[[noreturn]] void fail(const std::string &message);
[[noreturn]] void usage_error(const std::string &message);
// Throws "what: <reset_last_error()>" unless status is RESET_OK.
void check(reset_status status, const std::string &what);

// --- command line ---------------------------------------------------------

// Parsed arguments: positionals in order, options by name (repeatable ones
// keep every value).  `flags` take no value; `valued` take one.
struct Args {
    std::vector<std::string> positional;
    std::map<std::string, std::vector<std::string>> options;
    bool has(const std::string &name) const { return options.count(name) != 0; }
    std::string get(const std::string &name, const std::string &fallback) const;
    long get_int(const std::string &name, long fallback, long min, long max) const;
    double get_double(const std::string &name, double fallback, double min, double max) const;
    const std::vector<std::string> &all(const std::string &name) const;
};
Args parse_args(int argc, char **argv, int first, const std::set<std::string> &flags,
                const std::set<std::string> &valued);

long parse_int(const std::string &text, const std::string &what, long min, long max);
double parse_double(const std::string &text, const std::string &what, double min, double max);

// --- models ----------------------------------------------------------------

// Options every model-loading subcommand accepts.
extern const std::set<std::string> kModelValued;  // --weights --lm-head --backend --threads --context
// `flags` and the model-loading flags (--no-mmap: read the safetensors files instead of mapping them).
std::set<std::string> with_model_flags(std::set<std::string> flags);
reset_weights parse_weights(const std::string &name);
// --kv-cache bf16|fp8|fp32 (reset_session_options.kv_cache; fp32: the CPU backend only), bf16 if absent.
reset_kv_cache kv_cache_from_args(const Args &args);
const char *weights_name(reset_weights weights);
const char *backend_name(reset_backend backend);

// The model directory the user named, or the embedded default model
// (RESET_MODEL, then models/default beside the build or the current
// directory); fails with a message saying how to name one.
std::string model_path_or_default(const Args &args, size_t index);

// Owns a loaded model (RAII so every exit path frees it).
struct Model {
    reset_model *handle = nullptr;
    reset_model_info info{};
    double load_seconds = 0;
    Model(const std::string &path, const Args &args);
    ~Model() { reset_model_free(handle); }
    Model(const Model &) = delete;
    Model &operator=(const Model &) = delete;
    // The model's tokenizer; fails when the directory has none.
    const reset_tokenizer *tokenizer() const;
};

struct Session {
    reset_session *handle = nullptr;
    // top_logprobs: reset_session_options.top_logprobs (0..20).
    Session(reset_model *model, int32_t max_context, int32_t sequences, int32_t top_logprobs = 0,
            reset_kv_cache kv_cache = RESET_KV_CACHE_BF16);
    ~Session() { reset_session_free(handle); }
    Session(const Session &) = delete;
    Session &operator=(const Session &) = delete;
};

// --- policies ----------------------------------------------------------------

// A policy from words: "greedy", "fixed T", "fixed:T", "reset", "entropy",
// each optionally followed by key=value parameters (t=, top_p=, top_k=,
// min_p=, seed=, t_high=, t_low=, tau0=, window=, preset=, presence_penalty=,
// frequency_penalty=, repetition_penalty=).  `words` are whitespace- or
// colon-separated; repetition_penalty='s range is left to the library.  The
// preset string lives in `storage`.
struct PolicySpec {
    reset_policy_params params{};
    std::string preset;  // owns params.preset's text
    std::string label;   // as the user wrote it, for tables

    PolicySpec() = default;
    // A copy (or move: none is declared, so moves copy) points params.preset at its
    // own text: a short preset name lives inside the std::string object, so the
    // source's pointer would dangle once the source is gone (`spec = parse_policy(..)`,
    // a vector that grows) -- before session 27, `--policy "reset preset=Qwen3-8B"`
    // read freed stack memory in generate and eval.
    PolicySpec(const PolicySpec &other) : params(other.params), preset(other.preset), label(other.label) {
        point_preset();
    }
    PolicySpec &operator=(const PolicySpec &other) {
        params = other.params;
        preset = other.preset;
        label = other.label;
        point_preset();
        return *this;
    }
    void point_preset() { params.preset = preset.empty() ? nullptr : preset.c_str(); }
};
PolicySpec parse_policy(const std::string &text);
// Human-readable summary, e.g. "reset T_high=1 T_low=0.6 tau0=1.2 window=32 top_p=0.95 top_k=0 seed=0",
// then " presence_penalty=X" / " frequency_penalty=X" / " repetition_penalty=R" for a penalty that is on.
std::string describe_policy(const reset_policy_params &params);
// The options that change a policy's fields (chat, generate and eval take them all):
// --seed --top-p --top-k --presence-penalty --frequency-penalty --repetition-penalty.
extern const std::set<std::string> kSamplingValued;
// Apply those command-line overrides to a spec.
void apply_sampling_overrides(PolicySpec &spec, const Args &args);
bool has_sampling_overrides(const Args &args);
// `reset chat` and `reset generate`: --policy, or else the session's own
// policy (the model's generation_config.json sampling, or greedy), with
// the kSamplingValued overrides applied, set on the session; nothing when
// none of these is given.  check_policy_args reports a mistake in them
// before a model loads.
void check_policy_args(const Args &args);
void set_policy_from_args(reset_session *session, const Args &args);

// --- stop conditions and the logit bias ----------------------------------------
// `reset chat` and `reset generate`: --stop TEXT... --stop-id N... (and generate's
// --ignore-eos), read once; set() gives them to a session with max_tokens (0: none).
struct StopArgs {
    std::vector<std::string> strings;
    std::vector<int32_t> ids;
    bool ignore_eos = false;
    StopArgs() = default;  // none (`reset serve` fills them from a request)
    explicit StopArgs(const Args &args);
    void set(reset_session *session, long max_tokens) const;
};
extern const std::set<std::string> kStopValued;  // --stop --stop-id --logit-bias
// --logit-bias ID:BIAS... (BIAS in [-100, 100] or -inf), set on the session (none: nothing).
void set_logit_bias_from_args(reset_session *session, const Args &args);

// --- text ------------------------------------------------------------------

struct Message {
    std::string role;
    std::string content;
    std::string tool_calls_json = {};  // an assistant message's OpenAI "tool_calls" array; "": none
};
// A conversation as `reset chat` keeps it (/session save, --session; conversation_file.cpp
// gives the JSON): a system prompt first when there is one, then user and assistant messages in
// turn.  messages[kept_from..] (and the system prompt) are what the model sees; older exchanges
// were left out to fit the context.  `thinking` is /think's setting, which the template renders.
struct SavedConversation {
    std::vector<Message> messages;
    size_t kept_from = 0;
    bool thinking = true;
};
// Both fail (CliError) with the reason: a file that cannot be written or read, is not JSON or not
// such a conversation, or comes from a newer reset.  Writing replaces the file only once it is whole.
void write_conversation(const std::string &path, const SavedConversation &conversation);
SavedConversation read_conversation(const std::string &path);
// The conversation rendered by the tokenizer's chat template.
// tools_json: OpenAI's "tools" array ("" for none; reset_chat_options.tools_json).
std::string chat_render(const reset_tokenizer *tokenizer, const std::vector<Message> &messages, bool thinking,
                        bool generation_prompt = true, const std::string &tools_json = "");
std::vector<int32_t> tokenize(const reset_tokenizer *tokenizer, const std::string &text, uint32_t flags);
std::string token_text(const reset_tokenizer *tokenizer, int32_t id);
// The text of ids (reset_detokenize with `flags`).
std::string detokenize(const reset_tokenizer *tokenizer, const std::vector<int32_t> &ids, uint32_t flags = 0);
// The text a stop string may begin that `sequence` holds back (reset_session_held_text): what a caller
// that ends the answer itself, or appends to it, shows first.
std::string held_text(const reset_session *session, int32_t sequence = 0);
// The tokens a session's sequence holds (reset_session_tokens).
std::vector<int32_t> session_tokens(const reset_session *session, int32_t sequence);

// A thinking budget (chat, generate and eval --think-budget): the reasoning
// ends the way the model would end it, with "</think>" appended to the
// sequence as prompt text (a newline first unless the reasoning ended with
// one), so the next token drawn starts the answer.  `sequence` -1 appends to
// every sequence (reset_prefill), else to that one (reset_prefill_sequence).
// Returns the prefill's status and, on success, the text appended.
reset_status close_reasoning(reset_session *session, const reset_tokenizer *tokenizer, bool after_newline,
                             std::string *text, std::vector<int32_t> *ids, int32_t sequence = -1);

// Where one generation stands in its <think>...</think> reasoning, fed the
// text of each decoded token (generate and eval; chat tracks it as it prints).
struct ReasoningTracker {
    bool thinking = false;       // inside <think>...</think>
    bool after_newline = false;  // the last reasoning token ended a line
    long tokens = 0;             // reasoning tokens since "<think>"
    void see(std::string_view piece);
    // The reasoning has used up `budget` tokens (0: no budget) and must be closed.
    bool over(long budget) const { return thinking && budget > 0 && tokens >= budget; }
    // close_reasoning appended "</think>" for it.
    void closed() { thinking = false; }
};

// True when stdout/stderr is a terminal and NO_COLOR is not set.
bool colour_enabled(int fd);

// The folder of the running `reset` binary (to find files beside the build tree).
std::string executable_dir();

// --- progress -----------------------------------------------------------------

// A progress bar with rate and ETA on a terminal (stderr), plain lines
// otherwise (at most one every few seconds, plus the last).
class Progress {
public:
    Progress(std::string label, uint64_t total, std::string unit);
    void update(uint64_t done, const std::string &note = "");
    void finish(const std::string &note = "");

private:
    std::string label_, unit_;
    uint64_t total_;
    double start_, last_print_ = -1e9;
    bool tty_, printed_last_ = false;
};

double now_seconds();

// --- JSON Lines --------------------------------------------------------------

// One JSON object's top-level members: strings as their decoded text, other
// values as JSON text (numbers in their shortest form: 2.50 is "2.5").
// Throws CliError naming `where` on bad JSON, invalid UTF-8 included.
std::map<std::string, std::string> parse_json_object(const std::string &line, const std::string &where);
// text as a JSON string literal; bytes that are not UTF-8 become U+FFFD.
std::string json_string(const std::string &text);

// --- subcommands --------------------------------------------------------------

int cmd_chat(int argc, char **argv);
int cmd_generate(int argc, char **argv);
int cmd_tokenize(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_bench(int argc, char **argv, const char *argv0);
int cmd_eval(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
int cmd_score(int argc, char **argv);
int cmd_serve(int argc, char **argv);  // serve.cpp

// Answer scoring (reset-algorithm.md, "Evaluation protocol"): exposed for
// `reset eval` and its tests.
std::string last_boxed(const std::string &text, bool *found);
std::string normalise_answer(std::string answer);
bool answers_match(const std::string &predicted, const std::string &expected);

}  // namespace cli
