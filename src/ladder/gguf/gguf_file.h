// Validated, zero-copy reading of GGUF v2/v3 files: header, typed metadata,
// tensor infos and tensor data views. Knows the file format, not models.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "ladder/tensor/dtype.h"
#include "ladder/util/mapped_file.h"

namespace ladder::gguf {

// GGUF metadata value type ids, as the spec numbers them.
enum class ValueType : uint32_t {
    UInt8 = 0,
    Int8 = 1,
    UInt16 = 2,
    Int16 = 3,
    UInt32 = 4,
    Int32 = 5,
    Float32 = 6,
    Bool = 7,
    String = 8,
    Array = 9,
    UInt64 = 10,
    Int64 = 11,
    Float64 = 12,
};

struct Value;
struct Array {
    ValueType element_type;
    std::vector<Value> elements;
};

// One metadata value. Integers keep their signedness; arrays keep their
// element type (tokenizer.ggml.tokens is an array of strings).
struct Value {
    ValueType type;
    std::variant<uint64_t, int64_t, double, bool, std::string, Array> data;

    std::optional<int64_t> as_int() const;   // any integer type, in range
    std::optional<double> as_float() const;  // any float or integer type
    std::optional<bool> as_bool() const;
    const std::string* as_string() const;
    const Array* as_array() const;

    // Builders, for the writer and tests: each sets the type and the matching
    // alternative of data.
    static Value uint8(uint8_t v) { return {ValueType::UInt8, uint64_t{v}}; }
    static Value int8(int8_t v) { return {ValueType::Int8, int64_t{v}}; }
    static Value uint16(uint16_t v) { return {ValueType::UInt16, uint64_t{v}}; }
    static Value int16(int16_t v) { return {ValueType::Int16, int64_t{v}}; }
    static Value uint32(uint32_t v) { return {ValueType::UInt32, uint64_t{v}}; }
    static Value int32(int32_t v) { return {ValueType::Int32, int64_t{v}}; }
    static Value uint64(uint64_t v) { return {ValueType::UInt64, v}; }
    static Value int64(int64_t v) { return {ValueType::Int64, v}; }
    static Value float32(float v) { return {ValueType::Float32, double{v}}; }
    static Value float64(double v) { return {ValueType::Float64, v}; }
    static Value boolean(bool v) { return {ValueType::Bool, v}; }
    static Value string(std::string v) { return {ValueType::String, std::move(v)}; }
    // Every element must have element_type (checked by the writer).
    static Value array(ValueType element_type, std::vector<Value> elements) {
        return {ValueType::Array, Array{element_type, std::move(elements)}};
    }
    static Value string_array(const std::vector<std::string>& strings);
};

// "uint32", "string", "array", ...; "type <id>" for ids outside the spec.
std::string value_type_name(ValueType type);
// Fixed size in bytes of a scalar value type; 0 for string and array.
uint64_t value_type_size_bytes(ValueType type);

// Limits on what a file may claim, beyond "fits in the file".
inline constexpr uint32_t kMagic = 0x46554747;     // "GGUF" as a little-endian uint32
inline constexpr uint32_t kMaxDims = 4;            // ggml's GGML_MAX_DIMS
inline constexpr int kMaxArrayDepth = 8;           // arrays of arrays of ...
inline constexpr uint64_t kDefaultAlignment = 32;  // when general.alignment is absent

struct TensorInfo {
    std::string name;
    tensor::DType dtype;
    std::vector<int64_t> shape;  // GGUF order: shape[0] is the contiguous (row) dimension
    uint64_t offset_bytes;       // from the start of the data section
    uint64_t size_bytes;
    int64_t n_elements;
};

class GgufFile {
public:
    // Maps and validates the file. Throws util::InputError with a one-line
    // message naming the path and what is wrong.
    static std::unique_ptr<GgufFile> open(const std::string& path);
    // Validates bytes already in memory (tests); the span must outlive the object.
    static std::unique_ptr<GgufFile> parse(std::span<const uint8_t> bytes,
                                           const std::string& name = "<memory>");

    uint32_t version() const { return version_; }
    uint64_t alignment() const { return alignment_; }
    uint64_t data_offset_bytes() const { return data_offset_bytes_; }
    const std::string& name() const { return name_; }
    // The whole file as mapped (validated at open).
    std::span<const uint8_t> bytes() const { return bytes_; }
    // The mapped file's stamp; nullopt for bytes parsed from memory.
    std::optional<util::FileStamp> stamp() const {
        if (!mapped_) return std::nullopt;
        return mapped_->stamp();
    }

    const std::map<std::string, Value>& metadata() const { return metadata_; }
    // The keys in the order the file stores them (a copy of a file keeps it).
    const std::vector<std::string>& metadata_keys() const { return metadata_keys_; }
    const Value* find(const std::string& key) const;
    // Typed lookups: nullopt when absent; InputError when present with the wrong type.
    std::optional<int64_t> get_int(const std::string& key) const;
    std::optional<double> get_float(const std::string& key) const;
    std::optional<bool> get_bool(const std::string& key) const;
    std::optional<std::string> get_string(const std::string& key) const;
    // Arrays of a given element kind; InputError on the wrong element type.
    std::optional<std::vector<std::string>> get_string_array(const std::string& key) const;
    std::optional<std::vector<float>> get_float_array(const std::string& key) const;
    std::optional<std::vector<int64_t>> get_int_array(const std::string& key) const;

    const std::vector<TensorInfo>& tensors() const { return tensors_; }
    const TensorInfo* find_tensor(const std::string& name) const;
    // The tensor's bytes inside the mapped file (bounds validated at open).
    std::span<const uint8_t> tensor_data(const TensorInfo& info) const;

private:
    GgufFile() = default;

    std::unique_ptr<util::MappedFile> mapped_;
    std::span<const uint8_t> bytes_;
    std::string name_;
    uint32_t version_ = 0;
    uint64_t alignment_ = kDefaultAlignment;
    uint64_t data_offset_bytes_ = 0;
    std::map<std::string, Value> metadata_;
    std::vector<std::string> metadata_keys_;
    std::vector<TensorInfo> tensors_;
    std::map<std::string, size_t> tensor_index_;

    friend class GgufParser;
};

}  // namespace ladder::gguf
