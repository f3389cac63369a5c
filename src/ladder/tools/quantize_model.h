// `ladder quantize`: rewrites a GGUF model with its weights in another type.
// For the same input and type (no importance matrix) the output is
// byte-identical to llama-quantize's: metadata, tensor order, types,
// alignment and every quantized block. Tensors are converted on all threads,
// a slab of rows at a time, and written as they are made; the output appears
// only when it is complete (a failed run leaves nothing behind).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "ladder/tools/quantize_plan.h"

namespace ladder::util {
class ThreadPool;
}

namespace ladder::tools {

struct QuantizeProgress {
    size_t n_tensors_done = 0;
    size_t n_tensors = 0;
    uint64_t n_elements_done = 0;  // progress is weighed by elements
    uint64_t n_elements = 0;
    std::string_view tensor;  // the tensor being written
};

struct QuantizeSummary {
    size_t n_tensors = 0;
    size_t n_converted = 0;  // tensors whose type changed
    // Tensors whose rows did not fit the mix's type, one line each (which
    // tensor, its rows, the type wanted and the one it got).
    std::vector<std::string> fallbacks;
    uint64_t n_elements = 0;  // weights, all tensors
    uint64_t input_tensor_bytes = 0;
    uint64_t output_tensor_bytes = 0;
    uint64_t input_file_bytes = 0;
    uint64_t output_file_bytes = 0;
    double seconds = 0.0;

    double input_bits_per_weight() const { return bits_per_weight(input_tensor_bytes); }
    double output_bits_per_weight() const { return bits_per_weight(output_tensor_bytes); }

private:
    double bits_per_weight(uint64_t bytes) const {
        return n_elements == 0 ? 0.0
                               : 8.0 * static_cast<double>(bytes) / static_cast<double>(n_elements);
    }
};

struct QuantizeCallbacks {
    // Before any tensor is written: one line for each quantized type that
    // will be requantized.
    std::function<void(const std::string&)> warn;
    std::function<void(const QuantizeProgress&)> progress;
};

// Throws util::InputError with a one-line message for an input that cannot
// be quantized as asked, a NaN or infinity in a tensor (read or made), or an
// output that cannot be written.
QuantizeSummary quantize_model(const std::string& input_path, const std::string& output_path,
                               const QuantizeOptions& options, util::ThreadPool& pool,
                               const QuantizeCallbacks& callbacks);

}  // namespace ladder::tools
