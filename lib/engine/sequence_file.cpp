// sequence_file.cpp — writing, reading and checking sequence files.
//
// Layout (docs/sequence-file.md): the safetensors header's __metadata__ holds
// the scalars as strings (safetensors allows nothing else there: integers in
// decimal, doubles with 17 significant digits, which read back exactly); the
// tensors, in this order with no gaps (safetensors readers refuse gaps),
// are tokens, logits, sampler.ring, sampler.generation, sampler.context,
// layers.{i}.keys and layers.{i}.values for every layer, held and
// stream.pending.  Four-byte tensors come first, so every tensor starts
// aligned to its element in the mapping.
#include "engine/sequence_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>

#include "api/errors.h"
#include "engine/loaded_model.h"
#include "sampling/policy.h"
#include "text/utf8.h"

namespace reset {

using json = nlohmann::json;

namespace {

constexpr const char *kFormatName = "libreset.sequence";
// What messages call a sequence given in memory (reset_load_sequence_from_memory) where they name a file.
constexpr const char *kMemoryName = "<memory>";

const char *weights_name(reset_weights weights) {
    switch (weights) {
    case RESET_WEIGHTS_BF16: return "bf16";
    case RESET_WEIGHTS_NVFP4_W4A16: return "nvfp4-w4a16";
    case RESET_WEIGHTS_NVFP4_W4A4: return "nvfp4-w4a4";
    default: return "auto";
    }
}

const char *kv_cache_name(reset_kv_cache type) {
    switch (type) {
    case RESET_KV_CACHE_BF16: return "bf16";
    case RESET_KV_CACHE_FP8: return "fp8";
    case RESET_KV_CACHE_FP32: return "fp32";
    }
    return "?";
}

Dtype kv_dtype(reset_kv_cache type) {
    return type == RESET_KV_CACHE_FP8 ? Dtype::F8_E4M3 : type == RESET_KV_CACHE_BF16 ? Dtype::BF16 : Dtype::F32;
}

struct Fnv1a {
    uint64_t hash = 1469598103934665603ull;
    void add(const void *data, size_t n) {
        const uint8_t *bytes = static_cast<const uint8_t *>(data);
        for (size_t i = 0; i < n; ++i) hash = (hash ^ bytes[i]) * 1099511628211ull;
    }
    template <typename T>
    void add_value(const T &value) { add(&value, sizeof value); }
};

std::string decimal(double value) {
    char text[40];
    std::snprintf(text, sizeof text, "%.17g", value);
    return text;
}

// ---------------------------------------------------------------------------
// Writing
// ---------------------------------------------------------------------------

// A file written beside its destination and renamed onto it by commit(); removed if never committed.
class PendingFile {
public:
    explicit PendingFile(const std::string &path) : path_(path) {
        static std::atomic<uint64_t> counter{0};
        for (int attempt = 0; fd_ < 0; ++attempt) {
            temporary_ = path + ".partial-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
            fd_ = ::open(temporary_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
            if (fd_ < 0 && (errno != EEXIST || attempt >= 100)) io_failure("cannot create '" + temporary_ + "'");
        }
    }
    ~PendingFile() {
        if (fd_ >= 0) ::close(fd_);
        if (!committed_) ::unlink(temporary_.c_str());
    }
    PendingFile(const PendingFile &) = delete;
    PendingFile &operator=(const PendingFile &) = delete;

    void write(const void *data, size_t n) {
        const uint8_t *bytes = static_cast<const uint8_t *>(data);
        while (n > 0) {
            const ssize_t done = ::write(fd_, bytes, n);
            if (done < 0) {
                if (errno == EINTR) continue;
                io_failure("cannot write '" + temporary_ + "'");
            }
            bytes += done;
            n -= size_t(done);
        }
    }
    void commit() {
        // Flushed before the rename, so `path` holds either the old file or the whole new one.
        if (::fsync(fd_) != 0) io_failure("cannot flush '" + temporary_ + "' to disk");
        const int fd = fd_;
        fd_ = -1;
        if (::close(fd) != 0) io_failure("cannot close '" + temporary_ + "'");
        if (::rename(temporary_.c_str(), path_.c_str()) != 0)
            io_failure("cannot rename '" + temporary_ + "' to '" + path_ + "'");
        committed_ = true;
        // The rename is durable once the directory is flushed too.  Best effort: the file is in place
        // whatever this does, so a failure here is no reason to report the save as failed.
        const size_t slash = path_.find_last_of('/');
        const std::string directory = slash == std::string::npos ? "." : slash == 0 ? "/" : path_.substr(0, slash);
        const int dir = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dir >= 0) {
            ::fsync(dir);
            ::close(dir);
        }
    }

private:
    [[noreturn]] void io_failure(const std::string &what) {
        const int error = errno;
        fail(RESET_ERR_IO, "saving the sequence to '", path_, "': ", what, ": ", std::strerror(error));
    }
    std::string path_, temporary_;
    int fd_ = -1;
    bool committed_ = false;
};

// One tensor of the file, in file order: its header entry and where its bytes come from.
struct PlannedTensor {
    std::string name;
    Dtype dtype;
    std::vector<int64_t> shape;
    size_t bytes;
    const void *data;     // null for a layer's keys and values, which the layer reader fills
    int32_t layer = -1;   // >= 0: layer `layer`'s keys (values false) or values (true), in that order
    bool values = false;
};

// A sequence's file planned before a byte is written: its size is known, so a
// caller's buffer can be checked first (write_sequence_memory).
struct SequenceImage {
    std::string header;  // the 8-byte length and the JSON header, padded
    std::vector<PlannedTensor> tensors;
    size_t layer_bytes = 0;  // one layer's keys (or values)
    size_t size() const {
        size_t total = header.size();
        for (const PlannedTensor &t : tensors) total += t.bytes;
        return total;
    }
};

// ---------------------------------------------------------------------------
// Reading
// ---------------------------------------------------------------------------

class Reader {
public:
    Reader(const std::string &path, const TensorStore &store) : path_(path), store_(store) {}

