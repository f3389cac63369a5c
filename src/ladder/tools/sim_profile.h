// What `ladder simulate` knows of one replica's hardware and model: how long
// a forward step takes and how many KV blocks it holds. A step costs
//   rows(tokens in the step) + per_context x (positions the step's tokens
//   attend to, summed) + per_logit_row x (rows whose logits are computed:
//   decodes and the last chunk of each prompt),
// where rows() is reading the weights once and the matrix products of the
// step's rows: fixed + per_token x tokens in a roofline profile, and in a
// measured one a curve through measured points (a few rows ride on one read
// of the weights almost for free; a long prompt runs the matrix kernels at
// their compute rate), and the other two parts are attention over the KV
// cache and the LM head's product and sampling of a row that yields a token.
// A profile comes from a JSON file (measured) or from the roofline of a
// device and a model preset; either way it carries its source, which every
// report prints.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ladder::tools {

// One point of a measured rows curve: what a step of `n_rows` rows costs
// before attention and logits.
struct RowCost {
    int64_t n_rows = 0;
    double seconds = 0.0;
};

struct StepProfile {
    std::string source;  // where the numbers come from, in words
    // The rows part where row_costs is empty.
    double fixed_s = 0.0;
    double per_token_s = 0.0;
    // The rows part of a measured profile, rows ascending: linear between
    // points, past the last one along its last segment, and below the first
    // one the first one's seconds (a step costs at least its smallest
    // measured one). Empty: fixed_s + per_token_s x rows.
    std::vector<RowCost> row_costs;
    double per_context_s = 0.0;
    // 0 in a roofline profile and one written before it was kept: per_token has it.
    double per_logit_row_s = 0.0;
    int32_t block_size = 16;  // tokens per KV block
    int64_t n_kv_blocks = 0;  // blocks of one replica's KV cache
    int32_t gpus_per_replica = 1;
    // Bytes of K and V one token holds: what a block read from the disk or
    // remote tier moves. 0: unknown (a profile written before it was kept).
    double kv_bytes_per_token = 0.0;

    double rows_seconds(int64_t n_tokens) const;
    double step_seconds(int64_t n_tokens, double n_context, int64_t n_logit_rows) const {
        return rows_seconds(n_tokens) + per_context_s * n_context +
               per_logit_row_s * static_cast<double>(n_logit_rows);
    }
};

// {"source", "fixed_ms", "per_token_us" | "row_costs_ms", "per_context_ns",
//  "per_logit_row_us", "block_size", "kv_blocks", "gpus_per_replica",
//  "kv_bytes_per_token"}; "row_costs_ms" is [[rows, ms], ...] and takes the
// place of "fixed_ms" and "per_token_us"; "per_logit_row_us" and the last two
// optional.
nlohmann::json profile_json(const StepProfile& profile);
// Throws util::InputError naming the key that is missing, not a number or
// out of range.
StepProfile profile_from_json(const nlohmann::json& json, const std::string& name);
// Reads and checks a profile file; throws util::InputError naming the file.
StepProfile read_profile(const std::string& path);

// The roofline of one replica: `gpus_per_replica` of `device` (h200-141g,
// h100-80g, h800-80g, a100-80g, a100-40g), their ceilings and memory added
// up, running model preset `model` (ladder fit's presets, or deepseek-v3, a
// mixture of experts with MLA's KV) with `bytes_per_parameter` weights and
// 16-bit KV, each ceiling reached at `efficiency` (0, 1]. The KV cache gets
// `memory_utilization` of the memory less the weights. Throws util::InputError naming an unknown device
// (with the valid names), model, or a value out of range.
StepProfile roofline_profile(const std::string& device, const std::string& model, double efficiency,
                             double bytes_per_parameter = 2.0, double memory_utilization = 0.9,
                             int32_t gpus_per_replica = 1);
// "h200-141g, h100-80g, ...".
std::string roofline_device_names();

// One line: "profile: SOURCE (fixed 4.1 ms, 12.0 us/token, 3.2 ns/context
// position, 81920 KV blocks of 16)", with "1.1 us/logit row" after the
// context where the profile has that part, and "rows 1: 7.4 ms, 2: 7.5 ms,
// ..." in place of the first two where it has a rows curve.
std::string format_profile(const StepProfile& profile);

}  // namespace ladder::tools
