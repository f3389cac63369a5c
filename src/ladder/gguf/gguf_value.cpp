// Typed access to one GGUF metadata value and the names of value types.
// Conversions refuse rather than wrap: a uint64 above INT64_MAX is not an int.
#include <limits>

#include "ladder/gguf/gguf_file.h"

namespace ladder::gguf {

std::optional<int64_t> Value::as_int() const {
    if (const auto* u = std::get_if<uint64_t>(&data)) {
        if (*u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
        return static_cast<int64_t>(*u);
    }
    if (const auto* i = std::get_if<int64_t>(&data)) return *i;
    return std::nullopt;
}

std::optional<double> Value::as_float() const {
    if (const auto* d = std::get_if<double>(&data)) return *d;
    if (const auto* u = std::get_if<uint64_t>(&data)) return static_cast<double>(*u);
    if (const auto* i = std::get_if<int64_t>(&data)) return static_cast<double>(*i);
    return std::nullopt;
}

std::optional<bool> Value::as_bool() const {
    if (const auto* b = std::get_if<bool>(&data)) return *b;
    return std::nullopt;
}

const std::string* Value::as_string() const { return std::get_if<std::string>(&data); }

const Array* Value::as_array() const { return std::get_if<Array>(&data); }

Value Value::string_array(const std::vector<std::string>& strings) {
    std::vector<Value> elements;
    elements.reserve(strings.size());
    for (const auto& s : strings) elements.push_back(Value::string(s));
    return Value::array(ValueType::String, std::move(elements));
}

std::string value_type_name(ValueType type) {
    switch (type) {
        case ValueType::UInt8: return "uint8";
        case ValueType::Int8: return "int8";
        case ValueType::UInt16: return "uint16";
        case ValueType::Int16: return "int16";
        case ValueType::UInt32: return "uint32";
        case ValueType::Int32: return "int32";
        case ValueType::Float32: return "float32";
        case ValueType::Bool: return "bool";
        case ValueType::String: return "string";
        case ValueType::Array: return "array";
        case ValueType::UInt64: return "uint64";
        case ValueType::Int64: return "int64";
        case ValueType::Float64: return "float64";
    }
    return "type " + std::to_string(static_cast<uint32_t>(type));
}

uint64_t value_type_size_bytes(ValueType type) {
    switch (type) {
        case ValueType::UInt8:
        case ValueType::Int8:
        case ValueType::Bool: return 1;
        case ValueType::UInt16:
        case ValueType::Int16: return 2;
        case ValueType::UInt32:
        case ValueType::Int32:
        case ValueType::Float32: return 4;
        case ValueType::UInt64:
        case ValueType::Int64:
        case ValueType::Float64: return 8;
        case ValueType::String:
        case ValueType::Array: return 0;
    }
    return 0;
}

}  // namespace ladder::gguf
