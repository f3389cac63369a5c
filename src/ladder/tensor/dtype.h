// Element types of tensors as GGUF numbers them (ggml type ids), and the block
// layout facts every other module sizes buffers with. One table, one place.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace ladder::tensor {

enum class DType : uint32_t {
    F32 = 0,
    F16 = 1,
    Q4_0 = 2,
    Q4_1 = 3,
    Q5_0 = 6,
    Q5_1 = 7,
    Q8_0 = 8,
    Q8_1 = 9,
    Q2_K = 10,
    Q3_K = 11,
    Q4_K = 12,
    Q5_K = 13,
    Q6_K = 14,
    Q8_K = 15,
    I8 = 24,
    I16 = 25,
    I32 = 26,
    I64 = 27,
    F64 = 28,
    BF16 = 30,
};

struct DTypeTraits {
    DType dtype;
    std::string_view name;
    int64_t block_elements;  // elements per block (1 for plain types)
    int64_t block_bytes;     // bytes per block
    bool is_quantized;
};

// Traits for a raw type id read from a file; nullopt for ids ladder does not
// know (including ggml ids that were removed from the format).
std::optional<DTypeTraits> dtype_traits(uint32_t type_id);
DTypeTraits dtype_traits(DType dtype);
std::string_view dtype_name(DType dtype);

// Bytes of a row of n_elements, or nullopt when n_elements is not a whole
// number of blocks.
std::optional<uint64_t> row_bytes(DType dtype, int64_t n_elements);

// The type activations are quantized to before an integer dot product with
// weights of this type, as ggml pairs them (Q4_1 with Q8_1, K-quants with
// Q8_K, ...). Plain float types pair with themselves.
DType vec_dot_type(DType weight_type);

}  // namespace ladder::tensor
