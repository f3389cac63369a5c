#include "ladder/engine/model_bundle.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string_view>

#include "ladder/engine/model_identity.h"
#include "ladder/engine/tokenizer_loader.h"
#include "ladder/util/error.h"

namespace ladder::engine {

namespace {

tokenizer::ChatSpecialTokens chat_special_tokens(const tokenizer::Tokenizer& tokenizer) {
    tokenizer::ChatSpecialTokens special;
    const tokenizer::Vocabulary& vocabulary = tokenizer.vocabulary();
    const auto text_of = [&](std::optional<tokenizer::TokenId> id) {
        return id && *id >= 0 && *id < tokenizer.vocab_size()
                   ? vocabulary.tokens[static_cast<size_t>(*id)]
                   : std::string();
    };
    special.bos = text_of(vocabulary.bos_id);
    special.eos = text_of(vocabulary.eos_id);
    return special;
}

int32_t longest_token_bytes(const tokenizer::Tokenizer& tokenizer) {
    size_t longest = 4;
    const std::vector<std::string>& texts = tokenizer.vocabulary().tokens;
    for (tokenizer::TokenId id = 0; id < tokenizer.vocab_size(); ++id) {
        // The piece is what the token decodes to, the text what a control
        // token matches in a prompt; either bounds the input it covers.
        longest = std::max({longest, texts[static_cast<size_t>(id)].size(),
                            tokenizer.token_to_piece(id, /*render_special=*/true).size()});
    }
    return static_cast<int32_t>(longest);
}

std::string read_text_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) util::fail("cannot read the chat template file '{}'", path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

constexpr std::string_view kTemplateKey = "tokenizer.chat_template";

std::optional<tokenizer::ChatTemplate> load_chat_template(const gguf::GgufFile& file,
                                                          const ChatTemplateOverride& choice,
                                                          tokenizer::ChatSpecialTokens special) {
    if (!choice.builtin_name.empty() && !choice.file_path.empty()) {
        util::fail("give --chat-template or --chat-template-file, not both");
    }
    if (!choice.builtin_name.empty()) {
        return tokenizer::ChatTemplate::builtin(choice.builtin_name, std::move(special));
    }
    if (!choice.file_path.empty()) {
        return tokenizer::ChatTemplate::from_source(read_text_file(choice.file_path),
                                                    std::move(special), choice.file_path);
    }
    const auto source = file.get_string(std::string(kTemplateKey));
    if (!source) return std::nullopt;
    tokenizer::ChatTemplate chat_template = tokenizer::ChatTemplate::from_source(
        *source, std::move(special), "the model's chat template");
    // Named templates (a tokenizer_config.json with several) are converted to
    // keys tokenizer.chat_template.<name>.
    const std::string prefix = fmt::format("{}.", kTemplateKey);
    for (const auto& [key, value] : file.metadata()) {
        if (!key.starts_with(prefix)) continue;
        if (const auto text = file.get_string(key)) {
            chat_template.add_variant(key.substr(prefix.size()), *text);
        }
    }
    return chat_template;
}

}  // namespace

ModelBundle load_model_bundle(const std::string& path, const ChatTemplateOverride& chat_template) {
    ModelBundle bundle;
    bundle.file = gguf::GgufFile::open(path);
    bundle.model = model::load_model(*bundle.file);
    bundle.tokenizer = load_tokenizer(*bundle.file);
    bundle.max_token_bytes = longest_token_bytes(*bundle.tokenizer);
    if (bundle.tokenizer->vocab_size() != bundle.model->config().vocab_size) {
        util::fail("{}: the tokenizer has {} tokens but the model's vocabulary is {}", path,
                   bundle.tokenizer->vocab_size(), bundle.model->config().vocab_size);
    }
    bundle.grammars = std::make_unique<GrammarCompiler>(*bundle.tokenizer);
    try {
        bundle.chat_template =
            load_chat_template(*bundle.file, chat_template, chat_special_tokens(*bundle.tokenizer));
    } catch (const util::InputError& error) {
        // A named override that fails is the user's mistake now; the file's
        // own template failing only matters once chat is asked for.
        if (!chat_template.builtin_name.empty() || !chat_template.file_path.empty()) throw;
        bundle.chat_template_error = error.what();
    }
    if (!bundle.chat_template && bundle.chat_template_error.empty()) {
        bundle.chat_template_error = fmt::format(
            "the model has no chat template (tokenizer.chat_template); name one with "
            "--chat-template NAME (built in: {}) or --chat-template-file FILE",
            fmt::join(tokenizer::ChatTemplate::builtin_names(), ", "));
    }
    return bundle;
}

const tokenizer::ChatTemplate& require_chat_template(const ModelBundle& bundle) {
    if (!bundle.chat_template) util::fail("{}", bundle.chat_template_error);
    return *bundle.chat_template;
}

}  // namespace ladder::engine
