// The file types `ladder quantize` makes, under llama-quantize's names, with
// the general.file_type number llama.cpp writes for each (its llama_ftype)
// and the type most tensors get. The mixes (_S, _M, _L) differ only in the
// per-tensor rules of quantize_rules.h.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "ladder/tensor/dtype.h"

namespace ladder::tools {

// llama.cpp's llama_ftype values (llama.h), the ones quantize makes.
enum class FileType : uint32_t {
    AllF32 = 0,
    MostlyF16 = 1,
    MostlyQ4_0 = 2,
    MostlyQ4_1 = 3,
    MostlyQ8_0 = 7,
    MostlyQ5_0 = 8,
    MostlyQ5_1 = 9,
    MostlyQ2_K = 10,
    MostlyQ3_K_S = 11,
    MostlyQ3_K_M = 12,
    MostlyQ3_K_L = 13,
    MostlyQ4_K_S = 14,
    MostlyQ4_K_M = 15,
    MostlyQ5_K_S = 16,
    MostlyQ5_K_M = 17,
    MostlyQ6_K = 18,
    MostlyBF16 = 32,
};

struct QuantizeType {
    std::string_view name;  // "Q4_K_M"
    FileType file_type;
    tensor::DType default_type;
};

// Every type, in llama-quantize's listing order.
std::span<const QuantizeType> quantize_types();
// By name, case-insensitive; "Q3_K", "Q4_K" and "Q5_K" are llama-quantize's
// aliases of the _M mixes.
std::optional<QuantizeType> find_quantize_type(std::string_view name);
// The tensor types --output-tensor-type and --token-embedding-type accept
// (ggml type names, case-insensitive): the ones ladder can encode.
std::optional<tensor::DType> find_tensor_type(std::string_view name);

}  // namespace ladder::tools
