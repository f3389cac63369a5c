// POST /v1/chat/completions: the model's chat template applied to the
// messages. A choice carries a `message` (whole responses) or a `delta`
// (chunks, the first of which names the assistant role); logprobs take the
// chat shape.
#include "ladder/server/completion_handler.h"
#include "ladder/server/logprobs_json.h"
#include "ladder/server/routes.h"

namespace ladder::server {

namespace {

using json = nlohmann::json;

json chat_choice(int32_t index, const char* key, json content, json logprobs,
                 const std::optional<engine::FinishReason>& finish_reason,
                 bool tool_calls = false) {
    return {{"index", index},
            {key, std::move(content)},
            {"logprobs", std::move(logprobs)},
            {"finish_reason", finish_reason_json(finish_reason, tool_calls)}};
}

class ChatFormat final : public ResponseFormat {
public:
    const char* id_prefix() const override { return "chatcmpl-"; }
    const char* object() const override { return "chat.completion"; }
    const char* chunk_object() const override { return "chat.completion.chunk"; }

    json response_choice(int32_t index, const ChoiceState& choice,
                         const tokenizer::Tokenizer& tokenizer) const override {
        json logprobs = nullptr;
        if (!choice.logprobs.empty()) logprobs = chat_logprobs_json(choice.logprobs, tokenizer);
        // Read for tool calls or reasoning, or the text as it came.
        if (choice.chat) {
            return chat_choice(index, "message", choice.message.to_json(), std::move(logprobs),
                               choice.finish_reason, choice.message.has_tool_calls());
        }
        const json message = {{"role", "assistant"}, {"content", choice.text}};
        return chat_choice(index, "message", message, std::move(logprobs), choice.finish_reason);
    }

    std::optional<json> opening_choice(int32_t index, const ChoiceState&) const override {
        const json delta = {{"role", "assistant"}, {"content", ""}};
        return chat_choice(index, "delta", delta, nullptr, std::nullopt);
    }

    std::optional<json> chunk_choice(const ChoiceOutput& news,
                                     const tokenizer::Tokenizer& tokenizer,
                                     size_t& /*text_offset*/) const override {
        const engine::RequestOutput& output = news.output;
        const bool no_text = news.message ? news.message->empty() : output.text.empty();
        if (no_text && output.logprobs.empty() && !output.finished()) return std::nullopt;
        json delta = json::object();
        if (news.message) {
            delta = delta_json(*news.message);
        } else if (!output.text.empty()) {
            delta["content"] = output.text;
        }
        json logprobs = nullptr;
        if (!output.logprobs.empty()) logprobs = chat_logprobs_json(output.logprobs, tokenizer);
        return chat_choice(news.choice, "delta", std::move(delta), std::move(logprobs),
                           output.finish_reason, news.message && news.message->tool_calls_made);
    }
};

}  // namespace

void add_chat_routes(Router& router, ServerContext& context) {
    auto format = std::make_shared<const ChatFormat>();
    router.post("/v1/chat/completions", Router::Access::ApiKey,
                [&context, format](const HttpRequest& request, HttpResponse& response) {
                    handle_completion(context, request, response, Endpoint::ChatCompletions,
                                      format);
                });
}

}  // namespace ladder::server
