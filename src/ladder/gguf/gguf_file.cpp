// GgufFile: opening (mmap or caller's bytes), typed metadata lookups that
// report a wrong type as bad input, and zero-copy views of tensor data.
#include "ladder/gguf/gguf_file.h"

#include "ladder/gguf/gguf_parser.h"
#include "ladder/util/check.h"
#include "ladder/util/error.h"

namespace ladder::gguf {

std::unique_ptr<GgufFile> GgufFile::open(const std::string& path) {
    std::unique_ptr<GgufFile> file(new GgufFile());
    file->mapped_ = std::make_unique<util::MappedFile>(path);
    file->bytes_ = file->mapped_->bytes();
    file->name_ = path;
    GgufParser::parse_into(*file);
    return file;
}

std::unique_ptr<GgufFile> GgufFile::parse(std::span<const uint8_t> bytes, const std::string& name) {
    std::unique_ptr<GgufFile> file(new GgufFile());
    file->bytes_ = bytes;
    file->name_ = name;
    GgufParser::parse_into(*file);
    return file;
}

const Value* GgufFile::find(const std::string& key) const {
    const auto it = metadata_.find(key);
    return it == metadata_.end() ? nullptr : &it->second;
}

namespace {

[[noreturn]] void fail_type(const std::string& file, const std::string& key, const Value& value,
                            const char* expected) {
    util::fail("{}: metadata key '{}' is a {}, expected {}", file, key, value_type_name(value.type),
               expected);
}

const Array* find_array(const GgufFile& file, const std::string& key) {
    const Value* value = file.find(key);
    if (value == nullptr) return nullptr;
    const Array* array = value->as_array();
    if (array == nullptr) fail_type(file.name(), key, *value, "an array");
    return array;
}

[[noreturn]] void fail_element_type(const std::string& file, const std::string& key,
                                    const Array& array, const char* expected) {
    util::fail("{}: metadata key '{}' is an array of {}, expected an array of {}", file, key,
               value_type_name(array.element_type), expected);
}

}  // namespace

std::optional<int64_t> GgufFile::get_int(const std::string& key) const {
    const Value* value = find(key);
    if (value == nullptr) return std::nullopt;
    if (const auto i = value->as_int()) return i;
    if (std::holds_alternative<uint64_t>(value->data)) {
        util::fail("{}: metadata key '{}' is {}, too large for a signed 64-bit integer", name_, key,
                   std::get<uint64_t>(value->data));
    }
    fail_type(name_, key, *value, "an integer");
}

std::optional<double> GgufFile::get_float(const std::string& key) const {
    const Value* value = find(key);
    if (value == nullptr) return std::nullopt;
    if (const auto f = value->as_float()) return f;
    fail_type(name_, key, *value, "a number");
}

std::optional<bool> GgufFile::get_bool(const std::string& key) const {
    const Value* value = find(key);
    if (value == nullptr) return std::nullopt;
    if (const auto b = value->as_bool()) return b;
    fail_type(name_, key, *value, "a bool");
}

std::optional<std::string> GgufFile::get_string(const std::string& key) const {
    const Value* value = find(key);
    if (value == nullptr) return std::nullopt;
    if (const auto* s = value->as_string()) return *s;
    fail_type(name_, key, *value, "a string");
}

std::optional<std::vector<std::string>> GgufFile::get_string_array(const std::string& key) const {
    const Array* array = find_array(*this, key);
    if (array == nullptr) return std::nullopt;
    if (array->element_type != ValueType::String) {
        fail_element_type(name_, key, *array, "strings");
    }
    std::vector<std::string> out;
    out.reserve(array->elements.size());
    for (const Value& element : array->elements) out.push_back(*element.as_string());
    return out;
}

std::optional<std::vector<float>> GgufFile::get_float_array(const std::string& key) const {
    const Array* array = find_array(*this, key);
    if (array == nullptr) return std::nullopt;
    std::vector<float> out;
    out.reserve(array->elements.size());
    for (const Value& element : array->elements) {
        const auto f = element.as_float();
        if (!f) fail_element_type(name_, key, *array, "numbers");
        out.push_back(static_cast<float>(*f));
    }
    return out;
}

std::optional<std::vector<int64_t>> GgufFile::get_int_array(const std::string& key) const {
    const Array* array = find_array(*this, key);
    if (array == nullptr) return std::nullopt;
    std::vector<int64_t> out;
    out.reserve(array->elements.size());
    for (size_t i = 0; i < array->elements.size(); ++i) {
        const auto v = array->elements[i].as_int();
        if (!v) {
            if (std::holds_alternative<uint64_t>(array->elements[i].data)) {
                util::fail(
                    "{}: metadata key '{}' element {} is too large for a signed 64-bit "
                    "integer",
                    name_, key, i);
            }
            fail_element_type(name_, key, *array, "integers");
        }
        out.push_back(*v);
    }
    return out;
}

const TensorInfo* GgufFile::find_tensor(const std::string& name) const {
    const auto it = tensor_index_.find(name);
    return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

std::span<const uint8_t> GgufFile::tensor_data(const TensorInfo& info) const {
    // The parser checked every tensor's range against the file; a TensorInfo
    // that fails this came from another file, which is a bug in the caller.
    LADDER_CHECK(data_offset_bytes_ <= bytes_.size() &&
                     info.offset_bytes <= bytes_.size() - data_offset_bytes_ &&
                     info.size_bytes <= bytes_.size() - data_offset_bytes_ - info.offset_bytes,
                 "tensor_data called with a tensor outside this file");
    return bytes_.subspan(data_offset_bytes_ + info.offset_bytes, info.size_bytes);
}

}  // namespace ladder::gguf
