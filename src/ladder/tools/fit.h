// `ladder fit`'s arithmetic: weight bytes against device memory, what is left
// for the KV cache, how many sequences of a context fit in it, and what would
// fit when the model does not. Pure functions of a FitModel and a request.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ladder/tools/fit_model.h"
#include "ladder/tools/storage_type.h"

namespace ladder::tools {

inline constexpr uint64_t kGiB = uint64_t{1} << 30;

struct FitRequest {
    std::string device_name;           // for messages: "h100-80g"
    uint64_t device_memory_bytes = 0;  // per device
    int32_t n_devices = 1;             // tensor parallel: weights and KV heads split
    // Fraction of each device's memory the engine may take, as vLLM's
    // --gpu-memory-utilization (default 0.9 there and here).
    double memory_utilization = 0.9;
    // Per device, inside that fraction: activations, CUDA context, buffers.
    uint64_t reserve_bytes = kGiB;
    int64_t context = 0;      // tokens per sequence; 0: the model's trained context
    int64_t concurrency = 1;  // sequences that must fit at once
    StorageType kv_type{"f16", 1, 2};
};

struct FitPlan {
    int64_t context = 0;         // the context planned for
    uint64_t weights_bytes = 0;  // whole model
    uint64_t weights_bytes_per_device = 0;
    // K and V of one token over every layer: 2 × layers × kv_heads × head_dim
    // × bytes (K and V lengths may differ; per-layer head counts are summed).
    uint64_t kv_bytes_per_token = 0;
    // One sequence at `context`, over all devices: sliding-window layers hold
    // at most `window` tokens; KV heads are replicated when the devices
    // outnumber them, as vLLM does.
    uint64_t kv_bytes_per_sequence = 0;
    uint64_t memory_bytes = 0;             // all devices
    uint64_t usable_bytes = 0;             // all devices, after utilization and reserve
    uint64_t kv_budget_bytes = 0;          // usable minus weights, all devices; 0 when short
    uint64_t shortfall_bytes = 0;          // how far weights exceed usable memory
    int64_t max_concurrent_sequences = 0;  // of `context` tokens each
    // Largest context at which `concurrency` sequences fit; nullopt when no
    // layer's cache grows past the window (every layer sliding).
    std::optional<int64_t> max_context;
    bool weights_fit = false;
    bool fits = false;  // weights fit and `concurrency` sequences of `context` do too
};

// Throws util::InputError for requests that make no sense (no memory, zero
// devices, a device count that does not divide the query heads, utilization
// outside (0, 1], a KV row that is not a whole number of blocks).
FitPlan plan_fit(const FitModel& model, const FitRequest& request);

// Flags that would make a model fit that does not: more devices with tensor
// parallelism, a smaller weight dtype, a smaller KV dtype, a shorter context
// or fewer sequences. Each entry is a flag and a reason: {"--tp 2", "..."}.
struct FitSuggestion {
    std::string flag;
    std::string reason;
};
std::vector<FitSuggestion> suggest_fits(const FitModel& model, const FitRequest& request,
                                        const FitPlan& plan);

}  // namespace ladder::tools
