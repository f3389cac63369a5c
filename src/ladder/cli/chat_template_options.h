// --chat-template NAME and --chat-template-file FILE, for every command that
// renders a chat (run --chat, chat, generate, serve).
#pragma once

#include <CLI/CLI.hpp>

#include "ladder/engine/model_bundle.h"

namespace ladder::cli {

void add_chat_template_options(CLI::App& command, engine::ChatTemplateOverride& options);

}  // namespace ladder::cli
