#include "ladder/tensor/row_validation.h"

#include <cmath>
#include <cstddef>
#include <cstring>

#include "ladder/tensor/quant_blocks.h"
#include "ladder/util/check.h"

namespace ladder::tensor {

namespace {

bool half_is_finite(uint16_t h) { return (h & 0x7c00u) != 0x7c00u; }
bool bfloat_is_finite(uint16_t h) { return (h & 0x7f80u) != 0x7f80u; }

template <typename T>
T load(const uint8_t* p) {
    T value;
    std::memcpy(&value, p, sizeof value);
    return value;
}

// Byte offsets of the fp16 scales inside one block.
struct ScaleFields {
    int first;
    int second;  // -1 when the block has one scale
};

std::optional<ScaleFields> scale_fields(DType dtype) {
    switch (dtype) {
        case DType::Q4_0:
            return ScaleFields{offsetof(BlockQ4_0, d), -1};
        case DType::Q5_0:
            return ScaleFields{offsetof(BlockQ5_0, d), -1};
        case DType::Q8_0:
            return ScaleFields{offsetof(BlockQ8_0, d), -1};
        case DType::Q4_1:
            return ScaleFields{offsetof(BlockQ4_1, d), offsetof(BlockQ4_1, m)};
        case DType::Q5_1:
            return ScaleFields{offsetof(BlockQ5_1, d), offsetof(BlockQ5_1, m)};
        case DType::Q8_1:
            return ScaleFields{offsetof(BlockQ8_1, d), offsetof(BlockQ8_1, s)};
        case DType::Q2_K:
            return ScaleFields{offsetof(BlockQ2_K, d), offsetof(BlockQ2_K, dmin)};
        case DType::Q3_K:
            return ScaleFields{offsetof(BlockQ3_K, d), -1};
        case DType::Q4_K:
            return ScaleFields{offsetof(BlockQ4_K, d), offsetof(BlockQ4_K, dmin)};
        case DType::Q5_K:
            return ScaleFields{offsetof(BlockQ5_K, d), offsetof(BlockQ5_K, dmin)};
        case DType::Q6_K:
            return ScaleFields{offsetof(BlockQ6_K, d), -1};
        default:
            return std::nullopt;
    }
}

template <typename IsFinite>
std::optional<int64_t> first_failing(const uint8_t* bytes, int64_t n, uint64_t stride,
                                     IsFinite is_finite) {
    for (int64_t i = 0; i < n; ++i) {
        if (!is_finite(bytes + static_cast<uint64_t>(i) * stride)) return i;
    }
    return std::nullopt;
}

}  // namespace

std::optional<int64_t> first_non_finite(DType dtype, const void* data, uint64_t n_bytes) {
    const auto block_bytes = static_cast<uint64_t>(dtype_traits(dtype).block_bytes);
    LADDER_CHECK(n_bytes % block_bytes == 0, "validation of a partial element or block");
    const auto* bytes = static_cast<const uint8_t*>(data);
    const auto n = static_cast<int64_t>(n_bytes / block_bytes);
    switch (dtype) {
        case DType::F32:
        case DType::Q8_K:  // its d is a float at offset 0
            return first_failing(bytes, n, block_bytes,
                                 [](const uint8_t* p) { return std::isfinite(load<float>(p)); });
        case DType::F64:
            return first_failing(bytes, n, block_bytes,
                                 [](const uint8_t* p) { return std::isfinite(load<double>(p)); });
        case DType::F16:
            return first_failing(bytes, n, block_bytes, [](const uint8_t* p) {
                return half_is_finite(load<uint16_t>(p));
            });
        case DType::BF16:
            return first_failing(bytes, n, block_bytes, [](const uint8_t* p) {
                return bfloat_is_finite(load<uint16_t>(p));
            });
        default:
            break;
    }
    const auto fields = scale_fields(dtype);
    if (!fields) return std::nullopt;  // integer types
    return first_failing(bytes, n, block_bytes, [f = *fields](const uint8_t* p) {
        return half_is_finite(load<uint16_t>(p + f.first)) &&
               (f.second < 0 || half_is_finite(load<uint16_t>(p + f.second)));
    });
}

}  // namespace ladder::tensor