    [[noreturn]] void malformed(const std::string &what) const {
        fail(RESET_ERR_FORMAT, "'", path_, "' is not a valid libreset sequence file: ", what);
    }
    const std::string &text(const char *key) const {
        const auto it = store_.metadata().find(key);
        if (it == store_.metadata().end()) malformed(std::string("its metadata has no \"") + key + "\"");
        return it->second;
    }
    int64_t integer(const char *key, int64_t low, int64_t high) const {
        const std::string &value = text(key);
        errno = 0;
        char *end = nullptr;
        const long long parsed = value.empty() ? 0 : std::strtoll(value.c_str(), &end, 10);
        if (value.empty() || *end != '\0' || errno == ERANGE || std::isspace(static_cast<unsigned char>(value[0])) ||
            parsed < low || parsed > high)
            malformed(std::string("metadata \"") + key + "\" is \"" + value + "\", not an integer in [" +
                      std::to_string(low) + ", " + std::to_string(high) + "]");
        return parsed;
    }
    bool flag(const char *key) const { return integer(key, 0, 1) != 0; }
    // A finite number >= 0 (the sampler's sums of entropies).
    double sum(const char *key) const {
        const std::string &value = text(key);
        char *end = nullptr;
        const double parsed = value.empty() ? NAN : std::strtod(value.c_str(), &end);
        if (value.empty() || *end != '\0' || std::isspace(static_cast<unsigned char>(value[0])) ||
            !std::isfinite(parsed) || parsed < 0.0)
            malformed(std::string("metadata \"") + key + "\" is \"" + value + "\", not a finite number >= 0");
        return parsed;
    }
    // The tensor `name` with this dtype and rank 1 (size unchecked) or exactly `shape`.
    const TensorView &tensor(const std::string &name, Dtype dtype, const std::vector<int64_t> *shape = nullptr) const {
        const TensorView *view = store_.find(name);
        if (!view) malformed("it has no tensor '" + name + "'");
        if (view->dtype != dtype || (shape ? view->shape != *shape : view->shape.size() != 1)) {
            std::string wanted = std::string(dtype_name(dtype)) + " [";
            if (shape)
                for (size_t i = 0; i < shape->size(); ++i) wanted += (i ? ", " : "") + std::to_string((*shape)[i]);
            else
                wanted += "n";
            malformed("tensor '" + name + "' is " + view->describe() + ", not " + wanted + "]");
        }
        return *view;
    }
    // An I32 tensor of token ids, each in [0, vocab).
    std::vector<int32_t> ids(const std::string &name, int32_t vocab,
                             const std::vector<int64_t> *shape = nullptr) const {
        const TensorView &view = tensor(name, Dtype::I32, shape);
        std::vector<int32_t> out(size_t(view.numel()));
        if (!out.empty()) std::memcpy(out.data(), view.data, out.size() * sizeof(int32_t));
        for (size_t i = 0; i < out.size(); ++i)
            if (out[i] < 0 || out[i] >= vocab)
                malformed("tensor '" + name + "' holds token " + std::to_string(out[i]) + " at index " +
                          std::to_string(i) + ", outside the vocabulary [0, " + std::to_string(vocab) + ")");
        return out;
    }
    std::string bytes(const std::string &name) const {
        const TensorView &view = tensor(name, Dtype::U8);
        return std::string(reinterpret_cast<const char *>(view.data), view.nbytes);
    }

private:
    const std::string &path_;
    const TensorStore &store_;
};

// RESET_ERR_SHAPE when the file's `what` differs from the loading session's.
void require_same(const std::string &path, const char *what, const std::string &saved, const std::string &here) {
    if (saved != here)
        fail(RESET_ERR_SHAPE, "'", path, "' was saved with ", what, " ", saved, "; this session has ", here);
}

}  // namespace

std::vector<uint8_t> fingerprint_rows(const TensorStore &store) {
    std::vector<uint8_t> out;
    if (const TensorView *embed = store.find("model.embed_tokens.weight");
        embed && !embed->shape.empty() && embed->shape[0] > 0) {
        const size_t rows = size_t(embed->shape[0]), row_bytes = embed->nbytes / rows;
        for (size_t row : {size_t(0), rows / 2, rows - 1})
            out.insert(out.end(), embed->data + row * row_bytes, embed->data + (row + 1) * row_bytes);
    }
    return out;
}

SequenceFileIdentity sequence_file_identity(const LoadedModel &model, reset_kv_cache kv_cache) {
    const ModelConfig &c = model.config;
    SequenceFileIdentity id;
    id.architecture = c.architecture;
    id.layers = c.n_layers;
    id.hidden_size = c.hidden_size;
    id.heads = c.n_heads;
    id.kv_heads = c.n_kv_heads;
    id.head_dim = c.head_dim;
    id.vocab_size = c.vocab_size;
    id.weights = model.weights_format;
    id.kv_cache = kv_cache;
    Fnv1a hash;
    hash.add(c.architecture.data(), c.architecture.size());
    for (int32_t v :
         {c.n_layers, c.hidden_size, c.intermediate_size, c.n_heads, c.n_kv_heads, c.head_dim, c.vocab_size})
        hash.add_value(v);
    hash.add_value(c.rms_norm_eps);
    hash.add_value(c.rope_theta);
    // Rows 0, middle and last of the embedding, as stored (any dtype), and the final norm.
    hash.add(model.fingerprint_rows.data(), model.fingerprint_rows.size());
    hash.add(model.weights.final_norm.data(), model.weights.final_norm.size() * sizeof(float));
    // An FP8 cache's bytes mean e4m3 · scale: with the checkpoint's calibrated scales they are another
    // cache (a model without them hashes as before).
    if (kv_cache == RESET_KV_CACHE_FP8 && model.weights.kv_cache_scales)
        for (const LayerWeights &layer : model.weights.layers) {
            hash.add_value(layer.k_cache_scale);
            hash.add_value(layer.v_cache_scale);
        }
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash.hash));
    id.fingerprint = hex;
    return id;
}

