#include "ladder/engine/model_bundle.h"

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

}  // namespace

ModelBundle load_model_bundle(const std::string& path, const std::string& chat_template_name) {
    ModelBundle bundle;
    bundle.file = gguf::GgufFile::open(path);
    bundle.model = model::load_model(*bundle.file);
    bundle.tokenizer = load_tokenizer(*bundle.file);
    bundle.identity = model_identity(*bundle.file);
    if (bundle.tokenizer->vocab_size() != bundle.model->config().vocab_size) {
        util::fail("{}: the tokenizer has {} tokens but the model's vocabulary is {}", path,
                   bundle.tokenizer->vocab_size(), bundle.model->config().vocab_size);
    }
    bundle.grammars = std::make_unique<GrammarCompiler>(*bundle.tokenizer);
    const auto special = chat_special_tokens(*bundle.tokenizer);
    if (!chat_template_name.empty()) {
        bundle.chat_template = tokenizer::ChatTemplate::by_name(chat_template_name, special);
    } else if (const auto text = bundle.file->get_string("tokenizer.chat_template")) {
        try {
            bundle.chat_template = tokenizer::ChatTemplate::detect(*text, special);
        } catch (const util::InputError& error) {
            bundle.chat_template_error = error.what();
        }
    } else {
        bundle.chat_template_error =
            "the model has no chat template (tokenizer.chat_template); name one with "
            "--chat-template";
    }
    return bundle;
}

const tokenizer::ChatTemplate& require_chat_template(const ModelBundle& bundle) {
    if (!bundle.chat_template) util::fail("{}", bundle.chat_template_error);
    return *bundle.chat_template;
}

}  // namespace ladder::engine
