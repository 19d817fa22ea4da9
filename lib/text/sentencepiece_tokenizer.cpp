// sentencepiece_tokenizer.cpp — encoding is the sentencepiece library's own
// (normalization, "▁" for spaces, the dummy prefix, byte fallback); decoding
// uses a per-piece byte table so the streaming decoder can work token by
// token, and tests check it against the library's Decode.
#include "text/sentencepiece_tokenizer.h"

#include <sentencepiece_processor.h>

#include <charconv>
#include <filesystem>

#include "api/errors.h"
#include "text/added_tokens.h"
#include "text/tokenizer_config.h"
#include "text/utf8.h"

namespace reset {

namespace {

const std::string kSpaceSymbol = "\xE2\x96\x81";         // U+2581 '▁'
const std::string kUnknownSurface = " \xE2\x81\x87 ";    // sentencepiece's default " ⁇ "
const std::string kCannotEncode = "this sentencepiece model cannot encode the text: ";

// A call into libsentencepiece.  The library reports most bad models through
// its status, but a few reach a C++ exception inside it (Debian's 0.1.97:
// darts_clone's "zero-length key" for a "\0" piece in a unigram model, found
// by mutating sentencepiece models in session 27): that too is a malformed
// model file, RESET_ERR_FORMAT, its message after `context`.
template <typename Call>
auto sentencepiece_call(Call &&call, const std::string &context) {
    try {
        return call();
    } catch (const std::exception &e) {
        fail(RESET_ERR_FORMAT, context, e.what());
    }
}

class SentencePieceTokenizer final : public Tokenizer {
public:
    SentencePieceTokenizer(const std::string &model_path, const TokenizerConfig &config);
    const char *kind() const override { return "sentencepiece"; }
    std::string_view token_bytes_in_context(int32_t id, bool first_regular) const override {
        const std::string &bytes = token_bytes(id);
        // The encoder's dummy prefix: sentencepiece's decoder drops the space
        // that starts the first piece of a text.
        if (first_regular && dummy_prefix_ && !bytes.empty() && bytes[0] == ' ' && !is_byte_[static_cast<size_t>(id)])
            return std::string_view(bytes).substr(1);
        return bytes;
    }

protected:
    void encode_text(std::string_view text, bool control, std::vector<int32_t> &out) const override {
        control_.split(
            text, control,
            [&](std::string_view run) {
                // The library encodes every UTF-8 text with a well-formed model; when it
                // cannot ("all normalized characters are not consumed": a BPE model with
                // a control "\u2581" piece, found by fuzz_tokenizer_load in session 27),
                // the model file is at fault, not the caller or this library.
                std::vector<int> ids;
                const auto status = sentencepiece_call([&] { return processor_.Encode(run, &ids); }, kCannotEncode);
                if (!status.ok()) fail(RESET_ERR_FORMAT, kCannotEncode, status.ToString());
                out.insert(out.end(), ids.begin(), ids.end());
            },
            [&](int32_t id) { out.push_back(id); });
    }

private:
    sentencepiece::SentencePieceProcessor processor_;
    AddedTokenMatcher control_;
    std::vector<uint8_t> is_byte_;
    bool dummy_prefix_ = false;
};

// The byte of a byte-fallback piece, "<0xAB>", with a clear error for a
// malformed one (std::stoi, used before, threw on it).
int byte_piece_value(const std::string &piece, const std::string &model_path) {
    unsigned value = 0;
    const char *digits = piece.data() + 3;
    if (piece.size() != 6 || piece.compare(0, 3, "<0x") != 0 || piece[5] != '>' ||
        std::from_chars(digits, digits + 2, value, 16).ptr != digits + 2)
        fail(RESET_ERR_FORMAT, "sentencepiece model '", model_path, "': byte piece '", piece, "' is not <0xHH>");
    return static_cast<int>(value);
}

SentencePieceTokenizer::SentencePieceTokenizer(const std::string &model_path, const TokenizerConfig &config) {
    const auto status = sentencepiece_call([&] { return processor_.Load(model_path); },
                                           "cannot load sentencepiece model '" + model_path + "': ");
    if (!status.ok())
        fail(std::filesystem::exists(model_path) ? RESET_ERR_FORMAT : RESET_ERR_IO, "cannot load sentencepiece model '",
             model_path, "': ", status.ToString());
    const int n = processor_.GetPieceSize();
    token_bytes_.resize(static_cast<size_t>(n));
    special_.assign(static_cast<size_t>(n), 0);
    is_byte_.assign(static_cast<size_t>(n), 0);
    std::vector<AddedToken> controls;
    for (int id = 0; id < n; ++id) {
        const std::string piece = processor_.IdToPiece(id);
        // The library stores pieces as protobuf bytes and does not check them;
        // one that is not UTF-8 makes its encoder fail on ordinary text later
        // ("all normalized characters are not consumed", fuzz_tokenizer_load,
        // session 27), so such a model is refused here.
        if (!utf8::is_valid(piece))
            fail(RESET_ERR_FORMAT, "sentencepiece model '", model_path, "': piece ", id, " is not valid UTF-8");
        std::string &bytes = token_bytes_[static_cast<size_t>(id)];
        if (processor_.IsControl(id)) {
            // <s>, </s>: invisible to sentencepiece's Decode, so special here.
            bytes = piece;
            special_[static_cast<size_t>(id)] = 1;
            AddedToken token;
            token.content = piece;
            token.id = id;
            token.special = true;
            controls.push_back(std::move(token));
        } else if (processor_.IsUnknown(id)) {
            bytes = kUnknownSurface;
        } else if (processor_.IsByte(id)) {
            // "<0xAB>": byte fallback for characters outside the pieces.
            bytes.assign(1, static_cast<char>(byte_piece_value(piece, model_path)));
            is_byte_[static_cast<size_t>(id)] = 1;
        } else {
            size_t pos = 0;
            while (pos < piece.size()) {
                if (piece.compare(pos, kSpaceSymbol.size(), kSpaceSymbol) == 0) {
                    bytes.push_back(' ');
                    pos += kSpaceSymbol.size();
                } else {
                    bytes.push_back(piece[pos++]);
                }
            }
        }
    }
    for (const AddedToken &extra : config.added_tokens)
        if (extra.id >= 0 && extra.id < n && extra.special && !special_[static_cast<size_t>(extra.id)]) {
            special_[static_cast<size_t>(extra.id)] = 1;
            controls.push_back(extra);
        }
    control_.build(std::move(controls));
    // Whether this model adds a dummy "▁" prefix (add_dummy_prefix in its
    // normalizer spec): ask the encoder instead of parsing the protobuf.
    std::vector<std::string> pieces;
    dummy_prefix_ = sentencepiece_call([&] { return processor_.Encode("a", &pieces).ok(); }, kCannotEncode) &&
                    !pieces.empty() && pieces[0].rfind(kSpaceSymbol, 0) == 0;

    bos_id_ = processor_.bos_id();
    if (processor_.eos_id() >= 0) eos_ids_.assign(1, processor_.eos_id());
    apply_config(config);
}

}  // namespace

std::unique_ptr<Tokenizer> load_sentencepiece_tokenizer(const std::string &model_path, const std::string &directory) {
    return std::make_unique<SentencePieceTokenizer>(model_path, read_tokenizer_config(directory));
}

}  // namespace reset