namespace {

SequenceImage plan_image(const SequenceFileIdentity &identity, const char *backend, const SequenceRecord &r) {
    const int64_t length = int64_t(r.tokens.size());
    const rule::StepState &state = r.sampler.carried.state;
    json metadata = {
        {"format", kFormatName},
        {"format_version", std::to_string(kSequenceFileVersion)},
        {"library_version", RESET_VERSION_STRING},
        {"backend", backend},
        {"architecture", identity.architecture},
        {"layers", std::to_string(identity.layers)},
        {"hidden_size", std::to_string(identity.hidden_size)},
        {"heads", std::to_string(identity.heads)},
        {"kv_heads", std::to_string(identity.kv_heads)},
        {"head_dim", std::to_string(identity.head_dim)},
        {"vocab_size", std::to_string(identity.vocab_size)},
        {"model_fingerprint", identity.fingerprint},
        {"weights", weights_name(identity.weights)},
        {"kv_cache", kv_cache_name(identity.kv_cache)},
        {"length", std::to_string(length)},
        {"has_logits", r.has_logits ? "1" : "0"},
        {"ended", r.ended ? "1" : "0"},
        {"generated", std::to_string(r.generated)},
        {"sampler.accepted", std::to_string(r.sampler.carried.accepted)},
        {"sampler.last_token", std::to_string(r.sampler.carried.last_token)},
        {"sampler.prev_token", std::to_string(r.sampler.carried.prev_token)},
        {"sampler.total_sum", decimal(state.total_sum)},
        {"sampler.total_count", std::to_string(state.total_count)},
        {"sampler.step_sum", decimal(state.step_sum)},
        {"sampler.step_count", std::to_string(state.step_count)},
        {"sampler.window_count", std::to_string(state.window_count)},
        {"sampler.window_next", std::to_string(state.window_next)},
        {"sampler.step_index", std::to_string(state.step_index)},
        {"stream.seen_regular", r.stream.seen_regular ? "1" : "0"},
    };
    const size_t kv_element = dtype_size(kv_dtype(identity.kv_cache));
    SequenceImage image;
    const size_t layer_bytes = size_t(identity.kv_heads) * size_t(length) * size_t(identity.head_dim) * kv_element;
    image.layer_bytes = layer_bytes;
    const auto f32 = [](const std::vector<float> &v) { return std::vector<int64_t>{int64_t(v.size())}; };
    const auto i32 = [](const std::vector<int32_t> &v) { return std::vector<int64_t>{int64_t(v.size())}; };
    const SequenceSampler::Saved &sampler = r.sampler;
    std::vector<PlannedTensor> &plan = image.tensors;
    plan = {
        {"tokens", Dtype::I32, i32(r.tokens), r.tokens.size() * 4, r.tokens.data()},
        {"logits", Dtype::F32, f32(r.logits), r.logits.size() * 4, r.logits.data()},
        {"sampler.ring", Dtype::F32, f32(sampler.carried.ring), sampler.carried.ring.size() * 4,
         sampler.carried.ring.data()},
        {"sampler.generation", Dtype::I32, i32(sampler.generation), sampler.generation.size() * 4,
         sampler.generation.data()},
        {"sampler.context", Dtype::I32, i32(sampler.context), sampler.context.size() * 4, sampler.context.data()},
    };
    const std::vector<int64_t> layer_shape = {identity.kv_heads, length, identity.head_dim};
    for (int32_t layer = 0; layer < identity.layers; ++layer) {
        const std::string prefix = "layers." + std::to_string(layer) + ".";
        const Dtype dtype = kv_dtype(identity.kv_cache);
        plan.push_back({prefix + "keys", dtype, layer_shape, layer_bytes, nullptr, layer, false});
        plan.push_back({prefix + "values", dtype, layer_shape, layer_bytes, nullptr, layer, true});
    }
    plan.push_back({"held", Dtype::U8, {int64_t(r.held.size())}, r.held.size(), r.held.data()});
    plan.push_back({"stream.pending", Dtype::U8, {int64_t(r.stream.pending.size())}, r.stream.pending.size(),
                    r.stream.pending.data()});

    json header = {{"__metadata__", metadata}};
    size_t offset = 0;
    for (const PlannedTensor &t : plan) {
        header[t.name] = {
            {"dtype", dtype_name(t.dtype)}, {"shape", t.shape}, {"data_offsets", {offset, offset + t.bytes}}};
        offset += t.bytes;
    }
    std::string header_text = header.dump();
    // Spaces pad the header so the data starts 8-byte aligned, as the safetensors writers do.
    header_text.append((8 - header_text.size() % 8) % 8, ' ');
    image.header.resize(8);
    for (int i = 0; i < 8; ++i) image.header[size_t(i)] = char(uint8_t(uint64_t(header_text.size()) >> (8 * i)));
    image.header += header_text;
    return image;
}

}  // namespace

