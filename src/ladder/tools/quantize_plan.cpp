#include "ladder/tools/quantize_plan.h"

#include <algorithm>
#include <array>
#include <string_view>

#include "ladder/tensor/reference_ops.h"
#include "ladder/util/error.h"

namespace ladder::tools {

namespace {

using tensor::DType;

// The quantization format version llama.cpp writes (GGML_QNT_VERSION).
constexpr uint32_t kQuantizationVersion = 2;

// Keys llama-quantize drops (shards are joined) or rewrites at the end.
constexpr std::array<std::string_view, 5> kReplacedKeys = {
    "general.quantization_version", "general.file_type", "split.no", "split.count",
    "split.tensors.count",
};

// Models llama.cpp sizes as LLM_TYPE_70B (their attention-V gets more bits):
// the architecture, its layer count, and whether heads must be grouped.
struct SeventyBRule {
    std::string_view architecture;
    int64_t n_layer;
    bool needs_grouped_heads;
};
constexpr std::array<SeventyBRule, 5> kSeventyB = {
    SeventyBRule{"llama", 80, true},  SeventyBRule{"deci", 80, false},
    SeventyBRule{"olmo", 80, false},  SeventyBRule{"qwen2", 80, false},
    SeventyBRule{"jais2", 68, false},
};

// A per-layer count may be one number or one per layer; the rules read layer 0.
std::optional<int64_t> first_layer_value(const gguf::GgufFile& file, const std::string& key) {
    const gguf::Value* value = file.find(key);
    if (value == nullptr) return std::nullopt;
    if (value->as_array() != nullptr) {
        const auto values = file.get_int_array(key);
        if (!values || values->empty()) util::fail("{}: '{}' is an empty array", file.name(), key);
        return values->front();
    }
    return file.get_int(key);
}

QuantizeModelFacts read_facts(const gguf::GgufFile& file) {
    QuantizeModelFacts facts;
    const auto architecture = file.get_string("general.architecture");
    if (!architecture) util::fail("{}: no general.architecture: not a model file", file.name());
    facts.architecture = *architecture;
    const std::string prefix = facts.architecture + ".";
    const auto n_layer = file.get_int(prefix + "block_count");
    if (!n_layer || *n_layer <= 0 || *n_layer > 4096) {
        util::fail("{}: {}block_count is missing or out of range", file.name(), prefix);
    }
    facts.n_layer = *n_layer;
    facts.n_head = first_layer_value(file, prefix + "attention.head_count").value_or(0);
    facts.n_head_kv =
        first_layer_value(file, prefix + "attention.head_count_kv").value_or(facts.n_head);
    facts.n_expert = file.get_int(prefix + "expert_count").value_or(0);
    if (facts.n_head < 0 || facts.n_head_kv < 0 || facts.n_expert < 0) {
        util::fail("{}: negative head or expert count", file.name());
    }
    const auto n_nextn = file.get_int(prefix + "nextn_predict_layers").value_or(0);
    for (const SeventyBRule& rule : kSeventyB) {
        const bool dense = facts.architecture != "llama" || facts.n_expert != 8;
        facts.is_70b =
            facts.is_70b || (rule.architecture == facts.architecture && dense &&
                             facts.n_layer - n_nextn == rule.n_layer &&
                             (!rule.needs_grouped_heads || facts.n_head != facts.n_head_kv));
    }
    return facts;
}

std::vector<std::pair<std::string, gguf::Value>> output_metadata(const gguf::GgufFile& file,
                                                                 FileType file_type) {
    if (const auto n_split = file.get_int("split.count"); n_split && *n_split > 1) {
        util::fail("{} is shard {} of {}: join the shards first (ladder reads one file)",
                   file.name(), file.get_int("split.no").value_or(0) + 1, *n_split);
    }
    std::vector<std::pair<std::string, gguf::Value>> metadata;
    for (const std::string& key : file.metadata_keys()) {
        const bool replaced =
            std::find(kReplacedKeys.begin(), kReplacedKeys.end(), key) != kReplacedKeys.end();
        if (!replaced) metadata.emplace_back(key, *file.find(key));
    }
    metadata.emplace_back("general.quantization_version",
                          gguf::Value::uint32(kQuantizationVersion));
    metadata.emplace_back("general.file_type",
                          gguf::Value::uint32(static_cast<uint32_t>(file_type)));
    return metadata;
}

std::vector<int64_t> written_shape(std::vector<int64_t> shape) {
    while (shape.size() > 1 && shape.back() == 1) shape.pop_back();
    return shape;
}

// Refuses conversions the run could not do.
void check_conversion(const PlannedTensor& t, const QuantizeOptions& options) {
    const gguf::TensorInfo& in = *t.input;
    const auto source = tensor::dtype_traits(in.dtype);
    if (source.is_quantized && !options.allow_requantize) {
        util::fail(
            "tensor '{}' is already {}: requantizing loses quality; pass --allow-requantize to "
            "do it anyway",
            in.name, source.name);
    }
    if (!tensor::can_dequantize(in.dtype)) {
        util::fail("tensor '{}' is {}, which ladder cannot convert", in.name, source.name);
    }
    if (!tensor::row_bytes(t.type, in.shape[0])) {
        util::fail("tensor '{}' has rows of {} elements, not a multiple of the {} of {}", in.name,
                   in.shape[0], tensor::dtype_traits(t.type).block_elements,
                   tensor::dtype_name(t.type));
    }
}

}  // namespace

QuantizePlan plan_quantization(const gguf::GgufFile& input, const QuantizeOptions& options) {
    QuantizePlan plan;
    plan.facts = read_facts(input);
    plan.metadata = output_metadata(input, options.type.file_type);

    std::vector<const gguf::TensorInfo*> ordered;
    for (const gguf::TensorInfo& info : input.tensors()) ordered.push_back(&info);
    std::sort(ordered.begin(), ordered.end(),
              [](const auto* a, const auto* b) { return quantize_order_less(a->name, b->name); });

    std::vector<TensorToQuantize> described;
    for (const gguf::TensorInfo* info : ordered) {
        described.push_back(TensorToQuantize{info->name, info->dtype, info->shape});
    }
    const TypeRuleOptions rule_options{
        .file_type = options.type.file_type,
        .default_type = options.type.default_type,
        .output_tensor_type = options.output_tensor_type,
        .token_embedding_type = options.token_embedding_type,
        .pure = options.pure,
        .quantize_output_tensor = !options.leave_output_tensor,
    };
    const std::vector<TensorTypeChoice> choices =
        choose_tensor_types(described, plan.facts, rule_options);

    for (size_t i = 0; i < ordered.size(); ++i) {
        PlannedTensor t{ordered[i], choices[i].type, written_shape(ordered[i]->shape),
                        choices[i].fell_back_from};
        if (t.converted()) {
            check_conversion(t, options);
            const DType from = t.input->dtype;
            const bool noted = std::find(plan.requantized_from.begin(), plan.requantized_from.end(),
                                         from) != plan.requantized_from.end();
            if (tensor::dtype_traits(from).is_quantized && !noted) {
                plan.requantized_from.push_back(from);
            }
        }
        plan.tensors.push_back(std::move(t));
    }
    return plan;
}

}  // namespace ladder::tools
