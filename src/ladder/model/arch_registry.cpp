#include "ladder/model/arch_registry.h"

#include <fmt/format.h>

#include "ladder/gguf/gguf_file.h"
#include "ladder/util/error.h"

namespace ladder::model {

const std::vector<ArchEntry>& architectures() {
    static const std::vector<ArchEntry> table = {
        {"llama", build_llama},
        {"mistral", build_llama},
        {"qwen2", build_qwen2},
        {"gemma3", build_gemma3},
    };
    return table;
}

std::unique_ptr<Model> load_model(const gguf::GgufFile& file) {
    const auto arch = file.get_string("general.architecture");
    if (!arch) util::fail("{}: metadata key 'general.architecture' is missing", file.name());
    std::string known;
    for (const ArchEntry& entry : architectures()) {
        if (entry.name == *arch) return entry.build(file);
        known += known.empty() ? "" : ", ";
        known += entry.name;
    }
    util::fail("{}: architecture '{}' is not supported (supported: {})", file.name(), *arch,
               known);
}

}  // namespace ladder::model