void write_sequence_file(const std::string &path, const SequenceFileIdentity &identity, const char *backend,
                         const SequenceRecord &record, const LayerReader &read_layer) {
    const SequenceImage image = plan_image(identity, backend, record);
    std::vector<uint8_t> keys(image.layer_bytes), values(image.layer_bytes);  // one layer at a time
    PendingFile file(path);
    file.write(image.header.data(), image.header.size());
    for (const PlannedTensor &t : image.tensors) {
        if (t.layer < 0) {
            file.write(t.data, t.bytes);
            continue;
        }
        if (!t.values && t.bytes > 0) read_layer(t.layer, keys.data(), values.data());
        file.write(t.values ? values.data() : keys.data(), t.bytes);
    }
    file.commit();
}

size_t write_sequence_memory(const SequenceFileIdentity &identity, const char *backend, const SequenceRecord &record,
                             const LayerReader &read_layer, uint8_t *buffer, size_t capacity) {
    const SequenceImage image = plan_image(identity, backend, record);
    const size_t size = image.size();
    if (!buffer || capacity < size) return size;
    uint8_t *out = buffer;
    std::memcpy(out, image.header.data(), image.header.size());
    out += image.header.size();
    for (const PlannedTensor &t : image.tensors) {
        // A layer's values follow its keys, so the reader fills both in place.
        if (t.layer >= 0 && !t.values && t.bytes > 0) read_layer(t.layer, out, out + t.bytes);
        else if (t.layer < 0 && t.bytes > 0) std::memcpy(out, t.data, t.bytes);
        out += t.bytes;
    }
    return size;
}

