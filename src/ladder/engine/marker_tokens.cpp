#include "ladder/engine/marker_tokens.h"

#include <algorithm>
#include <array>
#include <string_view>

namespace ladder::engine {

namespace {

// Hermes and Qwen, Llama 3.x, Mistral, and DeepSeek-R1-style reasoning.
constexpr std::array<std::string_view, 8> kMarkerTexts = {
    "<tool_call>", "</tool_call>", "<|python_tag|>", "[TOOL_CALLS]",
    "[ARGS]",      "[CALL_ID]",    "<think>",        "</think>",
};

}  // namespace

std::vector<tokenizer::TokenId> marker_tokens(const tokenizer::Tokenizer& tokenizer) {
    std::vector<tokenizer::TokenId> markers;
    for (std::string_view text : kMarkerTexts) {
        const tokenizer::TokenId id = tokenizer.find_token(text);
        if (id >= 0 && tokenizer.token_to_piece(id).empty()) markers.push_back(id);
    }
    return markers;
}

std::string output_piece(const tokenizer::Tokenizer& tokenizer,
                         const std::vector<tokenizer::TokenId>& markers, tokenizer::TokenId id) {
    const bool marker = std::find(markers.begin(), markers.end(), id) != markers.end();
    return tokenizer.token_to_piece(id, marker);
}

}  // namespace ladder::engine
