// Which attention kernels a forward pass runs. Both are batch invariant (a
// row's bits do not depend on the batch or the thread count); they differ in
// their order of operations, so in their last bits.
#pragma once

#include <optional>
#include <string_view>

#include "ladder/tensor/dtype.h"

namespace ladder::model {

enum class AttentionPath {
    // llama.cpp's x86 order of roundings, bit for bit (kernels/cpu/attention.h):
    // greedy continuations agree with llama.cpp token for token.
    Exact,
    // Chunked attention (kernels/cpu/chunked_attention.h): split along the
    // context for every thread, on the CPU's fastest dot product. Batch and
    // thread-count invariant; its distance from Exact is measured by
    // tests/model/test_attention_quality.py.
    Fast,
};

// Exact until Fast meets the quality bounds set for it against Exact (mean
// KL divergence <= 1e-4, top-1 agreement >= 99.5%, perplexity within
// 0.05%): measured on SmolLM2 at 512 tokens of context, every fast variant
// (F32, F32 with Exact's F16 roundings of q and the probabilities, BF16)
// lands at a mean KL divergence of ~4e-3 and ~96-97% top-1 agreement. So
// does one ulp added to Exact's outputs: the quantized activations of the
// matrix products turn any change into rounding flips, so on quantized
// weights only Exact's own bits meet those bounds (on F32 weights Fast is
// within 1.1e-6; docs/performance.md).
constexpr AttentionPath kDefaultAttentionPath = AttentionPath::Exact;

std::string_view attention_path_name(AttentionPath path);
// What `--kv-cache-dtype auto` stores under a path: F16 for Exact (llama.cpp's
// cache); for Fast, the type its kernels on this CPU read best (BF16 tiles
// where the CPU has AVX512-BF16, else F16).
tensor::DType auto_kv_cache_type(AttentionPath path);
// "exact" or "fast"; nullopt for anything else.
std::optional<AttentionPath> parse_attention_path(std::string_view name);

}  // namespace ladder::model
