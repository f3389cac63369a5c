// Token attribute and end-of-generation rules, following llama.cpp's
// llama_vocab::impl::load so that special tokens match and render the same.
#include "ladder/tokenizer/token_attributes.h"

#include <algorithm>
#include <span>
#include <string_view>
#include <unordered_map>

namespace ladder::tokenizer {

namespace {

using Texts = std::span<const std::string_view>;

// Known token texts, as llama.cpp lists them. Where a file lacks an id,
// llama.cpp takes the first such token in hash-map order; ladder takes the
// first text of the list that the vocabulary has, so the choice is stable
// (for SmolLM2 the EOT is <|im_end|>, where llama.cpp happens to pick
// <|endoftext|>; both end generation either way).
// DeepSeek's texts use U+FF5C (fullwidth bar) and U+2581 (lower block).
#define LADDER_FULLWIDTH_BAR "\xEF\xBD\x9C"
#define LADDER_LOWER_BLOCK "\xE2\x96\x81"
constexpr std::string_view kEotTexts[] = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>",
    "<EOT>", "_<EOT>", "[EOT]",
    "<" LADDER_FULLWIDTH_BAR "end" LADDER_LOWER_BLOCK "of" LADDER_LOWER_BLOCK
    "sentence" LADDER_FULLWIDTH_BAR ">",
    "<end_of_utterance>"};
constexpr std::string_view kEomTexts[] = {"<|eom_id|>"};
constexpr std::string_view kFimPreTexts[] = {
    "<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>",
    "<" LADDER_FULLWIDTH_BAR "fim" LADDER_LOWER_BLOCK "begin" LADDER_FULLWIDTH_BAR ">",
    "<PRE>", LADDER_LOWER_BLOCK "<PRE>", "<|code_prefix|>", "<|prefix|>"};
constexpr std::string_view kFimSufTexts[] = {
    "<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>",
    "<" LADDER_FULLWIDTH_BAR "fim" LADDER_LOWER_BLOCK "hole" LADDER_FULLWIDTH_BAR ">",
    "<SUF>", LADDER_LOWER_BLOCK "<SUF>", "<|code_suffix|>", "<|suffix|>"};
constexpr std::string_view kFimMidTexts[] = {
    "<|fim_middle|>", "<fim-middle>", "<fim_middle>",
    "<" LADDER_FULLWIDTH_BAR "fim" LADDER_LOWER_BLOCK "end" LADDER_FULLWIDTH_BAR ">",
    "<MID>", LADDER_LOWER_BLOCK "<MID>", "<|code_middle|>", "<|middle|>"};
constexpr std::string_view kFimPadTexts[] = {"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>",
                                             "[PAD]"};
constexpr std::string_view kFimRepTexts[] = {"<|fim_repo|>", "<|repo_name|>", "<fim-repo>",
                                             "<REPO>", "<reponame>"};
constexpr std::string_view kFimSepTexts[] = {"<|file_sep|>"};
constexpr std::string_view kEndOfGenerationTexts[] = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>",
    "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]",
    "<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>",
    "<" LADDER_FULLWIDTH_BAR "end" LADDER_LOWER_BLOCK "of" LADDER_LOWER_BLOCK
    "sentence" LADDER_FULLWIDTH_BAR ">",
    "[e~["};
#undef LADDER_FULLWIDTH_BAR
#undef LADDER_LOWER_BLOCK
// gpt-oss: always rendered, never control.
constexpr std::string_view kAlwaysUserDefinedTexts[] = {"<|channel|>", "<|message|>", "<|start|>",
                                           "<|constrain|>"};

uint32_t attr_of_kind(TokenKind kind) {
    switch (kind) {
        case TokenKind::Normal: return kAttrNormal;
        case TokenKind::Unknown: return kAttrUnknown;
        case TokenKind::Control: return kAttrControl;
        case TokenKind::UserDefined: return kAttrUserDefined;
        case TokenKind::Unused: return kAttrUnused;
        case TokenKind::Byte: return kAttrByte;
        default: return kAttrUndefined;
    }
}

class Resolver {
public:
    explicit Resolver(Vocabulary& vocabulary) : vocabulary_(vocabulary) {
        const auto& tokens = vocabulary.tokens;
        ids_.reserve(tokens.size());
        // The last of duplicate texts wins, as in llama.cpp's token_to_id.
        for (size_t i = 0; i < tokens.size(); ++i) ids_[tokens[i]] = static_cast<TokenId>(i);
        attrs_.resize(tokens.size(), kAttrNormal);
        for (size_t i = 0; i < tokens.size() && i < vocabulary.kinds.size(); ++i) {
            attrs_[i] = attr_of_kind(vocabulary.kinds[i]);
        }
    }

