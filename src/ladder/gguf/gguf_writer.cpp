// GGUF serialization: little-endian header, metadata in insertion order,
// tensor infos, then each tensor's data at an aligned offset.
#include "ladder/gguf/gguf_writer.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>

#include "ladder/util/atomic_file.h"
#include "ladder/util/check.h"
#include "ladder/util/error.h"

namespace ladder::gguf {

namespace {

uint64_t align_up(uint64_t offset, uint64_t alignment) {
    return (offset + alignment - 1) / alignment * alignment;
}

// Appends little-endian fields to a byte buffer (the host is little-endian;
// byte_reader.h asserts it for the whole module).
class ByteSink {
public:
    explicit ByteSink(std::vector<uint8_t>& out) : out_(out) {}

    template <typename T>
    void put(T value) {
        append(&value, sizeof(T));
    }
    void put_string(std::string_view s) {
        put<uint64_t>(s.size());
        append(s.data(), s.size());
    }
    void put_value(const Value& value);

private:
    // resize + memcpy rather than insert: GCC 12 reports a false
    // stringop-overflow for insert into an empty vector at -O3.
    void append(const void* data, size_t n_bytes) {
        const size_t at = out_.size();
        out_.resize(at + n_bytes);
        if (n_bytes > 0) std::memcpy(out_.data() + at, data, n_bytes);
    }

