// chat.cpp — `reset chat`: the REPL.
//
// Each turn renders the whole conversation with the model's chat template,
// tokenizes it, and prefills only what the session does not already hold:
// templates that drop earlier reasoning change the prompt where the last
// answer began, so the session is cut back to the prefix the two share
// (reset_truncate) and the rest prefilled.  When the conversation outgrows the session's
// context, its oldest exchanges are dropped from what the model sees (the
// system prompt stays; /save still writes them) so that a quarter of the
// context (or /max tokens, up to half) is left for the answer.  A thinking
// budget closes the reasoning after N tokens by appending "</think>" as
// prompt text, and the answer goes on from there.  Each answer starts a new
// generation of the policy (start_generation): the penalties and ReSET's step
// state see that answer's tokens only.  Tokens stream as the library hands
// them out: complete UTF-8 only.  Ctrl-C cancels the generation through
// reset_session_cancel from a watcher thread (the signal handler itself only
// write()s to a pipe, which is async-signal-safe); Ctrl-D quits, typed during
// an answer too (TypeAhead).
//
// /session save DIR keeps the conversation (DIR/conversation.json,
// conversation_file.cpp) and the model's state for it (DIR/sequence.safetensors,
// reset_save_sequence: the KV cache of every token the session holds), and
// /session load DIR, or --session DIR at start, continues it: the state makes
// the next message prefill only itself, as if the REPL had never stopped.  The
// state is only ever a cache of the conversation: turn() keeps of whatever the
// session holds the tokens its prompt shares, so a state that is missing, from
// another model, or older than its conversation costs a prefill, never a
// wrong answer.  With --session the conversation is saved there on leaving,
// an error that ends the REPL included.  At a terminal, loading also shows the
// last exchange and fills the line editor's history with the user messages.
#include <editline/readline.h>
#include <fcntl.h>
#include <signal.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <thread>

#include "cli.h"

