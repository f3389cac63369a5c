#include "ladder/model/attention_path.h"

namespace ladder::model {

std::string_view attention_path_name(AttentionPath path) {
    return path == AttentionPath::Exact ? "exact" : "fast";
}

std::optional<AttentionPath> parse_attention_path(std::string_view name) {
    if (name == "exact") return AttentionPath::Exact;
    if (name == "fast") return AttentionPath::Fast;
    return std::nullopt;
}

}  // namespace ladder::model
