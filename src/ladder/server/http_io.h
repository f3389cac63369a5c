// The few things every route does with a request and its response: read a
// JSON body, answer JSON, answer an OpenAI-shaped error. Knows nothing of the
// engine or the transport.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "ladder/server/api_error.h"
#include "ladder/server/http_message.h"

namespace ladder::server {

// The body as JSON; ApiError 400 when it is not JSON.
nlohmann::json parse_json_body(const HttpRequest& request);

// JSON text for the wire. Text from the model is valid UTF-8, but token
// pieces and echoed token-id prompts may split a character: those bytes
// become U+FFFD instead of failing the response.
std::string dump_json(const nlohmann::json& value);

void send_json(HttpResponse& response, int status, const nlohmann::json& body);

// {"error": {"message", "type", "param", "code"}} with the error's status;
// 429 also says when to retry.
nlohmann::json error_body(const ApiError& error);
void send_error(HttpResponse& response, const ApiError& error);

}  // namespace ladder::server
