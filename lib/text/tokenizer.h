// tokenizer.h — text to token ids and back, for every tokenizer format libreset reads.
//
// Two formats: a Hugging Face tokenizer.json with a byte-level BPE model
// (Qwen2/Qwen3, DeepSeek-R1-Distill, Llama 3) and a sentencepiece
// tokenizer.model (Llama 2), each a subclass of Tokenizer.  Both are checked
// token for token against the reference implementations (HF `tokenizers`,
// the sentencepiece library) by tests/python/test_tokenizer_differential.py.
//
// A Tokenizer is immutable after load: every const method may be called from
// any number of threads at once.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "reset.h"

namespace reset {

class Tokenizer {
public:
    virtual ~Tokenizer() = default;

    // path: a tokenizer.json, a tokenizer.model, or a model directory (then
    // tokenizer.json, else tokenizer.model).  tokenizer_config.json and
    // generation_config.json beside it supply BOS/EOS, added tokens and the
    // chat template.  Throws reset::Error (RESET_ERR_IO, RESET_ERR_FORMAT,
    // RESET_ERR_UNSUPPORTED).
    static std::unique_ptr<Tokenizer> load(const std::string &path);
    static bool directory_has_tokenizer(const std::string &directory);

    // Ids are [0, vocab_size): the model's vocabulary plus added tokens.
    int32_t vocab_size() const { return static_cast<int32_t>(token_bytes_.size()); }

    // Text to ids.  No BOS is added (callers prepend bos_id() when they want
    // it; chat templates write it as text).  special_tokens_as_control: the
    // text of a special/added token inside the input becomes that token's id,
    // as HF does by default; false encodes it as plain text (HF's
    // encode_special_tokens / split_special_tokens).  Throws
    // RESET_ERR_BAD_UTF8 for invalid input (never altered).
    std::vector<int32_t> encode(std::string_view utf8, bool special_tokens_as_control) const;

    // Ids to text.  skip_special drops special tokens.  A byte sequence that is
    // not valid UTF-8 becomes U+FFFD per maximal invalid subpart, as HF's
    // decoders (Rust's from_utf8_lossy) do.  Throws RESET_ERR_OUT_OF_RANGE.
    std::string decode(const std::vector<int32_t> &ids, bool skip_special) const;

    // The raw bytes one token stands for (byte-level/byte-fallback pieces may
    // be part of a UTF-8 character; not necessarily valid UTF-8 alone).  For a
    // special token: its text.  Throws RESET_ERR_OUT_OF_RANGE.
    const std::string &token_bytes(int32_t id) const;
    bool is_special(int32_t id) const;
    // Bytes of `id` as decode() writes them at this point of a sequence:
    // sentencepiece drops the leading space of the first regular (non-special)
    // piece, the space its encoder added as a dummy prefix.
    virtual std::string_view token_bytes_in_context(int32_t id, bool first_regular) const;

    // The id of a token by its exact text (special, added or vocabulary), or -1.
    int32_t token_id(std::string_view text) const;

    int32_t bos_id() const { return bos_id_; }  // -1 if none
    const std::vector<int32_t> &eos_ids() const { return eos_ids_; }
    // The chat template text from tokenizer_config.json ("" if none) and the
    // BOS/EOS token texts it refers to.
    const std::string &chat_template() const { return chat_template_; }
    const std::string &bos_text() const { return bos_text_; }
    const std::string &eos_text() const { return eos_text_; }

    // ReSET step delimiters (reset-algorithm.md), computed once at load:
    // NL: ids whose decoded text is exactly "\n"; DNL: ids whose decoded text
    // contains "\n\n".  Sorted ascending.  Special tokens are in neither.
    const std::vector<int32_t> &newline_ids() const { return newline_ids_; }
    const std::vector<int32_t> &double_newline_ids() const { return double_newline_ids_; }

    // "bpe" or "sentencepiece".
    virtual const char *kind() const = 0;

protected:
    Tokenizer() = default;
    // The format's encoding of valid UTF-8 text, added tokens included.
    virtual void encode_text(std::string_view utf8, bool special_tokens_as_control,
                             std::vector<int32_t> &out) const = 0;
    // Call once token_bytes_ and special_ are filled: takes BOS/EOS and the
    // chat template from the configs and computes the newline sets.
    void apply_config(const struct TokenizerConfig &config);
    int32_t find_token_by_scan(std::string_view text) const;

    std::vector<std::string> token_bytes_;
    std::vector<uint8_t> special_;  // 1: a special token (skipped by skip_special)
    int32_t bos_id_ = -1;
    std::vector<int32_t> eos_ids_;
    std::string chat_template_, bos_text_, eos_text_;
    std::vector<int32_t> newline_ids_, double_newline_ids_;
    // text -> id for token_id(), built on first use (most callers never ask).
    mutable std::once_flag index_once_;
    mutable std::unordered_map<std::string_view, int32_t> text_to_id_;

public:
    Tokenizer(const Tokenizer &) = delete;
    Tokenizer &operator=(const Tokenizer &) = delete;
};

// One per sequence: turns a stream of ids into text that is always complete
// UTF-8.  Bytes that are a prefix of a UTF-8 character wait for the tokens
// that complete it, however many tokens a character is spread over.
class StreamDecoder {
public:
    explicit StreamDecoder(const Tokenizer &tokenizer, bool skip_special = false);
    // The text that became complete with this token (may be empty).  Bytes that
    // can no longer start or continue a valid character are emitted as U+FFFD,
    // like decode().  Throws RESET_ERR_OUT_OF_RANGE (and then changes nothing).
    std::string push(int32_t id);
    // Whatever is held back (an incomplete character at the end of the
    // stream), as U+FFFD; then the decoder is empty.
    std::string finish();
    void reset();

    // What a sequence file keeps of a decoder (engine/sequence_file.h).
    struct State {
        bool seen_regular = false;
        std::string pending;
    };
    State state() const { return {seen_regular_, pending_}; }
    // Whether `bytes` is what push() can hold back: the start of one UTF-8
    // character, 0-3 bytes.
    static bool can_hold(std::string_view bytes);
    // Take a state whose pending bytes can_hold() accepts (the sequence file's
    // reader checks them; RESET_ERR_INTERNAL otherwise).
    void restore(const State &state);

private:
    const Tokenizer *tokenizer_;
    bool skip_special_;
    bool seen_regular_ = false;
    std::string pending_;  // an incomplete UTF-8 prefix, at most 3 bytes
};

}  // namespace reset

// The reset_tokenizer handle of the C ABI.
struct reset_tokenizer;

namespace reset {
// owned_by_model: the model's own tokenizer, which reset_tokenizer_free refuses to free.
reset_tokenizer *make_tokenizer_handle(std::unique_ptr<Tokenizer> tokenizer, bool owned_by_model = false);
void destroy_tokenizer_handle(reset_tokenizer *handle);
// Whether a live handle is a model's own tokenizer.
bool tokenizer_owned_by_model(reset_tokenizer *handle);
// The tokenizer of a live handle; throws RESET_ERR_INVALID_ARGUMENT /
// RESET_ERR_INVALID_HANDLE otherwise.
const Tokenizer &tokenizer_of(const reset_tokenizer *handle);
}  // namespace reset