namespace cli {

namespace {

// --- Ctrl-C ------------------------------------------------------------------

volatile sig_atomic_t g_interrupts = 0;
int g_signal_pipe[2] = {-1, -1};

extern "C" void on_sigint(int) {
    g_interrupts = g_interrupts + 1;
    const char byte = 1;
    // Nothing else is async-signal-safe enough: the watcher does the rest.
    if (write(g_signal_pipe[1], &byte, 1) < 0) {
    }
}

// A signal action that calls `handler`, blocking nothing more and restarting nothing.
struct sigaction handler_action(void (*handler)(int)) {
    struct sigaction action;
    std::memset(&action, 0, sizeof action);
    action.sa_handler = handler;
    sigemptyset(&action.sa_mask);
    return action;
}

// Turns each SIGINT into reset_session_cancel on the session that is
// generating, if any.
class CancelWatcher {
public:
    CancelWatcher() {
        if (pipe(g_signal_pipe) != 0) fail("cannot create a pipe for Ctrl-C");
        fcntl(g_signal_pipe[1], F_SETFL, O_NONBLOCK);
        const struct sigaction action = handler_action(on_sigint);
        sigaction(SIGINT, &action, &previous_);
        thread_ = std::thread([this] {
            char byte;
            for (;;) {
                const ssize_t got = read(g_signal_pipe[0], &byte, 1);
                // A signal whose handler ran on this thread (the kernel may pick any thread: SIGINT
                // itself, or Ctrl-Z's) ends the read with EINTR: read again.  Ending the loop there
                // lost every later Ctrl-C (seen once in 6 REPL tests under load, session 46).
                if (got < 0 && errno == EINTR) continue;
                if (got <= 0) break;  // the write end closed: the watcher ends
                std::lock_guard<std::mutex> lock(mutex_);
                if (active_) reset_session_cancel(active_);
            }
        });
    }
    ~CancelWatcher() {
        sigaction(SIGINT, &previous_, nullptr);
        close(g_signal_pipe[1]);  // the watcher's read returns 0 and it ends
        thread_.join();
        close(g_signal_pipe[0]);
    }
    void set_active(reset_session *session) {
        std::lock_guard<std::mutex> lock(mutex_);
        active_ = session;
    }

private:
    std::thread thread_;
    std::mutex mutex_;
    reset_session *active_ = nullptr;
    struct sigaction previous_;
};

// --- keys typed between prompts -------------------------------------------------

// Keys typed while the REPL is away from its prompt (the model loading, an answer streaming)
// wait for the next prompt as typed.  In the terminal's canonical mode the line discipline
// would take them first: a Ctrl-D there is its end-of-file, which becomes a NUL byte once the
// line editor switches to raw mode, so the key was lost (through a pty, a Ctrl-D sent 2 ms after
// a message quit the REPL 0 times in 10), and typed text echoed into the streaming answer.  So
// while held, the terminal hands bytes over as they come (no ICANON) and does not echo them
// (the line editor echoes them into the next prompt's line); signals stay on (Ctrl-C).  The
// terminal's own settings come back before every prompt and when the REPL ends, an error
// included.  A signal that ends the process while the terminal is held (SIGTERM, SIGHUP,
// SIGQUIT, and SIGINT until the Chat's CancelWatcher takes Ctrl-C over: a model loading) gives the
// settings back first: a shell with job control would restore them, but the REPL's parent may be
// any program.  So does Ctrl-Z (SIGTSTP) while the terminal is held, for as long as the REPL is
// stopped, and the REPL holds the terminal again when it continues in the foreground (in the
// background it leaves the terminal alone: changing it there would stop the job again, SIGTTOU).
termios g_terminal_settings;                 // what a held terminal goes back to
termios g_terminal_held_settings;            // the held settings themselves
volatile sig_atomic_t g_terminal_held = 0;   // whether it is held now

extern "C" void on_ending_signal(int signo) {
    if (g_terminal_held) tcsetattr(STDIN_FILENO, TCSANOW, &g_terminal_settings);  // async-signal-safe
    signal(signo, SIG_DFL);
    raise(signo);  // delivered, with the default action, once this handler returns
}

extern "C" void on_stop_signal(int signo) {
    const int saved_errno = errno;
    const bool held = g_terminal_held;
    if (held) tcsetattr(STDIN_FILENO, TCSANOW, &g_terminal_settings);
    const struct sigaction stop = handler_action(SIG_DFL);
    struct sigaction mine;
    sigaction(signo, &stop, &mine);
    sigset_t just_this;
    sigemptyset(&just_this);
    sigaddset(&just_this, signo);
    sigprocmask(SIG_UNBLOCK, &just_this, nullptr);  // blocked while its handler runs
    raise(signo);  // the process stops here, and goes on when continued
    sigaction(signo, &mine, nullptr);  // the handler's return restores the signal mask
    if (held && g_terminal_held && tcgetpgrp(STDIN_FILENO) == getpgrp())
        tcsetattr(STDIN_FILENO, TCSANOW, &g_terminal_held_settings);
    errno = saved_errno;
}

class TypeAhead {
public:
    explicit TypeAhead(bool interactive) : interactive_(interactive) {
        if (interactive_) {
            for (size_t i = 0; i < kSignals.size(); ++i) {
                const struct sigaction action =
                    handler_action(kSignals[i] == SIGTSTP ? on_stop_signal : on_ending_signal);
                sigaction(kSignals[i], nullptr, &previous_[i]);
                // An ignored signal stays ignored (nohup's SIGHUP; SIGTSTP under a shell without job control).
                if (previous_[i].sa_handler != SIG_IGN) sigaction(kSignals[i], &action, nullptr);
            }
        }
        hold();
    }
    ~TypeAhead() {
        release();
        if (interactive_)
            for (size_t i = 0; i < kSignals.size(); ++i) sigaction(kSignals[i], &previous_[i], nullptr);
    }
    TypeAhead(const TypeAhead &) = delete;
    TypeAhead &operator=(const TypeAhead &) = delete;
    // g_terminal_held is the state (the signal handler reads it too); one TypeAhead per process.
    void hold() {
        if (!interactive_ || g_terminal_held || tcgetattr(STDIN_FILENO, &g_terminal_settings) != 0) return;
        termios held = g_terminal_settings;
        held.c_lflag &= ~tcflag_t(ICANON | ECHO);
        held.c_cc[VMIN] = 1;
        held.c_cc[VTIME] = 0;
        g_terminal_held_settings = held;
        g_terminal_held = 1;  // before the change: a signal in between restores, harmlessly
        if (tcsetattr(STDIN_FILENO, TCSANOW, &held) != 0) g_terminal_held = 0;
    }
    void release() {
        if (!g_terminal_held) return;
        tcsetattr(STDIN_FILENO, TCSANOW, &g_terminal_settings);
        g_terminal_held = 0;
    }

private:
    // The signals that end the process (on_ending_signal), and Ctrl-Z's (on_stop_signal).
    static constexpr std::array<int, 5> kSignals = {SIGTERM, SIGHUP, SIGQUIT, SIGINT, SIGTSTP};
    const bool interactive_;
    std::array<struct sigaction, kSignals.size()> previous_{};
};

// --- terminal styles ---------------------------------------------------------

const char *const kDim = "\033[2m";
const char *const kWarm = "\033[33m";  // T at ReSET's high temperature
const char *const kCool = "\033[36m";  // T at the low one
const char *const kBold = "\033[1m";
const char *const kPlain = "\033[0m";

struct TurnStats {
    size_t prefill_tokens = 0, reused_tokens = 0, decode_tokens = 0, reasoning_tokens = 0;
    double prefill_seconds = 0, decode_seconds = 0;
    std::vector<float> entropies, temperatures;
    // Sum of reset_step.logprob over the answer's tokens that have a finite one (raw softmax).
    double logprob_sum = 0;
    size_t logprob_tokens = 0;
    bool valid = false;
};

class Chat {
public:
    Chat(Model &model, const Args &args);
    // Returns false when the user asked to quit.
    bool command(const std::string &line);
    void turn(const std::string &user_text);
    // /session save and load; --session (cmd_chat) uses them too.  Both fail with a CliError.
    void save_session(const std::string &directory);
    void load_session(const std::string &directory);
    void set_session_directory(const std::string &directory) { session_directory_ = directory; }

private:
    void emit(const std::string &text, float temperature);
    void print_stats() const;
    void print_help() const;
    void recall_loaded_conversation() const;
    std::string state_agreement() const;
    std::vector<int32_t> prompt_ids(size_t from, size_t end, const std::string *user_text) const;
    void save(const std::string &path) const;
    void session_command(const std::string &rest);
    void set_policy(const std::string &text);
    void start_generation();
    std::vector<int32_t> fitting_prompt(const std::string &user_text, size_t *from);
    reset_status end_reasoning(std::string *answer);
    void flush_held(std::string *answer);

