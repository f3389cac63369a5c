#include "ladder/tools/quantize_model.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <optional>
#include <vector>

#include "ladder/gguf/gguf_writer.h"
#include "ladder/tensor/reference_ops.h"
#include "ladder/tensor/row_validation.h"
#include "ladder/util/error.h"
#include "ladder/util/thread_pool.h"
#include "ladder/util/timer.h"

namespace ladder::tools {

namespace {

using tensor::DType;

// A task converts at least this many elements (whole rows): enough to amortize
// the hand-out, small enough to keep every thread busy on small tensors.
constexpr int64_t kMinTaskElements = 32 * 512;
// Rows are converted and written this many output bytes at a time, so memory
// stays bounded however large a tensor is.
constexpr uint64_t kSlabBytes = uint64_t{64} << 20;

std::string non_finite_message(const std::string& tensor, std::string_view what, int64_t at) {
    return fmt::format("tensor '{}' {} a NaN or infinity (element or block {})", tensor, what, at);
}

// The first error a parallel region meets, by task index so the message does
// not depend on thread timing.
class FirstError {
public:
    void record(int64_t task, std::string message) {
        const std::lock_guard lock(mutex_);
        if (!message_ || task < task_) {
            task_ = task;
            message_ = std::move(message);
        }
    }
    void throw_if_any() const {
        if (message_) throw util::InputError(*message_);
    }

private:
    std::mutex mutex_;
    int64_t task_ = 0;
    std::optional<std::string> message_;
};

// Converts rows of one tensor from its input type to its planned type.
class RowConverter {
public:
    explicit RowConverter(const PlannedTensor& t)
        : t_(t),
          n_per_row_(t.input->shape[0]),
          src_row_bytes_(*tensor::row_bytes(t.input->dtype, n_per_row_)),
          dst_row_bytes_(*tensor::row_bytes(t.type, n_per_row_)) {}

    uint64_t dst_row_bytes() const { return dst_row_bytes_; }

    // Rows [0, n_rows) of src (the tensor's bytes from the slab's first row)
    // into dst, on the pool.
    void convert(const uint8_t* src, uint8_t* dst, int64_t n_rows, int64_t first_row,
                 util::ThreadPool& pool) const {
        const int64_t rows_per_task =
            std::max<int64_t>(1, (kMinTaskElements + n_per_row_ - 1) / n_per_row_);
        const int64_t n_tasks = (n_rows + rows_per_task - 1) / rows_per_task;
        FirstError error;
        pool.parallel_for(n_tasks, [&](int64_t task) {
            const int64_t begin = task * rows_per_task;
            const int64_t rows = std::min(rows_per_task, n_rows - begin);
            if (auto message =
                    convert_task(src + begin * src_row_bytes_, dst + begin * dst_row_bytes_, rows,
                                 first_row + begin)) {
                error.record(task, std::move(*message));
            }
        });
        error.throw_if_any();
    }

private:
    // Returns an error message, or nothing.
    std::optional<std::string> convert_task(const uint8_t* src, uint8_t* dst, int64_t rows,
                                            int64_t first_row) const {
        const DType from = t_.input->dtype;
        const uint64_t src_bytes = static_cast<uint64_t>(rows) * src_row_bytes_;
        const int64_t n = rows * n_per_row_;
        const auto row_element = [&](int64_t index, DType dtype) {
            const int64_t per_row = n_per_row_ / tensor::dtype_traits(dtype).block_elements;
            return first_row * per_row + index;
        };
        if (const auto bad = tensor::first_non_finite(from, src, src_bytes)) {
            return non_finite_message(t_.input->name, "holds", row_element(*bad, from));
        }
        // Reference rows want their block's alignment; GGUF data has it unless
        // the file chose an alignment below 4.
        std::vector<uint8_t> aligned_src;
        if (reinterpret_cast<uintptr_t>(src) % alignof(float) != 0) {
            aligned_src.assign(src, src + src_bytes);
            src = aligned_src.data();
        }
        std::vector<float> floats;
        const float* values = reinterpret_cast<const float*>(src);
        if (from != DType::F32) {
            floats.resize(static_cast<size_t>(n));
            tensor::dequantize_row(from, src, floats.data(), n);
            values = floats.data();
        }
        // Blocks never cross rows, so the rows are one long row to the encoder.
        tensor::quantize_row(t_.type, values, dst, n);
        const uint64_t dst_bytes = static_cast<uint64_t>(rows) * dst_row_bytes_;
        if (const auto bad = tensor::first_non_finite(t_.type, dst, dst_bytes)) {
            return non_finite_message(t_.input->name,
                                      fmt::format("as {} gets", tensor::dtype_name(t_.type)),
                                      row_element(*bad, t_.type));
        }
        return std::nullopt;
    }

    const PlannedTensor& t_;
    int64_t n_per_row_;
    uint64_t src_row_bytes_;
    uint64_t dst_row_bytes_;
};

gguf::GgufWriter output_layout(const QuantizePlan& plan) {
    gguf::GgufWriter writer;
    for (const auto& [key, value] : plan.metadata) writer.set(key, value);
    for (const PlannedTensor& t : plan.tensors) {
        writer.declare_tensor(t.input->name, t.type, t.shape);
    }
    return writer;
}

std::string fallback_warning(const PlannedTensor& t) {
    const DType wanted = *t.fell_back_from;
    return fmt::format("{}: rows of {} are not a multiple of {} ({}): falling back to {}",
                       t.input->name, t.input->shape[0],
                       tensor::dtype_traits(wanted).block_elements, tensor::dtype_name(wanted),
                       tensor::dtype_name(t.type));
}

class ModelWriter {
public:
    ModelWriter(const gguf::GgufFile& input, const QuantizePlan& plan, util::ThreadPool& pool,
                const QuantizeCallbacks& callbacks)
        : input_(input), plan_(plan), pool_(pool), callbacks_(callbacks) {
        for (const PlannedTensor& t : plan.tensors) {
            progress_.n_elements += static_cast<uint64_t>(t.input->n_elements);
        }
        progress_.n_tensors = plan.tensors.size();
    }

