#include "ladder/server/http_io.h"

namespace ladder::server {

namespace {

using json = nlohmann::json;

// A client told to come back after this many seconds when the queue is full:
// about the time a few engine steps take to free room.
constexpr const char* kRetryAfterSeconds = "1";

json null_if_empty(const std::string& text) { return text.empty() ? json(nullptr) : json(text); }

}  // namespace

json parse_json_body(const HttpRequest& request) {
    json body = json::parse(request.body, nullptr, /*allow_exceptions=*/false);
    if (body.is_discarded()) {
        throw ApiError(400, "invalid_request_error", "the request body is not valid JSON", "",
                       "invalid_json");
    }
    return body;
}

std::string dump_json(const json& value) {
    return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

void send_json(HttpResponse& response, int status, const json& body) {
    response.status = status;
    response.set_content(dump_json(body), "application/json");
}

json error_body(const ApiError& error) {
    return {{"error",
             {{"message", error.what()},
              {"type", error.type()},
              {"param", null_if_empty(error.param())},
              {"code", null_if_empty(error.code())}}}};
}

void send_error(HttpResponse& response, const ApiError& error) {
    if (error.status() == 429) response.set_header("Retry-After", kRetryAfterSeconds);
    if (error.status() == 401) response.set_header("WWW-Authenticate", "Bearer");
    send_json(response, error.status(), error_body(error));
}

}  // namespace ladder::server