    Model &model_;
    const reset_tokenizer *tokenizer_;
    Session session_;
    CancelWatcher watcher_;
    std::vector<Message> history_;  // the whole transcript, system prompt first when there is one
    size_t kept_from_ = 0;          // history_[kept_from_..] (and the system prompt) are what the model sees
    int32_t max_context_;           // tokens the session can hold
    std::string system_;
    std::string session_directory_;  // --session's: where /session saves without a name, and cmd_chat on leaving
    bool thinking_ = true, fold_ = false, colour_temperature_ = false;
    const bool colour_, interactive_;
    long max_tokens_;
    long think_budget_;  // reasoning tokens before "</think>" is appended; 0: no limit
    StopArgs stop_;      // --stop, --stop-id: set with max_tokens_ at every answer
    reset_policy_params policy_{};  // the session's, as reset_session_get_policy gives it
    float high_cut_ = 0.8f;         // temperatures at or above it are coloured warm
    void read_policy();
    void retry();
    std::string eos_text_;
    TurnStats stats_;
    // Streaming state of the current answer.
    bool in_think_ = false;
};

Chat::Chat(Model &model, const Args &args)
    : model_(model), tokenizer_(model.tokenizer()),
      session_(model.handle, int32_t(args.get_int("context", 0, 0, 1 << 24)), 1, 0, kv_cache_from_args(args)),
      colour_(colour_enabled(1)),
      interactive_(isatty(0) && isatty(1)), max_tokens_(args.get_int("max-tokens", 0, 0, 1L << 30)),
      think_budget_(args.get_int("think-budget", 0, 0, 1L << 30)), stop_(args) {
    max_context_ = reset_session_max_context(session_.handle);
    thinking_ = !args.has("no-think");
    fold_ = args.has("fold");
    colour_temperature_ = args.has("colour-temperature");
    system_ = args.get("system", "");
    set_policy_from_args(session_.handle, args);
    set_logit_bias_from_args(session_.handle, args);
    stop_.set(session_.handle, max_tokens_);  // refused ones fail now, not at the first prompt
    read_policy();
    reset_tokenizer_info info;
    reset_tokenizer_info_init(&info);
    check(reset_tokenizer_get_info(tokenizer_, &info), "tokenizer info");
    if (info.n_eos > 0) eos_text_ = token_text(tokenizer_, info.eos_ids[0]);
    // Fail now, not at the first prompt, when the template is unknown.
    chat_render(tokenizer_, {{"user", "hi"}}, thinking_);
}

void Chat::print_help() const {
    std::printf(
        "Type a message and press Enter.  End a line with \\ to continue it; a line \"\"\" opens and closes a "
        "block.\n"
        "  /think on|off        reasoning on or off (Qwen3's enable_thinking)\n"
        "  /fold on|off         hide the reasoning (a count is shown instead)\n"
        "  /colour on|off       colour each token by the temperature the policy applied\n"
        "                       (yellow: high, cyan: low)\n"
        "  /policy greedy | fixed T | reset [t_low=.. tau0=.. t_high=.. window=..] | entropy ...\n"
        "                       also top_p= top_k= min_p= seed= preset=Qwen3-8B\n"
        "                       presence_penalty= frequency_penalty= (each in [-2, 2])\n"
        "                       repetition_penalty= (in [0.1, 10], 1 = off; the whole conversation)\n"
        "  /max N               stop an answer after N tokens (0: at the end of the context)\n"
        "  /budget N            close the reasoning after N tokens with </think> (0: no limit)\n"
        "  /context             how much of the context the conversation uses\n"
        "  /stats               speed, mean log-probability and perplexity, and the entropy/temperature\n"
        "                       distribution of the last answer\n"
        "  /retry               the last answer again, drawn with the next seed (the same answer if greedy)\n"
        "  /reset               forget the conversation\n"
        "  /save FILE           write the transcript (Markdown, for reading)\n"
        "  /session save [DIR]  keep the conversation and the model's state for it in DIR (--session's when\n"
        "                       none is named), to continue later\n"
        "  /session load [DIR]  continue a conversation kept that way: the next message prefills only itself;\n"
        "                       at a terminal its last exchange is shown and Up recalls its messages\n"
        "  /session             the directory --session named\n"
        "  /quit, Ctrl-D        leave;  Ctrl-C stops the answer being written\n");
}

// The last answer again: its message is asked once more, so turn() cuts the session back to the
// prompt it shares with the last one (reset_truncate) and prefills one token.  A session cut back
// draws as a new one would, so the same seed would give the same answer: the next seed draws another.
void Chat::retry() {
    if (history_.size() < 2 || history_.back().role != "assistant") {
        std::printf("no answer to retry\n");
        return;
    }
    history_.pop_back();
    const std::string message = history_.back().content;
    history_.pop_back();
    if (policy_.kind != RESET_POLICY_GREEDY) {
        reset_policy_params params = policy_;
        params.seed += 1;
        check(reset_set_policy(session_.handle, &params), "cannot change the seed");
        read_policy();
        std::printf("[seed %llu]\n", static_cast<unsigned long long>(policy_.seed));
    }
    turn(message);
}

void Chat::read_policy() {
    reset_policy_params_init(&policy_);
    check(reset_session_get_policy(session_.handle, &policy_), "cannot read the session's policy");
    high_cut_ = 0.5f * (policy_.t_high + std::max(0.0f, policy_.t_low));
}

void Chat::set_policy(const std::string &text) {
    PolicySpec spec = parse_policy(text);
    if (reset_set_policy(session_.handle, &spec.params) != RESET_OK) {
        std::printf("policy not changed: %s\n", reset_last_error());
        return;
    }
    read_policy();
    std::printf("policy: %s\n", describe_policy(policy_).c_str());
}

// Each answer is a generation of its own (reset.h, reset_policy_params.reset_state): the session
// keeps the policy's per-generation state across reset_prefill, so without this the penalties
// would go on counting the tokens of every earlier answer (they are in the prompt now, and prompt
// tokens are otherwise never counted), and ReSET's step entropies and global mean would mix this
// answer with the earlier ones.  The policy itself is re-applied unchanged (get, then set).
void Chat::start_generation() {
    reset_policy_params params;
    reset_policy_params_init(&params);
    check(reset_session_get_policy(session_.handle, &params), "cannot read the session's policy");
    params.reset_state = 1;
    check(reset_set_policy(session_.handle, &params), "cannot start a new answer");
}

static bool on_off(const std::string &word, bool *value) {
    if (word == "on") *value = true;
    else if (word == "off") *value = false;
    else return false;
    return true;
}

bool Chat::command(const std::string &line) {
    std::string name = line, rest;
    const size_t space = line.find(' ');
    if (space != std::string::npos) {
        name = line.substr(0, space);
        rest = line.substr(line.find_first_not_of(' ', space) == std::string::npos ? line.size()
                                                                                  : line.find_first_not_of(' ', space));
    }
    try {
        if (name == "/quit" || name == "/exit") return false;
        if (name == "/help" || name == "/?") {
            print_help();
        } else if (name == "/think") {
            if (!on_off(rest, &thinking_)) usage_error("/think on|off");
            std::printf("thinking %s\n", thinking_ ? "on" : "off");
        } else if (name == "/fold") {
            if (!on_off(rest, &fold_)) usage_error("/fold on|off");
            std::printf("reasoning %s\n", fold_ ? "folded" : "shown");
        } else if (name == "/colour" || name == "/color") {
            if (!on_off(rest, &colour_temperature_)) usage_error("/colour on|off");
            std::printf("temperature colouring %s%s\n", colour_temperature_ ? "on" : "off",
                        colour_ ? "" : " (no effect: output is not a terminal)");
        } else if (name == "/policy") {
            if (rest.empty()) std::printf("policy: %s\n", describe_policy(policy_).c_str());
            else set_policy(rest);
        } else if (name == "/max") {
            max_tokens_ = parse_int(rest, "/max", 0, 1L << 30);
            std::printf("max tokens per answer: %ld\n", max_tokens_);
        } else if (name == "/budget") {
            think_budget_ = parse_int(rest, "/budget", 0, 1L << 30);
            if (think_budget_) std::printf("reasoning closed after %ld tokens\n", think_budget_);
            else std::printf("no reasoning budget\n");
        } else if (name == "/context") {
            const size_t system = !history_.empty() && history_.front().role == "system" ? 1 : 0;
            std::printf("context: %d of %d tokens held; %zu messages in the conversation",
                        reset_session_length(session_.handle, 0), max_context_, history_.size() - system);
            if (kept_from_ > system) std::printf(", the oldest %zu no longer seen by the model", kept_from_ - system);
            std::printf("\n");
        } else if (name == "/stats") {
            print_stats();
        } else if (name == "/retry") {
            retry();
        } else if (name == "/reset") {
            history_.clear();
            kept_from_ = 0;
            check(reset_session_reset(session_.handle), "reset");
            std::printf("conversation cleared\n");
        } else if (name == "/save") {
            if (rest.empty()) usage_error("/save FILE");
            save(rest);
        } else if (name == "/session") {
            session_command(rest);
        } else {
            std::printf("unknown command %s (/help lists them)\n", name.c_str());
        }
    } catch (const CliError &e) {
        std::printf("%s\n", e.what());
    }
    std::fflush(stdout);
    return true;
}

void Chat::save(const std::string &path) const {
    std::ofstream out(path, std::ios::binary);
    if (!out) {
        std::printf("cannot write %s: %s\n", path.c_str(), std::strerror(errno));
        return;
    }
    for (const Message &m : history_) out << "### " << m.role << "\n\n" << m.content << "\n\n";
    out.close();
    if (!out) std::printf("cannot write %s\n", path.c_str());
    else std::printf("saved %zu messages to %s\n", history_.size(), path.c_str());
}

// Inside a session directory.
const char *const kConversationFile = "conversation.json";
const char *const kStateFile = "sequence.safetensors";

void Chat::session_command(const std::string &rest) {
    const size_t space = rest.find(' ');
    const std::string verb = rest.substr(0, space);
    std::string directory = space == std::string::npos ? "" : rest.substr(rest.find_first_not_of(' ', space));
    if (rest.empty()) {
        if (session_directory_.empty())
            std::printf("no session directory (reset chat --session DIR); /session save DIR keeps this one\n");
        else
            std::printf("session directory: %s (saved there on leaving)\n", session_directory_.c_str());
        return;
    }
    if (verb != "save" && verb != "load") usage_error("/session save [DIR] | /session load [DIR]");
    if (directory.empty()) directory = session_directory_;
    if (directory.empty()) usage_error("/session " + verb + " DIR (no --session directory to default to)");
    if (verb == "save") save_session(directory);
    else load_session(directory);
}

void Chat::save_session(const std::string &directory) {
    std::error_code error;
    std::filesystem::create_directories(directory, error);
    if (error) fail("cannot create " + directory + ": " + error.message());
    // The state first, then the conversation, whose rename makes the save whole.  A state that
    // cannot be saved (a session stopped by a device failure, a full disk) is left out: the
    // conversation is what must not be lost, and without the state it is prefilled when continued.
    const std::string state = directory + "/" + kStateFile;
    const int32_t held = reset_session_length(session_.handle, 0);
    std::string what_state;
    if (reset_save_sequence(session_.handle, 0, state.c_str()) == RESET_OK) {
        what_state = "the model's state (" + std::to_string(held) + " tokens)";
    } else {
        what_state = std::string("not the model's state (") + reset_last_error() +
                     "): continuing it prefills the conversation again";
        std::remove(state.c_str());  // an older state would only cost its loading
    }
    write_conversation(directory + "/" + kConversationFile, {history_, kept_from_, thinking_});
    std::printf("saved %zu messages and %s to %s\n", history_.size(), what_state.c_str(), directory.c_str());
}

// Whether a loaded state holds its conversation: it must begin with the
// prompt of the conversation's last turn (the messages from kept_from_ up to
// the last user message, rendered as that turn rendered them).  A state saved
// with another version of the conversation (a file edited by hand, another
// chat template) still loads, and turn() keeps what it shares; this says so
// at load, where the user can see why the next message is slow.  Empty when
// the state matches, or when there is nothing to compare.
std::string Chat::state_agreement() const {
    size_t last_user = history_.size();
    while (last_user > kept_from_ && history_[last_user - 1].role != "user") --last_user;
    if (last_user == kept_from_) return "";
    std::vector<int32_t> prompt;
    try {
        prompt = prompt_ids(kept_from_, last_user, nullptr);
    } catch (const CliError &) {
        return "";  // the next message's rendering reports it
    }
    const std::vector<int32_t> held = session_tokens(session_.handle, 0);
    size_t agree = 0;
    while (agree < held.size() && agree < prompt.size() && held[agree] == prompt[agree]) ++agree;
    if (agree == prompt.size()) return "";
    return ", which holds only the first " + std::to_string(agree) + " of the " + std::to_string(prompt.size()) +
           " tokens of the conversation's last prompt: the next message prefills the rest";
}

void Chat::load_session(const std::string &directory) {
    SavedConversation saved = read_conversation(directory + "/" + kConversationFile);
    const std::string state = directory + "/" + kStateFile;
    std::string what_state;
    bool state_loaded = false;
    std::error_code error;  // an unreadable directory reads as no state
    if (!std::filesystem::exists(state, error)) {
        what_state = "no model state: the next message prefills the conversation";
    } else if (reset_load_sequence(session_.handle, 0, state.c_str()) == RESET_OK) {
        state_loaded = true;
        what_state = "the model's state (" + std::to_string(reset_session_length(session_.handle, 0)) + " tokens)";
    } else {
        // Another model or weights format, another --kv-cache, a longer state than --context, a
        // damaged file: the library says which.
        what_state = std::string("not the model's state (") + reset_last_error() +
                     "): the next message prefills the conversation";
    }
    if (!state_loaded)
        check(reset_session_reset(session_.handle), "reset");  // nothing of the previous conversation stays
    history_ = std::move(saved.messages);
    kept_from_ = saved.kept_from;
    thinking_ = saved.thinking;
    // The loaded conversation's system prompt is its own; one that has no messages yet takes
    // --system's at its first message, as a new conversation does.
    if (!history_.empty()) system_ = history_.front().role == "system" ? history_.front().content : "";
    stats_ = TurnStats();
    if (state_loaded) what_state += state_agreement();
    std::printf("loaded %zu messages (thinking %s) and %s from %s\n", history_.size(), thinking_ ? "on" : "off",
                what_state.c_str(), directory.c_str());
    if (interactive_) recall_loaded_conversation();
}

// At a terminal, a loaded conversation picks up where it stopped: the line
// editor's history becomes its user messages (Up recalls them, as in the
// process that wrote it), and its last exchange is shown, the answer without
// its reasoning and cut to its last lines.  Not through a pipe, whose output
// a program reads.
void Chat::recall_loaded_conversation() const {
    clear_history();
    for (const Message &m : history_)
        if (m.role == "user") add_history(m.content.c_str());
    size_t user = history_.size();
    while (user > 0 && history_[user - 1].role != "user") --user;
    if (user == 0) return;
    const std::string &question = history_[user - 1].content;
    std::string answer = user < history_.size() ? history_[user].content : "";
    // The reasoning is left out where it ended; an answer cut short inside it ("<think>" and no
    // "</think>") is all reasoning, shown as such.  (A model whose template opens the block itself
    // has no "<think>" in its answers: cut short, its reasoning shows as the answer.)
    const size_t think_end = answer.rfind("</think>"), think_start = answer.find("<think>");
    const bool reasoning = think_end != std::string::npos;
    const bool unfinished = !reasoning && think_start != std::string::npos;
    if (reasoning) answer.erase(0, think_end + std::strlen("</think>"));
    else if (unfinished) answer.erase(0, think_start + std::strlen("<think>"));
    while (!answer.empty() && std::isspace(static_cast<unsigned char>(answer.front()))) answer.erase(0, 1);
    while (!answer.empty() && std::isspace(static_cast<unsigned char>(answer.back()))) answer.pop_back();
    // The last kShownLines lines: a long answer's end is where the conversation stopped.
    constexpr size_t kShownLines = 12;
    size_t cut = answer.size(), lines = 0;
    while (cut > 0 && lines < kShownLines) {
        cut = answer.rfind('\n', cut - 1);
        if (cut == std::string::npos) {
            cut = 0;
            break;
        }
        ++lines;
    }
    const bool shortened = cut > 0;
    if (shortened) answer.erase(0, cut + 1);
    std::printf("%slast exchange:%s\n> %s\n%s%s%s%s", colour_ ? kDim : "", colour_ ? kPlain : "", question.c_str(),
                reasoning ? "(reasoning left out)\n" : unfinished ? "(stopped in its reasoning)\n" : "",
                shortened ? "...\n" : "", answer.c_str(), answer.empty() ? "" : "\n");
    std::fflush(stdout);
}

void Chat::print_stats() const {
    if (!stats_.valid) {
        std::printf("no answer yet\n");
        return;
    }
    const TurnStats &s = stats_;
    std::printf("prefill: %zu tokens in %.3f s (%.1f tokens/s), %zu more kept from the last turn\n", s.prefill_tokens,
                s.prefill_seconds, s.prefill_seconds > 0 ? double(s.prefill_tokens) / s.prefill_seconds : 0.0,
                s.reused_tokens);
    std::printf("decode:  %zu tokens in %.3f s (%.1f tokens/s), %zu of them reasoning\n", s.decode_tokens,
                s.decode_seconds, s.decode_seconds > 0 ? double(s.decode_tokens) / s.decode_seconds : 0.0,
                s.reasoning_tokens);
    if (s.logprob_tokens) {
        // The model's own probabilities (softmax of the raw logits), whatever the policy drew with:
        // perplexity = exp(-mean log p), the usual per-token definition.
        const double mean = s.logprob_sum / double(s.logprob_tokens);
        std::printf("log-prob: mean %.3f nats/token, perplexity %.2f (raw model distribution)\n", mean,
                    std::exp(-mean));
    }
    if (s.entropies.empty()) return;
    reset_calibration_result table;
    reset_calibration_result_init(&table);
    if (reset_entropy_percentiles(s.entropies.data(), s.entropies.size(), 50, &table) == RESET_OK)
        std::printf("entropy (nats): mean %.3f  min %.3f  p10 %.3f  p50 %.3f  p90 %.3f  max %.3f\n", table.mean,
                    table.percentiles[0], table.percentiles[10], table.percentiles[50], table.percentiles[90],
                    table.percentiles[100]);
    // Temperatures take few distinct values (ReSET: two), so count each.
    std::vector<std::pair<float, size_t>> counts;
    for (float t : s.temperatures) {
        auto it = std::find_if(counts.begin(), counts.end(), [t](const auto &c) { return std::fabs(c.first - t) < 1e-6f; });
        if (it == counts.end()) counts.push_back({t, 1});
        else ++it->second;
    }
    std::sort(counts.begin(), counts.end());
    std::printf("temperature:");
    for (const auto &c : counts)
        std::printf("  T=%.2f x%zu (%.0f%%)", c.first, c.second, 100.0 * double(c.second) / double(s.temperatures.size()));
    std::printf("\n");
}

// Prints one piece of the answer, styled by where it is (reasoning or not)
// and by the temperature that chose it.
void Chat::emit(const std::string &text, float temperature) {
    size_t pos = 0;
    while (pos < text.size()) {
        const char *tag = in_think_ ? "</think>" : "<think>";
        const size_t at = text.find(tag, pos);
        const std::string piece = text.substr(pos, at == std::string::npos ? std::string::npos : at - pos);
        if (!piece.empty() && !(in_think_ && fold_)) {
            std::string style;
            if (colour_ && in_think_) style += kDim;
            if (colour_ && colour_temperature_ && policy_.kind != RESET_POLICY_GREEDY)
                style += temperature >= high_cut_ ? kWarm : kCool;
            std::fputs(style.c_str(), stdout);
            std::fwrite(piece.data(), 1, piece.size(), stdout);
            if (!style.empty()) std::fputs(kPlain, stdout);
        }
        if (at == std::string::npos) break;
        // The tag itself: reasoning opens or closes.
        if (!in_think_) {
            if (fold_) std::printf("%s[thinking...]%s", colour_ ? kDim : "", colour_ ? kPlain : "");
            else std::printf("%s<think>%s", colour_ ? kDim : "", colour_ ? kPlain : "");
        } else if (!fold_) {
            std::printf("%s</think>%s", colour_ ? kDim : "", colour_ ? kPlain : "");
        }
        in_think_ = !in_think_;
        pos = at + std::strlen(tag);
    }
    std::fflush(stdout);
}

// The prompt for the conversation with user_text appended, as the template
// renders it.  While it leaves less than the answer's room in the context,
// the oldest exchange the model still sees (a user message and the answer to
// it) is left out; *from receives the index in history_ of the first message
// kept.  The caller commits it once the prompt is in the session.
// The tokens of the prompt the model sees for history_[from, end), then
// user_text as a new message when given: the system prompt first (it is never
// left out), rendered by the chat template for the next answer.
std::vector<int32_t> Chat::prompt_ids(size_t from, size_t end, const std::string *user_text) const {
    std::vector<Message> messages;
    if (!history_.empty() && history_.front().role == "system") messages.push_back(history_.front());
    messages.insert(messages.end(), history_.begin() + long(from), history_.begin() + long(end));
    if (user_text) messages.push_back({"user", *user_text});
    return tokenize(tokenizer_, chat_render(tokenizer_, messages, thinking_), RESET_TOKENIZE_PARSE_SPECIAL);
}

std::vector<int32_t> Chat::fitting_prompt(const std::string &user_text, size_t *from) {
    const size_t capacity = size_t(std::max(max_context_, 1));
    // Room for the answer: what /max allows (up to half the context), else a quarter of it.
    const size_t room = max_tokens_ > 0 ? std::min(size_t(max_tokens_), capacity / 2) : capacity / 4;
    *from = kept_from_;
    while (true) {
        std::vector<int32_t> ids = prompt_ids(*from, history_.size(), &user_text);
        if (ids.size() + room <= capacity || *from == history_.size()) return ids;
        size_t n = 1;
        while (*from + n < history_.size() && history_[*from + n].role != "user") ++n;
        *from += n;
    }
}

// Text a stop string might have begun, held back by the library: shown and kept when the answer
// ends otherwise (a cancel, a full context) or goes on after a prefill (the reasoning closed).
void Chat::flush_held(std::string *answer) {
    const std::string text = held_text(session_.handle);
    *answer += text;
    emit(text, 0.0f);
}

// The thinking budget is spent: "</think>" goes into the sequence (cli.h).
reset_status Chat::end_reasoning(std::string *answer) {
    std::string text;
    std::vector<int32_t> ids;
    const reset_status status =
        close_reasoning(session_.handle, tokenizer_, !answer->empty() && answer->back() == '\n', &text, &ids);
    if (status != RESET_OK) return status;
    *answer += text;
    emit(text, 0.0f);
    return RESET_OK;
}

void Chat::turn(const std::string &user_text) {
    if (!system_.empty() && history_.empty()) {
        history_.push_back({"system", system_});
        kept_from_ = 1;
    }
    size_t from = kept_from_;
    std::vector<int32_t> ids;
    try {
        ids = fitting_prompt(user_text, &from);
    } catch (const CliError &e) {
        // The conversation rendered before, so what fails is the new message (text that is not
        // UTF-8): it is refused and the REPL goes on, as a shell refuses a bad line.
        std::printf("[message not sent: %s]\n", e.what());
        return;
    }

    stats_ = TurnStats();
    const sig_atomic_t interrupts_at_start = g_interrupts;
    watcher_.set_active(session_.handle);
    struct Inactive {
        CancelWatcher &w;
        ~Inactive() { w.set_active(nullptr); }
    } inactive{watcher_};

    // Prefill only what the session does not hold yet: keep the longest prefix it shares with the new
    // prompt.  Qwen3's template leaves earlier answers' reasoning out, so the prompt parts from what the
    // session holds at the last answer, and only that answer and the new message are prefilled.
    const std::vector<int32_t> held = session_tokens(session_.handle, 0);
    size_t kept = 0;
    while (kept < held.size() && kept < ids.size() && held[kept] == ids[kept]) ++kept;
    if (kept == ids.size()) --kept;  // all of it held: its last token again, for the logits
    check(reset_truncate(session_.handle, int32_t(kept)), "truncate");
    // Cutting back restarts the sampler already, and then this changes nothing.
    start_generation();
    stop_.set(session_.handle, max_tokens_);  // /max may have changed it
    const double prefill_start = now_seconds();
    reset_status status = RESET_ERR_CANCELLED;
    for (int attempt = 0; attempt < 2 && status == RESET_ERR_CANCELLED; ++attempt) {
        status = reset_prefill(session_.handle, ids.data() + kept, ids.size() - kept);
        // A Ctrl-C that landed just after the previous answer ended leaves a
        // cancel pending; it was not meant for this prompt, so try again.
        if (status == RESET_ERR_CANCELLED && g_interrupts != interrupts_at_start) break;
    }
    if (status == RESET_ERR_CANCELLED) {
        std::printf("\n[interrupted]\n");
        return;
    }
    if (status == RESET_ERR_CONTEXT_OVERFLOW) {
        std::printf("[the message does not fit the context even without the earlier ones: %zu tokens with the "
                    "template, %d in the context (--context)]\n", ids.size(), max_context_);
        return;
    }
    check(status, "prefill");
    if (from != kept_from_) {
        std::printf("[%zu earlier messages left out to fit the context of %d tokens; /context]\n", from - kept_from_,
                    max_context_);
        kept_from_ = from;
    }
    stats_.prefill_seconds = now_seconds() - prefill_start;
    stats_.prefill_tokens = ids.size() - kept;
    stats_.reused_tokens = kept;
    stats_.valid = true;
    history_.push_back({"user", user_text});

    std::string answer, note;
    // The answer joins the history however the turn ends, an error included, so the history keeps
    // its user/assistant pairs and --session's save on leaving loses nothing.
    struct KeepAnswer {
        std::vector<Message> &history;
        const std::string &answer;
        ~KeepAnswer() {
            try {
                history.push_back({"assistant", answer});
            } catch (...) {  // out of memory: the history loses this answer rather than the process ending
            }
        }
    } keep_answer{history_, answer};
    const std::string context_full = "[the context of " + std::to_string(max_context_) +
                                     " tokens is full; the next message leaves out the oldest ones to make room]";
    // A cancel or a full context ends the answer with a note; any other error ends the command.
    auto ends_answer = [&](reset_status s, const char *what) {
        if (s == RESET_ERR_CANCELLED) note = "[interrupted]";
        else if (s == RESET_ERR_CONTEXT_OVERFLOW) note = context_full;
        else check(s, what);
        if (s != RESET_OK) flush_held(&answer);
        return s != RESET_OK;
    };
    in_think_ = false;
    const double decode_start = now_seconds();
    while (max_tokens_ == 0 || long(stats_.decode_tokens) < max_tokens_) {
        reset_step step;
        reset_step_init(&step, 1);
        if (ends_answer(reset_decode_step(session_.handle, &step, 1, nullptr), "decode")) break;
        ++stats_.decode_tokens;
        if (in_think_) ++stats_.reasoning_tokens;
        stats_.entropies.push_back(step.entropy);
        stats_.temperatures.push_back(step.temperature);
        if (std::isfinite(step.logprob)) {
            stats_.logprob_sum += step.logprob;
            ++stats_.logprob_tokens;
        }
        std::string text(step.text, step.text_len);
        if (step.end_of_generation) {
            // The end-of-turn token is the template's business, not the answer's.
            if (!eos_text_.empty() && text.size() >= eos_text_.size() &&
                text.compare(text.size() - eos_text_.size(), eos_text_.size(), eos_text_) == 0)
                text.resize(text.size() - eos_text_.size());
        }
        answer += text;
        emit(text, step.temperature);
        if (step.end_of_generation) break;
        if (think_budget_ > 0 && in_think_ && long(stats_.reasoning_tokens) >= think_budget_) {
            flush_held(&answer);  // the prefill below forgets it
            if (ends_answer(end_reasoning(&answer), "closing the reasoning")) break;
            // The prefill starts the library's max_tokens count again: what is left of it.
            stop_.set(session_.handle, max_tokens_ > 0 ? max_tokens_ - long(stats_.decode_tokens) : 0);
        }
    }
    stats_.decode_seconds = now_seconds() - decode_start;
    if (colour_) std::fputs(kPlain, stdout);
    if (fold_ && stats_.reasoning_tokens)
        std::printf("\n%s(%zu tokens of reasoning folded)%s", colour_ ? kDim : "", stats_.reasoning_tokens,
                    colour_ ? kPlain : "");
    std::printf("\n%s%s", note.c_str(), note.empty() ? "" : "\n");
    std::fflush(stdout);
}

// Reads one message: a line, or several when lines end in '\' or a """
// block is open.  Returns false at the end of input (Ctrl-D).
bool read_message(bool interactive, bool colour, std::string *out) {
    std::vector<std::string> lines;
    bool block = false, got_any = false;
    while (true) {
        std::string line;
        const bool first = lines.empty() && !block;
        if (interactive) {
            // \001..\002 tell the line editor the colour codes take no width.
            const char *prompt = first ? (colour ? "\001\033[1;32m\002> \001\033[0m\002" : "> ") : ". ";
            const sig_atomic_t interrupts_before = g_interrupts;
            char *raw = readline(prompt);
            if (!raw && g_interrupts != interrupts_before) {
                // Ctrl-C at the prompt drops what was typed, as shells do;
                // readline returned because the signal interrupted its read,
                // leaving its line and terminal state half done: reset both,
                // or the next Ctrl-D is no longer seen as end of input.
                rl_free_line_state();
                rl_cleanup_after_signal();
                rl_reset_after_signal();
                std::printf("\n");
                lines.clear();
                block = false;
                continue;
            }
            if (!raw) break;
            line = raw;
            std::free(raw);
        } else if (!std::getline(std::cin, line)) {
            break;
        }
        got_any = true;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line == "\"\"\"") {
            if (block) break;
            block = true;
            continue;
        }
        if (!block && !line.empty() && line.back() == '\\') {
            line.pop_back();
            lines.push_back(line);
            continue;
        }
        lines.push_back(line);
        if (!block) break;
    }
    out->clear();
    for (size_t i = 0; i < lines.size(); ++i) *out += (i ? "\n" : "") + lines[i];
    if (interactive && !out->empty()) add_history(out->c_str());
    return got_any;
}

}  // namespace

