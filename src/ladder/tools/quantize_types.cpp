#include "ladder/tools/quantize_types.h"

#include <array>
#include <cctype>

#include "ladder/tensor/reference_ops.h"

namespace ladder::tools {

namespace {

using tensor::DType;

constexpr std::array kTypes = {
    QuantizeType{"Q4_0", FileType::MostlyQ4_0, DType::Q4_0},
    QuantizeType{"Q4_1", FileType::MostlyQ4_1, DType::Q4_1},
    QuantizeType{"Q5_0", FileType::MostlyQ5_0, DType::Q5_0},
    QuantizeType{"Q5_1", FileType::MostlyQ5_1, DType::Q5_1},
    QuantizeType{"Q2_K", FileType::MostlyQ2_K, DType::Q2_K},
    QuantizeType{"Q3_K_S", FileType::MostlyQ3_K_S, DType::Q3_K},
    QuantizeType{"Q3_K_M", FileType::MostlyQ3_K_M, DType::Q3_K},
    QuantizeType{"Q3_K_L", FileType::MostlyQ3_K_L, DType::Q3_K},
    QuantizeType{"Q4_K_S", FileType::MostlyQ4_K_S, DType::Q4_K},
    QuantizeType{"Q4_K_M", FileType::MostlyQ4_K_M, DType::Q4_K},
    QuantizeType{"Q5_K_S", FileType::MostlyQ5_K_S, DType::Q5_K},
    QuantizeType{"Q5_K_M", FileType::MostlyQ5_K_M, DType::Q5_K},
    QuantizeType{"Q6_K", FileType::MostlyQ6_K, DType::Q6_K},
    QuantizeType{"Q8_0", FileType::MostlyQ8_0, DType::Q8_0},
    QuantizeType{"F16", FileType::MostlyF16, DType::F16},
    QuantizeType{"BF16", FileType::MostlyBF16, DType::BF16},
    QuantizeType{"F32", FileType::AllF32, DType::F32},
};

struct Alias {
    std::string_view name;
    std::string_view means;
};
constexpr std::array kAliases = {
    Alias{"Q3_K", "Q3_K_M"},
    Alias{"Q4_K", "Q4_K_M"},
    Alias{"Q5_K", "Q5_K_M"},
};

bool equals_ignoring_case(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
        if (std::toupper(static_cast<unsigned char>(a[i])) !=
            std::toupper(static_cast<unsigned char>(b[i]))) {
            return false;
        }
    }
    return true;
}

}  // namespace

std::span<const QuantizeType> quantize_types() { return kTypes; }

std::optional<QuantizeType> find_quantize_type(std::string_view name) {
    for (const Alias& alias : kAliases) {
        if (equals_ignoring_case(name, alias.name)) name = alias.means;
    }
    for (const QuantizeType& type : kTypes) {
        if (equals_ignoring_case(name, type.name)) return type;
    }
    return std::nullopt;
}

std::optional<tensor::DType> find_tensor_type(std::string_view name) {
    for (uint32_t id = 0; id < 64; ++id) {
        const auto traits = tensor::dtype_traits(id);
        if (!traits || !equals_ignoring_case(name, traits->name)) continue;
        // Q8_1 and Q8_K are activation types: ggml has no file type for them.
        const bool is_weight_type = traits->dtype != DType::Q8_1 && traits->dtype != DType::Q8_K;
        if (is_weight_type && tensor::can_quantize(traits->dtype)) return traits->dtype;
    }
    return std::nullopt;
}

}  // namespace ladder::tools
