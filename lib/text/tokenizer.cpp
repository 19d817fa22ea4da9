// tokenizer.cpp — the format-independent half of Tokenizer: loading by path,
// validation, decoding, the ReSET newline sets, the streaming decoder and the
// C ABI handle.
#include "text/tokenizer.h"

#include <algorithm>
#include <filesystem>
#include <memory>

#include "api/errors.h"
#include "api/handles.h"
#include "text/bpe_tokenizer.h"
#include "text/sentencepiece_tokenizer.h"
#include "text/tokenizer_config.h"
#include "text/utf8.h"

namespace fs = std::filesystem;

namespace reset {

namespace {

bool is_file(const fs::path &path) {
    std::error_code ec;
    return fs::is_regular_file(path, ec);
}

bool ends_with(const std::string &s, const std::string &suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

bool Tokenizer::directory_has_tokenizer(const std::string &directory) {
    const fs::path dir(directory);
    return is_file(dir / "tokenizer.json") || is_file(dir / "tokenizer.model");
}

std::unique_ptr<Tokenizer> Tokenizer::load(const std::string &path) {
    std::error_code ec;
    const fs::path p(path);
    if (fs::is_directory(p, ec)) {
        // tokenizer.json first: when both exist it is the one HF loads (the
        // "fast" tokenizer) and it carries the added tokens.
        if (is_file(p / "tokenizer.json")) return load_hf_bpe_tokenizer((p / "tokenizer.json").string(), path);
        if (is_file(p / "tokenizer.model")) return load_sentencepiece_tokenizer((p / "tokenizer.model").string(), path);
        fail(RESET_ERR_IO, "directory '", path, "' has neither tokenizer.json nor tokenizer.model");
    }
    if (!fs::exists(p, ec)) fail(RESET_ERR_IO, "tokenizer path '", path, "' does not exist");
    const std::string directory = p.has_parent_path() ? p.parent_path().string() : std::string(".");
    if (ends_with(path, ".json")) return load_hf_bpe_tokenizer(path, directory);
    if (ends_with(path, ".model")) return load_sentencepiece_tokenizer(path, directory);
    fail(RESET_ERR_UNSUPPORTED, "tokenizer file '", path,
         "' is neither a tokenizer.json (Hugging Face) nor a .model (sentencepiece)");
}

void Tokenizer::apply_config(const TokenizerConfig &config) {
    chat_template_ = config.chat_template;
    if (config.has_bos_entry) {
        bos_text_ = config.bos_text;
        bos_id_ = bos_text_.empty() ? -1 : find_token_by_scan(bos_text_);
    }
    if (!config.eos_text.empty()) eos_text_ = config.eos_text;
    if (!config.generation_eos_ids.empty()) {
        eos_ids_.clear();
        for (int32_t id : config.generation_eos_ids)
            if (id >= 0 && id < vocab_size()) eos_ids_.push_back(id);
    } else if (!eos_text_.empty()) {
        const int32_t id = find_token_by_scan(eos_text_);
        if (id >= 0) eos_ids_.assign(1, id);
    }
    if (bos_id_ >= 0 && bos_text_.empty()) bos_text_ = token_bytes_[static_cast<size_t>(bos_id_)];
    if (eos_text_.empty() && !eos_ids_.empty()) eos_text_ = token_bytes_[static_cast<size_t>(eos_ids_[0])];

    // ReSET's step delimiters: a token that decodes to exactly "\n" closes a
    // line, one whose text holds "\n\n" closes a paragraph (reset-algorithm.md).
    newline_ids_.clear();
    double_newline_ids_.clear();
    for (size_t id = 0; id < token_bytes_.size(); ++id) {
        if (special_[id]) continue;
        const std::string_view text = token_bytes_in_context(static_cast<int32_t>(id), false);
        if (text == "\n") newline_ids_.push_back(static_cast<int32_t>(id));
        if (text.find("\n\n") != std::string_view::npos) double_newline_ids_.push_back(static_cast<int32_t>(id));
    }
}

int32_t Tokenizer::token_id(std::string_view text) const {
    std::call_once(index_once_, [&] {
        text_to_id_.reserve(token_bytes_.size());
        // Special tokens win over a vocabulary entry with the same text.
        for (size_t id = 0; id < token_bytes_.size(); ++id)
            if (special_[id]) text_to_id_.emplace(token_bytes_[id], static_cast<int32_t>(id));
        for (size_t id = 0; id < token_bytes_.size(); ++id)
            if (!token_bytes_[id].empty()) text_to_id_.emplace(token_bytes_[id], static_cast<int32_t>(id));
    });
    const auto it = text_to_id_.find(text);
    return it == text_to_id_.end() ? -1 : it->second;
}

int32_t Tokenizer::find_token_by_scan(std::string_view text) const {
    // At load, for BOS/EOS: a scan (special tokens first) is cheaper than
    // building the whole index that most callers never use.
    for (size_t id = 0; id < token_bytes_.size(); ++id)
        if (special_[id] && token_bytes_[id] == text) return static_cast<int32_t>(id);
    for (size_t id = 0; id < token_bytes_.size(); ++id)
        if (token_bytes_[id] == text) return static_cast<int32_t>(id);
    return -1;
}

const std::string &Tokenizer::token_bytes(int32_t id) const {
    if (id < 0 || id >= vocab_size())
        fail(RESET_ERR_OUT_OF_RANGE, "token id ", id, " is outside the vocabulary [0, ", vocab_size(), ")");
    return token_bytes_[static_cast<size_t>(id)];
}

bool Tokenizer::is_special(int32_t id) const {
    token_bytes(id);  // range check
    return special_[static_cast<size_t>(id)] != 0;
}

std::string_view Tokenizer::token_bytes_in_context(int32_t id, bool) const { return token_bytes(id); }

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool special_tokens_as_control) const {
    utf8::require_valid(text, "text to tokenize");
    std::vector<int32_t> ids;
    ids.reserve(text.size() / 3 + 4);
    encode_text(text, special_tokens_as_control, ids);
    return ids;
}

std::string Tokenizer::decode(const std::vector<int32_t> &ids, bool skip_special) const {
    for (int32_t id : ids) token_bytes(id);  // every id is checked before anything is built
    std::string bytes;
    bool first_regular = true;
    for (int32_t id : ids) {
        const bool special = special_[static_cast<size_t>(id)] != 0;
        if (special && skip_special) continue;
        bytes.append(token_bytes_in_context(id, first_regular && !special));
        if (!special) first_regular = false;
    }
    return utf8::lossy(bytes);
}

// ---------------------------------------------------------------------------
// StreamDecoder
// ---------------------------------------------------------------------------

StreamDecoder::StreamDecoder(const Tokenizer &tokenizer, bool skip_special)
    : tokenizer_(&tokenizer), skip_special_(skip_special) {}

std::string StreamDecoder::push(int32_t id) {
    const bool special = tokenizer_->is_special(id);  // throws before any change
    if (special && skip_special_) return {};
    std::string bytes = pending_;
    bytes.append(tokenizer_->token_bytes_in_context(id, !seen_regular_ && !special));
    if (!special) seen_regular_ = true;
    // Hold back a character that later tokens may still complete; everything
    // before it is final.  Splitting there never changes how the whole
    // stream would decode, because a held prefix is the start of one maximal
    // subpart: it either completes or becomes U+FFFD exactly as in decode().
    const size_t hold = utf8::incomplete_tail(bytes);
    pending_.assign(bytes, bytes.size() - hold, hold);
    bytes.resize(bytes.size() - hold);
    return utf8::lossy(bytes);
}

std::string StreamDecoder::finish() {
    std::string rest = utf8::lossy(pending_);
    pending_.clear();
    return rest;
}

void StreamDecoder::reset() {
    pending_.clear();
    seen_regular_ = false;
}

bool StreamDecoder::can_hold(std::string_view bytes) {
    return bytes.size() <= 3 && utf8::incomplete_tail(bytes) == bytes.size();
}

void StreamDecoder::restore(const State &state) {
    if (!can_hold(state.pending))
        fail(RESET_ERR_INTERNAL, "a stream decoder given ", state.pending.size(), " held bytes it could never hold");
    seen_regular_ = state.seen_regular;
    pending_ = state.pending;
}

}  // namespace reset

// ---------------------------------------------------------------------------
// The C ABI handle
// ---------------------------------------------------------------------------

struct reset_tokenizer {
    std::unique_ptr<reset::Tokenizer> tokenizer;
    bool owned_by_model = false;  // a model's own (reset_model_tokenizer): only the model frees it
};

namespace reset {

reset_tokenizer *make_tokenizer_handle(std::unique_ptr<Tokenizer> tokenizer, bool owned_by_model) {
    auto *handle = new reset_tokenizer{std::move(tokenizer), owned_by_model};
    HandleRegistry<reset_tokenizer>::instance().add(handle);
    return handle;
}

void destroy_tokenizer_handle(reset_tokenizer *handle) {
    if (handle && HandleRegistry<reset_tokenizer>::instance().remove(handle)) delete handle;
}

bool tokenizer_owned_by_model(reset_tokenizer *handle) {
    bool owned = false;
    HandleRegistry<reset_tokenizer>::instance().with_live(handle,
                                                          [&](reset_tokenizer *live) { owned = live->owned_by_model; });
    return owned;
}

const Tokenizer &tokenizer_of(const reset_tokenizer *handle) {
    return *checked_handle(handle, "tokenizer")->tokenizer;
}

}  // namespace reset
