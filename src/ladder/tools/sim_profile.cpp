#include "ladder/tools/sim_profile.h"

#include <fmt/format.h>
#include <array>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string_view>

#include "ladder/tools/model_presets.h"
#include "ladder/util/error.h"

namespace ladder::tools {

namespace {

// Published datasheet ceilings: HBM bandwidth and dense BF16 tensor FLOP/s
// (SXM parts, no sparsity). The H800 is the H100 with less NVLink, so its
// per-GPU ceilings are the H100's.
struct RooflineDevice {
    std::string_view name;
    double bandwidth_bytes_per_s;
    double flops;
    uint64_t memory_mib;
};

constexpr std::array kDevices = {
    RooflineDevice{"h200-141g", 4.8e12, 989e12, 143771},
    RooflineDevice{"h100-80g", 3.35e12, 989e12, 81559},
    RooflineDevice{"h800-80g", 3.35e12, 989e12, 81559},
    RooflineDevice{"a100-80g", 2.039e12, 312e12, 81920},
    RooflineDevice{"a100-40g", 1.555e12, 312e12, 40960},
};

// What the roofline needs of a model: the weights read once a step, the
// parameters each token multiplies through, the KV a token keeps and the
// attention FLOPs a row spends on one position.
struct RooflineModel {
    double n_weights = 0.0;
    double n_active = 0.0;
    double kv_bytes_per_token = 0.0;
    double attention_flops = 0.0;
};

// Large mixture-of-experts models, which ladder fit's dense presets cannot
// describe. A step is charged every expert's weights: a batch of hundreds of
// tokens, each routed to 8 of 256 experts, touches nearly all of them (an
// over-estimate for small batches).
struct MoeModel {
    std::string_view name;
    RooflineModel shape;
};

// DeepSeek-V3 (deepseek-ai/DeepSeek-V3, config.json): 671e9 parameters, 37e9
// active a token. MLA keeps one 512-wide latent and a 64-wide RoPE key a
// layer: 61 x (512 + 64) x 2 bytes = 70,272 bytes a token at 16 bits. With
// the up-projections absorbed, each of 128 heads scores a position over 576
// dims and reads 512 back: 61 x 128 x (576 + 512) x 2 FLOPs.
constexpr std::array kMoeModels = {
    MoeModel{"deepseek-v3", {671e9, 37e9, 61.0 * (512 + 64) * 2, 61.0 * 128 * (576 + 512) * 2}},
};

RooflineModel roofline_model(const std::string& name) {
    for (const MoeModel& moe : kMoeModels) {
        if (moe.name == name) return moe.shape;
    }
    const ModelPreset& preset = find_model_preset(name);
    RooflineModel model;
    model.n_weights = model.n_active = static_cast<double>(parameter_count(preset));
    // K and V of every layer, 16-bit.
    model.kv_bytes_per_token = 2.0 * preset.n_layers * preset.n_kv_heads * preset.head_dim * 2.0;
    // Attention of one row over one position: Q.K and P.V, 2 FLOPs a multiply-add.
    model.attention_flops = 4.0 * preset.n_layers * preset.n_heads * preset.head_dim;
    return model;
}

double number_at(const nlohmann::json& json, const char* key, const std::string& name) {
    const auto it = json.find(key);
    if (it == json.end()) util::fail("{}: the profile has no \"{}\"", name, key);
    if (!it->is_number()) util::fail("{}: \"{}\" is not a number", name, key);
    const double value = it->get<double>();
    if (!std::isfinite(value) || value < 0.0) util::fail("{}: \"{}\" must be >= 0", name, key);
    return value;
}

std::vector<RowCost> row_costs_at(const nlohmann::json& json, const std::string& name) {
    const nlohmann::json& points = json.at("row_costs_ms");
    if (!points.is_array() || points.size() < 2)
        util::fail("{}: \"row_costs_ms\" must be a list of at least two [rows, ms] points", name);
    std::vector<RowCost> costs;
    for (const nlohmann::json& point : points) {
        if (!point.is_array() || point.size() != 2 || !point[0].is_number_integer() ||
            !point[1].is_number()) {
            util::fail("{}: each point of \"row_costs_ms\" is [rows, ms]", name);
        }
        const RowCost cost{point[0].get<int64_t>(), point[1].get<double>() * 1e-3};
        if (cost.n_rows < 1 || (!costs.empty() && cost.n_rows <= costs.back().n_rows))
            util::fail("{}: the rows of \"row_costs_ms\" must rise from 1 up", name);
        if (!std::isfinite(cost.seconds) || !(cost.seconds > 0.0))
            util::fail("{}: every step of \"row_costs_ms\" must take some time", name);
        costs.push_back(cost);
    }
    return costs;
}

}  // namespace

double StepProfile::rows_seconds(int64_t n_tokens) const {
    const auto rows = static_cast<double>(n_tokens);
    if (row_costs.empty()) return fixed_s + per_token_s * rows;
    if (n_tokens <= row_costs.front().n_rows) return row_costs.front().seconds;
    size_t upper = 1;
    while (upper + 1 < row_costs.size() && row_costs[upper].n_rows < n_tokens) ++upper;
    const RowCost& a = row_costs[upper - 1];
    const RowCost& b = row_costs[upper];
    const double slope = (b.seconds - a.seconds) / static_cast<double>(b.n_rows - a.n_rows);
    return a.seconds + slope * (rows - static_cast<double>(a.n_rows));
}

nlohmann::json profile_json(const StepProfile& profile) {
    nlohmann::json json = {{"source", profile.source},
                           {"per_context_ns", profile.per_context_s * 1e9},
                           {"per_decode_context_ns", profile.decode_context_seconds() * 1e9},
                           {"per_kv_read_ns", profile.per_kv_read_s * 1e9},
                           {"per_logit_row_us", profile.per_logit_row_s * 1e6},
                           {"block_size", profile.block_size},
                           {"kv_blocks", profile.n_kv_blocks},
                           {"gpus_per_replica", profile.gpus_per_replica},
                           {"kv_bytes_per_token", profile.kv_bytes_per_token}};
    if (profile.row_costs.empty()) {
        json["fixed_ms"] = profile.fixed_s * 1e3;
        json["per_token_us"] = profile.per_token_s * 1e6;
    } else {
        nlohmann::json points = nlohmann::json::array();
        for (const RowCost& cost : profile.row_costs)
            points.push_back({cost.n_rows, cost.seconds * 1e3});
        json["row_costs_ms"] = std::move(points);
    }
    return json;
}

StepProfile profile_from_json(const nlohmann::json& json, const std::string& name) {
    if (!json.is_object()) util::fail("{}: a profile is a JSON object", name);
    StepProfile profile;
    const auto source = json.find("source");
    if (source == json.end() || !source->is_string())
        util::fail("{}: the profile has no \"source\" string", name);
    profile.source = source->get<std::string>();
    if (json.contains("row_costs_ms")) {
        profile.row_costs = row_costs_at(json, name);
    } else {
        profile.fixed_s = number_at(json, "fixed_ms", name) * 1e-3;
        profile.per_token_s = number_at(json, "per_token_us", name) * 1e-6;
    }
    profile.per_context_s = number_at(json, "per_context_ns", name) * 1e-9;
    if (json.contains("per_decode_context_ns"))
        profile.per_decode_context_s = number_at(json, "per_decode_context_ns", name) * 1e-9;
    if (json.contains("per_kv_read_ns"))
        profile.per_kv_read_s = number_at(json, "per_kv_read_ns", name) * 1e-9;
    if (json.contains("per_logit_row_us"))
        profile.per_logit_row_s = number_at(json, "per_logit_row_us", name) * 1e-6;
    profile.block_size = static_cast<int32_t>(number_at(json, "block_size", name));
    profile.n_kv_blocks = static_cast<int64_t>(number_at(json, "kv_blocks", name));
    if (json.contains("gpus_per_replica"))
        profile.gpus_per_replica = static_cast<int32_t>(number_at(json, "gpus_per_replica", name));
    if (json.contains("kv_bytes_per_token"))
        profile.kv_bytes_per_token = number_at(json, "kv_bytes_per_token", name);
    if (profile.block_size < 1) util::fail("{}: \"block_size\" must be at least 1", name);
    if (profile.n_kv_blocks < 1) util::fail("{}: \"kv_blocks\" must be at least 1", name);
    if (profile.gpus_per_replica < 1)
        util::fail("{}: \"gpus_per_replica\" must be at least 1", name);
    if (!(profile.step_seconds({1, 1.0, 1.0, 1.0, 1}) > 0.0))
        util::fail("{}: a step must take some time", name);
    return profile;
}

StepProfile read_profile(const std::string& path) {
    std::ifstream file(path);
    if (!file) util::fail("cannot read the profile {}", path);
    std::stringstream text;
    text << file.rdbuf();
    nlohmann::json json;
    try {
        json = nlohmann::json::parse(text.str());
    } catch (const nlohmann::json::parse_error& error) {
        util::fail("{}: not JSON ({})", path, error.what());
    }
    return profile_from_json(json, path);
}

std::string roofline_device_names() {
    std::string names;
    for (const RooflineDevice& device : kDevices) {
        if (!names.empty()) names += ", ";
        names += device.name;
    }
    return names;
}

StepProfile roofline_profile(const std::string& device_name, const std::string& model,
                             double efficiency, double bytes_per_parameter,
                             double memory_utilization, int32_t gpus_per_replica) {
    const RooflineDevice* device = nullptr;
    for (const RooflineDevice& candidate : kDevices) {
        if (candidate.name == device_name) device = &candidate;
    }
    if (device == nullptr) {
        util::fail("unknown --device '{}' (roofline devices: {})", device_name,
                   roofline_device_names());
    }
    if (!(efficiency > 0.0 && efficiency <= 1.0)) {
        util::fail("--efficiency must be in (0, 1], not {}", efficiency);
    }
    if (!(bytes_per_parameter > 0.0)) util::fail("--bytes-per-parameter must be positive");
    if (gpus_per_replica < 1) util::fail("--gpus-per-replica must be at least 1");
    const RooflineModel shape = roofline_model(model);
    // A replica's GPUs split the weights and the KV (tensor or expert
    // parallel) and add up their ceilings; the links between them are free.
    const double bandwidth = device->bandwidth_bytes_per_s * efficiency * gpus_per_replica;
    const double flops = device->flops * efficiency * gpus_per_replica;
    const double weights_bytes = shape.n_weights * bytes_per_parameter;
    const double kv_bytes_per_token = shape.kv_bytes_per_token;
    const double attention_flops = shape.attention_flops;

    StepProfile profile;
    profile.block_size = 16;
    profile.fixed_s = weights_bytes / bandwidth;
    profile.per_token_s = 2.0 * shape.n_active / flops;
    profile.per_context_s = kv_bytes_per_token / bandwidth + attention_flops / flops;
    const double memory =
        static_cast<double>(device->memory_mib) * 1024.0 * 1024.0 * gpus_per_replica;
    const double kv_budget = memory * memory_utilization - weights_bytes;
    if (!(kv_budget > 0.0)) {
        util::fail("{} does not fit on {} {} at {} bytes a parameter", model, gpus_per_replica,
                   device_name, bytes_per_parameter);
    }
    profile.n_kv_blocks =
        static_cast<int64_t>(kv_budget / (kv_bytes_per_token * profile.block_size));
    profile.kv_bytes_per_token = kv_bytes_per_token;
    profile.gpus_per_replica = gpus_per_replica;
    profile.source = fmt::format(
        "roofline of {}{} ({:.2f} TB/s, {:.0f} TFLOP/s each) running {} at {} bytes/parameter, "
        "efficiency {:.2f}",
        gpus_per_replica > 1 ? fmt::format("{} x ", gpus_per_replica) : std::string(),
        device_name, device->bandwidth_bytes_per_s / 1e12, device->flops / 1e12, model,
        bytes_per_parameter, efficiency);
    return profile;
}

std::string format_profile(const StepProfile& profile) {
    std::string other_parts;
    if (profile.per_kv_read_s > 0.0)
        other_parts += fmt::format(", {:.3f} ns/KV position read", profile.per_kv_read_s * 1e9);
    if (profile.per_logit_row_s > 0.0)
        other_parts += fmt::format(", {:.3f} us/logit row", profile.per_logit_row_s * 1e6);
    std::string rows;
    if (profile.row_costs.empty()) {
        rows = fmt::format("fixed {:.3f} ms, {:.3f} us/token", profile.fixed_s * 1e3,
                           profile.per_token_s * 1e6);
    } else {
        for (const RowCost& cost : profile.row_costs) {
            rows += fmt::format("{}{}: {:.3f} ms", rows.empty() ? "rows " : ", ", cost.n_rows,
                                cost.seconds * 1e3);
        }
    }
    const std::string decode_context =
        profile.decode_context_seconds() != profile.per_context_s
            ? fmt::format(" (decode {:.3f})", profile.decode_context_seconds() * 1e9)
            : std::string();
    return fmt::format("profile: {} ({}, {:.3f} ns/context position{}{}, {} KV blocks of {})",
                       profile.source, rows, profile.per_context_s * 1e9, decode_context,
                       other_parts, profile.n_kv_blocks, profile.block_size);
}

}  // namespace ladder::tools
