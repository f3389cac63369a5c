#include "ladder/tools/roofline.h"

#include <algorithm>
#include <cmath>

#include "ladder/util/check.h"

namespace ladder::tools {

namespace {

// Past this the knee is not a batch any engine runs: report none.
constexpr double kLargestKnee = 1e12;

struct StepSeconds {
    double memory = 0;
    double compute = 0;
};

StepSeconds step_seconds(const DecodeTraffic& traffic, const MachineCeilings& machine,
                         int64_t batch) {
    const auto b = static_cast<double>(batch);
    return {(traffic.weight_bytes_per_step + b * traffic.kv_bytes_per_token) /
                machine.bandwidth_bytes_per_second,
            b * traffic.ops_per_token() / machine.peak_ops_per_second};
}

double peak_of(std::span<const KernelPeak> peaks, tensor::DType dtype) {
    for (const KernelPeak& peak : peaks) {
        if (peak.dtype == dtype) return peak.ops_per_second;
    }
    LADDER_CHECK(false, "every matrix type of the model needs a measured peak");
    return 0;
}

}  // namespace

double mixed_peak_ops_per_second(const ModelTraffic& traffic, std::span<const KernelPeak> peaks,
                                 double output_runs_per_token) {
    double ops = 0;
    double seconds = 0;
    const auto add = [&](tensor::DType dtype, double share_ops) {
        ops += share_ops;
        seconds += share_ops / peak_of(peaks, dtype);
    };
    for (const auto& [dtype, n_params] : traffic.layer_matmul_params_by_dtype) {
        add(dtype, 2.0 * static_cast<double>(n_params));
    }
    add(traffic.output_dtype,
        2.0 * static_cast<double>(traffic.output_matmul_params) * output_runs_per_token);
    return ops / seconds;
}

double memory_ceiling_tokens_per_second(double bytes_per_token, double bandwidth_bytes_per_second) {
    return bandwidth_bytes_per_second / bytes_per_token;
}

double compute_ceiling_tokens_per_second(double ops_per_token, double peak_ops_per_second) {
    return peak_ops_per_second / ops_per_token;
}

RooflinePoint roofline_point(const DecodeTraffic& traffic, const MachineCeilings& machine,
                             int64_t batch) {
    LADDER_CHECK(batch > 0, "a roofline batch must be positive");
    LADDER_CHECK(machine.bandwidth_bytes_per_second > 0 && machine.peak_ops_per_second > 0,
                 "machine ceilings must be positive");
    const auto b = static_cast<double>(batch);
    const StepSeconds seconds = step_seconds(traffic, machine, batch);
    RooflinePoint point;
    point.batch = batch;
    point.ops_per_byte = b * traffic.ops_per_token() /
                         (traffic.weight_bytes_per_step + b * traffic.kv_bytes_per_token);
    point.compute_bound = seconds.compute >= seconds.memory;
    const double step = point.compute_bound ? seconds.compute : seconds.memory;
    point.tokens_per_second = b / step;
    point.tokens_per_second_per_sequence = 1.0 / step;
    return point;
}

std::optional<int64_t> knee_batch(const DecodeTraffic& traffic, const MachineCeilings& machine) {
    // Compute-bound when b * ops / peak >= (weights + b * kv) / bandwidth, that
    // is b * (ops / peak - kv / bandwidth) >= weights / bandwidth.
    const double gain_per_sequence =
        traffic.ops_per_token() / machine.peak_ops_per_second -
        traffic.kv_bytes_per_token / machine.bandwidth_bytes_per_second;
    if (gain_per_sequence <= 0) return std::nullopt;
    const double knee =
        traffic.weight_bytes_per_step / machine.bandwidth_bytes_per_second / gain_per_sequence;
    if (!(knee < kLargestKnee)) return std::nullopt;
    // The closed form and roofline_point's comparison may round differently
    // at the boundary; the point's own verdict decides.
    auto batch = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(knee)));
    while (batch > 1 && roofline_point(traffic, machine, batch - 1).compute_bound) --batch;
    while (!roofline_point(traffic, machine, batch).compute_bound) ++batch;
    return batch;
}

}  // namespace ladder::tools
