// sentencepiece_tokenizer.h — a sentencepiece tokenizer.model (Llama 2),
// through the sentencepiece library itself.
#pragma once

#include <memory>
#include <string>

#include "text/tokenizer.h"

namespace reset {

// Throws RESET_ERR_IO or RESET_ERR_FORMAT (not a sentencepiece model).
std::unique_ptr<Tokenizer> load_sentencepiece_tokenizer(const std::string &model_path, const std::string &directory);

}  // namespace reset
