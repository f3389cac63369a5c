// POST /v1/completions: OpenAI's legacy text completions. A choice is
// {index, text, logprobs, finish_reason}; logprobs take the legacy shape;
// `echo` puts the prompt's text before the output.
#include "ladder/server/completion_handler.h"
#include "ladder/server/logprobs_json.h"
#include "ladder/server/routes.h"

namespace ladder::server {

namespace {

using json = nlohmann::json;

json text_choice(int32_t index, std::string text, json logprobs,
                 const std::optional<engine::FinishReason>& finish_reason) {
    return {{"index", index},
            {"text", std::move(text)},
            {"logprobs", std::move(logprobs)},
            {"finish_reason", finish_reason_json(finish_reason)}};
}

class CompletionsFormat final : public ResponseFormat {
public:
    const char* id_prefix() const override { return "cmpl-"; }
    const char* object() const override { return "text_completion"; }
    const char* chunk_object() const override { return "text_completion"; }

    json response_choice(int32_t index, const ChoiceState& choice,
                         const tokenizer::Tokenizer& tokenizer) const override {
        json logprobs = nullptr;
        if (!choice.logprobs.empty()) {
            size_t text_offset = choice.echo.size();
            logprobs = completion_logprobs_json(choice.logprobs, tokenizer, text_offset);
        }
        return text_choice(index, choice.echo + choice.text, std::move(logprobs),
                           choice.finish_reason);
    }

    std::optional<json> opening_choice(int32_t index, const ChoiceState& choice) const override {
        if (choice.echo.empty()) return std::nullopt;
        return text_choice(index, choice.echo, nullptr, std::nullopt);
    }

    std::optional<json> chunk_choice(const ChoiceOutput& news,
                                     const tokenizer::Tokenizer& tokenizer,
                                     size_t& text_offset) const override {
        const engine::RequestOutput& output = news.output;
        // Tokens held back by a possible stop string make no text yet.
        if (output.text.empty() && output.logprobs.empty() && !output.finished()) {
            return std::nullopt;
        }
        json logprobs = nullptr;
        if (!output.logprobs.empty()) {
            logprobs = completion_logprobs_json(output.logprobs, tokenizer, text_offset);
        }
        return text_choice(news.choice, output.text, std::move(logprobs), output.finish_reason);
    }
};

}  // namespace

void add_completions_routes(Router& router, ServerContext& context) {
    auto format = std::make_shared<const CompletionsFormat>();
    router.post("/v1/completions", Router::Access::ApiKey,
                [&context, format](const HttpRequest& request, HttpResponse& response) {
                    handle_completion(context, request, response, Endpoint::Completions, format);
                });
}

}  // namespace ladder::server
