#include "ladder/model/weights.h"

#include <fmt/ranges.h>

#include "ladder/gguf/gguf_file.h"
#include "ladder/tensor/reference_ops.h"
#include "ladder/util/error.h"

namespace ladder::model {

namespace {

const gguf::TensorInfo& require_tensor(const gguf::GgufFile& file, const std::string& name) {
    const gguf::TensorInfo* info = file.find_tensor(name);
    if (info == nullptr) util::fail("{}: tensor '{}' is missing", file.name(), name);
    return *info;
}

}  // namespace

bool WeightLoader::has(const std::string& name) const { return file_.find_tensor(name) != nullptr; }

WeightMatrix WeightLoader::matrix(const std::string& name, int64_t n_out, int64_t n_in) const {
    const gguf::TensorInfo& info = require_tensor(file_, name);
    if (info.shape.size() != 2 || info.shape[0] != n_in || info.shape[1] != n_out) {
        util::fail("{}: tensor '{}' has shape [{}], expected [{}, {}]", file_.name(), name,
                   fmt::join(info.shape, ", "), n_in, n_out);
    }
    if (!tensor::row_bytes(info.dtype, n_in)) {
        util::fail("{}: tensor '{}' rows of {} are not whole {} blocks", file_.name(), name, n_in,
                   tensor::dtype_name(info.dtype));
    }
    if (!tensor::can_vec_dot(info.dtype)) {
        util::fail("{}: tensor '{}' has type {}, which ladder cannot multiply", file_.name(), name,
                   tensor::dtype_name(info.dtype));
    }
    return kernels::cpu::make_weight_matrix(info.dtype, file_.tensor_data(info).data(), n_out, n_in);
}

const float* WeightLoader::vector(const std::string& name, int64_t n) const {
    const gguf::TensorInfo& info = require_tensor(file_, name);
    if (info.dtype != tensor::DType::F32 || info.n_elements != n) {
        util::fail("{}: tensor '{}' must be F32 with {} elements, found {} with {}", file_.name(),
                   name, n, tensor::dtype_name(info.dtype), info.n_elements);
    }
    // GGUF data offsets are aligned (>= 4 bytes, validated at open), so the
    // view is a properly aligned float array.
    return reinterpret_cast<const float*>(file_.tensor_data(info).data());
}

}  // namespace ladder::model
