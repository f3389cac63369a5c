#include "ladder/model/attention_path.h"

#include "ladder/kernels/cpu/chunked_attention.h"

namespace ladder::model {

std::string_view attention_path_name(AttentionPath path) {
    return path == AttentionPath::Exact ? "exact" : "fast";
}

tensor::DType auto_kv_cache_type(AttentionPath path) {
    return path == AttentionPath::Exact ? tensor::DType::F16
                                        : kernels::cpu::chunked_attention().auto_kv_type;
}

std::optional<AttentionPath> parse_attention_path(std::string_view name) {
    if (name == "exact") return AttentionPath::Exact;
    if (name == "fast") return AttentionPath::Fast;
    return std::nullopt;
}

}  // namespace ladder::model
