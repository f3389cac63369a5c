// Whether stored tensor data holds only finite numbers: every value of the
// float types, every fp16 scale of the quantized ones (what ggml's
// ggml_validate_row_data checks). A NaN or inf there would spread into every
// output it touches, so quantize refuses such input and such output.
#pragma once

#include <cstdint>
#include <optional>

#include "ladder/tensor/dtype.h"

namespace ladder::tensor {

// Index of the first element (plain types) or block (quantized types) of the
// n_bytes at data that is not finite; nullopt when all are. Integer types are
// always valid. n_bytes must be whole elements or blocks of dtype (checked).
std::optional<int64_t> first_non_finite(DType dtype, const void* data, uint64_t n_bytes);

}  // namespace ladder::tensor
