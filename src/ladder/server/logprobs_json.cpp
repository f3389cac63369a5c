#include "ladder/server/logprobs_json.h"

#include <string>

namespace ladder::server {

namespace {

using json = nlohmann::json;

// A token as the client sees it: control tokens by their text (an end of
// turn shows as "<|im_end|>", not as nothing).
std::string token_text(const tokenizer::Tokenizer& tokenizer, engine::TokenId id) {
    return tokenizer.token_to_piece(id, /*render_special=*/true);
}

// The token's bytes, for clients that join pieces that split a character.
json token_bytes(const std::string& text) {
    json bytes = json::array();
    for (const char c : text) bytes.push_back(static_cast<unsigned char>(c));
    return bytes;
}

json chat_entry(const tokenizer::Tokenizer& tokenizer, engine::TokenId id, float logprob) {
    const std::string text = token_text(tokenizer, id);
    return {{"token", text}, {"logprob", logprob}, {"bytes", token_bytes(text)}};
}

}  // namespace

json completion_logprobs_json(std::span<const engine::TokenLogprob> logprobs,
                              const tokenizer::Tokenizer& tokenizer, size_t& text_offset) {
    json tokens = json::array();
    json token_logprobs = json::array();
    json top_logprobs = json::array();
    json text_offsets = json::array();
    for (const engine::TokenLogprob& lp : logprobs) {
        tokens.push_back(token_text(tokenizer, lp.id));
        token_logprobs.push_back(lp.logprob);
        // As vLLM does: the sampled token is always among the alternatives.
        json top = json::object();
        for (const auto& [id, logprob] : lp.top) top[token_text(tokenizer, id)] = logprob;
        top[token_text(tokenizer, lp.id)] = lp.logprob;
        top_logprobs.push_back(std::move(top));
        text_offsets.push_back(text_offset);
        // Offsets count the bytes of the returned text, where control tokens
        // are not written.
        text_offset += tokenizer.token_to_piece(lp.id).size();
    }
    return {{"tokens", std::move(tokens)},
            {"token_logprobs", std::move(token_logprobs)},
            {"top_logprobs", std::move(top_logprobs)},
            {"text_offset", std::move(text_offsets)}};
}

json chat_logprobs_json(std::span<const engine::TokenLogprob> logprobs,
                        const tokenizer::Tokenizer& tokenizer) {
    json content = json::array();
    for (const engine::TokenLogprob& lp : logprobs) {
        json entry = chat_entry(tokenizer, lp.id, lp.logprob);
        json top = json::array();
        for (const auto& [id, logprob] : lp.top) top.push_back(chat_entry(tokenizer, id, logprob));
        entry["top_logprobs"] = std::move(top);
        content.push_back(std::move(entry));
    }
    return {{"content", std::move(content)}, {"refusal", nullptr}};
}

}  // namespace ladder::server
