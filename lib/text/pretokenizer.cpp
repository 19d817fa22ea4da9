// pretokenizer.cpp — see pretokenizer.h.
#define PCRE2_CODE_UNIT_WIDTH 8
#include "text/pretokenizer.h"

#include <pcre2.h>

#include "api/errors.h"

namespace reset {

const char *const kGpt2Pattern = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

namespace {

// Unicode White_Space, which Oniguruma's \s matches in UTF-8 mode.
const char *const kSpaceMembers =
    R"(\t\n\x{0B}\f\r\x{20}\x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000})";

// One match-data block and a JIT stack per thread: matching is then
// allocation-free and encode() stays callable from many threads at once.
struct ThreadMatchState {
    pcre2_match_data *data = nullptr;
    pcre2_jit_stack *stack = nullptr;
    pcre2_match_context *context = nullptr;
    ThreadMatchState() {
        data = pcre2_match_data_create(16, nullptr);
        // Long whitespace runs make `\s+(?!\S)` backtrack deeply; 4 MiB
        // covers runs far longer than any prompt.
        stack = pcre2_jit_stack_create(64 * 1024, 4 * 1024 * 1024, nullptr);
        context = pcre2_match_context_create(nullptr);
        if (context && stack) pcre2_jit_stack_assign(context, nullptr, stack);
    }
    ~ThreadMatchState() {
        pcre2_match_context_free(context);
        pcre2_jit_stack_free(stack);
        pcre2_match_data_free(data);
    }
};

ThreadMatchState &thread_state() {
    thread_local ThreadMatchState state;
    if (!state.data || !state.context) fail(RESET_ERR_OUT_OF_MEMORY, "cannot allocate PCRE2 match state");
    return state;
}

}  // namespace

std::string translate_onig_pattern(const std::string &pattern) {
    std::string out;
    bool in_class = false;
    for (size_t i = 0; i < pattern.size(); ++i) {
        const char c = pattern[i];
        if (c == '\\' && i + 1 < pattern.size()) {
            const char e = pattern[i + 1];
            if (e == 's') {
                out += in_class ? std::string(kSpaceMembers) : "[" + std::string(kSpaceMembers) + "]";
            } else if (e == 'S' && !in_class) {
                out += "[^" + std::string(kSpaceMembers) + "]";
            } else {
                out += c;
                out += e;
            }
            ++i;
            continue;
        }
        if (c == '[' && !in_class) {
            in_class = true;
            out += c;
            // A ']' right after '[' or '[^' is a literal member.
            if (i + 1 < pattern.size() && pattern[i + 1] == '^') out += pattern[++i];
            if (i + 1 < pattern.size() && pattern[i + 1] == ']') out += pattern[++i];
            continue;
        }
        if (c == ']' && in_class) in_class = false;
        out += c;
    }
    return out;
}

Regex::Regex(const std::string &onig_pattern) {
    const std::string pattern = translate_onig_pattern(onig_pattern);
    int error_code = 0;
    PCRE2_SIZE error_offset = 0;
    auto *code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                               PCRE2_UTF | PCRE2_UCP | PCRE2_NO_UTF_CHECK, &error_code, &error_offset, nullptr);
    if (!code) {
        PCRE2_UCHAR message[256];
        pcre2_get_error_message(error_code, message, sizeof message);
        fail(RESET_ERR_UNSUPPORTED, "pre-tokenizer regex '", onig_pattern, "' does not compile (",
             reinterpret_cast<const char *>(message), " at offset ", static_cast<size_t>(error_offset), ")");
    }
    // Without JIT (an exotic platform) the interpreter gives the same matches.
    pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
    code_ = code;
}

Regex::~Regex() { pcre2_code_free(static_cast<pcre2_code *>(code_)); }

void Regex::split_isolated(std::string_view text, std::vector<std::string_view> &pieces) const {
    auto *code = static_cast<pcre2_code *>(code_);
    ThreadMatchState &state = thread_state();
    const auto *subject = reinterpret_cast<PCRE2_SPTR>(text.data());
    size_t pos = 0, gap_start = 0;
    while (pos < text.size()) {
        const int rc = pcre2_match(code, subject, text.size(), pos, PCRE2_NO_UTF_CHECK, state.data, state.context);
        if (rc == PCRE2_ERROR_NOMATCH) break;
        if (rc < 0) {
            PCRE2_UCHAR message[256];
            pcre2_get_error_message(rc, message, sizeof message);
            fail(RESET_ERR_INTERNAL, "pre-tokenizer regex failed: ", reinterpret_cast<const char *>(message));
        }
        const PCRE2_SIZE *ovector = pcre2_get_ovector_pointer(state.data);
        const size_t start = ovector[0], end = ovector[1];
        if (end == start) {
            // An empty match splits nothing (as in HF); step over one character.
            pos = start + 1;
            while (pos < text.size() && (static_cast<uint8_t>(text[pos]) & 0xC0) == 0x80) ++pos;
            continue;
        }
        if (start > gap_start) pieces.push_back(text.substr(gap_start, start - gap_start));
        pieces.push_back(text.substr(start, end - start));
        pos = gap_start = end;
    }
    if (gap_start < text.size()) pieces.push_back(text.substr(gap_start));
}

}  // namespace reset
