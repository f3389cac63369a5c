// Writes well-formed GGUF (v3 by default) from metadata and tensors built in
// memory: for tests, and for quantize. Misuse is a bug in the caller (checked).
// The layout is ggml's: each tensor's data, the last one included, is padded
// to the alignment.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "ladder/gguf/gguf_file.h"
#include "ladder/tensor/dtype.h"

namespace ladder::gguf {

class GgufWriter {
public:
    GgufWriter() = default;
    // Only 2 and 3 are writable; both share one layout.
    void set_version(uint32_t version);

    // Adds or replaces a metadata value; keys keep their first insertion order.
    // Setting general.alignment (a power-of-two integer) sets the alignment.
    void set(const std::string& key, Value value);
    // Writes general.alignment as a uint32 and aligns the data by it.
    void set_alignment(uint64_t alignment);
    uint64_t alignment() const { return alignment_; }

    // Adds a tensor whose data is viewed in place: it must outlive the writer.
    // shape is in GGUF order (shape[0] contiguous); data must be exactly the
    // tensor's row_bytes * rows.
    void add_tensor(const std::string& name, tensor::DType dtype, std::vector<int64_t> shape,
                    std::span<const uint8_t> data);
    // Same, with the writer taking ownership of the bytes.
    void add_tensor(const std::string& name, tensor::DType dtype, std::vector<int64_t> shape,
                    std::vector<uint8_t> data);
    // A tensor whose bytes a TensorSource supplies when the file is written
    // (quantize makes them while it writes, so a model need not fit in memory).
    void declare_tensor(const std::string& name, tensor::DType dtype, std::vector<int64_t> shape);

    // Bytes of tensor i in the file, padding excluded.
    uint64_t tensor_size_bytes(size_t index) const;
    size_t n_tensors() const { return tensors_.size(); }

    // Appends the next bytes of the tensor being written; the sizes of one
    // tensor's calls must add up to its tensor_size_bytes.
    using TensorSink = std::function<void(std::span<const uint8_t>)>;
    // Writes the bytes of tensor `index` into the sink; called once per
    // tensor, in order.
    using TensorSource = std::function<void(size_t index, const TensorSink& sink)>;

    // The whole file in memory (every tensor must carry its data).
    std::vector<uint8_t> serialize() const;
    // Writes the file to path, tensor by tensor, atomically: into a temporary
    // file next to it, renamed over path only once complete, so a failure
    // (thrown by the source too) leaves no partial file and an existing file
    // untouched. Throws util::InputError when the file cannot be written.
    void write_file(const std::string& path) const;
    void write_file(const std::string& path, const TensorSource& source) const;

private:
    struct PendingTensor {
        std::string name;
        tensor::DType dtype;
        std::vector<int64_t> shape;
        uint64_t size_bytes;
        bool declared;                  // data comes from a TensorSource
        std::vector<uint8_t> owned;     // empty when the data is a view
        std::span<const uint8_t> view;  // used when owned is empty

        std::span<const uint8_t> data() const { return owned.empty() ? view : owned; }
    };

    // Header, metadata, tensor infos and the padding up to the data section.
    std::vector<uint8_t> serialize_header() const;
    // Each tensor's offset from the data section start, in order, aligned.
    std::vector<uint64_t> tensor_offsets() const;
    // Checks a tensor's name, shape and type; returns its size in bytes.
    uint64_t checked_size_bytes(const std::string& name, tensor::DType dtype,
                                const std::vector<int64_t>& shape) const;

    uint32_t version_ = 3;
    uint64_t alignment_ = kDefaultAlignment;
    std::vector<std::pair<std::string, Value>> metadata_;
    std::map<std::string, size_t> metadata_index_;
    std::vector<PendingTensor> tensors_;
    std::map<std::string, size_t> tensor_index_;
};

}  // namespace ladder::gguf
