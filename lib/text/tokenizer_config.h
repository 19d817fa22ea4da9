// tokenizer_config.h — what tokenizer_config.json and generation_config.json
// beside a tokenizer add to it: BOS/EOS, extra added tokens, the chat template.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "text/added_tokens.h"

namespace reset {

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
