// Builds the tokenizer of a model from its GGUF tokenizer.ggml.* metadata.
#pragma once

#include <memory>

#include "ladder/gguf/gguf_file.h"
#include "ladder/tokenizer/tokenizer.h"
#include "ladder/tokenizer/vocabulary.h"

namespace ladder::engine {

// The vocabulary as the file states it (unset keys stay unset). Throws
// util::InputError naming the file when a key is missing or mistyped.
tokenizer::Vocabulary read_vocabulary(const gguf::GgufFile& file);

// read_vocabulary + Tokenizer::create; errors name the file.
std::unique_ptr<tokenizer::Tokenizer> load_tokenizer(const gguf::GgufFile& file);

}  // namespace ladder::engine
