#include "ladder/server/completion_handler.h"

#include <fmt/format.h>

#include "ladder/server/auth.h"
#include "ladder/server/http_io.h"
#include "ladder/server/pending_response.h"
#include "ladder/server/sse_stream.h"

namespace ladder::server {

void require_served_model(const ServerConfig& config, const std::string& model) {
    if (accepts_model_name(config, model)) return;
    throw ApiError(404, "invalid_request_error",
                   fmt::format("the model '{}' does not exist: this server serves '{}'", model,
                               config.served_model_name),
                   "model", "model_not_found");
}

void handle_completion(ServerContext& context, const HttpRequest& request, HttpResponse& response,
                       Endpoint endpoint, const std::shared_ptr<const ResponseFormat>& format) {
    // Also as written: schemas keep their key order (structured_output.h).
    const nlohmann::ordered_json written =
        nlohmann::ordered_json::parse(request.body, nullptr, false);
    CompletionRequest parsed =
        parse_completion_request(parse_json_body(request), endpoint, context.bundle,
                                 context.engine.kv_plan().max_model_len, &written);
    parsed.tenant =
        authenticate(context.config.api_keys, request.get_header_value("Authorization"));
    require_served_model(context.config, parsed.model);
    const bool stream = parsed.stream;
    auto job = std::make_shared<CompletionJob>(context, std::move(parsed));
    ResponseMeta meta = make_response_meta(*format, context.config.served_model_name);
    const tokenizer::Tokenizer& tokenizer = *context.bundle.tokenizer;
    if (stream) {
        start_sse_response(response, std::make_shared<SseStream>(std::move(job), format, meta,
                                                                 tokenizer, context.metrics));
        return;
    }
    start_pending_response(response, std::move(job),
                           [meta, format, &tokenizer](const CompletionJob& finished) {
                               return dump_json(response_json(meta, *format, finished, tokenizer));
                           });
}

}  // namespace ladder::server
