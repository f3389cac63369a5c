// Writes well-formed GGUF (v3 by default) from metadata and tensors built in
// memory: for tests, and for quantize. Misuse is a bug in the caller (checked).
#pragma once

#include <cstdint>
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

    // The whole file in memory.
    std::vector<uint8_t> serialize() const;
    // Streams the file to path, tensor by tensor. Throws util::InputError when
    // the file cannot be written.
    void write_file(const std::string& path) const;

private:
    struct PendingTensor {
        std::string name;
        tensor::DType dtype;
        std::vector<int64_t> shape;
        std::vector<uint8_t> owned;     // empty when the data is a view
        std::span<const uint8_t> view;  // used when owned is empty

        std::span<const uint8_t> data() const { return owned.empty() ? view : owned; }
    };

    // Header, metadata, tensor infos and the padding up to the data section.
    std::vector<uint8_t> serialize_header() const;
    // Each tensor's offset from the data section start, in order, aligned.
    std::vector<uint64_t> tensor_offsets() const;

    uint32_t version_ = 3;
    uint64_t alignment_ = kDefaultAlignment;
    std::vector<std::pair<std::string, Value>> metadata_;
    std::map<std::string, size_t> metadata_index_;
    std::vector<PendingTensor> tensors_;
    std::map<std::string, size_t> tensor_index_;
};

}  // namespace ladder::gguf
