// The element types weights and KV caches are stored in, as fit's arithmetic
// sizes them: ggml's block layouts from tensor/dtype.h, plus vLLM's fp8.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ladder/tensor/dtype.h"

namespace ladder::tools {

struct StorageType {
    std::string name;        // as a user types it: "bf16", "q4_k", "fp8"
    int64_t block_elements;  // elements per block (1 for plain types)
    int64_t block_bytes;     // bytes per block

    double bits_per_element() const {
        return 8.0 * static_cast<double>(block_bytes) / static_cast<double>(block_elements);
    }
    // Bytes of n_elements stored in this type, rounded up to whole blocks.
    uint64_t bytes_for(uint64_t n_elements) const;
};

// The lower-case name of a ggml type ("Q4_K" -> "q4_k") with its block layout.
StorageType storage_type(tensor::DType dtype);

// What --weights-dtype accepts, largest first: every float and quant type a
// GGUF file stores weights in, and fp8 (one byte per weight, as vLLM's fp8).
const std::vector<StorageType>& weight_storage_types();
// What --kv-dtype accepts, largest first: llama.cpp's cache types that
// ladder's dtype table knows (f32, f16, bf16, q8_0, q5_1, q5_0, q4_1, q4_0),
// and vLLM's fp8.
const std::vector<StorageType>& kv_storage_types();

// Look-ups by name (case-insensitive). Throw util::InputError listing the
// valid names when the name is unknown.
StorageType parse_weight_type(std::string_view name);
StorageType parse_kv_type(std::string_view name);

// "a, b, c": the names of types, for error messages and help text.
std::string storage_type_names(const std::vector<StorageType>& types);

}  // namespace ladder::tools
