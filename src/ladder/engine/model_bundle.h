// Everything loaded from one GGUF file that generation needs: the mapped file,
// the model, its tokenizer and its chat template. Built once, then read-only
// (the model's scratch aside, which the engine thread owns).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "ladder/engine/grammar_compiler.h"
#include "ladder/gguf/gguf_file.h"
#include "ladder/model/model.h"
#include "ladder/tokenizer/chat_template.h"
#include "ladder/tokenizer/tokenizer.h"

namespace ladder::engine {

struct ModelBundle {
    std::unique_ptr<gguf::GgufFile> file;
    std::unique_ptr<model::Model> model;
    std::unique_ptr<tokenizer::Tokenizer> tokenizer;
    // The most bytes of text one token stands for (at least 4, one UTF-8
    // character): a text longer than n times this cannot fit in n tokens.
    int32_t max_token_bytes = 4;
    // Absent when the file has no template and none was named.
    std::optional<tokenizer::ChatTemplate> chat_template;
    // Why chat_template is absent (for a clear error when chat is asked for).
    std::string chat_template_error;
    // How chat outputs are read (--tool-call-parser, --reasoning-parser);
    // empty: picked from the chat template.
    struct ChatOptions {
        std::string tool_call_parser;
        std::string reasoning_parser;
    } chat_options;
    // Structured output's grammars, compiled against this vocabulary.
    std::unique_ptr<GrammarCompiler> grammars;
};

// Where the chat template comes from instead of the file (at most one set).
struct ChatTemplateOverride {
    std::string builtin_name;  // --chat-template NAME: a built-in template
    std::string file_path;     // --chat-template-file FILE: a Jinja file
};

// Opens and validates the file and builds all parts. The chat template is
// the override if one is given, else the file's tokenizer.chat_template with
// its named variants (tokenizer.chat_template.<name>). Throws util::InputError.
ModelBundle load_model_bundle(const std::string& path,
                              const ChatTemplateOverride& chat_template = {});

// The chat template, or an InputError that says why there is none.
const tokenizer::ChatTemplate& require_chat_template(const ModelBundle& bundle);

}  // namespace ladder::engine