    void write_tensor(size_t index, const gguf::GgufWriter::TensorSink& sink) {
        const PlannedTensor& t = plan_.tensors[index];
        progress_.tensor = t.input->name;
        report();
        const std::span<const uint8_t> data = input_.tensor_data(*t.input);
        if (t.converted()) {
            write_converted(t, data, sink);
        } else {
            write_copied(t, data, sink);
        }
        progress_.n_tensors_done = index + 1;
        report();
    }

private:
    void report() {
        if (callbacks_.progress) callbacks_.progress(progress_);
    }

    // A tensor kept in its type: its bytes as they are, checked as llama.cpp
    // checks what it loads.
    void write_copied(const PlannedTensor& t, std::span<const uint8_t> data,
                      const gguf::GgufWriter::TensorSink& sink) {
        const uint64_t row_bytes = *tensor::row_bytes(t.type, t.input->shape[0]);
        const uint64_t slab =
            std::max(row_bytes, kSlabBytes / std::max<uint64_t>(row_bytes, 1) * row_bytes);
        for (uint64_t offset = 0; offset < data.size(); offset += slab) {
            const auto piece = data.subspan(offset, std::min<uint64_t>(slab, data.size() - offset));
            if (const auto bad = tensor::first_non_finite(t.type, piece.data(), piece.size())) {
                const auto per_row =
                    t.input->shape[0] / tensor::dtype_traits(t.type).block_elements;
                const auto at = static_cast<int64_t>(offset / row_bytes) * per_row + *bad;
                throw util::InputError(non_finite_message(t.input->name, "holds", at));
            }
            sink(piece);
            progress_.n_elements_done += piece.size() * static_cast<uint64_t>(t.input->n_elements) /
                                         std::max<uint64_t>(data.size(), 1);
            report();
        }
    }

    void write_converted(const PlannedTensor& t, std::span<const uint8_t> data,
                         const gguf::GgufWriter::TensorSink& sink) {
        const RowConverter converter(t);
        const int64_t n_per_row = t.input->shape[0];
        const int64_t n_rows = n_per_row == 0 ? 0 : t.input->n_elements / n_per_row;
        const uint64_t src_row_bytes = *tensor::row_bytes(t.input->dtype, n_per_row);
        const int64_t slab_rows = std::max<int64_t>(
            1, static_cast<int64_t>(kSlabBytes / std::max<uint64_t>(converter.dst_row_bytes(), 1)));
        out_.resize(static_cast<size_t>(std::min(slab_rows, n_rows)) * converter.dst_row_bytes());
        for (int64_t row = 0; row < n_rows; row += slab_rows) {
            const int64_t rows = std::min(slab_rows, n_rows - row);
            converter.convert(data.data() + static_cast<uint64_t>(row) * src_row_bytes, out_.data(),
                              rows, row, pool_);
            sink(std::span<const uint8_t>(out_.data(),
                                          static_cast<size_t>(rows) * converter.dst_row_bytes()));
            progress_.n_elements_done += static_cast<uint64_t>(rows * n_per_row);
            report();
        }
    }

    const gguf::GgufFile& input_;
    const QuantizePlan& plan_;
    util::ThreadPool& pool_;
    const QuantizeCallbacks& callbacks_;
    QuantizeProgress progress_;
    std::vector<uint8_t> out_;  // one slab of converted rows
};

void refuse_same_file(const std::string& input_path, const std::string& output_path) {
    std::error_code error;
    if (std::filesystem::equivalent(input_path, output_path, error)) {
        util::fail("the output '{}' is the input file", output_path);
    }
}

}  // namespace

QuantizeSummary quantize_model(const std::string& input_path, const std::string& output_path,
                               const QuantizeOptions& options, util::ThreadPool& pool,
                               const QuantizeCallbacks& callbacks) {
    const double start = util::now_seconds();
    refuse_same_file(input_path, output_path);
    const auto input = gguf::GgufFile::open(input_path);
    const QuantizePlan plan = plan_quantization(*input, options);
    const auto warn = [&](const std::string& line) {
        if (callbacks.warn) callbacks.warn(line);
    };
    for (const DType from : plan.requantized_from) {
        warn(
            fmt::format("requantizing {} tensors: the result is worse than quantizing from "
                        "the 16- or 32-bit weights",
                        tensor::dtype_name(from)));
    }

    QuantizeSummary summary;
    summary.n_tensors = plan.tensors.size();
    summary.input_file_bytes = input->bytes().size();
    const gguf::GgufWriter layout = output_layout(plan);
    for (size_t i = 0; i < plan.tensors.size(); ++i) {
        const PlannedTensor& t = plan.tensors[i];
        summary.n_elements += static_cast<uint64_t>(t.input->n_elements);
        summary.input_tensor_bytes += t.input->size_bytes;
        summary.output_tensor_bytes += layout.tensor_size_bytes(i);
        summary.n_converted += t.converted() ? 1 : 0;
        if (t.fell_back_from) summary.fallbacks.push_back(fallback_warning(t));
    }

    ModelWriter writer(*input, plan, pool, callbacks);
    layout.write_file(output_path, [&](size_t index, const gguf::GgufWriter::TensorSink& sink) {
        writer.write_tensor(index, sink);
    });
    summary.output_file_bytes = std::filesystem::file_size(output_path);
    summary.seconds = util::now_seconds() - start;
    return summary;
}

}  // namespace ladder::tools
