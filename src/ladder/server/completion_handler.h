// What POST /v1/completions and /v1/chat/completions share: parse the body,
// check the model, submit the choices, then hand the transport a stream or a
// pending whole body; nothing here waits for the engine. The endpoints
// differ only in their ResponseFormat.
#pragma once

#include <memory>
#include <string>

#include "ladder/server/http_message.h"
#include "ladder/server/openai_request.h"
#include "ladder/server/response_format.h"
#include "ladder/server/server_context.h"

namespace ladder::server {

void handle_completion(ServerContext& context, const HttpRequest& request, HttpResponse& response,
                       Endpoint endpoint, const std::shared_ptr<const ResponseFormat>& format);

// ApiError 404 model_not_found unless the server answers to this name.
void require_served_model(const ServerConfig& config, const std::string& model);

}  // namespace ladder::server