int cmd_chat(int argc, char **argv) {
    const Args args = parse_args(argc, argv, 2, with_model_flags({"no-think", "fold", "colour-temperature", "help"}),
                                 [] {
                                     auto v = kModelValued;
                                     v.insert(kSamplingValued.begin(), kSamplingValued.end());
                                     v.insert(kStopValued.begin(), kStopValued.end());
                                     v.insert({"policy", "max-tokens", "think-budget", "system", "session"});
                                     return v;
                                 }());
    if (args.has("help")) {
        std::printf(
            "usage: reset chat [MODEL_DIR] [--policy P] [--max-tokens N] [--think-budget N] [--no-think] [--fold]\n"
            "                  [--colour-temperature] [--system TEXT] [--seed N] [--top-p P] [--top-k K]\n"
            "                  [--presence-penalty X] [--frequency-penalty X] [--repetition-penalty R]\n"
            "                  [--stop TEXT]... [--stop-id N]... [--logit-bias ID:BIAS]...\n"
            "                  [--weights auto|bf16|nvfp4|w4a4] [--backend auto|cpu|cuda] [--context N]\n"
            "                  [--kv-cache bf16|fp8|fp32] [--no-mmap] [--session DIR]\n"
            "With no MODEL_DIR: $RESET_MODEL, else models/default.  Reads a pipe too: one message per line.\n"
            "--session DIR continues the conversation kept in DIR, if there is one (/session save), and keeps it\n"
            "there on leaving, with the model's state for it, so that continuing prefills only the next message.\n"
            "--stop TEXT ends an answer where its text first contains TEXT (not shown, nor kept in the history;\n"
            "llama.cpp's --reverse-prompt, vLLM's stop); --stop-id N ends it on token N.  --logit-bias ID:BIAS adds\n"
            "BIAS (in [-100, 100], or -inf: never drawn) to token ID's logit before every draw (generate --help).\n"
            "--presence-penalty / --frequency-penalty (each in [-2, 2], 0 = off) lower the logits of the tokens\n"
            "the answer has already produced; each answer counts its own tokens only.\n"
            "--repetition-penalty R (in [0.1, 10], 1 = off) divides a positive logit / multiplies a negative one\n"
            "of every token already in the context, the whole conversation (Hugging Face / llama.cpp).\n");
        return 0;
    }
    if (args.positional.size() > 1) usage_error("chat takes one model directory");
    check_policy_args(args);
    const std::string path = model_path_or_default(args, 0);
    const bool interactive = isatty(0) && isatty(1);
    // The line editor set up before the terminal is held: libedit's readline layer turns editing
    // off for good if it first starts (at its first call: add_history from --session's recall, or
    // readline) while the terminal does not echo.
    if (interactive) rl_initialize();
    TypeAhead type_ahead(interactive);
    Model model(path, args);
    Chat chat(model, args);
    const std::string session_directory = args.get("session", "");
    if (args.has("session") && session_directory.empty()) usage_error("--session needs a directory");
    const bool colour = colour_enabled(1);
    if (interactive) {
        std::printf("%slibreset %s%s  %s, %d layers, %s on %s.  /help for commands, Ctrl-D to quit.\n",
                    colour ? kBold : "", reset_version_string(), colour ? kPlain : "", model.info.architecture,
                    model.info.n_layers, weights_name(model.info.weights), backend_name(model.info.backend));
    }
    if (!session_directory.empty()) {
        chat.set_session_directory(session_directory);
        std::error_code error;
        if (std::filesystem::exists(session_directory + "/" + kConversationFile, error))
            chat.load_session(session_directory);
    }
    std::string message;
    try {
        while (true) {
            type_ahead.release();
            const bool got = read_message(interactive, colour, &message);
            type_ahead.hold();
            if (!got) break;
            if (message.empty()) continue;
            if (message[0] == '/') {
                if (!chat.command(message)) break;
                continue;
            }
            chat.turn(message);
        }
    } catch (...) {
        // The error ends the REPL (main prints it); the conversation so far is kept first.
        if (!session_directory.empty()) {
            try {
                chat.save_session(session_directory);
            } catch (const std::exception &e) {
                std::fprintf(stderr, "reset chat: %s\n", e.what());
            }
        }
        throw;
    }
    if (interactive) std::printf("\n");
    if (!session_directory.empty()) chat.save_session(session_directory);
    return 0;
}

}  // namespace cli
