#include "ladder/tensor/dtype.h"

#include <array>

#include "ladder/tensor/quant_blocks.h"
#include "ladder/util/check.h"

namespace ladder::tensor {

namespace {

// Block sizes follow ggml's block_* structs (ggml-common.h).
constexpr std::array kTraits = {
    DTypeTraits{DType::F32, "F32", 1, 4, false},
    DTypeTraits{DType::F16, "F16", 1, 2, false},
    DTypeTraits{DType::Q4_0, "Q4_0", kQK, 2 + kQK / 2, true},
    DTypeTraits{DType::Q4_1, "Q4_1", kQK, 4 + kQK / 2, true},
    DTypeTraits{DType::Q5_0, "Q5_0", kQK, 2 + 4 + kQK / 2, true},
    DTypeTraits{DType::Q5_1, "Q5_1", kQK, 4 + 4 + kQK / 2, true},
    DTypeTraits{DType::Q8_0, "Q8_0", kQK, 2 + kQK, true},
    DTypeTraits{DType::Q8_1, "Q8_1", kQK, 4 + kQK, true},
    DTypeTraits{DType::Q2_K, "Q2_K", kQKK, kQKK / 16 + kQKK / 4 + 2 + 2, true},
    DTypeTraits{DType::Q3_K, "Q3_K", kQKK, kQKK / 8 + kQKK / 4 + 12 + 2, true},
    DTypeTraits{DType::Q4_K, "Q4_K", kQKK, 2 + 2 + 12 + kQKK / 2, true},
    DTypeTraits{DType::Q5_K, "Q5_K", kQKK, 2 + 2 + 12 + kQKK / 8 + kQKK / 2, true},
    DTypeTraits{DType::Q6_K, "Q6_K", kQKK, kQKK / 2 + kQKK / 4 + kQKK / 16 + 2, true},
    DTypeTraits{DType::Q8_K, "Q8_K", kQKK, 4 + kQKK + kQKK / 16 * 2, true},
    DTypeTraits{DType::I8, "I8", 1, 1, false},
    DTypeTraits{DType::I16, "I16", 1, 2, false},
    DTypeTraits{DType::I32, "I32", 1, 4, false},
    DTypeTraits{DType::I64, "I64", 1, 8, false},
    DTypeTraits{DType::F64, "F64", 1, 8, false},
    DTypeTraits{DType::BF16, "BF16", 1, 2, false},
};

}  // namespace

std::optional<DTypeTraits> dtype_traits(uint32_t type_id) {
    for (const auto& traits : kTraits) {
        if (static_cast<uint32_t>(traits.dtype) == type_id) return traits;
    }
    return std::nullopt;
}

DTypeTraits dtype_traits(DType dtype) {
    const auto traits = dtype_traits(static_cast<uint32_t>(dtype));
    LADDER_CHECK(traits.has_value(), "DType value outside the traits table");
    return *traits;
}

std::string_view dtype_name(DType dtype) { return dtype_traits(dtype).name; }

std::optional<uint64_t> row_bytes(DType dtype, int64_t n_elements) {
    const DTypeTraits traits = dtype_traits(dtype);
    if (n_elements < 0 || n_elements % traits.block_elements != 0) return std::nullopt;
    return static_cast<uint64_t>(n_elements / traits.block_elements) *
           static_cast<uint64_t>(traits.block_bytes);
}

DType vec_dot_type(DType weight_type) {
    switch (weight_type) {
        case DType::Q4_0:
        case DType::Q5_0:
        case DType::Q8_0:
            return DType::Q8_0;
        case DType::Q4_1:
        case DType::Q5_1:
            return DType::Q8_1;
        case DType::Q2_K:
        case DType::Q3_K:
        case DType::Q4_K:
        case DType::Q5_K:
        case DType::Q6_K:
            return DType::Q8_K;
        default:
            return weight_type;
    }
}

}  // namespace ladder::tensor
