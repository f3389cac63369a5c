// Control tokens that are output as their text: the markers tool-call and
// reasoning parsers read ([TOOL_CALLS], <|python_tag|>, <tool_call>, <think>,
// ...). Other control tokens render as nothing. The grammar engine's view of
// the vocabulary follows the same rule, so that what a grammar accepts is
// exactly the text a client gets.
#pragma once

#include <string>
#include <vector>

#include "ladder/tokenizer/tokenizer.h"

namespace ladder::engine {

// The markers this vocabulary holds as control tokens (those it holds as
// plain text need nothing).
std::vector<tokenizer::TokenId> marker_tokens(const tokenizer::Tokenizer& tokenizer);

// The text a token contributes to the output: its piece, or a marker's text.
std::string output_piece(const tokenizer::Tokenizer& tokenizer,
                         const std::vector<tokenizer::TokenId>& markers, tokenizer::TokenId id);

}  // namespace ladder::engine
