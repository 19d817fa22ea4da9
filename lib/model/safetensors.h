// safetensors.h — safetensors files, single or sharded, mapped into memory
// (never copied) and validated before a single tensor is read.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace reset {

enum class Dtype { BF16, F16, F32, F64, I8, U8, I16, I32, I64, BOOL, F8_E4M3, F8_E5M2 };

const char *dtype_name(Dtype dtype);
size_t dtype_size(Dtype dtype);

// A read-only memory mapping of a whole file.
class MappedFile {
public:
    explicit MappedFile(const std::string &path);  // throws RESET_ERR_IO
    ~MappedFile();
    MappedFile(const MappedFile &) = delete;
    MappedFile &operator=(const MappedFile &) = delete;
    const uint8_t *data() const { return data_; }
    size_t size() const { return size_; }
    const std::string &path() const { return path_; }

private:
    std::string path_;
    const uint8_t *data_ = nullptr;
    size_t size_ = 0;
};

struct TensorView {
    std::string name;
    Dtype dtype = Dtype::U8;
    std::vector<int64_t> shape;
    const uint8_t *data = nullptr;  // inside a MappedFile (or the caller's image: open_memory)
    size_t nbytes = 0;
    std::string file;               // for messages
    int64_t numel() const;
    std::string describe() const;   // "BF16 [64, 128]"
};

// The tensors of one model: model.safetensors, or the shards listed by
// model.safetensors.index.json.
class TensorStore {
public:
    // Open a directory (single file or index) — throws RESET_ERR_IO / RESET_ERR_FORMAT.
    static TensorStore open_directory(const std::string &directory);
    // Open one .safetensors file.
    static TensorStore open_file(const std::string &path);
    // Read a safetensors image the caller holds in memory: the views point
    // into `bytes`, which must outlive the store.  `name` stands for the
    // file in messages.
    static TensorStore open_memory(const uint8_t *bytes, size_t size, const std::string &name);

    const TensorView *find(const std::string &name) const;
    // The tensor or RESET_ERR_SHAPE naming what is missing.
    const TensorView &get(const std::string &name) const;
    const std::map<std::string, TensorView> &tensors() const { return tensors_; }
    const std::map<std::string, std::string> &metadata() const { return metadata_; }

private:
    void add_file(const std::string &path);
    // Parse and check one safetensors image; `name` is its file's path in messages.
    void add_image(const uint8_t *bytes, size_t size, const std::string &name);
    std::vector<std::shared_ptr<MappedFile>> files_;
    std::map<std::string, TensorView> tensors_;
    std::map<std::string, std::string> metadata_;
};

}  // namespace reset
