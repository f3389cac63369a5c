#include "ladder/cli/chat_template_options.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ladder/tokenizer/chat_template.h"

namespace ladder::cli {

void add_chat_template_options(CLI::App& command, engine::ChatTemplateOverride& options) {
    CLI::Option* name =
        command.add_option("--chat-template", options.builtin_name,
                           fmt::format("use a built-in chat template instead of the model's: {}",
                                       fmt::join(tokenizer::ChatTemplate::builtin_names(), ", ")));
    command
        .add_option("--chat-template-file", options.file_path,
                    "use the Jinja chat template in FILE instead of the model's")
        ->excludes(name);
}

}  // namespace ladder::cli
