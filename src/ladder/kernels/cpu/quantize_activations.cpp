// Row-by-row activation quantization through the kernel table.
#include "ladder/kernels/cpu/quantize_activations.h"

#include "ladder/util/check.h"

namespace ladder::kernels::cpu {

size_t quantized_activations_bytes(tensor::DType dtype, int64_t n_rows, int64_t n_in) {
    const auto row_bytes = tensor::row_bytes(dtype, n_in);
    LADDER_CHECK(row_bytes.has_value(), "activation row is not a whole number of blocks");
    LADDER_CHECK(n_rows >= 0, "negative row count");
    return static_cast<size_t>(*row_bytes) * static_cast<size_t>(n_rows);
}

QuantizedActivations quantize_activations(const CpuKernels& kernels, tensor::DType dtype,
                                          const float* x, int64_t n_rows, int64_t n_in,
                                          void* buffer, size_t buffer_bytes) {
    const QuantizeRowFn quantize = kernels.quantize_row(dtype);
    LADDER_CHECK(quantize != nullptr, "no activation quantizer for this dtype");
    LADDER_CHECK(buffer_bytes >= quantized_activations_bytes(dtype, n_rows, n_in),
                 "activation buffer too small");
    QuantizedActivations out;
    out.dtype = dtype;
    out.data = buffer;
    out.n_rows = n_rows;
    out.n_in = n_in;
    out.row_bytes = static_cast<size_t>(*tensor::row_bytes(dtype, n_in));
    for (int64_t t = 0; t < n_rows; ++t) {
        quantize(x + t * n_in, static_cast<char*>(buffer) + static_cast<size_t>(t) * out.row_bytes,
                 n_in);
    }
    return out;
}

QuantizedActivations quantize_activations(tensor::DType dtype, const float* x, int64_t n_rows,
                                          int64_t n_in, void* buffer, size_t buffer_bytes) {
    return quantize_activations(cpu_kernels(), dtype, x, n_rows, n_in, buffer, buffer_bytes);
}

}  // namespace ladder::kernels::cpu
