// Which attention kernels a forward pass runs. Both are batch invariant (a
// row's bits do not depend on the batch or the thread count); they differ in
// their order of operations, so in their last bits.
#pragma once

#include <optional>
#include <string_view>

namespace ladder::model {

enum class AttentionPath {
    // llama.cpp's x86 order of roundings, bit for bit (kernels/cpu/attention.h):
    // greedy continuations agree with llama.cpp token for token.
    Exact,
    // Chunked attention (kernels/cpu/chunked_attention.h): split along the
    // context for every thread, on the CPU's fastest dot product, within the
    // quality bounds tests/model/test_attention_quality.py holds it to.
    Fast,
};

constexpr AttentionPath kDefaultAttentionPath = AttentionPath::Fast;

std::string_view attention_path_name(AttentionPath path);
// "exact" or "fast"; nullopt for anything else.
std::optional<AttentionPath> parse_attention_path(std::string_view name);

}  // namespace ladder::model
