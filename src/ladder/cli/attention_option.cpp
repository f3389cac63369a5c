// `--attention exact|fast`, shared by every command that runs the model.
#include <map>
#include <string>

#include "ladder/cli/commands.h"

namespace ladder::cli {

void add_attention_option(CLI::App& command, model::AttentionPath& path) {
    path = model::kDefaultAttentionPath;
    const std::map<std::string, model::AttentionPath> names = {
        {"exact", model::AttentionPath::Exact}, {"fast", model::AttentionPath::Fast}};
    command
        .add_option("--attention", path,
                    "attention kernels: fast (chunked over the context on every thread, the "
                    "CPU's fastest dot product) or exact (llama.cpp's order, bit for bit)")
        ->transform(CLI::CheckedTransformer(names, CLI::ignore_case))
        ->default_str(std::string(model::attention_path_name(model::kDefaultAttentionPath)));
}

}  // namespace ladder::cli
