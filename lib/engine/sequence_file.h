// sequence_file.h — one sequence's state in a file (reset_save_sequence,
// reset_load_sequence).  The file is a safetensors file, so any safetensors
// reader opens it; docs/sequence-file.md lists its tensors and metadata.
//
// The split of work: Session gathers a sequence's state from its backend and
// gives it back (engine/session.cpp); this file writes it, reads it and checks
// every field against the model and session that load it, so a file that
// passes read_sequence_file can be installed without further checks.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "model/safetensors.h"
#include "reset.h"
#include "sampling/sampler.h"
#include "text/tokenizer.h"

namespace reset {

struct LoadedModel;

// The format's version: a reader refuses newer files (RESET_ERR_UNSUPPORTED).
constexpr int32_t kSequenceFileVersion = 1;

// What must agree between the model and session that saved a file and those
// that load it: the K/V it holds were computed by this model with these
// weights and rounded to this cache type.
struct SequenceFileIdentity {
    std::string architecture;
    int32_t layers = 0, hidden_size = 0, heads = 0, kv_heads = 0, head_dim = 0, vocab_size = 0;
    // FNV-1a 64 (hex) over the config's shapes and three rows of the embedding
    // and the final norm as the checkpoint stores them: tells two checkpoints
    // of one architecture apart (fine-tunes, random initialisations) in
    // microseconds, where hashing every weight would take seconds.
    std::string fingerprint;
    reset_weights weights = RESET_WEIGHTS_BF16;
    reset_kv_cache kv_cache = RESET_KV_CACHE_BF16;
};
SequenceFileIdentity sequence_file_identity(const LoadedModel &model, reset_kv_cache kv_cache);
// The embedding rows the fingerprint hashes (LoadedModel::fingerprint_rows), read from the
// checkpoint at load time; empty if it has no embedding.
std::vector<uint8_t> fingerprint_rows(const TensorStore &store);

// A sequence's state apart from its KV cache.
struct SequenceRecord {
    std::vector<int32_t> tokens;  // the context, in order; its size is the length
    bool has_logits = false;
    std::vector<float> logits;    // vocab_size floats when has_logits, else empty
    bool ended = false;
    int32_t generated = 0;        // tokens generated since the last prefill (max_tokens)
    SequenceSampler::Saved sampler;
    StreamDecoder::State stream;
    std::string held;             // generated text not reported yet (valid UTF-8)
};

// Fills one layer's K and V, each kv_heads × length × head_dim elements of the
// cache type ([kv_head][position][head_dim]).
using LayerReader = std::function<void(int32_t layer, uint8_t *keys, uint8_t *values)>;

// Write the file: to a new file beside `path`, flushed and renamed onto it,
// so a failure leaves `path` as it was.  `backend` ("cpu", "cuda") is recorded
// for people reading the file.  Throws RESET_ERR_IO naming the file and the
// system's reason, RESET_ERR_OUT_OF_MEMORY, or what read_layer throws.
void write_sequence_file(const std::string &path, const SequenceFileIdentity &identity, const char *backend,
                         const SequenceRecord &record, const LayerReader &read_layer);

// The same bytes into a caller's buffer (reset_save_sequence_to_memory):
// returns the file's size and writes it only when buffer is not null and
// capacity holds it (the contents are then unspecified if read_layer throws).
size_t write_sequence_memory(const SequenceFileIdentity &identity, const char *backend, const SequenceRecord &record,
                             const LayerReader &read_layer, uint8_t *buffer, size_t capacity);

// An opened file whose every field has been checked.
struct SequenceFile {
    TensorStore store;            // keeps the mapping the views below point into (a file's)
    SequenceRecord record;
    std::vector<const uint8_t *> keys, values;  // per layer, as LayerReader fills them
};

// Open and check a file against the loading model and session.  Throws
// RESET_ERR_IO (missing, unreadable), RESET_ERR_FORMAT (not a sequence file,
// or malformed or inconsistent contents), RESET_ERR_UNSUPPORTED (a newer
// format), RESET_ERR_SHAPE (another model, weights format or cache type),
// RESET_ERR_CONTEXT_OVERFLOW (longer than max_context).
SequenceFile read_sequence_file(const std::string &path, const SequenceFileIdentity &identity, int32_t max_context);
// The same checks on a file's bytes in the caller's memory, which the views
// point into (RESET_ERR_FORMAT and the rest as above; messages name it
// '<memory>').
SequenceFile read_sequence_memory(const uint8_t *bytes, size_t size, const SequenceFileIdentity &identity,
                                  int32_t max_context);

}  // namespace reset