    std::vector<uint8_t>& out_;
};

// True when a value's data alternative and range match its declared type.
bool value_is_consistent(const Value& value) {
    const auto fits_unsigned = [&](uint64_t max) {
        const auto* u = std::get_if<uint64_t>(&value.data);
        return u != nullptr && *u <= max;
    };
    const auto fits_signed = [&](int64_t min, int64_t max) {
        const auto* i = std::get_if<int64_t>(&value.data);
        return i != nullptr && *i >= min && *i <= max;
    };
    switch (value.type) {
        case ValueType::UInt8: return fits_unsigned(std::numeric_limits<uint8_t>::max());
        case ValueType::UInt16: return fits_unsigned(std::numeric_limits<uint16_t>::max());
        case ValueType::UInt32: return fits_unsigned(std::numeric_limits<uint32_t>::max());
        case ValueType::UInt64: return fits_unsigned(std::numeric_limits<uint64_t>::max());
        case ValueType::Int8: return fits_signed(INT8_MIN, INT8_MAX);
        case ValueType::Int16: return fits_signed(INT16_MIN, INT16_MAX);
        case ValueType::Int32: return fits_signed(INT32_MIN, INT32_MAX);
        case ValueType::Int64: return fits_signed(INT64_MIN, INT64_MAX);
        case ValueType::Float32:
        case ValueType::Float64: return std::holds_alternative<double>(value.data);
        case ValueType::Bool: return std::holds_alternative<bool>(value.data);
        case ValueType::String: return std::holds_alternative<std::string>(value.data);
        case ValueType::Array: {
            const Array* array = value.as_array();
            if (array == nullptr) return false;
            for (const Value& element : array->elements) {
                if (element.type != array->element_type || !value_is_consistent(element)) {
                    return false;
                }
            }
            return true;
        }
    }
    return false;
}

void ByteSink::put_value(const Value& value) {
    switch (value.type) {
        case ValueType::UInt8: put(static_cast<uint8_t>(std::get<uint64_t>(value.data))); return;
        case ValueType::UInt16: put(static_cast<uint16_t>(std::get<uint64_t>(value.data))); return;
        case ValueType::UInt32: put(static_cast<uint32_t>(std::get<uint64_t>(value.data))); return;
        case ValueType::UInt64: put(std::get<uint64_t>(value.data)); return;
        case ValueType::Int8: put(static_cast<int8_t>(std::get<int64_t>(value.data))); return;
        case ValueType::Int16: put(static_cast<int16_t>(std::get<int64_t>(value.data))); return;
        case ValueType::Int32: put(static_cast<int32_t>(std::get<int64_t>(value.data))); return;
        case ValueType::Int64: put(std::get<int64_t>(value.data)); return;
        case ValueType::Float32: put(static_cast<float>(std::get<double>(value.data))); return;
        case ValueType::Float64: put(std::get<double>(value.data)); return;
        case ValueType::Bool: put<uint8_t>(std::get<bool>(value.data) ? 1 : 0); return;
        case ValueType::String: put_string(std::get<std::string>(value.data)); return;
        case ValueType::Array: {
            const Array& array = std::get<Array>(value.data);
            put(static_cast<uint32_t>(array.element_type));
            put<uint64_t>(array.elements.size());
            for (const Value& element : array.elements) put_value(element);
            return;
        }
    }
}

}  // namespace

void GgufWriter::set_version(uint32_t version) {
    LADDER_CHECK(version == 2 || version == 3, "GgufWriter writes GGUF versions 2 and 3 only");
    version_ = version;
}

void GgufWriter::set(const std::string& key, Value value) {
    LADDER_CHECK(!key.empty(), "GGUF metadata keys must not be empty");
    LADDER_CHECK(value_is_consistent(value), "Value data does not match its type");
    if (key == "general.alignment") {
        const auto alignment = value.as_int();
        LADDER_CHECK(
            alignment && *alignment > 0 && std::has_single_bit(static_cast<uint64_t>(*alignment)),
            "general.alignment must be a positive power of two");
        alignment_ = static_cast<uint64_t>(*alignment);
    }
    const auto [it, inserted] = metadata_index_.try_emplace(key, metadata_.size());
    if (inserted) {
        metadata_.emplace_back(key, std::move(value));
    } else {
        metadata_[it->second].second = std::move(value);
    }
}

void GgufWriter::set_alignment(uint64_t alignment) {
    LADDER_CHECK(alignment <= std::numeric_limits<uint32_t>::max(),
                 "general.alignment is a uint32");
    set("general.alignment", Value::uint32(static_cast<uint32_t>(alignment)));
}

uint64_t GgufWriter::checked_size_bytes(const std::string& name, tensor::DType dtype,
                                        const std::vector<int64_t>& shape) const {
    LADDER_CHECK(!name.empty(), "tensor names must not be empty");
    LADDER_CHECK(!tensor_index_.contains(name), "tensor added twice");
    LADDER_CHECK(!shape.empty() && shape.size() <= kMaxDims, "tensors have 1 to 4 dimensions");
    int64_t n_elements = 1;
    for (int64_t dim : shape) {
        LADDER_CHECK(dim >= 0, "tensor dimensions must not be negative");
        n_elements *= dim;
    }
    const auto row = tensor::row_bytes(dtype, shape[0]);
    LADDER_CHECK(row.has_value(), "tensor rows must be whole blocks of its type");
    const uint64_t n_rows = shape[0] == 0 ? 0 : static_cast<uint64_t>(n_elements / shape[0]);
    return *row * n_rows;
}

void GgufWriter::add_tensor(const std::string& name, tensor::DType dtype,
                            std::vector<int64_t> shape, std::span<const uint8_t> data) {
    const uint64_t size_bytes = checked_size_bytes(name, dtype, shape);
    LADDER_CHECK(data.size() == size_bytes, "tensor data size does not match its shape");
    tensor_index_.emplace(name, tensors_.size());
    tensors_.push_back(PendingTensor{name, dtype, std::move(shape), size_bytes, false, {}, data});
}

void GgufWriter::add_tensor(const std::string& name, tensor::DType dtype,
                            std::vector<int64_t> shape, std::vector<uint8_t> data) {
    add_tensor(name, dtype, std::move(shape), std::span<const uint8_t>(data));
    // Moving a vector keeps its buffer, but the view is dropped anyway so the
    // tensor reads only what it owns.
    tensors_.back().owned = std::move(data);
    tensors_.back().view = {};
}

void GgufWriter::declare_tensor(const std::string& name, tensor::DType dtype,
                                std::vector<int64_t> shape) {
    const uint64_t size_bytes = checked_size_bytes(name, dtype, shape);
    tensor_index_.emplace(name, tensors_.size());
    tensors_.push_back(PendingTensor{name, dtype, std::move(shape), size_bytes, true, {}, {}});
}

uint64_t GgufWriter::tensor_size_bytes(size_t index) const {
    LADDER_CHECK(index < tensors_.size(), "tensor index out of range");
    return tensors_[index].size_bytes;
}

std::vector<uint64_t> GgufWriter::tensor_offsets() const {
    std::vector<uint64_t> offsets;
    uint64_t offset = 0;
    for (const PendingTensor& t : tensors_) {
        offsets.push_back(offset);
        offset = align_up(offset + t.size_bytes, alignment_);
    }
    return offsets;
}

std::vector<uint8_t> GgufWriter::serialize_header() const {
    std::vector<uint8_t> out;
    ByteSink sink(out);
    sink.put(kMagic);
    sink.put<uint32_t>(version_);
    sink.put<uint64_t>(tensors_.size());
    sink.put<uint64_t>(metadata_.size());
    for (const auto& [key, value] : metadata_) {
        sink.put_string(key);
        sink.put(static_cast<uint32_t>(value.type));
        sink.put_value(value);
    }
    const std::vector<uint64_t> offsets = tensor_offsets();
    for (size_t i = 0; i < tensors_.size(); ++i) {
        const PendingTensor& t = tensors_[i];
        sink.put_string(t.name);
        sink.put<uint32_t>(static_cast<uint32_t>(t.shape.size()));
        for (int64_t dim : t.shape) sink.put<uint64_t>(static_cast<uint64_t>(dim));
        sink.put(static_cast<uint32_t>(t.dtype));
        sink.put<uint64_t>(offsets[i]);
    }
    if (!tensors_.empty()) out.resize(align_up(out.size(), alignment_), 0);
    return out;
}

std::vector<uint8_t> GgufWriter::serialize() const {
    std::vector<uint8_t> out = serialize_header();
    const size_t data_start = out.size();
    const std::vector<uint64_t> offsets = tensor_offsets();
    for (size_t i = 0; i < tensors_.size(); ++i) {
        LADDER_CHECK(!tensors_[i].declared, "serialize needs every tensor's data");
        const auto data = tensors_[i].data();
        out.resize(data_start + align_up(offsets[i] + data.size(), alignment_), 0);
        if (!data.empty())
            std::memcpy(out.data() + data_start + offsets[i], data.data(), data.size());
    }
    return out;
}

void GgufWriter::write_file(const std::string& path) const {
    write_file(path, [this](size_t index, const TensorSink& sink) {
        LADDER_CHECK(!tensors_[index].declared, "a declared tensor needs a TensorSource");
        sink(tensors_[index].data());
    });
}

void GgufWriter::write_file(const std::string& path, const TensorSource& source) const {
    util::AtomicFile file(path);
    const std::vector<uint8_t> header = serialize_header();
    file.write(header.data(), header.size());
    const std::vector<uint8_t> zeros(alignment_, 0);
    for (size_t i = 0; i < tensors_.size(); ++i) {
        uint64_t written = 0;
        source(i, [&](std::span<const uint8_t> bytes) {
            LADDER_CHECK(written + bytes.size() <= tensors_[i].size_bytes,
                         "a TensorSource wrote more than its tensor's bytes");
            file.write(bytes.data(), bytes.size());
            written += bytes.size();
        });
        LADDER_CHECK(written == tensors_[i].size_bytes,
                     "a TensorSource wrote fewer than its tensor's bytes");
        file.write(zeros.data(), align_up(written, alignment_) - written);
    }
    file.commit();
}

}  // namespace ladder::gguf
