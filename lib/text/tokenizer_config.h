// tokenizer_config.h — what tokenizer_config.json and generation_config.json
// beside a tokenizer add to it: BOS/EOS, extra added tokens, the chat template.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "text/added_tokens.h"

namespace reset {

// Token ids a file may declare: [0, kMaxTokenId].  Real vocabularies hold
// 32k-256k ids; a malformed file's huge id would otherwise size the tables
// (and id + 1 overflow).  A BPE tokenizer's ids must also be dense
// (HfBpeTokenizer: at most kMaxTokenIdGaps ids unused below the largest).
constexpr int32_t kMaxTokenId = (1 << 24) - 1;
constexpr int32_t kMaxTokenIdGaps = 65536;

struct TokenizerConfig {
    bool has_bos_entry = false;  // tokenizer_config.json names bos_token (possibly null)
    std::string bos_text, eos_text, chat_template;
    std::vector<AddedToken> added_tokens;  // added_tokens_decoder
    std::vector<int32_t> generation_eos_ids;
};

// Reads what exists in `directory` (either file may be absent).  Throws
// RESET_ERR_FORMAT for a file that is present but malformed.
TokenizerConfig read_tokenizer_config(const std::string &directory);

}  // namespace reset
