// bpe_tokenizer.h — Hugging Face tokenizer.json with a byte-level BPE model
// (Qwen2/Qwen3, DeepSeek-R1-Distill, Llama 3).
#pragma once

#include <memory>
#include <string>

#include "text/tokenizer.h"

namespace reset {

// Parse `json_path` (and the configs in `directory`).  Throws RESET_ERR_IO,
// RESET_ERR_FORMAT, or RESET_ERR_UNSUPPORTED for a model, normalizer or
// pre-tokenizer this version does not implement (the message names it).
std::unique_ptr<Tokenizer> load_hf_bpe_tokenizer(const std::string &json_path, const std::string &directory);

}  // namespace reset
