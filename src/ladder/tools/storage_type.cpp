// Storage types for fit: block sizes come from tensor/dtype.h, so a q4_k weight
// costs 144 bytes per 256 (4.5 bits), exactly as a GGUF file stores it.
#include "ladder/tools/storage_type.h"

#include <algorithm>
#include <cctype>

#include "ladder/util/error.h"

namespace ladder::tools {

namespace {

using tensor::DType;

std::string lower(std::string_view text) {
    std::string out(text);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

// vLLM's fp8 (e4m3 or e5m2) weights and KV: one byte per element. Its
// per-tensor scales are a few bytes per matrix and are left out.
StorageType fp8_type() {
    return StorageType{"fp8", 1, 1};
}

std::vector<StorageType> sorted_largest_first(std::vector<StorageType> types) {
    std::stable_sort(types.begin(), types.end(), [](const auto& a, const auto& b) {
        return a.bits_per_element() > b.bits_per_element();
    });
    return types;
}

StorageType find_type(const std::vector<StorageType>& types, std::string_view name,
                      std::string_view flag) {
    const std::string wanted = lower(name);
    for (const auto& type : types) {
        if (type.name == wanted) return type;
    }
    util::fail("unknown {} '{}'; valid: {}", flag, name, storage_type_names(types));
}

}  // namespace

uint64_t StorageType::bytes_for(uint64_t n_elements) const {
    const auto per_block = static_cast<uint64_t>(block_elements);
    const uint64_t n_blocks = (n_elements + per_block - 1) / per_block;
    return n_blocks * static_cast<uint64_t>(block_bytes);
}

StorageType storage_type(DType dtype) {
    const tensor::DTypeTraits traits = tensor::dtype_traits(dtype);
    return StorageType{lower(traits.name), traits.block_elements, traits.block_bytes};
}

const std::vector<StorageType>& weight_storage_types() {
    // Q8_1 and Q8_K are activation formats ggml never stores weights in.
    static const std::vector<StorageType> types = sorted_largest_first({
        storage_type(DType::F32),
        storage_type(DType::F16),
        storage_type(DType::BF16),
        storage_type(DType::Q8_0),
        fp8_type(),
        storage_type(DType::Q6_K),
        storage_type(DType::Q5_1),
        storage_type(DType::Q5_0),
        storage_type(DType::Q5_K),
        storage_type(DType::Q4_1),
        storage_type(DType::Q4_0),
        storage_type(DType::Q4_K),
        storage_type(DType::Q3_K),
        storage_type(DType::Q2_K),
    });
    return types;
}

const std::vector<StorageType>& kv_storage_types() {
    static const std::vector<StorageType> types = sorted_largest_first({
        storage_type(DType::F32),
        storage_type(DType::F16),
        storage_type(DType::BF16),
        storage_type(DType::Q8_0),
        fp8_type(),
        storage_type(DType::Q5_1),
        storage_type(DType::Q5_0),
        storage_type(DType::Q4_1),
        storage_type(DType::Q4_0),
    });
    return types;
}

StorageType parse_weight_type(std::string_view name) {
    return find_type(weight_storage_types(), name, "--weights-dtype");
}

StorageType parse_kv_type(std::string_view name) {
    return find_type(kv_storage_types(), name, "--kv-dtype");
}

std::string storage_type_names(const std::vector<StorageType>& types) {
    std::string out;
    for (const auto& type : types) {
        if (!out.empty()) out += ", ";
        out += type.name;
    }
    return out;
}

}  // namespace ladder::tools
