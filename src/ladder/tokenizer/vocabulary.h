// The raw vocabulary a tokenizer is built from, as GGUF's tokenizer.ggml.*
// keys describe it. Filled by whoever reads the model file; the tokenizer
// itself knows nothing of files.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ladder::tokenizer {

using TokenId = int32_t;

// tokenizer.ggml.token_type values; any other value reads as Undefined.
enum class TokenKind : int32_t {
    Undefined = 0,
    Normal = 1,
    Unknown = 2,
    Control = 3,
    UserDefined = 4,
    Unused = 5,
    Byte = 6,
};

struct Vocabulary {
    std::string model;  // tokenizer.ggml.model: "gpt2" (byte-level BPE) or "llama" (SentencePiece)
    std::string pre;    // tokenizer.ggml.pre: pre-tokenizer name ("smollm", "llama-bpe", ...)
    std::vector<std::string> tokens;
    std::vector<float> scores;          // empty when the file has none
    std::vector<TokenKind> kinds;       // empty means all Normal
    std::vector<std::string> merges;    // "left right", highest priority first
    // Unset (or out of range) ids and flags take llama.cpp's defaults for the
    // model in Tokenizer::create; an unset eot/eom id is found by token text.
    // Tokenizer::vocabulary() returns them resolved.
    std::optional<TokenId> bos_id, eos_id, eot_id, eom_id, unknown_id, padding_id;
    std::optional<bool> add_bos, add_eos, add_space_prefix;
};

}  // namespace ladder::tokenizer
