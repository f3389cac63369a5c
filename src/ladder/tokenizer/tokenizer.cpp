// Tokenizer::create: validates a vocabulary, resolves llama.cpp's defaults
// and picks the model's algorithm. Also the model-independent decode.
#include "ladder/tokenizer/tokenizer.h"

#include <unordered_set>

#include "ladder/tokenizer/bpe_tokenizer.h"
#include "ladder/tokenizer/spm_tokenizer.h"
#include "ladder/util/error.h"

namespace ladder::tokenizer {

namespace {

// An id from the file if it is in range, else llama.cpp's default for the
// model if that is in range, else none.
std::optional<TokenId> resolve_id(std::optional<TokenId> given, std::optional<TokenId> fallback,
                                  size_t n_tokens) {
    const auto in_range = [&](std::optional<TokenId> id) {
        return id && *id >= 0 && static_cast<size_t>(*id) < n_tokens;
    };
    if (in_range(given)) return given;
    if (in_range(fallback)) return fallback;
    return std::nullopt;
}

void validate(Vocabulary& v) {
    const size_t n = v.tokens.size();
    if (n == 0) util::fail("tokenizer vocabulary is empty (tokenizer.ggml.tokens)");
    if (n > static_cast<size_t>(INT32_MAX)) util::fail("tokenizer vocabulary is too large");
    if (!v.scores.empty() && v.scores.size() < n) {
        util::fail("tokenizer has {} scores for {} tokens", v.scores.size(), n);
    }
    if (!v.kinds.empty() && v.kinds.size() < n) {
        util::fail("tokenizer has {} token types for {} tokens", v.kinds.size(), n);
    }
    std::unordered_set<std::string_view> seen;
    seen.reserve(n);
    for (size_t i = 0; i < n; ++i) {
        // llama.cpp renames an empty token so that every text stays unique.
        if (v.tokens[i].empty()) v.tokens[i] = "[EMPTY_" + std::to_string(i) + "]";
    }
    for (size_t i = 0; i < n; ++i) {
        if (!seen.insert(v.tokens[i]).second) {
            util::fail("tokenizer vocabulary has token {} twice ('{}')", i, v.tokens[i]);
        }
    }
}

// The ids without a model default, and the add rules' needs.
void finish_ids(Vocabulary& v, size_t n) {
    v.eot_id = resolve_id(v.eot_id, std::nullopt, n);
    v.eom_id = resolve_id(v.eom_id, std::nullopt, n);
    v.padding_id = resolve_id(v.padding_id, std::nullopt, n);
    if (*v.add_bos && !v.bos_id) util::fail("tokenizer adds a BOS token but has no valid BOS id");
    if (*v.add_eos && !v.eos_id) util::fail("tokenizer adds an EOS token but has no valid EOS id");
}

}  // namespace

std::unique_ptr<Tokenizer> Tokenizer::create(Vocabulary v) {
    validate(v);
    const size_t n = v.tokens.size();
    if (v.model == "gpt2") {
        const PreTokenizerSpec spec = pre_tokenizer_spec(v.pre);
        // llama.cpp's defaults for BPE files that lack the keys.
        v.bos_id = resolve_id(v.bos_id, 11, n);
        v.eos_id = resolve_id(v.eos_id, 11, n);
        v.unknown_id = resolve_id(v.unknown_id, std::nullopt, n);
        v.add_bos = v.add_bos.value_or(spec.add_bos_default);
        v.add_eos = v.add_eos.value_or(false);
        v.add_space_prefix = false;  // byte-level BPE never adds one
        finish_ids(v, n);
        return std::make_unique<BpeTokenizer>(std::move(v), spec);
    }
    if (v.model == "llama") {
        v.bos_id = resolve_id(v.bos_id, 1, n);
        v.eos_id = resolve_id(v.eos_id, 2, n);
        v.unknown_id = resolve_id(v.unknown_id, 0, n);
        v.add_bos = v.add_bos.value_or(true);
        v.add_eos = v.add_eos.value_or(false);
        v.add_space_prefix = v.add_space_prefix.value_or(true);
        finish_ids(v, n);
        return std::make_unique<SpmTokenizer>(std::move(v));
    }
    util::fail("unsupported tokenizer model '{}' (tokenizer.ggml.model); ladder knows gpt2 "
               "(byte-level BPE) and llama (SentencePiece)",
               v.model);
}

std::string Tokenizer::decode(std::span<const TokenId> ids, bool render_special) const {
    std::string text;
    for (const TokenId id : ids) text += token_to_piece(id, render_special);
    return text;
}

}  // namespace ladder::tokenizer
