// The roofline of decode on this machine: a step is bound by memory (weights
// once, plus every sequence's KV) or by arithmetic (every sequence's ops),
// whichever takes longer. Pure arithmetic on measured or given machine figures.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "ladder/tools/decode_traffic.h"
#include "ladder/tools/kernel_peak.h"
#include "ladder/tools/model_traffic.h"

namespace ladder::tools {

struct MachineCeilings {
    double bandwidth_bytes_per_second = 0;  // memory read bandwidth
    double peak_ops_per_second = 0;         // the matmul kernel's peak

    // Ops per byte above which arithmetic, not memory, bounds the work.
    double ridge_ops_per_byte() const { return peak_ops_per_second / bandwidth_bytes_per_second; }
};

// The peak of a model's own mix of matrix types: its matmul ops over the time
// each type's share takes at that type's peak, so a model whose output matrix
// is Q8_0 and whose layers are Q5_0 is not judged by either kernel alone.
// output_runs_per_token: 1 in decode, 1 / n_prompt in prefill (logits of the
// last prompt token only). Every type of the model must have a peak (checked).
double mixed_peak_ops_per_second(const ModelTraffic& traffic, std::span<const KernelPeak> peaks,
                                 double output_runs_per_token);

// tokens/s when each token must read bytes_per_token (decode at batch 1).
double memory_ceiling_tokens_per_second(double bytes_per_token, double bandwidth_bytes_per_second);
// tokens/s when each token must compute ops_per_token (prefill).
double compute_ceiling_tokens_per_second(double ops_per_token, double peak_ops_per_second);

struct RooflinePoint {
    int64_t batch = 0;        // sequences decoding one token each per step
    double ops_per_byte = 0;  // arithmetic intensity of the step
    bool compute_bound = false;
    double tokens_per_second = 0;               // all sequences together
    double tokens_per_second_per_sequence = 0;  // what one user sees
};

RooflinePoint roofline_point(const DecodeTraffic& traffic, const MachineCeilings& machine,
                             int64_t batch);

// The smallest batch whose step is compute-bound; nullopt when it never is
// (each sequence's KV reads cost more time than its ops save).
std::optional<int64_t> knee_batch(const DecodeTraffic& traffic, const MachineCeilings& machine);

}  // namespace ladder::tools