namespace {

// Check an opened image (file.store) and fill the rest of `file` from it; `path` names it in messages.
void check_image(SequenceFile &file, const std::string &path, const SequenceFileIdentity &id, int32_t max_context) {
    const Reader in(path, file.store);
    if (in.text("format") != kFormatName)
        in.malformed("its metadata \"format\" is \"" + in.text("format") + "\", not \"" + kFormatName + "\"");
    const int64_t version = in.integer("format_version", 1, INT32_MAX);
    if (version > kSequenceFileVersion)
        fail(RESET_ERR_UNSUPPORTED, "'", path, "' is a sequence file of format version ", version, "; this library (",
             RESET_VERSION_STRING, ") reads version ", kSequenceFileVersion, " and older");

    // The model and the cache type, before anything that depends on their shapes.
    const auto dimension = [&](const char *key) { return std::to_string(in.integer(key, 1, INT32_MAX)); };
    const std::string saved_shape = in.text("architecture") + ", " + dimension("layers") + " layers, hidden " +
                                    dimension("hidden_size") + ", " + dimension("heads") + " heads, " +
                                    dimension("kv_heads") + " KV heads of " + dimension("head_dim") +
                                    ", vocabulary " + dimension("vocab_size");
    const std::string here_shape = id.architecture + ", " + std::to_string(id.layers) + " layers, hidden " +
                                   std::to_string(id.hidden_size) + ", " + std::to_string(id.heads) + " heads, " +
                                   std::to_string(id.kv_heads) + " KV heads of " + std::to_string(id.head_dim) +
                                   ", vocabulary " + std::to_string(id.vocab_size);
    require_same(path, "a model of", saved_shape, here_shape);
    require_same(path, "the model whose fingerprint is", in.text("model_fingerprint"), id.fingerprint);
    require_same(path, "weights", in.text("weights"), weights_name(id.weights));
    require_same(path, "a KV cache of", in.text("kv_cache"), kv_cache_name(id.kv_cache));

    SequenceRecord &r = file.record;
    const int64_t length = in.integer("length", 0, INT32_MAX);
    if (length > max_context)
        fail(RESET_ERR_CONTEXT_OVERFLOW, "'", path, "' holds a sequence of ", length,
             " tokens, past this session's max_context ", max_context);
    const std::vector<int64_t> length_shape = {length};
    r.tokens = in.ids("tokens", id.vocab_size, &length_shape);
    r.has_logits = in.flag("has_logits");
    if (r.has_logits && length == 0) in.malformed("a sequence of no tokens has logits");
    const std::vector<int64_t> logits_shape = {r.has_logits ? int64_t(id.vocab_size) : 0};
    const TensorView &logits = in.tensor("logits", Dtype::F32, &logits_shape);
    r.logits.resize(size_t(logits.numel()));
    if (!r.logits.empty()) std::memcpy(r.logits.data(), logits.data, logits.nbytes);
    for (size_t i = 0; i < r.logits.size(); ++i)
        if (std::isnan(r.logits[i]) || r.logits[i] == INFINITY)
            in.malformed("logit " + std::to_string(i) + " is " + decimal(r.logits[i]) +
                         " (the model never gives NaN or +inf)");
    r.ended = in.flag("ended");
    r.generated = int32_t(in.integer("generated", 0, INT32_MAX));

    // The sampler: every field in its range and consistent with the others, so the ReSET rule never
    // sees a state it could not have reached (a count of 0 with a sum, a window slot outside the ring).
    SequenceSampler::Carried &c = r.sampler.carried;
    const TensorView &ring = in.tensor("sampler.ring", Dtype::F32);
    const int64_t window = ring.numel();
    if (window < 1 || window > kMaxWindow)
        in.malformed("the ReSET window holds " + std::to_string(window) + " slots, outside [1, " +
                     std::to_string(kMaxWindow) + "]");
    c.ring.resize(size_t(window));
    std::memcpy(c.ring.data(), ring.data, ring.nbytes);
    for (size_t i = 0; i < c.ring.size(); ++i)
        if (!std::isfinite(c.ring[i]) || c.ring[i] < 0.0f)
            in.malformed("the ReSET window's slot " + std::to_string(i) + " is " + decimal(c.ring[i]) +
                         ", not an entropy (finite, >= 0)");
    c.accepted = in.integer("sampler.accepted", 0, INT64_MAX);
    c.last_token = int32_t(in.integer("sampler.last_token", -1, id.vocab_size - 1));
    c.prev_token = int32_t(in.integer("sampler.prev_token", -1, id.vocab_size - 1));
    rule::StepState &s = c.state;
    rule::clear_state(s);
    s.total_sum = in.sum("sampler.total_sum");
    s.total_count = in.integer("sampler.total_count", 0, INT64_MAX);
    s.step_sum = in.sum("sampler.step_sum");
    s.step_count = in.integer("sampler.step_count", 0, s.total_count);
    s.window_count = int32_t(in.integer("sampler.window_count", 0, std::min<int64_t>(window, s.total_count)));
    s.window_next = int32_t(in.integer("sampler.window_next", 0, window - 1));
    s.step_index = int32_t(in.integer("sampler.step_index", 0, INT32_MAX));
    if ((s.total_count == 0 && s.total_sum != 0.0) || (s.step_count == 0 && s.step_sum != 0.0))
        in.malformed("the ReSET state has a sum of entropies over no tokens");
    r.sampler.generation = in.ids("sampler.generation", id.vocab_size);
    r.sampler.context = in.ids("sampler.context", id.vocab_size);

    r.stream.seen_regular = in.flag("stream.seen_regular");
    r.stream.pending = in.bytes("stream.pending");
    if (!StreamDecoder::can_hold(r.stream.pending))
        in.malformed("tensor 'stream.pending' is not the start of one UTF-8 character");
    r.held = in.bytes("held");
    if (!utf8::is_valid(r.held)) in.malformed("tensor 'held' is not valid UTF-8");

    const std::vector<int64_t> layer_shape = {id.kv_heads, length, id.head_dim};
    for (int32_t layer = 0; layer < id.layers; ++layer) {
        const std::string prefix = "layers." + std::to_string(layer) + ".";
        file.keys.push_back(in.tensor(prefix + "keys", kv_dtype(id.kv_cache), &layer_shape).data);
        file.values.push_back(in.tensor(prefix + "values", kv_dtype(id.kv_cache), &layer_shape).data);
    }
    // Exactly the tensors above: anything else is another writer's file.
    const size_t expected = 7 + 2 * size_t(id.layers);
    if (file.store.tensors().size() != expected)
        in.malformed("it holds " + std::to_string(file.store.tensors().size()) + " tensors, not the " +
                     std::to_string(expected) + " of a sequence of this model");
}

}  // namespace

SequenceFile read_sequence_file(const std::string &path, const SequenceFileIdentity &id, int32_t max_context) {
    SequenceFile file;
    file.store = TensorStore::open_file(path);  // RESET_ERR_IO, or RESET_ERR_FORMAT for a malformed safetensors file
    check_image(file, path, id, max_context);
    return file;
}

SequenceFile read_sequence_memory(const uint8_t *bytes, size_t size, const SequenceFileIdentity &id,
                                  int32_t max_context) {
    SequenceFile file;
    file.store = TensorStore::open_memory(bytes, size, kMemoryName);  // RESET_ERR_FORMAT for a malformed image
    check_image(file, kMemoryName, id, max_context);
    return file;
}

}  // namespace reset
