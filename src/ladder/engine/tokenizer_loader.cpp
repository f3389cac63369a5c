// GGUF tokenizer.ggml.* keys -> tokenizer::Vocabulary -> Tokenizer.
#include "ladder/engine/tokenizer_loader.h"

#include <cstdint>

#include "ladder/util/error.h"

namespace ladder::engine {

namespace {

constexpr const char* kPrefix = "tokenizer.ggml.";

std::string key(const char* name) { return std::string(kPrefix) + name; }

// Ids are stored as uint32; one that does not fit a token id reads as unset,
// and the tokenizer then uses its default as llama.cpp does.
std::optional<tokenizer::TokenId> read_id(const gguf::GgufFile& file, const char* name) {
    const auto value = file.get_int(key(name));
    if (!value || *value < 0 || *value > INT32_MAX) return std::nullopt;
    return static_cast<tokenizer::TokenId>(*value);
}

}  // namespace

tokenizer::Vocabulary read_vocabulary(const gguf::GgufFile& file) {
    tokenizer::Vocabulary v;
    const auto model = file.get_string(key("model"));
    if (!model) {
        util::fail("{}: has no tokenizer (metadata key {} is missing)", file.name(), key("model"));
    }
    v.model = *model;
    v.pre = file.get_string(key("pre")).value_or("");
    auto tokens = file.get_string_array(key("tokens"));
    if (!tokens) util::fail("{}: metadata key {} is missing", file.name(), key("tokens"));
    v.tokens = std::move(*tokens);
    if (auto scores = file.get_float_array(key("scores"))) v.scores = std::move(*scores);
    if (const auto types = file.get_int_array(key("token_type"))) {
        v.kinds.reserve(types->size());
        for (const int64_t type : *types) {
            const bool known = type >= 1 && type <= 6;
            v.kinds.push_back(known ? static_cast<tokenizer::TokenKind>(type)
                                    : tokenizer::TokenKind::Undefined);
        }
    }
    if (auto merges = file.get_string_array(key("merges"))) {
        v.merges = std::move(*merges);
    } else if (v.model == "gpt2") {
        util::fail("{}: byte-level BPE tokenizer without {}", file.name(), key("merges"));
    }
    v.bos_id = read_id(file, "bos_token_id");
    v.eos_id = read_id(file, "eos_token_id");
    v.eot_id = read_id(file, "eot_token_id");
    v.eom_id = read_id(file, "eom_token_id");
    v.unknown_id = read_id(file, "unknown_token_id");
    v.padding_id = read_id(file, "padding_token_id");
    v.add_bos = file.get_bool(key("add_bos_token"));
    v.add_eos = file.get_bool(key("add_eos_token"));
    v.add_space_prefix = file.get_bool(key("add_space_prefix"));
    return v;
}

std::unique_ptr<tokenizer::Tokenizer> load_tokenizer(const gguf::GgufFile& file) {
    auto vocabulary = read_vocabulary(file);
    try {
        return tokenizer::Tokenizer::create(std::move(vocabulary));
    } catch (const util::InputError& error) {
        util::fail("{}: {}", file.name(), error.what());
    }
}

}  // namespace ladder::engine
