// Memory arithmetic for `ladder fit`. Everything is computed per device (each
// holds 1/n of the weights and of the KV heads, as tensor parallelism splits
// them) and reported for the whole group, so one formula serves 1 or 8 GPUs.
#include "ladder/tools/fit.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "ladder/util/error.h"

namespace ladder::tools {

namespace {

constexpr int32_t kMaxDevices = 4096;
constexpr int32_t kMaxSuggestedDevices = 64;

uint64_t ceil_div(uint64_t a, uint64_t b) {
    return (a + b - 1) / b;
}

// Sizes come from files and flags; a product past 64 bits is bad input, not
// a number to wrap (a wrapped zero would then be divided by).
uint64_t checked_mul(uint64_t a, uint64_t b) {
    uint64_t out = 0;
    if (__builtin_mul_overflow(a, b, &out)) {
        util::fail("the KV cache size overflows 64 bits: check --context and the model's shape");
    }
    return out;
}

// Bytes one device adds to its cache per token, split by whether the layer
// keeps the whole context or only the window.
struct KvRate {
    uint64_t full_bytes = 0;     // per token, layers that keep every token
    uint64_t sliding_bytes = 0;  // per token, layers that keep the last `window`
};

uint64_t row_bytes(const StorageType& type, uint64_t n_elements) {
    if (n_elements % static_cast<uint64_t>(type.block_elements) != 0) {
        util::fail("--kv-dtype {} stores blocks of {} values, but this model's K/V rows have {}",
                   type.name, type.block_elements, n_elements);
    }
    return type.bytes_for(n_elements);
}

KvRate kv_rate_per_device(const FitModel& model, const StorageType& kv_type, int32_t n_devices) {
    KvRate rate;
    for (const auto& layer : model.layers) {
        if (layer.n_kv_heads == 0) continue;
        // vLLM replicates KV heads when devices outnumber them.
        const uint64_t heads =
            ceil_div(static_cast<uint64_t>(layer.n_kv_heads), static_cast<uint64_t>(n_devices));
        const uint64_t bytes =
            row_bytes(kv_type, heads * static_cast<uint64_t>(layer.key_length)) +
            (layer.value_length > 0
                 ? row_bytes(kv_type, heads * static_cast<uint64_t>(layer.value_length))
                 : 0);
        (layer.sliding ? rate.sliding_bytes : rate.full_bytes) += bytes;
    }
    return rate;
}

uint64_t sequence_bytes(const KvRate& rate, uint64_t window, uint64_t context) {
    const uint64_t full = checked_mul(rate.full_bytes, context);
    const uint64_t sliding = checked_mul(rate.sliding_bytes, std::min(context, window));
    if (full > UINT64_MAX - sliding) util::fail("the KV cache size overflows 64 bits");
    return full + sliding;
}

// Largest context whose sequence fits in budget bytes; nullopt when it never
// stops fitting (only sliding layers, and their window fits).
std::optional<int64_t> max_context_for(const KvRate& rate, uint64_t window, uint64_t budget) {
    const uint64_t all = rate.full_bytes + rate.sliding_bytes;
    if (checked_mul(all, window) >= budget) return static_cast<int64_t>(budget / all);
    if (rate.full_bytes == 0) return std::nullopt;
    return static_cast<int64_t>((budget - rate.sliding_bytes * window) / rate.full_bytes);
}

void validate(const FitModel& model, const FitRequest& request) {
    if (request.device_memory_bytes == 0) util::fail("device memory must be positive");
    if (request.n_devices < 1 || request.n_devices > kMaxDevices) {
        util::fail("--tp must be between 1 and {}, not {}", kMaxDevices, request.n_devices);
    }
    if (model.n_heads > 0 && model.n_heads % request.n_devices != 0) {
        util::fail("--tp {} does not divide the model's {} attention heads", request.n_devices,
                   model.n_heads);
    }
    if (!(request.memory_utilization > 0.0 && request.memory_utilization <= 1.0)) {
        util::fail("--gpu-memory-utilization must be in (0, 1], not {}",
                   request.memory_utilization);
    }
    if (request.concurrency < 1)
        util::fail("--concurrency must be at least 1, not {}", request.concurrency);
    if (request.context < 0) util::fail("--context must be positive, not {}", request.context);
    if (request.context == 0 && model.context_length <= 0) {
        util::fail("{} does not state its trained context: pass --context", model.source);
    }
}

}  // namespace

FitPlan plan_fit(const FitModel& model, const FitRequest& request) {
    validate(model, request);
    const auto n_devices = static_cast<uint64_t>(request.n_devices);
    const KvRate rate = kv_rate_per_device(model, request.kv_type, request.n_devices);
    if (rate.full_bytes + rate.sliding_bytes == 0) {
        util::fail("{} has no attention layer with a KV cache", model.source);
    }
    const auto window = static_cast<uint64_t>(std::max(model.sliding_window, 0));

    FitPlan plan;
    plan.context = request.context > 0 ? request.context : model.context_length;
    const auto context = static_cast<uint64_t>(plan.context);
    plan.weights_bytes = model.weights_bytes;
    plan.weights_bytes_per_device = ceil_div(model.weights_bytes, n_devices);
    const KvRate whole_model = kv_rate_per_device(model, request.kv_type, 1);
    plan.kv_bytes_per_token = whole_model.full_bytes + whole_model.sliding_bytes;
    const uint64_t sequence_per_device = sequence_bytes(rate, window, context);
    plan.kv_bytes_per_sequence = checked_mul(sequence_per_device, n_devices);

    const auto allowed = static_cast<uint64_t>(
        std::floor(static_cast<double>(request.device_memory_bytes) * request.memory_utilization));
    const uint64_t usable = allowed > request.reserve_bytes ? allowed - request.reserve_bytes : 0;
    plan.memory_bytes = checked_mul(request.device_memory_bytes, n_devices);
    plan.usable_bytes = usable * n_devices;
    plan.weights_fit = plan.weights_bytes_per_device <= usable;
    if (!plan.weights_fit) {
        plan.shortfall_bytes = (plan.weights_bytes_per_device - usable) * n_devices;
        plan.max_context = 0;
        return plan;
    }
    const uint64_t budget = usable - plan.weights_bytes_per_device;
    plan.kv_budget_bytes = budget * n_devices;
    plan.max_concurrent_sequences = static_cast<int64_t>(budget / sequence_per_device);
    plan.max_context =
        max_context_for(rate, window, budget / static_cast<uint64_t>(request.concurrency));
    plan.fits = plan.max_concurrent_sequences >= request.concurrency;
    return plan;
}

std::vector<FitSuggestion> suggest_fits(const FitModel& model, const FitRequest& request,
                                        const FitPlan& plan) {
    std::vector<FitSuggestion> out;
    if (plan.fits) return out;

    // Tensor parallelism splits a model over GPUs, not over one machine's RAM.
    const int32_t max_devices = request.device_name == "cpu" ? 0 : kMaxSuggestedDevices;
    for (int32_t n = request.n_devices + 1; n <= max_devices; ++n) {
        if (model.n_heads > 0 && model.n_heads % n != 0) continue;
        FitRequest more = request;
        more.n_devices = n;
        if (plan_fit(model, more).fits) {
            out.push_back({fmt::format("--tp {}", n),
                           fmt::format("{} × {} with tensor parallelism", n, request.device_name)});
            break;
        }
    }

    const double weight_bits = model.n_params > 0 ? 8.0 * static_cast<double>(model.weights_bytes) /
                                                        static_cast<double>(model.n_params)
                                                  : 0.0;
    for (const char* name : {"q8_0", "fp8", "q6_k", "q5_k", "q4_k", "q3_k", "q2_k"}) {
        const StorageType type = parse_weight_type(name);
        if (type.bits_per_element() >= weight_bits - 1e-9) continue;
        if (plan_fit(with_weights_type(model, type), request).fits) {
            out.push_back({fmt::format("--weights-dtype {}", name),
                           fmt::format("{:.3g} bits per weight", type.bits_per_element())});
            break;
        }
    }

    if (!plan.weights_fit) return out;
    for (const char* name : {"q8_0", "q4_0"}) {
        FitRequest smaller = request;
        smaller.kv_type = parse_kv_type(name);
        if (smaller.kv_type.bits_per_element() >= request.kv_type.bits_per_element()) continue;
        if (plan_fit(model, smaller).fits) {
            out.push_back(
                {fmt::format("--kv-dtype {}", name),
                 fmt::format("{:.3g} bits per cached value", smaller.kv_type.bits_per_element())});
            break;
        }
    }
    if (plan.max_context && *plan.max_context >= 1 && *plan.max_context < plan.context) {
        out.push_back({fmt::format("--context {}", *plan.max_context),
                       fmt::format("the longest context for {} sequence{}", request.concurrency,
                                   request.concurrency == 1 ? "" : "s")});
    }
    if (plan.max_concurrent_sequences >= 1 && plan.max_concurrent_sequences < request.concurrency) {
        out.push_back({fmt::format("--concurrency {}", plan.max_concurrent_sequences),
                       fmt::format("the most sequences of {} tokens", plan.context)});
    }
    return out;
}

}  // namespace ladder::tools
