// safetensors.h — safetensors files, single or sharded, mapped into memory
// (or read into memory of their own, FileAccess::Read) and validated before a
// single tensor is read.
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

// How a file's bytes come into memory (reset_model_options.map_files).
enum class FileAccess {
    // mmap: nothing is read until a page is touched, and the pages are the page cache's.  A file
    // truncated or rewritten in place while mapped makes the next touch of a lost page a SIGBUS,
    // which kills the process: no library can turn it into an error.
    Map,
    // pread into an anonymous mapping of our own: the whole file is read at once, a file that
    // shrinks or changes meanwhile is RESET_ERR_IO, and afterwards the file no longer matters.
    Read,
};

// A whole file's bytes, read-only: the file mapped, or a copy read into memory (FileAccess).
class FileImage {
public:
    FileImage(const std::string &path, FileAccess access);  // throws RESET_ERR_IO
    ~FileImage();
    FileImage(const FileImage &) = delete;
    FileImage &operator=(const FileImage &) = delete;
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
    const uint8_t *data = nullptr;  // inside a FileImage (or the caller's image: open_memory)
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
    static TensorStore open_directory(const std::string &directory, FileAccess access = FileAccess::Map);
    // Open one .safetensors file.
    static TensorStore open_file(const std::string &path, FileAccess access = FileAccess::Map);
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
    void add_file(const std::string &path, FileAccess access);
    // Parse and check one safetensors image; `name` is its file's path in messages.
    void add_image(const uint8_t *bytes, size_t size, const std::string &name);
    std::vector<std::shared_ptr<FileImage>> files_;
    std::map<std::string, TensorView> tensors_;
    std::map<std::string, std::string> metadata_;
};

}  // namespace reset
