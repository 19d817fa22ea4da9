// bpe_tokenizer.cpp — byte-level BPE as Hugging Face tokenizers runs it:
// added tokens split out first, then normalizer, pre-tokenizers (Split regex,
// ByteLevel), then BPE merges by rank on each piece.
//
// The ByteLevel step maps every byte to a printable code point so that
// vocabulary entries are text; that map is a bijection, so this
// implementation undoes it once at load and runs BPE on raw bytes.
#include "text/bpe_tokenizer.h"

#include <unicode/bytestream.h>
#include <unicode/normalizer2.h>

#include <algorithm>
#include <atomic>
#include <deque>
#include <fstream>
#include <sstream>
#include <unordered_map>

#include "api/errors.h"
#include "text/added_tokens.h"
#include "text/byte_level.h"
#include "text/json_lite.h"
#include "text/pretokenizer.h"
#include "text/tokenizer_config.h"
#include "text/utf8.h"

namespace reset {

namespace {

using json_lite::Value;

// (left id, right id) -> (rank, merged id), open addressing.  Lookups are the
// inner loop of BPE, and this is several times faster than std::unordered_map.
class PairTable {
public:
    struct Entry {
        uint64_t key = kEmpty;
        int32_t rank = 0, merged = 0;
    };
    static constexpr uint64_t kEmpty = ~uint64_t(0);

    void reserve(size_t n) {
        size_t capacity = 16;
        while (capacity < n * 2) capacity <<= 1;
        entries_.assign(capacity, Entry{});
        mask_ = capacity - 1;
    }
    // Keeps the first (lowest-rank) entry of a duplicated pair, as HF does.
    void insert(int32_t left, int32_t right, int32_t rank, int32_t merged) {
        const uint64_t key = make_key(left, right);
        for (size_t i = hash(key) & mask_;; i = (i + 1) & mask_) {
            if (entries_[i].key == key) return;
            if (entries_[i].key == kEmpty) {
                entries_[i] = Entry{key, rank, merged};
                return;
            }
        }
    }
    const Entry *find(int32_t left, int32_t right) const {
        const uint64_t key = make_key(left, right);
        for (size_t i = hash(key) & mask_;; i = (i + 1) & mask_) {
            if (entries_[i].key == key) return &entries_[i];
            if (entries_[i].key == kEmpty) return nullptr;
        }
    }

private:
    static uint64_t make_key(int32_t left, int32_t right) {
        return (uint64_t(uint32_t(left)) << 32) | uint32_t(right);
    }
    static size_t hash(uint64_t key) { return size_t((key * 0x9E3779B97F4A7C15ull) >> 20); }
    std::vector<Entry> entries_;
    size_t mask_ = 0;
};

// Token bytes -> id, open addressing over ids into token_bytes_.  A slot
// keeps the full 64-bit hash so that almost every probe is decided without
// touching the string: with std::unordered_map the ~450k lookups that
// resolve Qwen3's merges at load cost over 100 ms in cache misses alone.
class VocabIndex {
public:
    void build(const std::vector<std::string> &texts, size_t expected) {
        texts_ = &texts;
        size_t capacity = 16;
        while (capacity < expected * 2) capacity <<= 1;
        slots_.assign(capacity, Slot{0, -1});
        mask_ = capacity - 1;
    }
    // Keeps the first id inserted for a text.
    void insert(int32_t id) {
        const std::string &text = (*texts_)[static_cast<size_t>(id)];
        const uint64_t h = hash(text);
        for (size_t i = h & mask_;; i = (i + 1) & mask_) {
            if (slots_[i].id < 0) {
                slots_[i] = Slot{h, id};
                return;
            }
            if (slots_[i].hash == h && (*texts_)[static_cast<size_t>(slots_[i].id)] == text) return;
        }
    }
    // Forget the entry of a text.
    void erase(std::string_view text) {
        const uint64_t h = hash(text);
        for (size_t i = h & mask_; slots_[i].id >= 0; i = (i + 1) & mask_)
            if (slots_[i].hash == h && (*texts_)[static_cast<size_t>(slots_[i].id)] == text) {
                // Re-insert the rest of the cluster so probing stays correct.
                slots_[i].id = -1;
                for (size_t j = (i + 1) & mask_; slots_[j].id >= 0; j = (j + 1) & mask_) {
                    const Slot moved = slots_[j];
                    slots_[j].id = -1;
                    insert_slot(moved);
                }
                return;
            }
    }
    int32_t find(std::string_view text) const {
        const uint64_t h = hash(text);
        for (size_t i = h & mask_; slots_[i].id >= 0; i = (i + 1) & mask_)
            if (slots_[i].hash == h && (*texts_)[static_cast<size_t>(slots_[i].id)] == text) return slots_[i].id;
        return -1;
    }

private:
    struct Slot {
        uint64_t hash;
        int32_t id;
    };
    void insert_slot(Slot slot) {
        for (size_t i = slot.hash & mask_;; i = (i + 1) & mask_)
            if (slots_[i].id < 0) {
                slots_[i] = slot;
                return;
            }
    }
    static uint64_t hash(std::string_view text) {
        uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a, then a final mix for the low bits
        for (char c : text) h = (h ^ static_cast<uint8_t>(c)) * 0x100000001b3ull;
        return (h ^ (h >> 29)) * 0xbf58476d1ce4e5b9ull;
    }
    const std::vector<std::string> *texts_ = nullptr;
    std::vector<Slot> slots_;
    size_t mask_ = 0;
};

enum class NormalizerKind { nfc, nfd, nfkc, nfkd };

struct PreTokenizerStep {
    enum class Kind { split, byte_level } kind;
    std::unique_ptr<Regex> regex;  // split, or byte_level with use_regex
    bool add_prefix_space = false;
};

std::atomic<uint64_t> next_instance{1};

class HfBpeTokenizer final : public Tokenizer {
public:
    HfBpeTokenizer(const json_lite::Value &root, const std::string &name, const TokenizerConfig &config);
    const char *kind() const override { return "bpe"; }

protected:
    void encode_text(std::string_view utf8, bool special_tokens_as_control, std::vector<int32_t> &out) const override;

private:
    void read_model(const Value &model, const std::string &name, int32_t min_size, size_t added_count);
    void read_normalizer(const Value *normalizer, const std::string &name);
    void read_pre_tokenizer(const Value *pre, const std::string &name);
    void encode_normalized(std::string_view text, bool control, std::vector<int32_t> &out) const;
    void encode_pretokenized(std::string_view text, std::vector<int32_t> &out) const;
    void encode_word(std::string_view word, std::vector<int32_t> &out) const;
    void merge_word(std::string_view word, std::vector<int32_t> &out) const;

