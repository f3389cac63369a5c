// What `ladder simulate` knows of one replica's hardware and model: how long
// a forward step takes and how many KV blocks it holds. A step costs
//   rows(tokens in the step)
//   + per_context x (positions the step's prompt rows attend to, summed)
//   + per_decode_context x (the same for its decode rows)
//   + per_kv_read x (distinct KV positions the step reads)
//   + per_logit_row x (rows whose logits are computed: decodes and the last
//     chunk of each prompt),
// where rows() is reading the weights once and the matrix products of the
// step's rows: fixed + per_token x tokens in a roofline profile, and in a
// measured one a curve through measured points (a few rows ride on one read
// of the weights almost for free; a long prompt runs the matrix kernels at
// their compute rate). The context parts are attention's arithmetic, priced
// apart because a decode row (a sequence's one row in the step) runs another
// kernel than a prompt chunk's rows; the KV read is its memory traffic, paid
// once for a block however many rows read it (a prefix shared by many
// decodes comes from memory once, a lone decode's context all of it). The
// logit part is the LM head's product and sampling of a row that yields a
// token. A profile comes from a JSON file (measured) or from the roofline of
// a device and a model preset; either way it carries its source, which every
// report prints.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ladder::tools {

// What a step computes, as a profile prices it.
struct StepWork {
    int64_t n_tokens = 0;
    double n_context = 0.0;         // positions its rows attend to, summed
    double n_decode_context = 0.0;  // of those, its decode rows' (one-row chunks)
    double n_kv_read = 0.0;         // distinct KV positions its rows attend to
    int64_t n_logit_rows = 0;

    bool operator==(const StepWork&) const = default;
};

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
    // A position a prompt row attends to, and any row where the profile has
    // no decode price.
    double per_context_s = 0.0;
    // A decode row's (one-row chunk's) price of a position where a fit set
    // it; otherwise per_context_s (a roofline profile charges every row the KV
    // read, and a file written before the split was kept has one price).
    std::optional<double> per_decode_context_s;
    // A distinct KV position read; 0 in a roofline profile (per_context
    // charges every row the read) and in a file written before it was kept.
    double per_kv_read_s = 0.0;
    // 0 in a roofline profile and one written before it was kept: per_token has it.
    double per_logit_row_s = 0.0;
    int32_t block_size = 16;  // tokens per KV block
    int64_t n_kv_blocks = 0;  // blocks of one replica's KV cache
    int32_t gpus_per_replica = 1;
    // Bytes of K and V one token holds: what a block read from the disk or
    // remote tier moves. 0: unknown (a profile written before it was kept).
    double kv_bytes_per_token = 0.0;

    double rows_seconds(int64_t n_tokens) const;
    double decode_context_seconds() const { return per_decode_context_s.value_or(per_context_s); }
    double step_seconds(const StepWork& work) const {
        return rows_seconds(work.n_tokens) +
               per_context_s * (work.n_context - work.n_decode_context) +
               decode_context_seconds() * work.n_decode_context + per_kv_read_s * work.n_kv_read +
               per_logit_row_s * static_cast<double>(work.n_logit_rows);
    }
};

// {"source", "fixed_ms", "per_token_us" | "row_costs_ms", "per_context_ns",
//  "per_decode_context_ns", "per_kv_read_ns", "per_logit_row_us",
//  "block_size", "kv_blocks", "gpus_per_replica", "kv_bytes_per_token"};
// "row_costs_ms" is [[rows, ms], ...] and takes the place of "fixed_ms" and
// "per_token_us"; "per_decode_context_ns" (per_context_ns where absent),
// "per_kv_read_ns", "per_logit_row_us" and the last two optional.
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
// position, 81920 KV blocks of 16)", with " (decode 1.9)" after the context
// price where a decode row's differs, then "0.6 ns/KV position read" and
// "1.1 us/logit row" where the profile has those parts, and "rows 1: 7.4 ms,
// 2: 7.5 ms, ..." in place of the first two where it has a rows curve.
std::string format_profile(const StepProfile& profile);

}  // namespace ladder::tools
