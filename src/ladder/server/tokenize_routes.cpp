// POST /tokenize ({prompt} or {messages}, as vLLM's): the token ids the
// server would compute, their count and the context limit. With messages it
// takes what a chat request does (tools, chat_template_kwargs,
// add_generation_prompt, continue_final_message), to check a rendering.
// POST /detokenize ({tokens}): the text of token ids.
#include "ladder/server/chat_prompt.h"
#include "ladder/server/completion_handler.h"
#include "ladder/server/http_io.h"
#include "ladder/server/routes.h"

namespace ladder::server {

namespace {

using json = nlohmann::json;

bool add_special_tokens(const json& body) {
    const auto flag = body.find("add_special_tokens");
    if (flag == body.end()) return true;
    if (!flag->is_boolean()) {
        invalid_param("add_special_tokens", "'add_special_tokens' must be true or false");
    }
    return flag->get<bool>();
}

std::vector<engine::TokenId> tokenize_body(const json& body, const engine::ModelBundle& bundle,
                                           int32_t max_model_len) {
    if (!body.is_object()) invalid_param("", "the request body must be a JSON object");
    if (body.contains("messages")) {
        return render_chat_prompt(parse_chat_inputs(body), bundle, add_special_tokens(body),
                                  max_prompt_bytes(bundle, max_model_len));
    }
    const auto prompt = body.find("prompt");
    if (prompt == body.end() || !prompt->is_string()) {
        invalid_param("prompt", "give 'prompt' (a string) or 'messages' (a list of messages)");
    }
    return bundle.tokenizer->encode(prompt->get<std::string>(), add_special_tokens(body), true);
}

}  // namespace

void add_tokenize_routes(Router& router, ServerContext& context) {
    router.post("/tokenize", Router::Access::ApiKey,
                [&context](const HttpRequest& request, HttpResponse& response) {
                    const json body = parse_json_body(request);
                    if (body.is_object() && body.contains("model") && body["model"].is_string()) {
                        require_served_model(context.config, body["model"].get<std::string>());
                    }
                    const std::vector<engine::TokenId> tokens =
                        tokenize_body(body, context.bundle, context.engine.kv_plan().max_model_len);
                    send_json(response, 200,
                              {{"tokens", tokens},
                               {"count", tokens.size()},
                               {"max_model_len", context.engine.kv_plan().max_model_len}});
                });
    router.post(
        "/detokenize", Router::Access::ApiKey,
        [&context](const HttpRequest& request, HttpResponse& response) {
            const json body = parse_json_body(request);
            if (!body.is_object() || !body.contains("tokens") || !body["tokens"].is_array()) {
                invalid_param("tokens", "'tokens' must be a list of token ids");
            }
            const tokenizer::Tokenizer& tokenizer = *context.bundle.tokenizer;
            const std::vector<engine::TokenId> tokens =
                parse_token_ids(body["tokens"], "tokens", tokenizer.vocab_size());
            send_json(response, 200,
                      {{"prompt", tokenizer.decode(tokens, /*render_special=*/true)}});
        });
}

}  // namespace ladder::server