    VocabIndex vocab_;  // model vocabulary, raw bytes -> id
    PairTable merges_;
    int32_t byte_ids_[256];
    bool ignore_merges_ = false;
    std::vector<NormalizerKind> normalizers_;
    std::vector<PreTokenizerStep> pre_steps_;
    AddedTokenMatcher raw_added_, normalized_added_;
    uint64_t instance_ = next_instance.fetch_add(1);
};

// Raw bytes of a vocabulary or added token text: byte-level characters
// mapped back to their bytes; a text with any other character is taken as
// its UTF-8 bytes, as HF's ByteLevel decoder does.
void token_text_to_bytes(std::string_view text, std::string &out) {
    out.clear();
    size_t pos = 0;
    while (pos < text.size()) {
        const int byte = byte_level::byte_of(utf8::next(text, pos));
        if (byte < 0) {
            out.assign(text);
            return;
        }
        out.push_back(static_cast<char>(byte));
    }
}

std::string token_text_to_bytes(std::string_view text) {
    std::string out;
    token_text_to_bytes(text, out);
    return out;
}

[[noreturn]] void unsupported(const std::string &name, const std::string &what) {
    fail(RESET_ERR_UNSUPPORTED, name, ": ", what,
         " (libreset reads byte-level BPE tokenizer.json files: Qwen2/Qwen3, DeepSeek-R1-Distill, Llama 3)");
}

const Value &member(const Value &object, std::string_view key, const std::string &name) {
    const Value *v = object.find(key);
    if (!v) fail(RESET_ERR_FORMAT, name, ": missing \"", std::string(key), "\"");
    return *v;
}

bool flag(const Value &object, std::string_view key, bool fallback) {
    const Value *v = object.find(key);
    return v && v->type == Value::Type::boolean ? v->boolean : fallback;
}

// A token id as tokenizer.json writes it: an integer in [0, kMaxTokenId] (not 5.5, not 1e9).
bool valid_token_id(const Value &v) {
    return v.type == Value::Type::number && v.number >= 0 && v.number <= kMaxTokenId &&
           v.number == static_cast<double>(static_cast<int32_t>(v.number));
}

HfBpeTokenizer::HfBpeTokenizer(const Value &root, const std::string &name, const TokenizerConfig &config) {
    if (!root.is_object()) fail(RESET_ERR_FORMAT, name, ": not a JSON object");
    read_normalizer(root.find("normalizer"), name);

    // Added tokens: tokenizer.json's list, then any the config adds.
    std::vector<AddedToken> added;
    if (const Value *list = root.find("added_tokens"); list && list->is_array()) {
        for (const Value &item : list->items) {
            const Value *id = item.find("id");
            const Value *content = item.find("content");
            if (!id || !valid_token_id(*id) || !content || !content->is_string())
                fail(RESET_ERR_FORMAT, name, ": an added token without a valid id (0..", kMaxTokenId,
                     ") and content");
            AddedToken token;
            token.id = static_cast<int32_t>(id->number);
            token.content = std::string(content->text);
            token.special = flag(item, "special", false);
            token.lstrip = flag(item, "lstrip", false);
            token.rstrip = flag(item, "rstrip", false);
            token.single_word = flag(item, "single_word", false);
            token.normalized = flag(item, "normalized", !token.special);
            added.push_back(std::move(token));
        }
    }
    for (const AddedToken &extra : config.added_tokens) {
        const bool known = std::any_of(added.begin(), added.end(), [&](const AddedToken &t) { return t.id == extra.id; });
        if (!known) added.push_back(extra);
    }

    // Every id's slot exists before any text is stored: the maps below view
    // these strings, so the vector must never reallocate afterwards.
    int32_t added_size = 0;
    for (const AddedToken &t : added) added_size = std::max(added_size, t.id + 1);
    read_model(member(root, "model", name), name, added_size, added.size());
    special_.assign(token_bytes_.size(), 0);
    std::vector<AddedToken> raw, normalized;
    for (const AddedToken &t : added) {
        std::string &slot = token_bytes_[static_cast<size_t>(t.id)];
        std::string bytes = token_text_to_bytes(t.content);
        // An added token that takes over a vocabulary id: the model's
        // vocabulary no longer maps the old text to it.
        if (!slot.empty() && slot != bytes) vocab_.erase(slot);
        slot = std::move(bytes);
        special_[static_cast<size_t>(t.id)] = t.special ? 1 : 0;
        (t.normalized && !normalizers_.empty() ? normalized : raw).push_back(t);
    }
    raw_added_.build(std::move(raw));
    normalized_added_.build(std::move(normalized));

    read_pre_tokenizer(root.find("pre_tokenizer"), name);
    apply_config(config);
}

void HfBpeTokenizer::read_model(const Value &model, const std::string &name, int32_t min_size, size_t added_count) {
    const Value *type = model.find("type");
    if (!type || type->text != "BPE")
        unsupported(name, "model type '" + std::string(type ? type->text : "(none)") + "' is not BPE");
    if (const Value *p = model.find("continuing_subword_prefix"); p && p->is_string() && !p->text.empty())
        unsupported(name, "a BPE continuing_subword_prefix");
    if (const Value *p = model.find("end_of_word_suffix"); p && p->is_string() && !p->text.empty())
        unsupported(name, "a BPE end_of_word_suffix");
    if (const Value *p = model.find("dropout"); p && p->type == Value::Type::number && p->number > 0)
        unsupported(name, "BPE dropout");
    if (flag(model, "byte_fallback", false)) unsupported(name, "a BPE with byte_fallback (sentencepiece-style)");
    ignore_merges_ = flag(model, "ignore_merges", false);

    const Value &vocab = member(model, "vocab", name);
    if (!vocab.is_object()) fail(RESET_ERR_FORMAT, name, ": model.vocab is not an object");
    int32_t size = min_size;
    for (const auto &entry : vocab.members) {
        if (!valid_token_id(entry.second))
            fail(RESET_ERR_FORMAT, name, ": vocabulary entry '", std::string(entry.first), "' has no valid id (0..",
                 kMaxTokenId, ")");
        size = std::max(size, static_cast<int32_t>(entry.second.number) + 1);
    }
    // Ids index tables of vocab_size entries: a sparse id space would make a small file allocate gigabytes.
    if (static_cast<size_t>(size) > vocab.members.size() + static_cast<size_t>(added_count) + kMaxTokenIdGaps)
        fail(RESET_ERR_FORMAT, name, ": token ids are not dense: the largest is ", size - 1, " but ",
             vocab.members.size(), " vocabulary entries and ", added_count, " added tokens are defined");
    token_bytes_.assign(static_cast<size_t>(size), std::string());
    for (const auto &entry : vocab.members)
        token_text_to_bytes(entry.first, token_bytes_[static_cast<size_t>(entry.second.number)]);

    // The model's vocabulary (bytes -> id), for merges and ignore_merges.
    vocab_.build(token_bytes_, vocab.members.size());
    for (const auto &entry : vocab.members) vocab_.insert(static_cast<int32_t>(entry.second.number));
    for (int b = 0; b < 256; ++b) {
        const char c = static_cast<char>(b);
        byte_ids_[b] = vocab_.find(std::string_view(&c, 1));
        if (byte_ids_[b] < 0) unsupported(name, "a vocabulary without every ByteLevel byte (not byte-level BPE)");
    }

    const Value &merges = member(model, "merges", name);
    if (!merges.is_array()) fail(RESET_ERR_FORMAT, name, ": model.merges is not an array");
    merges_.reserve(merges.items.size());
    std::string left_bytes, right_bytes, merged_bytes;
    int32_t rank = 0;
    for (const Value &merge : merges.items) {
        std::string_view left, right;
        if (merge.is_string()) {  // "left right"
            const size_t space = merge.text.find(' ');
            if (space == std::string_view::npos)
                fail(RESET_ERR_FORMAT, name, ": merge '", std::string(merge.text), "' has no space");
            left = merge.text.substr(0, space);
            right = merge.text.substr(space + 1);
        } else if (merge.is_array() && merge.items.size() == 2 && merge.items[0].is_string() &&
                   merge.items[1].is_string()) {  // ["left", "right"]
            left = merge.items[0].text;
            right = merge.items[1].text;
        } else {
            fail(RESET_ERR_FORMAT, name, ": merge ", rank, " is neither \"a b\" nor [\"a\", \"b\"]");
        }
        token_text_to_bytes(left, left_bytes);
        token_text_to_bytes(right, right_bytes);
        merged_bytes.assign(left_bytes).append(right_bytes);
        const int32_t l = vocab_.find(left_bytes), r = vocab_.find(right_bytes), m = vocab_.find(merged_bytes);
        if (l < 0 || r < 0 || m < 0)
            fail(RESET_ERR_FORMAT, name, ": merge ", rank, " uses a token missing from the vocabulary");
        merges_.insert(l, r, rank, m);
        ++rank;
    }
}

void HfBpeTokenizer::read_normalizer(const Value *normalizer, const std::string &name) {
    if (!normalizer || normalizer->is_null()) return;
    const Value *type = normalizer->find("type");
    const std::string_view t = type ? type->text : std::string_view();
    if (t == "Sequence") {
        if (const Value *list = normalizer->find("normalizers"); list && list->is_array())
            for (const Value &item : list->items) read_normalizer(&item, name);
        return;
    }
    if (t == "NFC") normalizers_.push_back(NormalizerKind::nfc);
    else if (t == "NFD") normalizers_.push_back(NormalizerKind::nfd);
    else if (t == "NFKC") normalizers_.push_back(NormalizerKind::nfkc);
    else if (t == "NFKD") normalizers_.push_back(NormalizerKind::nfkd);
    else unsupported(name, "normalizer '" + std::string(t) + "'");
}

void HfBpeTokenizer::read_pre_tokenizer(const Value *pre, const std::string &name) {
    if (!pre || pre->is_null()) return;
    const Value *type = pre->find("type");
    const std::string_view t = type ? type->text : std::string_view();
    if (t == "Sequence") {
        if (const Value *list = pre->find("pretokenizers"); list && list->is_array())
            for (const Value &item : list->items) read_pre_tokenizer(&item, name);
        return;
    }
    PreTokenizerStep step;
    if (t == "Split") {
        const Value *pattern = pre->find("pattern");
        const Value *regex = pattern ? pattern->find("Regex") : nullptr;
        const Value *behavior = pre->find("behavior");
        if (!regex || !regex->is_string()) unsupported(name, "a Split pre-tokenizer without a Regex pattern");
        if (!behavior || behavior->text != "Isolated")
            unsupported(name, "a Split pre-tokenizer with behavior other than Isolated");
        if (flag(*pre, "invert", false)) unsupported(name, "an inverted Split pre-tokenizer");
        step.kind = PreTokenizerStep::Kind::split;
        step.regex = std::make_unique<Regex>(std::string(regex->text));
    } else if (t == "ByteLevel") {
        step.kind = PreTokenizerStep::Kind::byte_level;
        step.add_prefix_space = flag(*pre, "add_prefix_space", false);
        if (flag(*pre, "use_regex", true)) step.regex = std::make_unique<Regex>(kGpt2Pattern);
    } else {
        unsupported(name, "pre-tokenizer '" + std::string(t) + "'");
    }
    pre_steps_.push_back(std::move(step));
}

void HfBpeTokenizer::encode_text(std::string_view text, bool control, std::vector<int32_t> &out) const {
    raw_added_.split(
        text, control, [&](std::string_view run) { encode_normalized(run, control, out); },
        [&](int32_t id) { out.push_back(id); });
}

void HfBpeTokenizer::encode_normalized(std::string_view text, bool control, std::vector<int32_t> &out) const {
    std::string normalized;
    if (!normalizers_.empty()) {
        // ASCII is invariant under every Unicode normalization form.
        const bool ascii = std::all_of(text.begin(), text.end(), [](char c) { return (c & 0x80) == 0; });
        if (!ascii) {
            normalized.assign(text);
            for (NormalizerKind kind : normalizers_) {
                UErrorCode status = U_ZERO_ERROR;
                const icu::Normalizer2 *n = nullptr;
                switch (kind) {
                case NormalizerKind::nfc: n = icu::Normalizer2::getNFCInstance(status); break;
                case NormalizerKind::nfd: n = icu::Normalizer2::getNFDInstance(status); break;
                case NormalizerKind::nfkc: n = icu::Normalizer2::getNFKCInstance(status); break;
                case NormalizerKind::nfkd: n = icu::Normalizer2::getNFKDInstance(status); break;
                }
                std::string result;
                icu::StringByteSink<std::string> sink(&result);
                if (U_SUCCESS(status))
                    n->normalizeUTF8(0, icu::StringPiece(normalized.data(), static_cast<int32_t>(normalized.size())),
                                     sink, nullptr, status);
                if (U_FAILURE(status)) fail(RESET_ERR_INTERNAL, "Unicode normalization failed: ", u_errorName(status));
                normalized.swap(result);
            }
            text = normalized;
        }
    }
    if (normalized_added_.empty()) {
        encode_pretokenized(text, out);
        return;
    }
    normalized_added_.split(
        text, control, [&](std::string_view run) { encode_pretokenized(run, out); },
        [&](int32_t id) { out.push_back(id); });
}

void HfBpeTokenizer::encode_pretokenized(std::string_view text, std::vector<int32_t> &out) const {
    std::vector<std::string_view> pieces{text}, next;
    std::deque<std::string> prefixed;  // add_prefix_space copies, alive until the words are encoded
    for (const PreTokenizerStep &step : pre_steps_) {
        next.clear();
        for (std::string_view piece : pieces) {
            if (step.kind == PreTokenizerStep::Kind::byte_level && step.add_prefix_space && !piece.empty() &&
                piece[0] != ' ') {
                prefixed.push_back(" " + std::string(piece));  // HF prepends a space to every piece
                piece = prefixed.back();
            }
            if (step.regex) step.regex->split_isolated(piece, next);
            else next.push_back(piece);
        }
        pieces.swap(next);
    }
    for (std::string_view piece : pieces) encode_word(piece, out);
}

// A per-thread cache of recent words: text repeats words constantly, and a
// hit skips BPE altogether (HF keeps a similar cache).  Keyed by tokenizer
// instance so that a freed tokenizer's entries are never used by another.
struct WordCache {
    uint64_t owner = 0;
    std::unordered_map<std::string, std::vector<int32_t>> words;
};

void HfBpeTokenizer::encode_word(std::string_view word, std::vector<int32_t> &out) const {
    if (word.size() == 1) {
        out.push_back(byte_ids_[static_cast<uint8_t>(word[0])]);
        return;
    }
    if (word.size() > 64) {
        merge_word(word, out);
        return;
    }
    thread_local WordCache cache;
    if (cache.owner != instance_) {
        cache.words.clear();
        cache.owner = instance_;
    }
    std::string key(word);
    const auto it = cache.words.find(key);
    if (it != cache.words.end()) {
        out.insert(out.end(), it->second.begin(), it->second.end());
        return;
    }
    const size_t first = out.size();
    merge_word(word, out);
    if (cache.words.size() > 65536) cache.words.clear();
    cache.words.emplace(std::move(key), std::vector<int32_t>(out.begin() + static_cast<std::ptrdiff_t>(first), out.end()));
}

// BPE on one pre-token: start from single bytes, repeatedly apply the
// lowest-ranked merge among adjacent pairs (the leftmost on ties), exactly as
// HF's Word::merge_all does with its priority queue.
void HfBpeTokenizer::merge_word(std::string_view word, std::vector<int32_t> &out) const {
    if (ignore_merges_) {
        const int32_t id = vocab_.find(word);
        if (id >= 0) {
            out.push_back(id);
            return;
        }
    }
    const int n = static_cast<int>(word.size());
    struct Symbol {
        int32_t id;
        int prev, next;
        bool alive;
    };
    std::vector<Symbol> symbols(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i)
        symbols[static_cast<size_t>(i)] = {byte_ids_[static_cast<uint8_t>(word[static_cast<size_t>(i)])], i - 1,
                                           i + 1 < n ? i + 1 : -1, true};
    struct Candidate {
        int32_t rank;
        int pos;
        int32_t merged;
        bool operator>(const Candidate &o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
    };
    std::vector<Candidate> heap;
    auto push_pair = [&](int pos) {
        const int right = symbols[static_cast<size_t>(pos)].next;
        if (right < 0) return;
        const PairTable::Entry *e =
            merges_.find(symbols[static_cast<size_t>(pos)].id, symbols[static_cast<size_t>(right)].id);
        if (!e) return;
        heap.push_back({e->rank, pos, e->merged});
        std::push_heap(heap.begin(), heap.end(), std::greater<Candidate>());
    };
    for (int i = 0; i + 1 < n; ++i) push_pair(i);
    while (!heap.empty()) {
        std::pop_heap(heap.begin(), heap.end(), std::greater<Candidate>());
        const Candidate top = heap.back();
        heap.pop_back();
        Symbol &left = symbols[static_cast<size_t>(top.pos)];
        if (!left.alive || left.next < 0) continue;
        Symbol &right = symbols[static_cast<size_t>(left.next)];
        // Stale entry: the pair at this position changed since it was queued.
        const PairTable::Entry *e = merges_.find(left.id, right.id);
        if (!e || e->merged != top.merged) continue;
        left.id = top.merged;
        right.alive = false;
        left.next = right.next;
        if (right.next >= 0) symbols[static_cast<size_t>(right.next)].prev = top.pos;
        if (left.prev >= 0) push_pair(left.prev);
        push_pair(top.pos);
    }
    for (int i = 0; i >= 0; i = symbols[static_cast<size_t>(i)].next) out.push_back(symbols[static_cast<size_t>(i)].id);
}

}  // namespace

std::unique_ptr<Tokenizer> load_hf_bpe_tokenizer(const std::string &json_path, const std::string &directory) {
    std::ifstream file(json_path, std::ios::binary);
    if (!file) fail(RESET_ERR_IO, "cannot open tokenizer file '", json_path, "'");
    std::string text;
    file.seekg(0, std::ios::end);
    text.resize(static_cast<size_t>(file.tellg()));
    file.seekg(0);
    file.read(text.data(), static_cast<std::streamsize>(text.size()));
    if (!file) fail(RESET_ERR_IO, "cannot read tokenizer file '", json_path, "'");
    const TokenizerConfig config = read_tokenizer_config(directory);
    json_lite::Document doc(std::move(text), json_path);
    return std::make_unique<HfBpeTokenizer>(doc.root(), json_path, config);
}

}  // namespace reset