    // The first listed text present; marks it control.
    std::optional<TokenId> detect(Texts texts) {
        for (const auto text : texts) {
            const auto it = ids_.find(std::string(text));
            if (it == ids_.end()) continue;
            attrs_[it->second] |= kAttrControl;
            return it->second;
        }
        return std::nullopt;
    }

    ResolvedTokens run() {
        if (!vocabulary_.eot_id) vocabulary_.eot_id = detect(kEotTexts);
        if (!vocabulary_.eom_id) vocabulary_.eom_id = detect(kEomTexts);
        detect(kFimPreTexts);
        detect(kFimSufTexts);
        detect(kFimMidTexts);
        const auto fim_pad = detect(kFimPadTexts);
        const auto fim_rep = detect(kFimRepTexts);
        const auto fim_sep = detect(kFimSepTexts);

        // Control tokens named "unused" are unused (Gemma's <unusedN>).
        for (size_t i = 0; i < attrs_.size(); ++i) {
            if ((attrs_[i] & kAttrControl) &&
                vocabulary_.tokens[i].find("unused") != std::string::npos) {
                attrs_[i] |= kAttrUnused;
            }
        }

        std::vector<TokenId> eog;
        for (const auto id : {fim_pad, fim_rep, fim_sep}) {
            if (id) eog.push_back(*id);
        }
        for (const auto text : kEndOfGenerationTexts) {
            const auto it = ids_.find(std::string(text));
            if (it == ids_.end()) continue;
            eog.push_back(it->second);
            attrs_[it->second] |= kAttrControl;
        }
        for (const auto text : kAlwaysUserDefinedTexts) {
            const auto it = ids_.find(std::string(text));
            if (it != ids_.end()) attrs_[it->second] = kAttrUserDefined;
        }
        for (const auto& id : {vocabulary_.eos_id, vocabulary_.eot_id, vocabulary_.eom_id}) {
            if (id) eog.push_back(*id);
        }
        std::sort(eog.begin(), eog.end());
        eog.erase(std::unique(eog.begin(), eog.end()), eog.end());
        apply_end_of_generation_exceptions(eog);

        ResolvedTokens out;
        for (size_t i = 0; i < attrs_.size(); ++i) {
            if (attrs_[i] & (kAttrControl | kAttrUserDefined | kAttrUnknown)) {
                out.special.push_back(static_cast<TokenId>(i));
            }
        }
        // Longest first, so that a token containing another wins; ties by id
        // (llama.cpp leaves their order to std::sort; equal-length special
        // tokens that overlap in text are not known in any vocabulary).
        const auto& tokens = vocabulary_.tokens;
        std::stable_sort(out.special.begin(), out.special.end(), [&](TokenId a, TokenId b) {
            return tokens[a].size() > tokens[b].size();
        });
        out.attrs = std::move(attrs_);
        out.end_of_generation = std::move(eog);
        return out;
    }

private:
    // Two vocabularies where a usual end token is an ordinary one.
    void apply_end_of_generation_exceptions(std::vector<TokenId>& eog) {
        const auto with_text = [&](std::string_view text) -> std::optional<TokenId> {
            for (const auto id : eog) {
                if (vocabulary_.tokens[id] == text) return id;
            }
            return std::nullopt;
        };
        const auto remove = [&](TokenId id, uint32_t attr) {
            eog.erase(std::find(eog.begin(), eog.end(), id));
            attrs_[id] = attr;
        };
        // o200k_harmony and solar-open: <|end|> ends a message, not generation.
        const bool has_call = with_text("<|call|>") || with_text("<|calls|>");
        if (const auto end = with_text("<|end|>");
            end && has_call && (with_text("<|return|>") || with_text("<|flush|>"))) {
            remove(*end, kAttrUserDefined);
        }
        // Gemma 4 and PLaMo 2 have an ordinary </s>.
        if (const auto s = with_text("</s>");
            s && (with_text("<|tool_response>") || with_text("<|plamo:eos|>"))) {
            remove(*s, kAttrNormal);
        }
    }

    Vocabulary& vocabulary_;
    std::unordered_map<std::string, TokenId> ids_;
    std::vector<uint32_t> attrs_;
};

}  // namespace

ResolvedTokens resolve_tokens(Vocabulary& vocabulary) { return Resolver(vocabulary).run(); }

}  // namespace ladder::tokenizer
